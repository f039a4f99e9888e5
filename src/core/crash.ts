import { existsSync, writeFileSync } from 'node:fs';

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

/** A point where a sync can be held still for a test (see `pausePoint`). */
export type PausePoint = 'before-commit';

let paused = false;

/**
 * Named pause points, for tests that make something happen at a known moment of a sync (a
 * database restarted while it holds its connections): with `REPODEX_PAUSE_AT=<name>` and
 * `REPODEX_PAUSE_FILE=<path>`, the process creates `<path>` (holding its pid) when it reaches the
 * point, and goes on once `<path>` is removed; once per thread (a server's later syncs go on). The
 * event loop keeps turning meanwhile, so what happens to its connections is seen as it would be.
 * Unset, this is one environment lookup.
 */
export async function pausePoint(name: PausePoint): Promise<void> {
  if (process.env.REPODEX_PAUSE_AT !== name || paused) return;
  const file = process.env.REPODEX_PAUSE_FILE;
  if (!file) return;
  paused = true;
  writeFileSync(file, String(process.pid));
  while (existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * A fault to inject for the tests of how failures are shown: with `REPODEX_FAULT_AT=request`, every
 * request fails with a plain Error, as a bug would (an internal error: one line, its stack in the
 * error log). Unset, this is one environment lookup.
 */
export function faultPoint(name: 'request'): void {
  if (process.env.REPODEX_FAULT_AT === name) throw new Error(`a fault injected at ${name} (REPODEX_FAULT_AT)`);
}
