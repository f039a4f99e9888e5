import type { Worker } from 'node:worker_threads';
import { type ErrorCode, RepodexError } from '../core/errors.js';
import type { RepoContext } from './context.js';
import { bundledScript } from '../core/bundled.js';
import type { SyncSummary } from './sync.js';
import { type SyncRunner, inProcessRunner } from './sync-runner.js';
import type { IndexStore } from '../store/backend.js';

/** A sync for the worker to run. */
export interface SyncJob {
  readonly type: 'sync';
  readonly force: boolean;
}

/** How a job ended. */
export type SyncJobResult = { readonly type: 'done'; readonly summary: SyncSummary } | { readonly type: 'failed'; readonly error: { code: ErrorCode; detail: string | undefined } };

/**
 * Syncs in a worker thread (dist/sync-worker.js), started on first use and kept for later syncs:
 * a server's request thread stays free while the index is rebuilt. Falls back to this thread when
 * the worker script is not there (running from sources).
 */
export function workerRunner(root: string, store: IndexStore): SyncRunner {
  const script = bundledScript('sync-worker.js');
  if (!script) return inProcessRunner(store);
  let worker: Worker | undefined;
  let pending: { resolve(summary: SyncSummary): void; reject(error: Error): void } | undefined;
  const start = async (): Promise<Worker> => {
    if (worker) return worker;
    const { Worker: WorkerClass } = await import('node:worker_threads');
    const started = new WorkerClass(script, { workerData: { root } });
    // Idle, the worker must not keep the process alive; while it runs a sync, it must.
    started.unref();
    started.on('message', (result: SyncJobResult) => {
      started.unref();
      const job = pending;
      pending = undefined;
      if (!job) return;
      if (result.type === 'done') job.resolve(result.summary);
      else job.reject(RepodexError.fromWire(result.error));
    });
    const fail = (error: Error): void => {
      worker = undefined;
      const job = pending;
      pending = undefined;
      job?.reject(new RepodexError('INTERNAL', `sync worker failed: ${error.message}`, { cause: error }));
    };
    started.on('error', fail);
    started.on('exit', (code) => fail(new Error(`exited with code ${code}`)));
    worker = started;
    return started;
  };
  return {
    async run(_ctx: RepoContext, options) {
      const target = await start();
      if (pending) throw new RepodexError('INTERNAL', 'the sync worker is already running a sync');
      return new Promise<SyncSummary>((resolve, reject) => {
        pending = { resolve, reject };
        const abort = (): void => target.postMessage({ type: 'abort' });
        options.signal?.addEventListener('abort', abort, { once: true });
        target.ref();
        target.postMessage({ type: 'sync', force: options.force === true } satisfies SyncJob);
      });
    },
    async close() {
      const target = worker;
      worker = undefined;
      await target?.terminate();
    },
  };
}
