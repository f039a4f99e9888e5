import { describe, expect, it } from 'vitest';
import { PAUSE_MS, SLICE_MS, givingWay } from './give-way.js';

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
