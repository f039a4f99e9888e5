/**
 * Named crash points for the crash-safety tests: with `REPODEX_CRASH_AT=<name>` in the
 * environment, the process kills itself (SIGKILL, no cleanup) the moment a write reaches that
 * point, so every window of a commit is tested deterministically instead of by random timing.
 * Unset, this is one environment lookup.
 */
export type CrashPoint =
  | 'segment-written'
  | 'segment-renamed'
  | 'manifest-written'
  | 'meta-written'
  | 'committed'
  | 'gc'
  | 'cache-appended';

/** Every crash point, in the order a commit reaches them. */
export const CRASH_POINTS: readonly CrashPoint[] = ['segment-written', 'segment-renamed', 'manifest-written', 'meta-written', 'committed', 'gc', 'cache-appended'];

/** Die here if the environment asks to (tests only). */
export function crashPoint(name: CrashPoint): void {
  if (process.env.REPODEX_CRASH_AT !== name) return;
  process.kill(process.pid, 'SIGKILL');
  // Delivery is immediate in practice; block so not one more instruction of the caller runs.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
}
