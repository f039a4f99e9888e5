// A stand-in for dist/sync-worker.js in the worker pool's tests: it speaks the same messages, and
// "syncs" by waiting `force ? 1500 : 40` ms (or until aborted), then answers with the root it was
// given, the thread it ran on, when it started and ended, and how many reads the pool's answer
// threads had in hand when it started. It "answers" a read after `job.waitMs` ms.
import { parentPort, threadId, workerData } from 'node:worker_threads';

let current;
parentPort.on('message', (message) => {
  if (message.job?.type === 'answer') {
    setTimeout(() => parentPort.postMessage({ id: message.id, result: { type: 'answered', answered: { data: { root: message.root, thread: threadId }, generation: null } } }), message.job.job.waitMs);
    return;
  }
  if (message.type === 'abort') {
    if (current?.id === message.id) current.abort();
    return;
  }
  let timer;
  const finish = (result) => {
    clearTimeout(timer);
    summary.ended = Date.now();
    current = undefined;
    parentPort.postMessage({ id: message.id, result });
  };
  current = { id: message.id, abort: () => finish({ type: 'failed', error: { code: 'ABORTED', detail: undefined } }) };
  const summary = { root: message.root, thread: threadId, started: Date.now(), answering: workerData ? Atomics.load(workerData.answering, 0) : null };
  timer = setTimeout(() => finish(message.job.type === 'embed' ? { type: 'embedded', summary } : { type: 'done', summary }), message.job.force ? 1500 : 40);
});
