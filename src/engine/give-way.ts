/**
 * How a server's background work gives way to its requests: a sync or an embedding run calls the
 * returned function between steps (before each file, each batch), and while the server's answer
 * threads have reads in hand (`answering[0]`, counted by the worker pool), it works in slices of
 * SLICE_MS with a pause of PAUSE_MS after each. With no read in hand it never pauses.
 *
 * Measured on two cores with 16 clients and two repositories rebuilding again and again (see
 * docs/benchmarks.md): search p99 49.0 and 50.0 ms against 55.3 and 51.6 on the embedded store,
 * 149 and 122 against 172 and 199 ms on PostgreSQL; the rebuilds took 1.3–1.8 times as long.
 * Lowering the threads' priority alone (nice) does not do this: a request thread that wakes still
 * finds the cores busy with the sync, its garbage collection, and its reads and writes. A third of
 * the time at least is the sync's, so a busy server still finishes every re-index.
 */
export const SLICE_MS = 5;
export const PAUSE_MS = 10;

/** The step hook of background work given the pool's count of reads in hand (see above). */
export function givingWay(answering: Int32Array, clock: () => number = () => performance.now()): () => Promise<void> | undefined {
  let sliceStarted = clock();
  return () => {
    if (Atomics.load(answering, 0) === 0) {
      sliceStarted = clock();
      return undefined;
    }
    if (clock() - sliceStarted < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        sliceStarted = clock();
        resolve();
      }, PAUSE_MS),
    );
  };
}
