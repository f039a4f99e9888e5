import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { isErrnoException } from './errors.js';
import { processExists } from './process.js';

/**
 * How long one attempt waits for the lock before giving up: the work under it takes microseconds,
 * but on a loaded machine a holder can be descheduled for a good part of a second.
 */
const WAIT_MS = 5000;
/** A lock file this old was left by a process killed while holding it. */
const STALE_MS = 10_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * The identity (inode and change time) of the lock file when the process it names is gone (or it
 * cannot be read as one and is old), else undefined: taking it over removes that file only, never
 * one another process has created since.
 */
function abandoned(lockPath: string): string | undefined {
  const stat = statSync(lockPath, { throwIfNoEntry: false, bigint: true });
  if (!stat) return undefined;
  // Inode and change time to the nanosecond: a new lock file may reuse the inode just freed.
  const identity = `${stat.ino}:${stat.ctimeNs}`;
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw error;
  }
  const pid = Number(text.trim());
  if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !processExists(pid)) return identity;
  return Date.now() - Number(stat.mtimeMs) > STALE_MS ? identity : undefined;
}

/** The identity `abandoned` compares, of the lock file there now. */
function identityOf(lockPath: string): string | undefined {
  const stat = statSync(lockPath, { throwIfNoEntry: false, bigint: true });
  return stat ? `${stat.ino}:${stat.ctimeNs}` : undefined;
}

/**
 * Run `update` while holding `<path>.lock`, a lock file created exclusively: for the small files
 * several processes read, change and write back without the writer lock (analytics.json; the
 * audit log's rotation), so no process's change is lost to another's. Synchronous, since it also
 * runs when a process exits. A lock whose process is gone (or that is older than ten seconds) is
 * taken over. Returns false, without running `update`, when the lock could not be had within five
 * seconds.
 */
export function withFileLock(path: string, update: () => void): boolean {
  const lockPath = `${path}.lock`;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(lockPath, 'wx', 0o600);
    } catch (error) {
      if (!isErrnoException(error, 'EEXIST')) throw error;
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, String(process.pid));
      } finally {
        closeSync(fd);
      }
      try {
        update();
        return true;
      } finally {
        unlinkSync(lockPath);
      }
    }
    const stale = abandoned(lockPath);
    if (stale !== undefined) {
      // Only the file judged stale: another process may have taken it over and made its own.
      if (identityOf(lockPath) === stale) {
        try {
          unlinkSync(lockPath);
        } catch (error) {
          if (!isErrnoException(error, 'ENOENT')) throw error;
        }
      }
      continue;
    }
    if (Date.now() >= deadline) return false;
    Atomics.wait(sleeper, 0, 0, 2);
  }
}
