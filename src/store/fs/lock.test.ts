import { spawnSync } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, tempDir } from '../../../test/helpers.js';
import { isRepodexError } from '../../core/errors.js';
import { acquireLock, lockHolder, processStartTime, sweepLockLeftovers } from './lock.js';

async function lockedCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'acquired';
  } catch (error) {
    return isRepodexError(error) ? `${error.code}: ${error.message}` : String(error);
  }
}

const bootId = (): string | null => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null; // not Linux: the lock works without it
  }
};

function writeLock(path: string, fields: Record<string, unknown>): void {
  writeFileSync(path, JSON.stringify({ host: hostname(), started: '2026-01-01T00:00:00.000Z', token: 'old-holder', boot: bootId(), ...fields }));
}

/** Process start times and boot ids come from /proc: the checks that need them run on Linux only (and are reported as skipped elsewhere). */
const HAS_PROC = processStartTime(process.pid) !== undefined;

/** Take the lock at `path` and check it is now ours (our pid, a fresh token), then release it. */
async function takenOver(path: string): Promise<void> {
  expect(lockHolder(path), 'the old holder must not count as live').toBeUndefined();
  const held = await acquireLock(path);
  const record = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; token: string };
  expect(record.pid).toBe(process.pid);
  expect(record.token).not.toBe('old-holder');
  await held.release();
  expect(existsSync(path)).toBe(false);
}

describe('the writer lock', () => {
  it('is exclusive while held and free after release', async () => {
    const path = join(tempDir(), 'lock');
    const held = await acquireLock(path);
    expect(lockHolder(path)).toMatchObject({ pid: process.pid, host: hostname() });
    expect(await lockedCode(acquireLock(path))).toMatch(/^LOCKED: sync already running \(pid \d+/);
    await held.release();
    expect(existsSync(path)).toBe(false);
    expect(lockHolder(path)).toBeUndefined();
    await (await acquireLock(path)).release();
  });

  it('waits for a holder that releases within the wait', async () => {
    const path = join(tempDir(), 'lock');
    const held = await acquireLock(path);
    setTimeout(() => void held.release(), 120);
    const started = Date.now();
    const second = await acquireLock(path, 2000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    await second.release();
  });

  it('takes over a lock whose process is gone', async () => {
    const path = join(tempDir(), 'lock');
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('exit', resolve));
    writeLock(path, { pid: gone.pid, start: null });
    await takenOver(path);
  });

  it.runIf(process.platform === 'linux')('on Linux, reads process start times and the boot id from /proc (what the checks below rely on)', () => {
    expect(HAS_PROC).toBe(true);
    expect(bootId()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.skipIf(!HAS_PROC)('regression: takes over a lock whose pid now belongs to an unrelated live process (start time differs)', async () => {
    const path = join(tempDir(), 'lock');
    // Our own pid is alive, but it did not start when this lock says its holder did.
    writeLock(path, { pid: process.pid, start: processStartTime(process.pid)! - 1 });
    expect(lockHolder(path)).toBeUndefined();
    const held = await acquireLock(path);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, start: processStartTime(process.pid) });
    await held.release();
  });

  it.skipIf(!HAS_PROC)('takes over a lock from before a reboot, though its pid is alive and started when it says', async () => {
    const path = join(tempDir(), 'lock');
    writeLock(path, { pid: process.pid, start: processStartTime(process.pid), boot: 'another-boot' });
    await takenOver(path);
  });

  it('takes over an unreadable lock and one with no real pid', async () => {
    const path = join(tempDir(), 'lock');
    writeFileSync(path, 'not json at all');
    await takenOver(path);
    writeLock(path, { pid: 0, start: null });
    await takenOver(path);
  });

  it('regression: claims and temp files of processes killed while taking the lock are swept, a live one\'s are kept', async () => {
    const dir = tempDir();
    const path = join(dir, 'lock');
    writeLock(`${path}.takeover-aaaa.bbbb.tmp`, { pid: 999_999_999, token: 'bbbb' }); // killed mid-takeover
    writeLock(`${path}.cccc.tmp`, { pid: 999_999_999, token: 'cccc' }); // killed before linking
    writeLock(`${path}.dddd.tmp`, { pid: process.pid, start: processStartTime(process.pid) ?? null, token: 'dddd' }); // alive
    writeFileSync(`${path}.eeee.tmp`, ''); // being written right now
    writeFileSync(`${path}.ffff.tmp`, '{"pi'); // half-written long ago
    utimesSync(`${path}.ffff.tmp`, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    // Half-written just now, by a writer whose pid is in the name: killed (its pid is gone), or still writing.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(`${path}.gggg.${dead}.tmp`, '{"pi');
    writeFileSync(`${path}.hhhh.${process.pid}.tmp`, '');
    writeFileSync(join(dir, 'other.tmp'), 'not a lock file');
    const held = await acquireLock(path);
    const removed = sweepLockLeftovers(path, readdirSync(dir));
    expect(removed.sort()).toEqual(['lock.cccc.tmp', 'lock.ffff.tmp', `lock.gggg.${dead}.tmp`, 'lock.takeover-aaaa.bbbb.tmp']);
    expect(readdirSync(dir).sort()).toEqual(['lock', 'lock.dddd.tmp', 'lock.eeee.tmp', `lock.hhhh.${process.pid}.tmp`, 'other.tmp']);
    await held.release();
  });

  it('a lock held on another host is not taken over, and the error says how to clear it', async () => {
    const path = join(tempDir(), 'lock');
    writeLock(path, { pid: 4242, host: 'build-container-7', start: 1 });
    const outcome = await lockedCode(acquireLock(path));
    expect(outcome).toMatch(/^LOCKED: the lock is held by pid 4242 on another host \(build-container-7/);
    expect(outcome).toContain(`delete ${path}`);
    // Only that advice: not also the generic "another sync is running" one, which would contradict it.
    expect(outcome.endsWith(`delete ${path}`)).toBe(true);
    expect(lockHolder(path)).toMatchObject({ pid: 4242, host: 'build-container-7' });
  });

  // sysfs refuses to create files whoever asks (root included: EACCES, or EROFS where it is mounted read-only).
  it.runIf(process.platform === 'linux' && existsSync('/sys/kernel'))('a folder where no file can be created is NOT_WRITABLE, naming the lock file', async () => {
    const outcome = await lockedCode(acquireLock('/sys/kernel/repodex-lock'));
    expect(outcome).toMatch(/^NOT_WRITABLE: cannot write \/sys\/kernel\/repodex-lock: (permission denied|the file system is read-only)/);
  });

  it('a lock in a folder that does not exist is an internal error naming the lock, not LOCK_DENIED', async () => {
    const outcome = await lockedCode(acquireLock(join(tempDir(), 'missing', 'lock')));
    expect(outcome).toMatch(/^INTERNAL: cannot use the lock .*missing\/lock: ENOENT/);
  });

  it('property: racing processes taking over one stale lock never hold it at the same time', async () => {
    const dir = tempDir();
    const path = join(dir, 'lock');
    const log = join(dir, 'holds.log');
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('exit', resolve));
    writeLock(path, { pid: gone.pid, start: null });
    // Each contender takes the lock (waiting for the others), records when it held it, and releases.
    const script = `
      const { acquireLock } = await import(${JSON.stringify(pathToFileURL(join(PROJECT_ROOT, 'src/store/fs/lock.ts')).href)});
      const { appendFileSync } = await import('node:fs');
      const held = await acquireLock(${JSON.stringify(path)}, 20000);
      const start = performance.timeOrigin + performance.now();
      await new Promise((resolve) => setTimeout(resolve, 30));
      const end = performance.timeOrigin + performance.now();
      await held.release();
      appendFileSync(${JSON.stringify(log)}, JSON.stringify([start, end]) + '\\n');
    `;
    const runs = Array.from({ length: 8 }, () =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
        child.once('exit', resolve);
      }),
    );
    expect(await Promise.all(runs)).toEqual(Array(8).fill(0));
    const holds = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as [number, number]).sort((a, b) => a[0] - b[0]);
    expect(holds).toHaveLength(8);
    for (let i = 1; i < holds.length; i++) expect(holds[i]![0], `hold ${i} began before hold ${i - 1} ended`).toBeGreaterThanOrEqual(holds[i - 1]![1]);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir).filter((name) => name.startsWith('lock'))).toEqual([]);
  });
});
