import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { ChunkParams } from '../chunk/chunker.js';
import { RepodexError } from '../core/errors.js';
import type { Language } from '../scan/language.js';
import type { ParseRequest, ParseResponse } from './parse-worker.js';
import { type ParseOutcome, parseText } from './prepare-file.js';

/** Texts per message: enough to amortize messaging, few enough to balance the load. */
const BATCH = 8;
/** Below this many files to parse, worker start-up (runtime and grammar loading) costs more than it saves. */
export const MIN_FILES_FOR_WORKERS = 96;

/** Parses texts for a sync: in worker threads when there is enough to parse, else in-process. */
export interface Parser {
  parse(text: string, language: Language): Promise<ParseOutcome>;
  close(): Promise<void>;
}

/**
 * A bundled worker script next to this module when running from the build (dist/parse-worker.js,
 * whether the bundler left this module in dist/ or in a chunk under it); none from sources.
 */
export function bundledScript(name: string): URL | undefined {
  for (const relative of [`./${name}`, `../${name}`]) {
    const url = new URL(relative, import.meta.url);
    if (url.protocol === 'file:' && existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
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

/** A parser for a sync expected to parse `expected` files, leaving `reservedCores` to other work. */
export async function createParser(params: ChunkParams, expected: number, reservedCores = 0): Promise<Parser> {
  const script = bundledScript('parse-worker.js');
  const workers = workerCount(reservedCores);
  if (!script || expected < MIN_FILES_FOR_WORKERS || workers === 0) {
    return { parse: (text, language) => parseText(text, language, params), close: async () => undefined };
  }
  // Loaded here, not at startup: only a sync with enough to parse needs threads.
  const { Worker } = await import('node:worker_threads');
  return new PoolParser(Worker, script, workers, params);
}

interface Task {
  readonly index: number;
  readonly text: string;
  readonly language: Language;
  resolve(outcome: ParseOutcome): void;
  reject(error: Error): void;
}

/** Worker threads fed from one queue, two batches in flight per worker so none waits for a round trip. */
class PoolParser implements Parser {
  private readonly workers: Worker[] = [];
  private readonly inFlight = new Map<Worker, number>();
  private readonly queue: Task[] = [];
  private readonly waiting = new Map<number, Task>();
  private next = 0;
  private failure: Error | undefined;
  private closing = false;

  constructor(
    WorkerClass: typeof Worker,
    script: URL,
    count: number,
    private readonly params: ChunkParams,
  ) {
    for (let w = 0; w < count; w++) {
      const worker = new WorkerClass(script);
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

  parse(text: string, language: Language): Promise<ParseOutcome> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<ParseOutcome>((resolve, reject) => {
      this.queue.push({ index: this.next++, text, language, resolve, reject });
      for (const worker of this.workers) this.feed(worker);
    });
  }

  private feed(worker: Worker): void {
    while (this.inFlight.get(worker)! < 2 && this.queue.length > 0) {
      const tasks = this.queue.splice(0, BATCH);
      for (const task of tasks) this.waiting.set(task.index, task);
      worker.postMessage({ params: this.params, batch: tasks.map(({ index, text, language }) => ({ index, text, language })) } satisfies ParseRequest);
      this.inFlight.set(worker, this.inFlight.get(worker)! + 1);
    }
  }

  private fail(error: Error): void {
    this.failure = new RepodexError('INTERNAL', `parse worker failed: ${error.message}`, { cause: error });
    for (const task of [...this.waiting.values(), ...this.queue.splice(0)]) task.reject(this.failure);
    this.waiting.clear();
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
