import { parentPort, workerData } from 'node:worker_threads';
import { createEmbedder, openStore } from './compose.js';
import { RepodexError, errorMessage, isRepodexError } from './core/errors.js';
import { loadContext } from './engine/context.js';
import { runEmbed } from './engine/embed.js';
import { runSync } from './engine/sync.js';
import { drive } from './engine/sync-runner.js';
import type { SyncJob, SyncJobResult } from './engine/worker-runner.js';
import type { StoreSpec } from './store/backend.js';

// Runs in a worker thread of a server: whole syncs (plan, read, parse, build, write, commit) or
// embedding runs, so the thread answering requests never does that work. The worker keeps its
// store (and so its opened segments and parse cache) across jobs; the server holds the writer
// lock for syncs, the embedding run takes the vectors lock itself.
const port = parentPort;
if (port) {
  const { root, store: spec } = workerData as { root: string; store: StoreSpec };
  const store = openStore(root, spec);
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
        const ctx = loadContext(root);
        if (message.type === 'embed') {
          const embedder = await createEmbedder(root, ctx.loaded.config);
          if (!embedder) throw new RepodexError('BAD_REQUEST', 'embeddings are off (embeddings.provider in .repodex/config.json)');
          try {
            result = { type: 'embedded', summary: await drive(runEmbed(ctx, store, embedder, { signal: controller.signal })) };
          } finally {
            await embedder.close();
          }
        } else {
          // Two threads are already busy: the server answering requests and this one. Parse workers
          // take only the cores beyond those, so requests stay fast while the index is rebuilt.
          const summary = await drive(runSync(ctx, store, { force: message.force, signal: controller.signal, reservedCores: 2 }));
          result = { type: 'done', summary };
        }
      } catch (error) {
        result = isRepodexError(error) ? { type: 'failed', error: error.toWire() } : { type: 'failed', error: { code: 'INTERNAL', detail: errorMessage(error) } };
      }
      current = undefined;
      port.postMessage(result);
    })();
  });
}
