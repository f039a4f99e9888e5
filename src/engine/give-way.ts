import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * How a server's background work gives way to its requests: a sync or an embedding run calls the
 * returned function between steps (before each file, each batch), and while the server's answer
 * threads have reads in hand (`answering[0]`, counted by the worker pool), it works in slices of
 * SLICE_MS with a pause of PAUSE_MS after each. With no read in hand it never pauses.
 *
 * Measured on two cores with 16 clients and two repositories rebuilding again and again (see
 * docs/benchmarks.md): on the embedded store, search p99 49.0 and 50.0 ms with 10 ms pauses
 * against 55.3 and 51.6 without any; then 20 ms against 10 ms in eight runs, 48.5, 44.5, 51.0
 * and 41.7 against 55.7, 47.1, 45.8 and 51.2, rebuilds about a fifth longer. On PostgreSQL (10 ms
 * pauses) 121–149 ms against 172 and 199 without. Lowering the threads' priority alone (nice)
 * does not do this: a request thread that wakes still finds the cores busy with the sync, its
 * garbage collection, and its reads and writes, and the database's share of a rebuild runs at
 * the database's priority. A fifth of the time at least is the sync's, so a busy server still
 * finishes every re-index.
 */
export const SLICE_MS = 5;
export const PAUSE_MS = 20;

/** The nice value of a server's background threads: syncs and embedding runs (see sync-worker.ts), and V8's and libuv's helpers (see helpersInBackground). */
export const BACKGROUND_NICE = 10;

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

/**
 * Every thread the process has so far but the main one (V8's helpers, which collect garbage and
 * compile for every thread of the process, the syncs' large heaps included; libuv's I/O threads;
 * the file watcher's) runs at the syncs' lower priority, on Linux, where a thread's priority is
 * its own. At the requests' priority they took the cores from the threads answering requests,
 * and from the clients waiting for the answers: on two cores, a compile or a collection that runs
 * on after an answer is written delays the client that reads it. Threads that answer requests
 * must not exist yet: the team server calls this before it starts its answer threads;
 * `serve --stdio`/`--mcp` and the daemon, which answer on the main thread, once the index is
 * loaded and warm, so that the threads started for that are lowered too.
 */
export function helpersInBackground(): void {
  let threads: string[];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    return; // not Linux
  }
  for (const thread of threads) if (Number(thread) !== process.pid) lowerPriority(Number(thread));
}

/**
 * Run `thread` (0: the calling one) at BACKGROUND_NICE, or leave it where it is when it already
 * runs lower (a server started with `nice -n 15` keeps its threads at 15: this never raises one
 * above the thread answering requests). Quietly does nothing where it is not allowed (a sandbox).
 */
export function lowerPriority(thread = 0): void {
  try {
    if (getPriority(thread) < BACKGROUND_NICE) setPriority(thread, BACKGROUND_NICE);
  } catch {
    // Not allowed here, or the thread has ended: it keeps its priority.
  }
}
