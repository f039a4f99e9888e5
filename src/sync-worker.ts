import { parentPort, workerData } from 'node:worker_threads';
import { createEmbedder, openStore } from './compose.js';
import { RepodexError, errorMessage, isRepodexError } from './core/errors.js';
import { loadContext } from './engine/context.js';
import { runEmbed } from './engine/embed.js';
import { type SyncEvent, runSync } from './engine/sync.js';
import { drive } from './engine/sync-runner.js';
import type { AnswerSettings, SyncJobResult, WorkerData, WorkerMessage, WorkerReply } from './engine/worker-runner.js';
import { Engine } from './engine/engine.js';
import { RecentMap } from './core/recent-map.js';
import { type OutlineParser, outlineThread } from './engine/outline-thread.js';
import { givingWay, lowerPriority } from './engine/give-way.js';
import type { IndexStore, StoreSpec } from './store/backend.js';

// Runs in a worker thread of a server: whole syncs (plan, read, parse, build, write, commit) or
// embedding runs, one job at a time, or reads to answer (searches, fetches, outlines whose
// freshness the server has checked), as many as it is handed, of whichever repository a job names,
// so the thread talking to clients never does that work. A thread does one kind of job (its lane's). The worker keeps the
// stores and engines it opened (and so their segments, parse caches and loaded views) for later
// jobs of the same repository; the server holds the writer lock for syncs, the embedding run
// takes the vectors lock itself.

/** Stores kept for later jobs, least recently used first. */
const STORES_KEPT = 32;
const stores = new RecentMap<string, IndexStore>(STORES_KEPT);

function storeFor(root: string, spec: StoreSpec): IndexStore {
  const key = `${root}\0${JSON.stringify(spec)}`;
  let store = stores.get(key);
  if (!store) stores.set(key, (store = openStore(root, spec)));
  return store;
}

/** Progress sent to the server at most this often (the first and last of a phase always go). */
const PROGRESS_EVERY_MS = 100;

/** Hand a job's progress to the server, at most every PROGRESS_EVERY_MS for counted steps. */
function progressTo(id: number): (event: SyncEvent) => void {
  let last = 0;
  return (event) => {
    const counted = 'done' in event && 'total' in event;
    const now = Date.now();
    if (counted && event.done !== 0 && event.done !== event.total && now - last < PROGRESS_EVERY_MS) return;
    last = now;
    parentPort?.postMessage({ id, event: counted && event.type === 'index' ? { ...event, path: '' } : event } satisfies WorkerReply);
  };
}

/** Engines of the repositories this thread answers reads for (an answer thread), least recently used first: as many as a server keeps open. */
const ENGINES_KEPT = 256;
const engines = new RecentMap<string, Engine>(ENGINES_KEPT);

/** Where this answer thread's engines outline large files: a thread of its own (see outline-thread.ts). */
let outlines: OutlineParser | undefined;

function engineFor(root: string, spec: StoreSpec, settings: AnswerSettings): Engine {
  const key = `${root}\0${JSON.stringify(spec)}\0${JSON.stringify(settings)}`;
  let engine = engines.get(key);
  if (!engine) {
    engine = new Engine(root, openStore(root, spec), { autoIndex: false, outlineParser: (outlines ??= outlineThread()), ...(settings.ranking ? { ranking: settings.ranking } : {}), ...(settings.limits ? { limits: settings.limits } : {}) });
    engines.set(key, engine);
  }
  return engine;
}

let background = false;

/**
 * Syncs and embedding runs are background work: the first one lowers this thread's priority. On
 * Linux a thread's priority is its own (and threads it starts inherit it): the kernel then gives
 * a core to the threads answering requests first, so a re-index uses what requests leave idle
 * instead of taking turns with them. Answer threads keep the process's priority.
 */
function runInBackground(): void {
  if (background) return;
  background = true;
  lowerPriority();
}

async function runJob(message: Extract<WorkerMessage, { type: 'job' }>, signal: AbortSignal): Promise<SyncJobResult> {
  const { root, job } = message;
  if (job.type === 'answer') return { type: 'answered', answered: await engineFor(root, message.store, job.settings).answer(job.job) };
  runInBackground();
  const onEvent = progressTo(message.id);
  const store = storeFor(root, message.store);
  const ctx = loadContext(root);
  if (job.type === 'embed') {
    const embedder = await createEmbedder(root, ctx.loaded.config);
    if (!embedder) throw new RepodexError('BAD_REQUEST', 'embeddings are off (embeddings.provider in .repodex/config.json)');
    try {
      return { type: 'embedded', summary: await drive(runEmbed(ctx, store, embedder, { signal, giveWay }), onEvent) };
    } finally {
      await embedder.close();
    }
  }
  // Two threads are already busy: the server answering requests and this one. Parse workers
  // take only the cores beyond those, so requests stay fast while the index is rebuilt.
  return { type: 'done', summary: await drive(runSync(ctx, store, { force: job.force, signal, reservedCores: 2, giveWay }), onEvent) };
}

/** Syncs and embedding runs give way to the answer threads' reads (see give-way.ts). */
const pool = workerData as WorkerData | undefined;
const giveWay = pool ? givingWay(pool.answering) : undefined;

const port = parentPort;
if (port) {
  let current: { id: number; controller: AbortController } | undefined;
  port.on('message', (message: WorkerMessage) => {
    if (message.type === 'abort') {
      if (current?.id === message.id) current.controller.abort();
      return;
    }
    const controller = new AbortController();
    current = { id: message.id, controller };
    void (async () => {
      let result: SyncJobResult;
      try {
        result = await runJob(message, controller.signal);
      } catch (error) {
        result = isRepodexError(error) ? { type: 'failed', error: error.toWire() } : { type: 'failed', error: { code: 'INTERNAL', detail: errorMessage(error) } };
      }
      current = undefined;
      port.postMessage({ id: message.id, result } satisfies WorkerReply);
    })();
  });
}
