import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

/** A lock file as repodex wrote it before locks recorded the holder's start time and boot id. */
function writeOldLock(root: string, pid: number, started: Date): void {
  mkdirSync(join(root, '.repodex'), { recursive: true });
  writeFileSync(join(root, '.repodex/lock'), JSON.stringify({ pid, host: hostname(), started: started.toISOString() }));
}

const ON_LINUX = existsSync('/proc/uptime') && existsSync('/proc/self/stat');

describe('N20: a lock written by an older repodex', () => {
  it.runIf(ON_LINUX)('N20: one held by a live pid does not block sync forever: stale when older than this boot, or when its pid started after it', async () => {
    const root = makeRepo({ 'a.ts': 'export const a = 1;\n' });
    // The report's lock: pid 1 is alive, but the lock is from before this boot.
    writeOldLock(root, 1, new Date('2000-01-01T00:00:00.000Z'));
    const first = runCli(['sync', '--root', root]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(existsSync(join(root, '.repodex/lock'))).toBe(false);

    // A live process that started after the lock was written: its pid was reused.
    const later: ChildProcess = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeOldLock(root, later.pid!, new Date(Date.now() - 3_600_000));
      writeFileSync(join(root, 'b.ts'), 'export const b = 2;\n');
      const second = runCli(['sync', '--root', root]);
      expect(second.code, second.stdout + second.stderr).toBe(0);
    } finally {
      later.kill('SIGKILL');
    }

    // A live process that started before its lock: maybe an older repodex still syncing. Left
    // alone, and the error says how to clear it if no sync is running.
    writeOldLock(root, process.pid, new Date());
    const refused = runCli(['sync', '--root', root]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the lock was written by an older repodex (pid ${process.pid}`);
    expect(refused.stderr).toContain(`delete ${join(root, '.repodex/lock')}`);
  });
});
