import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTER_SOURCE, committedRepo, runCli } from '../helpers.js';
import { entryFiles, entryOf, isRunning, isolatedDaemons, registered, starts } from '../daemons.js';

// `repodex sync; repodex daemon stop` said "no daemon runs" while the daemon the command had just
// spawned came up a moment later and stayed. `daemon stop`, `daemon stop --all` and `clean` must
// stop a daemon still starting (its registry entry is written before it is spawned), say what
// they did, and leave no daemon behind.

isolatedDaemons();
const AUTO = { REPODEX_DAEMON: 'auto' };

/** Two searches in `root`: the second (repeated use) spawns a daemon before it exits; its entry, then. */
function spawnByUse(root: string): { pid: number; state: string } {
  for (let i = 0; i < 2; i++) expect(runCli(['search', 'router', '--root', root], { env: AUTO }).code).toBe(0);
  const entry = entryOf(root);
  expect(entry?.pid).toBeGreaterThan(0);
  return { pid: entry!.pid!, state: entry!.state };
}

/** No daemon for `root` is left: its process gone, its socket and its entry removed. */
function noDaemonLeft(root: string, pid: number): void {
  expect(isRunning(pid)).toBe(false);
  expect(existsSync(join(root, '.repodex', 'daemon.sock'))).toBe(false);
  expect(entryOf(root)).toBeUndefined();
  expect(entryFiles()).toBe(0);
}

describe('a daemon still starting', () => {
  let root: string;
  beforeAll(() => {
    root = committedRepo({ 'src/router.ts': ROUTER_SOURCE });
  });

  it('is never left by `sync; daemon stop`: a sync starts no daemon, and stop says so', () => {
    expect(runCli(['sync', '--root', root], { env: AUTO }).code).toBe(0);
    const stop = runCli(['daemon', 'stop', '--json', '--root', root]);
    expect(stop.code).toBe(0);
    expect(stop.json()).toEqual({ root, stopped: false, was: 'none', pid: null });
    // The sync has exited: had it spawned a daemon, the daemon's log would say so already.
    expect(starts(root)).toBe(0);
    expect(registered()).toEqual([]);
  });

  it('is stopped by `daemon stop`, which says it was starting', () => {
    const { pid, state } = spawnByUse(root);
    // Held where it is (SIGSTOP): it cannot finish starting before `daemon stop` runs.
    process.kill(pid, 'SIGSTOP');
    expect(state).toBe('starting');
    expect(entryOf(root)?.state).toBe('starting');
    const stop = runCli(['daemon', 'stop', '--root', root]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toBe(`repodex: stopped the daemon for ${root} (pid ${pid}), which was still starting\n`);
    noDaemonLeft(root, pid);
  });

  it('is stopped by `daemon stop` right after the command that spawned it, whether it serves yet or not', () => {
    for (let round = 0; round < 3; round++) {
      const { pid } = spawnByUse(root);
      const stop = runCli(['daemon', 'stop', '--root', root]);
      expect(stop.code).toBe(0);
      expect(stop.stdout).toMatch(new RegExp(`^repodex: stopped the daemon for ${root} \\(pid ${pid}\\)(, which was still starting)?\\n$`));
      noDaemonLeft(root, pid);
    }
  });

  it('is stopped by `repodex clean`, which says so and then removes the index', () => {
    const { pid } = spawnByUse(root);
    process.kill(pid, 'SIGSTOP');
    const clean = runCli(['clean', '--root', root]);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('removed');
    expect(clean.stderr).toBe(`repodex: stopped the daemon for ${root} (pid ${pid}), which was still starting\n`);
    noDaemonLeft(root, pid);
    expect(existsSync(join(root, '.repodex', 'meta.json'))).toBe(false);
    // With no daemon, clean says nothing of one.
    expect(runCli(['clean', '--root', root]).stderr).toBe('');
  });

  it('is stopped by `daemon stop --all`, with the daemons serving', async () => {
    const other = committedRepo({ 'src/router.ts': ROUTER_SOURCE });
    expect(runCli(['daemon', 'start', '--root', other]).code).toBe(0);
    const serving = entryOf(other)!.pid!;
    const { pid } = spawnByUse(root);
    process.kill(pid, 'SIGSTOP');
    const stop = runCli(['daemon', 'stop', '--all', '--json'], { cwd: '/' });
    expect(stop.code).toBe(0);
    const stopped = (stop.json() as { stopped: { root: string; was: string; pid: number; stopped: boolean }[] }).stopped;
    expect(stopped.sort((a, b) => a.pid - b.pid)).toEqual(
      [
        { root, was: 'starting', pid, stopped: true },
        { root: other, was: 'serving', pid: serving, stopped: true },
      ].sort((a, b) => a.pid - b.pid),
    );
    noDaemonLeft(root, pid);
    expect(isRunning(serving)).toBe(false);
    expect(runCli(['daemon', 'stop', '--all']).stdout).toBe('repodex: no daemon of yours runs\n');
  });
});
