import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { ChunkParams } from '../chunk/chunker.js';
import { largeBuildStarting } from '../core/batch-memory.js';
import { bundledScript } from '../core/bundled.js';
import { RepodexError } from '../core/errors.js';
import { grammarsOf } from '../lang/index.js';
import type { Language } from '../scan/language.js';
import type { ParseRequest, ParseResponse, WarmRequest } from './parse-worker.js';
import { type ParseOutcome, parseText } from './prepare-file.js';

/** Texts per message: enough to amortize messaging, few enough to balance the load. */
const BATCH = 8;
/** Below this many files to parse, worker start-up (runtime and grammar loading) costs more than it saves. */
export const MIN_FILES_FOR_WORKERS = 96;

/** Parses texts for a sync: in worker threads when there is enough to parse, else in-process. */
export interface Parser {
  /** Check `text` (the file at repository path `path`) for credentials, then chunk it. */
  parse(text: string, language: Language, path: string): Promise<ParseOutcome>;
  /**
   * For a parser made before the files were known (`createParser` without languages): the
   * languages of the files to come (one entry per file). Their common grammars are loaded now.
   */
  expect(languages: readonly Language[]): void;
  close(): Promise<void>;
}

/**
 * How many parse workers to start: REPODEX_SYNC_WORKERS, else one per core (at most 4), less
 * `reserved` cores (a server keeps one for answering requests while it re-indexes).
 */
function workerCount(reserved: number): number {
  const requested = process.env.REPODEX_SYNC_WORKERS;
  if (requested !== undefined && /^\d+$/.test(requested)) return Number(requested);
  return Math.max(0, Math.min(4, availableParallelism()) - reserved);
}

/**
 * A grammar needed by at least this share of the files to parse is loaded by every worker; any
 * other is loaded by one worker only, which then parses all its files. Each grammar a worker
 * loads costs it megabytes (compiled code, parse tables in its WASM memory), and the rare ones
 * are the largest (C++, C#); the common ones must stay shared, or a run of them would leave the
 * other workers idle.
 */
const SHARED_GRAMMAR_SHARE = 0.1;

/**
 * Young generation of a parse worker, in MB. Parsing allocates short-lived node objects by the
 * million; V8's default lets a worker's new space grow to 32 MB, which stays resident. On
 * playwright, 4 MB lowered the peak RSS of a full build by ~20 MB (two workers) at the same speed.
 */
const WORKER_YOUNG_GENERATION_MB = 4;

/**
 * A parser for a sync expected to parse files of `languages` (one entry per file), leaving
 * `reservedCores` to other work. Without `languages` (a first answer, before the walk), its
 * threads start at once on the chance that there is much to parse; `expect` then says what.
 * `script`: the worker's (the built dist/parse-worker.js; none when running from sources).
 */
export async function createParser(params: ChunkParams, languages: readonly Language[] | undefined, reservedCores = 0, script = bundledScript('parse-worker.js')): Promise<Parser> {
  const workers = workerCount(reservedCores);
  if (!script || (languages !== undefined && languages.length < MIN_FILES_FOR_WORKERS) || workers === 0) {
    return { parse: (text, language, path) => parseText(text, language, params, path), expect: () => undefined, close: async () => undefined };
  }
  // Loaded here, not at startup: only a sync with enough to parse needs threads.
  const { Worker } = await import('node:worker_threads');
  largeBuildStarting();
  const pool = new PoolParser(Worker, script, workers, params);
  if (languages) pool.share(languages);
  else pool.startNow();
  return pool;
}

interface Task {
  readonly index: number;
  readonly text: string;
  readonly language: Language;
  readonly path: string;
  resolve(outcome: ParseOutcome): void;
  reject(error: Error): void;
}

/**
 * Worker threads fed from one queue, two batches in flight per worker so none waits for a round
 * trip. The workers start on the first parse (a sync served by the parse cache starts none), and
 * a grammar that is not shared stays with the first worker given a file that needs it.
 */
class PoolParser implements Parser {
  private readonly workers: Worker[] = [];
  private readonly inFlight = new Map<Worker, number>();
  private readonly queue: Task[] = [];
  private readonly waiting = new Map<number, Task>();
  /** The worker that parses each grammar that is not shared. */
  private readonly owner = new Map<string, Worker>();
  private next = 0;
  private failure: Error | undefined;
  private closing = false;
  /** Slot 0: the pool is closing; slot 1 + w: worker w is packing an outcome (see parse-worker.ts). */
  private readonly signals: Int32Array;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly WorkerClass: typeof Worker,
    private readonly script: URL,
    private readonly count: number,
    private readonly params: ChunkParams,
  ) {
    this.signals = new Int32Array(new SharedArrayBuffer(4 * (1 + count)));
  }

  /** Grammars every worker may load (see SHARED_GRAMMAR_SHARE). */
  private shared: ReadonlySet<string> = new Set();

  /** Decide which grammars are shared, from the languages of the files to parse (one entry per file). */
  share(languages: readonly Language[]): void {
    const perGrammar = new Map<string, number>();
    for (const language of languages) for (const grammar of grammarsOf(language)) perGrammar.set(grammar, (perGrammar.get(grammar) ?? 0) + 1);
    this.shared = new Set([...perGrammar].filter(([, count]) => count >= SHARED_GRAMMAR_SHARE * languages.length).map(([grammar]) => grammar));
  }

  /** Start the threads before there is anything to parse: they load the credential rules meanwhile. */
  startNow(): void {
    this.start();
    for (const worker of this.workers) worker.postMessage({ warm: [] } satisfies WarmRequest);
  }

  expect(languages: readonly Language[]): void {
    this.share(languages);
    const everywhere = [...new Set(languages)].filter((language) => grammarsOf(language).every((grammar) => this.shared.has(grammar)));
    for (const worker of this.workers) worker.postMessage({ warm: everywhere } satisfies WarmRequest);
  }

  private start(): void {
    for (let w = 0; w < this.count; w++) {
      const worker = new this.WorkerClass(this.script, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB }, workerData: { signals: this.signals, slot: 1 + w } });
      this.inFlight.set(worker, 0);
      worker.on('message', (response: ParseResponse) => {
        for (const { index, outcome } of response.results) {
          this.waiting.get(index)?.resolve(outcome);
          this.waiting.delete(index);
        }
        this.inFlight.set(worker, this.inFlight.get(worker)! - 1);
        this.feed(worker);
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        // Any exit before close() leaves its batches unanswered: fail them rather than wait forever.
        if (!this.closing && !this.failure) this.fail(new Error(`parse worker exited with code ${code}`));
      });
      this.workers.push(worker);
    }
  }

  parse(text: string, language: Language, path: string): Promise<ParseOutcome> {
    if (this.failure) return Promise.reject(this.failure);
    // After close (the sync is past its parses), anything left is parsed in this thread.
    if (this.closing) return parseText(text, language, this.params, path);
    if (this.workers.length === 0) this.start();
    return new Promise<ParseOutcome>((resolve, reject) => {
      this.queue.push({ index: this.next++, text, language, path, resolve, reject });
      for (const worker of this.workers) this.feed(worker);
    });
  }

  /** True when `worker` may parse `language`: every grammar it needs is shared, this worker's, or nobody's yet. */
  private accepts(worker: Worker, language: Language): boolean {
    for (const grammar of grammarsOf(language)) {
      if (this.shared.has(grammar)) continue;
      const owner = this.owner.get(grammar);
      if (owner !== undefined && owner !== worker) return false;
    }
    return true;
  }

  private feed(worker: Worker): void {
    while (this.inFlight.get(worker)! < 2 && this.queue.length > 0) {
      // The first BATCH queued tasks this worker may parse, in queue order.
      const tasks: Task[] = [];
      for (let i = 0; i < this.queue.length && tasks.length < BATCH; ) {
        const task = this.queue[i]!;
        if (!this.accepts(worker, task.language)) {
          i++;
          continue;
        }
        for (const grammar of grammarsOf(task.language)) if (!this.shared.has(grammar)) this.owner.set(grammar, worker);
        tasks.push(task);
        this.queue.splice(i, 1);
      }
      if (tasks.length === 0) return;
      for (const task of tasks) this.waiting.set(task.index, task);
      worker.postMessage({ params: this.params, batch: tasks.map(({ index, text, language, path }) => ({ index, text, language, path })) } satisfies ParseRequest);
      this.inFlight.set(worker, this.inFlight.get(worker)! + 1);
    }
  }

  private fail(error: Error): void {
    this.failure = new RepodexError('INTERNAL', `parse worker failed: ${error.message}`, { cause: error });
    this.rejectPending(this.failure);
  }

  /** Fail every file not answered yet, queued or in a worker's hands. */
  private rejectPending(error: Error): void {
    for (const task of [...this.waiting.values(), ...this.queue.splice(0)]) task.reject(error);
    this.waiting.clear();
  }

  /**
   * Stop the workers at once, files in hand or not (a sync stopped early, at a first answer's
   * budget or an abort, leaves some in flight): but never inside a zlib call, which would abort
   * the process (see parse-worker.ts). A worker packing an outcome finishes packing first, a
   * matter of a millisecond; files not parsed are refused.
   */
  close(): Promise<void> {
    this.closed ??= this.stopWorkers();
    return this.closed;
  }

  private async stopWorkers(): Promise<void> {
    this.closing = true;
    Atomics.store(this.signals, 0, 1);
    for (const deadline = performance.now() + CLOSE_WAIT_MS; this.packing() && performance.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    this.rejectPending(new RepodexError('ABORTED', 'the sync stopped before this file was parsed'));
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  /** True while some worker is packing an outcome. */
  private packing(): boolean {
    for (let w = 1; w < this.signals.length; w++) if (Atomics.load(this.signals, w) !== 0) return true;
    return false;
  }
}

/** How long a closing pool waits for a worker to finish packing (it takes a millisecond or so). */
const CLOSE_WAIT_MS = 2_000;
