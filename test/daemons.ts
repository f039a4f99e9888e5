// What the tests of daemons share: a registry of their own (so the limits never stop another
// test's or a user's daemons, and theirs never count here), and positive signals to wait for — the
// registry's entries and the lines of a daemon's log — instead of sleeping and checking an absence.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { type DaemonEntry, DaemonRegistry } from '../src/frontends/cli/daemon-registry.js';

export { isRunning } from '../src/frontends/cli/daemon-registry.js';
import { runCli, tempDir } from './helpers.js';

/**
 * Give this test file's daemons a registry of their own (REPODEX_DAEMON_DIR, read by every CLI
 * process the helpers start and by daemons run in this process), and stop them all afterwards.
 */
export function isolatedDaemons(): string {
  const dir = tempDir('repodex-daemons-');
  process.env.REPODEX_DAEMON_DIR = dir;
  afterAll(() => {
    if (process.env.REPODEX_DAEMON_DIR === dir) runCli(['daemon', 'stop', '--all'], { cwd: dir });
  });
  return dir;
}

/** The entries of this file's registry whose processes live (least recently used first). */
export function registered(): DaemonEntry[] {
  return DaemonRegistry.open().all();
}

/** The entry of `root`'s daemon, stale or not. */
export function entryOf(root: string): DaemonEntry | undefined {
  return DaemonRegistry.open().read(root);
}

/** How many entry files the registry folder holds, stale ones included (none is pruned by counting). */
export function entryFiles(): number {
  return readdirSync(process.env.REPODEX_DAEMON_DIR!).filter((name) => name.endsWith('.json')).length;
}

/** `root`'s daemon log (empty when none was written). */
export function daemonLog(root: string): string {
  const path = join(root, '.repodex', 'daemon.log');
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/** How many times a daemon was spawned for `root`: the spawning command logs it before it exits. */
export function starts(root: string): number {
  return daemonLog(root)
    .split('\n')
    .filter((line) => line.includes('repodex daemon: starting for')).length;
}

/** Wait for `done` (polling every 50 ms, up to `timeoutMs`): whether it came true. */
export async function until(done: () => boolean, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Send one frame to the daemon's socket as a client would, and read everything it answers. */
export function rawCall(path: string, frame: object): Promise<string> {
  return new Promise((resolve) => {
    const client = connect(path);
    let text = '';
    client.setEncoding('utf8');
    client.on('connect', () => client.write(`${JSON.stringify(frame)}\n`));
    client.on('data', (chunk: string) => (text += chunk));
    client.on('close', () => resolve(text));
  });
}
