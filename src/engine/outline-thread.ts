import type { Worker } from 'node:worker_threads';
import { bundledScript } from '../core/bundled.js';
import { RecentMap } from '../core/recent-map.js';
import { RepodexError } from '../core/errors.js';
import type { Analysis } from '../lang/index.js';
import type { Language } from '../scan/language.js';
import type { OutlineRequest, OutlineResponse } from './parse-worker.js';

/** Outlines files elsewhere than the calling thread (see `outlineThread`). */
export interface OutlineParser {
  /** `contentHash`: of the text the caller read (`contentHashOf`), which keeps the answer for the same content asked again. */
  analyze(language: Language, text: string, contentHash: string): Promise<Analysis>;
  /** Whether its thread is running now (it stops when idle). */
  readonly running: boolean;
}

/** The thread stops after this long without a file to outline, and gives back its memory. */
const IDLE_MS = 30_000;
/** Outlines kept by content, for a large file asked for again (a 1 MB declaration file has thousands of symbols). */
const OUTLINES_KEPT = 16;
/** Same as a sync's parse workers (see parse-pool.ts): parsing allocates short-lived nodes by the million. */
const YOUNG_GENERATION_MB = 4;

/**
 * A thread of its own that outlines what the index has no outline for and is large (a file over
 * the size a sync parses, or one changed since): a server's answer thread answers every other
 * request while it parses, instead of holding them all up — parsing a 1 MB declaration file takes
 * about a second here. The thread starts on the first file and stops when idle; tree-sitter's
 * memory, which grows to the largest file parsed and never shrinks, goes with it. Undefined when
 * running from sources (no bundled worker script).
 */
export function outlineThread(options: { readonly script?: URL; readonly idleMs?: number } = {}): OutlineParser | undefined {
  const script = options.script ?? bundledScript('parse-worker.js');
  return script ? new OutlineThread(script, options.idleMs ?? IDLE_MS) : undefined;
}

class OutlineThread implements OutlineParser {
  private worker: Worker | undefined;
  private starting: Promise<Worker> | undefined;
  private readonly waiting = new Map<number, { resolve(analysis: Analysis): void; reject(error: Error): void }>();
  private readonly kept = new RecentMap<string, Analysis>(OUTLINES_KEPT);
  private nextId = 0;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly script: URL,
    private readonly idleMs: number,
  ) {}

  get running(): boolean {
    return this.worker !== undefined;
  }

  async analyze(language: Language, text: string, contentHash: string): Promise<Analysis> {
    const key = `${language}\0${contentHash}`;
    const kept = this.kept.get(key);
    if (kept) return kept;
    const worker = await (this.starting ??= this.start());
    clearTimeout(this.idle);
    const id = ++this.nextId;
    const analysis = await new Promise<Analysis>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage({ outline: { id, language, text } } satisfies OutlineRequest);
    });
    this.kept.set(key, analysis);
    return analysis;
  }

  private async start(): Promise<Worker> {
    const { Worker: WorkerClass } = await import('node:worker_threads');
    const worker = new WorkerClass(this.script, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    this.worker = worker;
    worker.on('message', (reply: OutlineResponse) => {
      const waiting = this.waiting.get(reply.id);
      if (!waiting) return;
      this.waiting.delete(reply.id);
      if ('error' in reply) waiting.reject(new RepodexError('INTERNAL', `outline thread: ${reply.error}`));
      else waiting.resolve(reply.analysis);
      if (this.waiting.size === 0) this.rest(worker);
    });
    const gone = (error: Error): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.starting = undefined;
      clearTimeout(this.idle);
      for (const waiting of this.waiting.values()) waiting.reject(new RepodexError('INTERNAL', `outline thread failed: ${error.message}`, { cause: error }));
      this.waiting.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`exited with code ${code}`)));
    return worker;
  }

  /** Nothing in hand: the thread must not keep the process alive, and stops after IDLE_MS. */
  private rest(worker: Worker): void {
    worker.unref();
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.worker !== worker || this.waiting.size > 0) return;
      this.worker = undefined;
      this.starting = undefined;
      void worker.terminate();
    }, this.idleMs);
    this.idle.unref();
  }
}
