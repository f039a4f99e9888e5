import { parentPort, workerData } from 'node:worker_threads';
import { type PrepareOptions, type PrepareTask, type PreparedFile, prepareFile } from './prepare-file.js';

/** A batch of files for one worker, and its answer. */
export interface WorkerRequest {
  readonly batch: readonly (PrepareTask & { readonly index: number })[];
}

/** Prepared files by their index in the walk. */
export interface WorkerResponse {
  readonly results: readonly { readonly index: number; readonly file: PreparedFile }[];
}

// Runs in a worker thread: prepares (reads, parses, chunks) batches of files for a sync. Each
// worker loads its own grammars: tree-sitter state lives per thread.
const port = parentPort;
if (port) {
  const options = workerData as PrepareOptions;
  port.on('message', (request: WorkerRequest) => {
    void (async () => {
      const results: { index: number; file: PreparedFile }[] = [];
      for (const task of request.batch) results.push({ index: task.index, file: await prepareFile(task, options) });
      port.postMessage({ results } satisfies WorkerResponse);
    })();
  });
}
