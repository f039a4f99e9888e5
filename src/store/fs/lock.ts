import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { RepodexError, errorMessage, isErrnoException, isRepodexError } from '../../core/errors.js';
import { systemFailure } from '../../core/system-errors.js';
import { processExists, processStartTime, readProcText } from '../../core/process.js';
import { writeFileDurable } from '../../core/fs-atomic.js';
import type { HeldLock, LockOwner } from '../backend.js';

/** What a lock file records about its holder. */
interface LockRecord extends LockOwner {
  /** Unique per acquisition: what a takeover checks the lock still holds before removing it. */
  readonly token: string;
  /** Process start time in clock ticks since boot (Linux), so a reused pid is not mistaken for the holder. */
  readonly start: number | null;
  /** The kernel's boot id (Linux): a lock from before a reboot is stale whatever its pid. */
  readonly boot: string | null;
  /** Written by an older repodex, whose locks record neither `start` nor `boot` (see `legacyLiveness`). */
  readonly legacy: boolean;
}

const POLL_MS = 50;

export { processStartTime };

const BOOT_ID = readProcText('/proc/sys/kernel/random/boot_id')?.trim() ?? null;

/** Clock ticks per second of /proc/PID/stat's start time: USER_HZ, 100 on every Linux ABI Node runs on. */
const TICKS_PER_SECOND = 100;
/** Slack for clocks and rounding when comparing a lock's time with a boot or a process start. */
const CLOCK_SLACK_MS = 5_000;

/** When this machine booted (epoch ms, from /proc/uptime), undefined off Linux. */
function bootTimeMs(): number | undefined {
  const uptime = Number(readProcText('/proc/uptime')?.split(' ')[0]);
  return Number.isFinite(uptime) && uptime > 0 ? Date.now() - uptime * 1000 : undefined;
}

function myRecord(): LockRecord {
  return {
    pid: process.pid,
    host: hostname(),
    started: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
    start: processStartTime(process.pid) ?? null,
    boot: BOOT_ID,
    legacy: false,
  };
}

/** The record as written to the lock file (`legacy` is what a reader concludes, never written). */
function lockText(record: LockRecord): string {
  const { legacy: _legacy, ...written } = record;
  return JSON.stringify(written);
}

type Liveness = 'alive' | 'dead' | 'foreign';

/**
 * Whether the holder of a lock an older repodex wrote (no process start time, no boot id) is gone,
 * judged on Linux from the lock's own time: it is dead when the lock was written before this boot,
 * or when the process now holding its pid started after the lock was written (the pid was reused:
 * a lock is written by its process, so after that process started). Otherwise it may still be an
 * older repodex syncing, and is left alone (the error says how to clear it).
 */
function legacyLiveness(owner: LockRecord): 'alive' | 'dead' {
  const written = Date.parse(owner.started);
  const boot = bootTimeMs();
  if (!Number.isFinite(written) || boot === undefined) return 'alive';
  if (written < boot - CLOCK_SLACK_MS) return 'dead';
  const ticks = processStartTime(owner.pid);
  if (ticks !== undefined && boot + (ticks / TICKS_PER_SECOND) * 1000 > written + CLOCK_SLACK_MS) return 'dead';
  return 'alive';
}

/** Whether the holder recorded in a lock is still running: same host, same boot, pid present and started when it said. */
export function liveness(owner: LockRecord): Liveness {
  if (owner.host !== hostname()) return 'foreign';
  if (owner.boot && BOOT_ID && owner.boot !== BOOT_ID) return 'dead';
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return 'dead'; // no real process (kill(0) would mean our own group)
  if (!processExists(owner.pid)) return 'dead';
  if (owner.start !== null) {
    const start = processStartTime(owner.pid);
    if (start !== undefined && start !== owner.start) return 'dead'; // the pid was reused by another process
  }
  return owner.legacy ? legacyLiveness(owner) : 'alive';
}

/** A lock file's record; `undefined` when it does not exist; a record with an empty token when unreadable. */
function readRecord(path: string): LockRecord | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw lockError(path, error);
  }
  return parseRecord(text);
}

/** A lock file's text as a record; a record with an `unreadable-` token when it is not one. */
function parseRecord(text: string): LockRecord {
  try {
    const parsed = JSON.parse(text) as Partial<LockRecord>;
    if (typeof parsed.pid === 'number' && typeof parsed.host === 'string') {
      return {
        pid: parsed.pid,
        host: parsed.host,
        started: String(parsed.started ?? '?'),
        // Locks from older versions have no token: their content identifies them.
        token: typeof parsed.token === 'string' ? parsed.token : `legacy-${Buffer.from(text).toString('base64url').slice(0, 16)}`,
        start: typeof parsed.start === 'number' ? parsed.start : null,
        boot: typeof parsed.boot === 'string' ? parsed.boot : null,
        // Current locks always write both (null off Linux); an older version's have neither.
        legacy: !('start' in parsed) && !('boot' in parsed),
      };
    }
  } catch {
    // Not JSON: written by hand or by something else. Locks are created whole (by link), so this
    // is never a writer mid-write; it is treated as a lock whose holder is gone.
  }
  return { pid: 0, host: hostname(), started: '?', token: `unreadable-${text.length}`, start: null, boot: null, legacy: false };
}

function lockError(path: string, error: unknown): RepodexError {
  if (isErrnoException(error, 'EACCES') || isErrnoException(error, 'EPERM') || isErrnoException(error, 'EROFS')) {
    return new RepodexError('LOCK_DENIED', `${path}: ${errorMessage(error)}`);
  }
  // Said in words already (a write of the lock's record that met a full disk), or a refusal a user can fix.
  if (isRepodexError(error)) return error;
  return systemFailure(error, { path }) ?? new RepodexError('INTERNAL', `cannot use the lock ${path}: ${errorMessage(error)}`);
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (!isErrnoException(error, 'ENOENT')) throw error;
  }
}

/**
 * Create `path` holding `record`, atomically and only if it does not exist: the record is written
 * and flushed under a private name, then hard-linked into place, so the lock file is never seen
 * empty or half-written. Returns false when `path` already exists. The private name carries the
 * writer's pid: a writer killed before its record was whole leaves a file that says nothing else.
 */
function createExclusive(path: string, record: LockRecord): boolean {
  const temp = `${path}.${record.token}.${process.pid}.tmp`;
  try {
    writeFileDurable(temp, lockText(record), path);
    linkSync(temp, path);
    return true;
  } catch (error) {
    if (isErrnoException(error, 'EEXIST')) return false;
    throw lockError(path, error);
  } finally {
    try {
      removeIfPresent(temp);
    } catch {
      // A leftover private temp file is harmless: its name is unique and nothing reads it.
    }
  }
}

/**
 * Remove the lock at `path` if, and only if, it still holds `token` (its holder is dead). Racing
 * processes first claim `path.takeover-TOKEN` exclusively: one wins, checks the token under the
 * claim and removes the lock; the others see the claim and back off, so two processes can never
 * both take over the same stale lock (nor remove the new lock the winner just created). A claim
 * left by a taker that died is itself taken over the same way.
 */
function takeOver(path: string, token: string, me: LockRecord, depth = 0): void {
  const claim = `${path}.takeover-${token}`;
  if (!createExclusive(claim, me)) {
    const taker = readRecord(claim);
    if (!taker) return; // the winner finished: the caller simply retries
    if (liveness(taker) !== 'dead' || depth >= 3) return;
    takeOver(claim, taker.token, me, depth + 1);
    if (!createExclusive(claim, me)) return;
  }
  try {
    if (readRecord(path)?.token === token) removeIfPresent(path);
  } finally {
    removeIfPresent(claim);
  }
}

/** A RepodexError for a lock someone else holds, naming how to fix it when it cannot be judged from here. */
function lockedError(path: string, owner: LockRecord, state: Liveness): RepodexError {
  const since = `since ${owner.started}`;
  if (state === 'foreign') {
    return new RepodexError(
      'LOCKED',
      `the lock is held by pid ${owner.pid} on another host (${owner.host}, ${since}): wait for that sync to finish, or, if none is running there, delete ${path}`,
      { selfContained: true },
    );
  }
  if (owner.legacy) {
    return new RepodexError(
      'LOCKED',
      `the lock was written by an older repodex (pid ${owner.pid}, ${since}), which may still be syncing: wait for it to finish, or, if no sync is running, delete ${path}`,
      { selfContained: true },
    );
  }
  return new RepodexError('LOCKED', `sync already running (pid ${owner.pid}, ${since})`);
}

/**
 * Take the single-writer lock (SPEC §2): waits up to `waitMs` for a running sync, then throws
 * LOCKED. A lock whose holder is gone — crashed, killed, from before a reboot, or whose pid now
 * belongs to another process — is taken over safely.
 */
export async function acquireLock(path: string, waitMs = 0): Promise<HeldLock> {
  const deadline = Date.now() + waitMs;
  const me = myRecord();
  for (;;) {
    if (createExclusive(path, me)) return heldLock(path, me.token);
    const owner = readRecord(path);
    if (owner === undefined) continue; // released between our attempt and the read: try again at once
    const state = liveness(owner);
    if (state === 'dead') {
      takeOver(path, owner.token, me);
      // Removed (by us or by whoever won the takeover): try again at once. Still there: another
      // live process is in the middle of taking it over; wait like for any holder.
      if (readRecord(path)?.token !== owner.token) continue;
    }
    if (Date.now() >= deadline) {
      if (state === 'dead') throw new RepodexError('LOCKED', `another process is taking over the stale lock ${path}`);
      throw lockedError(path, owner, state);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function heldLock(path: string, token: string): HeldLock {
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      if (readRecord(path)?.token === token) removeIfPresent(path);
    },
  };
}

/** The live holder of the lock at `path`, or undefined when there is none (or it is stale). */
export function lockHolder(path: string): LockOwner | undefined {
  const owner = readRecord(path);
  if (!owner) return undefined;
  const state = liveness(owner);
  return state === 'dead' ? undefined : { pid: owner.pid, host: owner.host, started: owner.started };
}

/** Names of files a lock at `path` may leave behind (takeover claims, private temp files). */
export function isLockLeftover(name: string, lockPath: string): boolean {
  const base = basename(lockPath);
  return name.startsWith(`${base}.`) && (name.includes('.takeover-') || name.endsWith('.tmp'));
}

/** A leftover whose content cannot be read is judged by age: writers finish a record within milliseconds. */
const UNREADABLE_LEFTOVER_AGE_MS = 60_000;

/**
 * Remove the takeover claims and private temp files that processes killed mid-acquisition left
 * next to the lock at `lockPath`. Only files whose recorded owner is dead (or, unreadable, older
 * than a minute) go: a live process between writing its temp file and linking it is never
 * disturbed. Call while holding the lock. Returns the names removed.
 */
export function sweepLockLeftovers(lockPath: string, names: readonly string[]): string[] {
  const dir = dirname(lockPath);
  const removed: string[] = [];
  for (const name of names) {
    if (!isLockLeftover(name, lockPath)) continue;
    const path = join(dir, name);
    let abandoned: boolean;
    const record = readRecordQuietly(path);
    if (record === null) continue; // already gone
    if (record === 'unreadable') {
      // Its writer's pid is in its name: gone means abandoned (a reused pid only makes it wait for the age rule).
      const writer = Number(/\.(\d+)\.tmp$/.exec(name)?.[1] ?? NaN);
      const stat = statSync(path, { throwIfNoEntry: false });
      // A pid that names no single process is judged by age alone.
      abandoned = stat !== undefined && ((Number.isInteger(writer) && writer > 0 && writer !== process.pid && !processExists(writer)) || Date.now() - stat.mtimeMs > UNREADABLE_LEFTOVER_AGE_MS);
    } else {
      abandoned = liveness(record) === 'dead';
    }
    if (!abandoned) continue;
    removeIfPresent(path);
    removed.push(name);
  }
  return removed;
}

/** A leftover's record, 'unreadable' for a partial or foreign file, null when it is gone. */
function readRecordQuietly(path: string): LockRecord | 'unreadable' | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return isErrnoException(error, 'ENOENT') ? null : 'unreadable';
  }
  if (text === '') return 'unreadable';
  const record = parseRecord(text);
  return record.token.startsWith('unreadable-') ? 'unreadable' : record;
}
