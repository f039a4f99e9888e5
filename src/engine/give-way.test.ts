import { existsSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BACKGROUND_NICE, PAUSE_MS, SLICE_MS, givingWay, lowerPriority } from './give-way.js';

describe('giving way', () => {
  it('never pauses with no read in hand, and pauses after each slice while there are', async () => {
    const answering = new Int32Array(new SharedArrayBuffer(4));
    let now = 1000;
    const giveWay = givingWay(answering, () => now);
    now += 10 * SLICE_MS;
    expect(giveWay()).toBeUndefined();
    Atomics.store(answering, 0, 3);
    // The slice began when the reads came: no pause until it is spent.
    expect(giveWay()).toBeUndefined();
    now += SLICE_MS - 1;
    expect(giveWay()).toBeUndefined();
    now += 1;
    const pause = giveWay();
    expect(pause).toBeInstanceOf(Promise);
    const waited = performance.now();
    await pause;
    expect(performance.now() - waited).toBeGreaterThanOrEqual(PAUSE_MS - 1);
    // A new slice after the pause.
    expect(giveWay()).toBeUndefined();
    now += SLICE_MS;
    expect(giveWay()).toBeInstanceOf(Promise);
    // The reads are answered: no more pauses.
    Atomics.store(answering, 0, 0);
    now += 10 * SLICE_MS;
    expect(giveWay()).toBeUndefined();
  });
});

/** A worker thread that waits until told to stop, and its thread id (which it reads from Linux's /proc/thread-self). */
async function idleThread(): Promise<{ tid: number; stop: () => Promise<number> }> {
  const code = "const { parentPort } = require('node:worker_threads'); parentPort.once('message', () => process.exit(0)); parentPort.postMessage(require('node:fs').readlinkSync('/proc/thread-self'));";
  const worker = new Worker(code, { eval: true });
  const link = await new Promise<string>((resolve) => worker.once('message', resolve));
  return {
    tid: Number(link.split('/').pop()),
    stop: () => {
      worker.postMessage('stop');
      return new Promise((resolve) => worker.once('exit', resolve));
    },
  };
}

describe.skipIf(!existsSync('/proc/self/task'))('lowering a thread', () => {
  it('runs it at the background nice value, and never raises one already lower', async () => {
    const plain = await idleThread();
    const low = await idleThread();
    try {
      lowerPriority(plain.tid);
      expect(getPriority(plain.tid)).toBe(Math.max(getPriority(), BACKGROUND_NICE));
      setPriority(low.tid, BACKGROUND_NICE + 5);
      lowerPriority(low.tid);
      expect(getPriority(low.tid)).toBe(BACKGROUND_NICE + 5);
    } finally {
      await plain.stop();
      await low.stop();
    }
  });
});
