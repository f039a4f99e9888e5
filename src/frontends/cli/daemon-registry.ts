// The per-user registry of running daemons: one small JSON file per daemon in a folder only this
// user can read (REPODEX_DAEMON_DIR, else $XDG_RUNTIME_DIR/repodex, else the state folder). It is
// what lets a starting daemon count the others and make room under the limits, lets `repodex
// daemon status` list every daemon with its memory and idle time, and lets `daemon stop` and
// `clean` find a daemon that is still starting (its entry is written before it is spawned).
// An entry names its process by pid and start time, so a pid reused by another process is never
// taken for a daemon, and entries of daemons that died (kill -9) are pruned by whoever reads them.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import { processExists, processStartTime, readProcText } from '../../core/process.js';
import { lstatIfExists } from '../../core/stat.js';

/** Where the registry lives, overriding the default (tests give each run its own). */
export const DAEMON_DIR_ENV = 'REPODEX_DAEMON_DIR';
/** How many daemons may run at once for this user. */
export const DAEMON_MAX_ENV = 'REPODEX_DAEMON_MAX';
/** How much memory (resident, MB) this user's daemons may use together. */
export const DAEMON_MEMORY_ENV = 'REPODEX_DAEMON_MEMORY_MB';

/**
 * At most this many daemons by default: a person works in a few repositories at a time and an
 * agent in one; each daemon holds 70–110 MB (measured: a 50-file repository 72 MB, playwright
 * 80 MB, kafka 110 MB), so four stay well under the memory budget.
 */
export const DEFAULT_MAX_DAEMONS = 4;
/** The memory budget's ceiling by default (MB): four daemons of a large repository. */
const DEFAULT_MEMORY_CEILING_MB = 1024;
const MB = 1024 * 1024;

/** Who started a daemon: a one-shot command on its own (evicted to make room), or a person (`daemon start`, `daemon run`: never evicted). */
export type StartedBy = 'command' | 'daemon start' | 'daemon run';

/** One daemon of this user, as its entry records it. */
export interface DaemonEntry {
  readonly root: string;
  readonly socket: string;
  /** `starting`: written by the command that spawned it (pid null for the moment before the spawn); `serving`: listening. */
  readonly state: 'starting' | 'serving';
  readonly started_by: StartedBy;
  readonly pid: number | null;
  /** What identifies the process beyond its pid (Linux: start time in clock ticks; elsewhere as `ps` prints it). */
  readonly process_start: string | null;
  /** When the start was claimed (starting) or the daemon began serving. */
  readonly since: string;
  /** When it last answered a command (serving). */
  readonly last_used?: string;
  readonly calls?: number;
  /** Resident memory, bytes, as of its last command (the live figure is read where the system tells it). */
  readonly rss?: number;
  readonly idle_minutes?: number;
  readonly version?: string;
  /** Its socket file's identity (device:inode): what is removed with the entry of a daemon that died, and nothing else. */
  readonly socket_id?: string;
}

/** The limits a starting daemon keeps its user's daemons under. */
export interface DaemonLimits {
  readonly maxDaemons: number;
  readonly memoryBudgetMb: number;
}

/** The default memory budget (MB): 1 GB, or an eighth of this machine's memory where that is less. */
export function defaultMemoryBudgetMb(): number {
  return Math.max(64, Math.min(DEFAULT_MEMORY_CEILING_MB, Math.floor(totalmem() / 8 / MB)));
}

/** The limits REPODEX_DAEMON_MAX and REPODEX_DAEMON_MEMORY_MB set (a value that is not a whole number ≥ 1 is an error). */
export function daemonLimits(env: NodeJS.ProcessEnv = process.env): DaemonLimits {
  return {
    maxDaemons: positiveInt(env, DAEMON_MAX_ENV, 'a whole number of daemons') ?? DEFAULT_MAX_DAEMONS,
    memoryBudgetMb: positiveInt(env, DAEMON_MEMORY_ENV, 'a whole number of megabytes') ?? defaultMemoryBudgetMb(),
  };
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, what: string): number | undefined {
  const text = env[name]?.trim();
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new RepodexError('ENV_INVALID', `${name} must be ${what}, at least 1, got ${JSON.stringify(env[name])} (unset it for the default)`, { selfContained: true });
  return value;
}

/**
 * The registry's folder: REPODEX_DAEMON_DIR, else $XDG_RUNTIME_DIR/repodex (per user, in memory,
 * emptied at logout) when that folder is this user's (under sudo it may be another's), else
 * $XDG_STATE_HOME/repodex/daemons or ~/.local/state/repodex/daemons.
 */
export function registryFolder(env: NodeJS.ProcessEnv = process.env): string {
  const own = env[DAEMON_DIR_ENV]?.trim();
  if (own) return resolve(own);
  if (env.XDG_RUNTIME_DIR && isOwnFolder(env.XDG_RUNTIME_DIR)) return join(env.XDG_RUNTIME_DIR, 'repodex');
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state'), 'repodex', 'daemons');
}

function isOwnFolder(path: string): boolean {
  try {
    const stat = statSync(path);
    return stat.isDirectory() && (process.getuid === undefined || stat.uid === process.getuid());
  } catch {
    return false;
  }
}

/** A claim on a repository's daemon start that never turned into a spawned process is given up after this. */
const CLAIM_STALE_MS = 60_000;
/** Temporary files of writes that never finished are removed after this. */
const TEMP_STALE_MS = 60_000;

/** This user's daemons: read, claim, record and prune their entries. */
export class DaemonRegistry {
  private constructor(readonly folder: string) {}

  /**
   * The registry of this user, its folder created readable by this user only. Refuses a folder
   * another user owns (its entries could name processes this user must not signal) or others may
   * read and write (they could plant entries); it never changes a folder's permissions itself.
   */
  static open(env: NodeJS.ProcessEnv = process.env): DaemonRegistry {
    const folder = registryFolder(env);
    let problem: string | undefined;
    let fix = `set ${DAEMON_DIR_ENV} to a folder of your own`;
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      const stat = statSync(folder);
      if (process.getuid !== undefined && stat.uid !== process.getuid()) {
        problem = `it belongs to another user (uid ${stat.uid})`;
      } else if ((stat.mode & 0o077) !== 0) {
        problem = `other users may open it (mode ${(stat.mode & 0o777).toString(8)})`;
        fix = `chmod 700 ${folder}, or ${fix}`;
      }
    } catch (error) {
      problem = errorMessage(error);
    }
    if (problem !== undefined) throw new RepodexError('BAD_REQUEST', `cannot keep the list of daemons in ${folder}: ${problem}: ${fix}`, { selfContained: true });
    return new DaemonRegistry(folder);
  }

  /** The entry of `root`'s daemon as written, stale or not. */
  read(root: string): DaemonEntry | undefined {
    return this.readFile(this.entryFile(root), root);
  }

  /** The entry of `root`'s daemon when its process lives (a stale one is removed). */
  live(root: string): DaemonEntry | undefined {
    const entry = this.read(root);
    if (entry === undefined) return undefined;
    if (isLive(entry)) return entry;
    this.prune(entry);
    return undefined;
  }

  /** Every daemon of this user whose process lives, least recently used first; stale entries and leftovers are removed. */
  all(): DaemonEntry[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch {
      return [];
    }
    const entries: DaemonEntry[] = [];
    for (const name of names) {
      const path = join(this.folder, name);
      if (name.endsWith('.json')) {
        const entry = this.readFile(path);
        if (entry === undefined) continue;
        if (isLive(entry)) entries.push(entry);
        else this.prune(entry);
      } else if (name.includes('.tmp-') || name.endsWith(SEEN_SUFFIX)) {
        // A write that never finished, or a repository's first use long ago.
        const stale = name.endsWith(SEEN_SUFFIX) ? REPEATED_USE_MS : TEMP_STALE_MS;
        try {
          if (Date.now() - statSync(path).mtimeMs > stale) rmSync(path, { force: true });
        } catch {
          // removed meanwhile
        }
      }
    }
    return entries.sort((a, b) => lastUse(a) - lastUse(b));
  }

  /**
   * Claim the start of `root`'s daemon: its `starting` entry is created only if none exists (a
   * stale one is removed first), so commands finishing at once start one daemon, not one each.
   * The claim when this process may start it, else undefined.
   */
  claim(root: string, socket: string, startedBy: StartedBy): DaemonEntry | undefined {
    const entry: DaemonEntry = { root, socket, state: 'starting', started_by: startedBy, pid: null, process_start: null, since: new Date().toISOString() };
    const path = this.entryFile(root);
    // Whole before it appears: written aside, then linked in (which fails if an entry exists).
    const temp = `${path}.tmp-${process.pid}`;
    writeFileSync(temp, JSON.stringify(entry), { mode: 0o600 });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          linkSync(temp, path);
          return entry;
        } catch (error) {
          if (!isErrnoException(error, 'EEXIST')) return undefined;
          if (this.live(root) !== undefined) return undefined;
          if (this.read(root) === undefined) rmSync(path, { force: true }); // unreadable: not an entry any daemon wrote whole
        }
      }
      return undefined;
    } finally {
      rmSync(temp, { force: true });
    }
  }

  /** Record the process a claimed start spawned. */
  started(root: string, pid: number): void {
    const entry = this.read(root);
    if (entry === undefined || entry.state !== 'starting' || entry.pid !== null) return;
    this.write({ ...entry, pid, process_start: processIdentity(pid) ?? null });
  }

  /** Replace `root`'s entry (a daemon recording itself). */
  write(entry: DaemonEntry): void {
    const path = this.entryFile(entry.root);
    const temp = `${path}.tmp-${process.pid}`;
    writeFileSync(temp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(temp, path);
  }

  /** Remove `root`'s entry if it is still `entry` (the same process), not one written since by another daemon. */
  removeIf(root: string, entry: Pick<DaemonEntry, 'pid' | 'since'>): void {
    const now = this.read(root);
    if (now !== undefined && now.pid === entry.pid && now.since === entry.since) rmSync(this.entryFile(root), { force: true });
  }

  /** Remove the entry of a daemon that died, and the socket it left behind (commands there then start a new one). */
  private prune(entry: DaemonEntry): void {
    this.removeIf(entry.root, entry);
    const socket = lstatIfExists(entry.socket);
    if (entry.socket_id !== undefined && socket?.isSocket() && `${socket.dev}:${socket.ino}` === entry.socket_id) rmSync(entry.socket, { force: true });
  }

  /**
   * Note a command that `root` answered on its own: whether another did within REPEATED_USE_MS,
   * which is when a daemon is worth starting (a script that passes through once starts none).
   */
  usedAgain(root: string): boolean {
    const mark = this.seenFile(root);
    let previous: number | undefined;
    try {
      previous = statSync(mark).mtimeMs;
    } catch {
      previous = undefined;
    }
    const now = Date.now();
    if (previous !== undefined && now - previous < REPEATED_USE_MS) {
      rmSync(mark, { force: true });
      return true;
    }
    try {
      utimesSync(mark, now / 1000, now / 1000);
    } catch {
      writeFileSync(mark, '', { mode: 0o600 });
    }
    return false;
  }

  /** Forget the commands `root` answered on its own (its daemon was stopped on purpose). */
  forgetUse(root: string): void {
    rmSync(this.seenFile(root), { force: true });
  }

  private seenFile(root: string): string {
    return join(this.folder, `${keyOf(root)}${SEEN_SUFFIX}`);
  }

  private entryFile(root: string): string {
    return join(this.folder, `${keyOf(root)}.json`);
  }

  private readFile(path: string, root?: string): DaemonEntry | undefined {
    let entry: unknown;
    try {
      entry = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      return undefined; // gone meanwhile, or not ours to read
    }
    if (!isEntry(entry) || (root !== undefined && entry.root !== root)) return undefined;
    return entry;
  }
}

/** Two one-shot commands in a repository within this time are repeated use: the second starts its daemon. */
export const REPEATED_USE_MS = 10 * 60_000;
const SEEN_SUFFIX = '.seen';

/** A repository's file name in the registry: its root, hashed (a path can be longer than a file name). */
function keyOf(root: string): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 24);
}

function lastUse(entry: DaemonEntry): number {
  return Date.parse(entry.last_used ?? entry.since);
}

function isEntry(value: unknown): value is DaemonEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    typeof entry.root === 'string' &&
    typeof entry.socket === 'string' &&
    (entry.state === 'starting' || entry.state === 'serving') &&
    (entry.started_by === 'command' || entry.started_by === 'daemon start' || entry.started_by === 'daemon run') &&
    (entry.pid === null || (typeof entry.pid === 'number' && Number.isInteger(entry.pid) && entry.pid > 0)) &&
    (entry.process_start === null || typeof entry.process_start === 'string') &&
    typeof entry.since === 'string' &&
    (entry.last_used === undefined || typeof entry.last_used === 'string') &&
    (entry.calls === undefined || typeof entry.calls === 'number') &&
    (entry.rss === undefined || typeof entry.rss === 'number')
  );
}

/**
 * Whether an entry's process still runs: its pid exists and, where the system tells it cheaply
 * (Linux), started when the entry says. A claim not yet spawned lives for CLAIM_STALE_MS.
 */
function isLive(entry: DaemonEntry): boolean {
  if (entry.pid === null) return Date.now() - Date.parse(entry.since) < CLAIM_STALE_MS;
  if (!isRunning(entry.pid)) return false;
  const ticks = processStartTime(entry.pid);
  return ticks === undefined || entry.process_start === null || !/^\d+$/.test(entry.process_start) || String(ticks) === entry.process_start;
}

/** Whether the process of `entry` is the one it recorded (checked before signalling it). */
export function isSameProcess(entry: DaemonEntry): boolean {
  if (entry.pid === null || !isRunning(entry.pid)) return false;
  return entry.process_start === null || processIdentity(entry.pid) === entry.process_start;
}

/**
 * Whether a process runs: it exists and, where /proc tells, has not exited and waits to be reaped
 * (a daemon's parent is gone, and where nothing reaps orphans its exit leaves it a zombie).
 */
export function isRunning(pid: number): boolean {
  if (!processExists(pid)) return false;
  const stat = readProcText(`/proc/${pid}/stat`);
  return stat === undefined || stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** What tells a process from a later one given the same pid: its start time (Linux: clock ticks since boot; elsewhere as `ps` prints it). */
export function processIdentity(pid: number): string | undefined {
  const ticks = processStartTime(pid);
  if (ticks !== undefined) return String(ticks);
  if (process.platform === 'linux' || process.platform === 'win32') return undefined;
  const ps = spawnSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', timeout: 2000 });
  const text = ps.status === 0 ? ps.stdout.trim() : '';
  return text === '' ? undefined : text;
}

/** A daemon's resident memory now (bytes): /proc where there is one, else what it last recorded. */
export function residentBytes(entry: DaemonEntry): number | undefined {
  const status = entry.pid === null ? undefined : readProcText(`/proc/${entry.pid}/status`);
  const kb = status === undefined ? undefined : /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return kb === undefined ? entry.rss : Number(kb) * 1024;
}
