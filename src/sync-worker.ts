import { parentPort, workerData } from 'node:worker_threads';
import { createStore } from './compose.js';
import { errorMessage, isRepodexError } from './core/errors.js';
import { loadContext } from './engine/context.js';
import { runSync } from './engine/sync.js';
import { drive } from './engine/sync-runner.js';
import type { SyncJob, SyncJobResult } from './engine/worker-runner.js';

// Runs in a worker thread of a server: whole syncs (plan, read, parse, build, write, commit), so
// the thread answering requests never does sync work. The worker keeps its store (and so its
// opened segments and parse cache) across syncs; the server holds the writer lock for it.
const port = parentPort;
if (port) {
  const { root } = workerData as { root: string };
  const store = createStore(root);
  let current: AbortController | undefined;
  port.on('message', (message: SyncJob | { type: 'abort' }) => {
    if (message.type === 'abort') {
      current?.abort();
      return;
    }
    const controller = new AbortController();
    current = controller;
    void (async () => {
      let result: SyncJobResult;
      try {
        // Two threads are already busy: the server answering requests and this one. Parse workers
        // take only the cores beyond those, so requests stay fast while the index is rebuilt.
        const summary = await drive(runSync(loadContext(root), store, { force: message.force, signal: controller.signal, reservedCores: 2 }));
        result = { type: 'done', summary };
      } catch (error) {
        result = isRepodexError(error) ? { type: 'failed', error: error.toWire() } : { type: 'failed', error: { code: 'INTERNAL', detail: errorMessage(error) } };
      }
      current = undefined;
      port.postMessage(result);
    })();
  });
}
