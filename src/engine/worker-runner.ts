import type { Worker } from 'node:worker_threads';
import { type ErrorCode, RepodexError } from '../core/errors.js';
import type { RepoContext } from './context.js';
import { bundledScript } from '../core/bundled.js';
import type { EmbedSummary } from './embed.js';
import type { SyncSummary } from './sync.js';
import { type SyncRunner, inProcessRunner } from './sync-runner.js';
import type { IndexStore, StoreSpec } from '../store/backend.js';

/** A job for a worker: a sync, or an embedding run with the embedder the config names. */
export type SyncJob = { readonly type: 'sync'; readonly force: boolean } | { readonly type: 'embed' };

/** How a job ended. */
export type SyncJobResult =
  | { readonly type: 'done'; readonly summary: SyncSummary }
  | { readonly type: 'embedded'; readonly summary: EmbedSummary }
  | { readonly type: 'failed'; readonly error: { code: ErrorCode; detail: string | undefined } };

/** One worker thread running one job at a time. */
interface Channel {
  run(job: SyncJob, signal: AbortSignal | undefined): Promise<SyncJobResult>;
  close(): Promise<void>;
}

function channel(script: string | URL, root: string, store: StoreSpec): Channel {
  let worker: Worker | undefined;
  let pending: { resolve(result: SyncJobResult): void; reject(error: Error): void } | undefined;
  const start = async (): Promise<Worker> => {
    if (worker) return worker;
    const { Worker: WorkerClass } = await import('node:worker_threads');
    const started = new WorkerClass(script, { workerData: { root, store } });
    // Idle, the worker must not keep the process alive; while it runs a job, it must.
    started.unref();
    started.on('message', (result: SyncJobResult) => {
      started.unref();
      const job = pending;
      pending = undefined;
      job?.resolve(result);
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
    async run(job, signal) {
      const target = await start();
      if (pending) throw new RepodexError('INTERNAL', 'the worker is already running a job');
      const abort = (): void => target.postMessage({ type: 'abort' });
      // One listener per job, removed when it ends: a watch loop hands every sync the same signal.
      signal?.addEventListener('abort', abort, { once: true });
      try {
        return await new Promise<SyncJobResult>((resolve, reject) => {
          pending = { resolve, reject };
          target.ref();
          target.postMessage(job);
        });
      } finally {
        signal?.removeEventListener('abort', abort);
      }
    },
    async close() {
      const target = worker;
      worker = undefined;
      // An idle worker is unref'd: ref it while it stops, or nothing keeps the event loop alive
      // until it has, and a process awaiting this at the top level ends with Node's exit code 13.
      target?.ref();
      await target?.terminate();
    },
  };
}

function unwrap<T extends SyncJobResult['type']>(result: SyncJobResult, type: T): Extract<SyncJobResult, { type: T }> {
  if (result.type === 'failed') throw RepodexError.fromWire(result.error);
  if (result.type !== type) throw new RepodexError('INTERNAL', `the worker answered ${result.type} to a ${type} job`);
  return result as Extract<SyncJobResult, { type: T }>;
}

/**
 * Syncs and embedding runs in worker threads (dist/sync-worker.js), each started on first use and
 * kept for later jobs: a server's request thread stays free while the index is rebuilt or
 * embedded. Embedding has its own worker, so a long embedding run never holds up a lexical sync.
 * Falls back to this thread when the worker script is not there (running from sources).
 */
export function workerRunner(root: string, spec: StoreSpec, store: IndexStore): SyncRunner {
  const script = bundledScript('sync-worker.js');
  if (!script) return inProcessRunner(store);
  const syncs = channel(script, root, spec);
  const embeds = channel(script, root, spec);
  return {
    async run(_ctx: RepoContext, options) {
      return unwrap(await syncs.run({ type: 'sync', force: options.force === true }, options.signal), 'done').summary;
    },
    // The worker makes its own embedder from the config: an embedder is not something a thread can be handed.
    async embed(_ctx, _embedder, options) {
      return unwrap(await embeds.run({ type: 'embed' }, options.signal), 'embedded').summary;
    },
    async close() {
      await Promise.all([syncs.close(), embeds.close()]);
    },
  };
}
