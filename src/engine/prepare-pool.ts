import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { RepodexError } from '../core/errors.js';
import { type PrepareOptions, type PrepareTask, type PreparedFile, prepareFile } from './prepare-file.js';
import type { WorkerRequest, WorkerResponse } from './sync-worker.js';

/** Files per message: large enough to amortize messaging, small enough to balance the load. */
const BATCH = 8;
/** Below this many files to parse, worker start-up (runtime and grammar loading) costs more than it saves. */
export const MIN_FILES_FOR_WORKERS = 96;

/** Prepares files for a sync, in worker threads when available, handing results back in walk order. */
export interface Preparer {
  /** The prepared file at `index` of the tasks; call in increasing index order. */
  get(index: number): Promise<PreparedFile>;
  close(): Promise<void>;
}

/**
 * The bundled worker script, when running from the build (not from sources): dist/sync-worker.js,
 * found from this module whether the bundler left it in dist/ or in a shared chunk under it.
 */
function workerScript(): URL | undefined {
  for (const relative of ['./sync-worker.js', '../sync-worker.js']) {
    const url = new URL(relative, import.meta.url);
    if (url.protocol === 'file:' && existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
}

/**
 * A preparer for `tasks` (undefined entries are handled by the caller and skipped here): worker
 * threads when the build has its worker script and there is enough to parse, else in-process.
 */
export async function createPreparer(tasks: readonly (PrepareTask | undefined)[], options: PrepareOptions, parseCount: number): Promise<Preparer> {
  const script = workerScript();
  const requested = process.env.REPODEX_SYNC_WORKERS;
  const workers = requested !== undefined && /^\d+$/.test(requested) ? Number(requested) : Math.min(4, Math.max(1, availableParallelism()));
  if (!script || parseCount < MIN_FILES_FOR_WORKERS || workers === 0) return inlinePreparer(tasks, options);
  // Loaded here, not at startup: only a sync with enough to parse needs threads.
  const { Worker } = await import('node:worker_threads');
  return new PoolPreparer(Worker, script, workers, tasks, options);
}

function inlinePreparer(tasks: readonly (PrepareTask | undefined)[], options: PrepareOptions): Preparer {
  return {
    get(index) {
      const task = tasks[index];
      if (!task) throw new RepodexError('INTERNAL', `no prepare task at ${index}`);
      return prepareFile(task, options);
    },
    async close() {},
  };
}

interface Pending {
  resolve(file: PreparedFile): void;
  reject(error: Error): void;
  promise: Promise<PreparedFile>;
}

class PoolPreparer implements Preparer {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private failure: Error | undefined;
  private closing = false;

  constructor(
    WorkerClass: typeof Worker,
    script: URL,
    count: number,
    private readonly tasks: readonly (PrepareTask | undefined)[],
    options: PrepareOptions,
  ) {
    for (let i = 0; i < tasks.length; i++) {
      if (!tasks[i]) continue;
      let resolve!: (file: PreparedFile) => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<PreparedFile>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => undefined); // observed by get(); never an unhandled rejection
      this.pending.set(i, { resolve, reject, promise });
    }
    for (let w = 0; w < count; w++) {
      const worker = new WorkerClass(script, { workerData: options });
      worker.on('message', (response: WorkerResponse) => {
        for (const { index, file } of response.results) this.pending.get(index)?.resolve(file);
        this.feed(worker);
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        // Any exit before close() leaves its batches unanswered: fail them rather than wait forever.
        if (!this.closing && !this.failure) this.fail(new Error(`sync worker exited with code ${code}`));
      });
      this.workers.push(worker);
      // Two batches in flight per worker, so it never waits for a round trip.
      this.feed(worker);
      this.feed(worker);
    }
  }

  private feed(worker: Worker): void {
    const batch: WorkerRequest['batch'][number][] = [];
    while (batch.length < BATCH && this.next < this.tasks.length) {
      const index = this.next++;
      const task = this.tasks[index];
      if (task) batch.push({ ...task, index });
    }
    if (batch.length > 0) worker.postMessage({ batch } satisfies WorkerRequest);
  }

  private fail(error: Error): void {
    this.failure = error;
    const wrapped = new RepodexError('INTERNAL', `sync worker failed: ${error.message}`, { cause: error });
    for (const pending of this.pending.values()) pending.reject(wrapped);
  }

  get(index: number): Promise<PreparedFile> {
    const pending = this.pending.get(index);
    if (!pending) return Promise.reject(new RepodexError('INTERNAL', `no prepare task at ${index}`));
    return pending.promise.finally(() => this.pending.delete(index));
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
