import { closeSync, existsSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { RepodexError, errorMessage, isErrnoException } from '../core/errors.js';

/** A held writer lock; release it in a `finally`. */
export interface HeldLock {
  release(): void;
}

interface LockOwner {
  pid: number;
  host: string;
  started: string;
}

/**
 * One writer at a time (SPEC §2): the lock file is created exclusively and holds the owner's pid.
 * A lock whose process is gone on this host (crash, SIGKILL) is stale and is taken over.
 */
export function acquireLock(path: string): HeldLock {
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if (!isErrnoException(error, 'EEXIST')) throw new RepodexError('INTERNAL', `cannot create lock ${path}: ${errorMessage(error)}`);
      const owner = readOwner(path);
      if (owner === undefined && isFresh(path)) {
        throw new RepodexError('LOCKED', 'another sync is starting right now');
      }
      if (owner && isAlive(owner)) {
        throw new RepodexError('LOCKED', `sync already running (pid ${owner.pid} on ${owner.host}, since ${owner.started})`);
      }
      removeIfPresent(path); // stale: the owner died without releasing it
      continue;
    }
    const owner: LockOwner = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
    writeSync(fd, JSON.stringify(owner));
    closeSync(fd);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        const current = readOwner(path);
        if (current?.pid === process.pid) removeIfPresent(path);
      },
    };
  }
  throw new RepodexError('LOCKED', `could not take the lock ${path}`);
}

/** True when a lock file exists and its owner is (or may be) still running: a sync is in progress. */
export function isLockHeld(path: string): boolean {
  const owner = readOwner(path);
  if (owner === undefined) return existsSync(path) && isFresh(path);
  return isAlive(owner);
}

function readOwner(path: string): LockOwner | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockOwner>;
    if (typeof parsed.pid === 'number' && typeof parsed.host === 'string') {
      return { pid: parsed.pid, host: parsed.host, started: String(parsed.started ?? '?') };
    }
  } catch {
    // A torn or empty lock file: its writer died between create and write, so it is stale.
    return undefined;
  }
  return undefined;
}

/** An unreadable lock younger than this may belong to a writer between create and write. */
const TORN_LOCK_GRACE_MS = 5000;

function isFresh(path: string): boolean {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat !== undefined && Date.now() - stat.mtimeMs < TORN_LOCK_GRACE_MS;
}

function isAlive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true; // cannot check another host's processes: assume alive
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return isErrnoException(error, 'EPERM'); // exists but belongs to someone else
  }
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (!isErrnoException(error, 'ENOENT')) throw error;
  }
}
