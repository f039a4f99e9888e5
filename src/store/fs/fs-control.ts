import { appendFileSync, chmodSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { checkedJsonText, readCheckedJson } from '../../core/checked-json.js';
import { errorMessage, isErrnoException, isRepodexError } from '../../core/errors.js';
import { withFileLock } from '../../core/file-lock.js';
import { createFileAtomic, writeFileAtomic } from '../../core/fs-atomic.js';
import { type AuditEntry, damagedLinesProblem, decodeLine, encodeEntry, forEachLine, lineDamage, linesOf } from '../audit-lines.js';
import { VECTORS_DIR } from './fs-vectors.js';
import type { AnalyticsCounts, AnalyticsDelta, AnalyticsStore, AuditStore, ControlPlane, DocumentName, PartCheck } from '../control.js';

/** File name of the audit log under `.repodex/`, and of its one rotated predecessor. */
export const AUDIT_FILE = 'audit.jsonl';
export const AUDIT_ROTATED_FILE = 'audit.1.jsonl';
/** The bytes at the end of each audit file whose lines a quick check (`status`) checks. */
const QUICK_CHECK_BYTES = 128 * 1024;
/** The log is rotated when it grows past this size: at most twice this much is ever kept. */
export const AUDIT_ROTATE_BYTES = 4 * 1024 * 1024;
/** The analytics counters' file under `.repodex/`. */
export const ANALYTICS_FILE = 'analytics.json';
/** `.repodex/build.log`: one line per sync or embedding run (seed 003 §4), for when something went wrong. */
export const BUILD_LOG = 'build.log';
/** The build log is rotated past this size, keeping ROTATIONS older files (`build.log.1` is the newest of them). */
const MAX_BUILD_LOG_BYTES = 256 * 1024;
const ROTATIONS = 3;

/** The embedded store's control plane: files under `.repodex/`. */
export class FsControlPlane implements ControlPlane {
  readonly audit: FileAuditLog;
  readonly analytics: FileAnalytics;

  constructor(private readonly dataDir: string) {
    this.audit = new FileAuditLog(dataDir);
    this.analytics = new FileAnalytics(dataDir);
  }

  async appendBuildLog(line: string): Promise<void> {
    try {
      mkdirSync(this.dataDir, { recursive: true });
      const path = join(this.dataDir, BUILD_LOG);
      const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
      if (size > MAX_BUILD_LOG_BYTES) {
        for (let i = ROTATIONS - 1; i >= 1; i--) {
          try {
            renameSync(`${path}.${i}`, `${path}.${i + 1}`);
          } catch {
            // that rotation did not exist yet
          }
        }
        renameSync(path, `${path}.1`);
      }
      appendFileSync(path, `${new Date().toISOString()} ${line.replace(/\n/g, ' ')}\n`);
    } catch {
      // The log is a convenience: a read-only or full disk must not fail a sync over it.
    }
  }

  async readDocument(name: DocumentName): Promise<Buffer | undefined> {
    try {
      return readFileSync(join(this.dataDir, name));
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return undefined;
      throw error;
    }
  }

  async writeDocument(name: DocumentName, data: string | Buffer): Promise<void> {
    mkdirSync(this.dataDir, { recursive: true });
    writeFileAtomic(join(this.dataDir, name), data, this.dataDir);
    // The marker of the first repodex that kept one, a plain text file: this one replaces it.
    if (name === 'secret-rules.json') rmSync(join(this.dataDir, 'secret-rules'), { force: true });
  }

  async removeDocument(name: DocumentName): Promise<boolean> {
    return removeFile(join(this.dataDir, name));
  }

  describe(name: DocumentName): string {
    return name;
  }

  async removeEmbedderTable(): Promise<boolean> {
    return removeEmbedderTable(this.dataDir);
  }
}

/** The builtin embedder's learned table under a data folder (`.repodex/vectors/`), whatever the store. */
export function embedderTablePath(dataDir: string): string {
  return join(dataDir, VECTORS_DIR, 'builtin-table.bin');
}

/** Remove the builtin embedder's table from a data folder; true when there was one. */
export function removeEmbedderTable(dataDir: string): boolean {
  return removeFile(embedderTablePath(dataDir));
}

/** Remove a file; true when there was one. */
function removeFile(path: string): boolean {
  if (statSync(path, { throwIfNoEntry: false }) === undefined) return false;
  rmSync(path, { force: true });
  return true;
}

/**
 * Make a data folder when it is missing. Its parent must exist unless `parents`: a line logged as
 * a server stops, for a repository deleted meanwhile, must not make the repository's folder again.
 */
function makeDataDir(dir: string, parents = false): void {
  try {
    mkdirSync(dir, { recursive: parents });
  } catch (error) {
    if (!isErrnoException(error, 'EEXIST')) throw error;
  }
}

/** Audit logs kept open between batches at most, across a process's repositories (least recently written closed first). */
const OPEN_LOGS_KEPT = 64;
const openLogs = new Map<FileAuditLog, true>();

/**
 * `.repodex/audit.jsonl`: one JSON line per call, each with a checksum of its own (its last field,
 * see core/checked-json.ts), appended (one `write` per batch of whole lines, so lines from concurrent
 * processes never interleave), rotated to `audit.1.jsonl` past 4 MiB (under a lock file, so two processes never
 * both rotate and one's rename never throws the log the other just rotated away).
 *
 * The file stays open between batches: a server writes a batch per repository on every turn of
 * its event loop, and opening and closing the file each time was half of a batch's system calls.
 * Each batch still stats the path first (for the rotation size) and opens it again when it no
 * longer leads to the file held open: another process rotated the log, rewrote it without a
 * credential, or removed it. A batch then lands exactly where a fresh open would have put it.
 */
export class FileAuditLog implements AuditStore {
  readonly where: string;
  private readonly rotated: string;
  /** The log file held open, and which file it is. */
  private file: { readonly fd: number; readonly dev: number; readonly ino: number } | undefined;

  constructor(
    private readonly dataDir: string,
    /** Make the folder's parents too when it is missing (a server's own folder); a repository's `.repodex/` needs its repository. */
    private readonly makeParents = false,
  ) {
    this.where = join(dataDir, AUDIT_FILE);
    this.rotated = join(dataDir, AUDIT_ROTATED_FILE);
  }

  append(...entries: AuditEntry[]): void {
    if (entries.length === 0) return;
    const bytes = Buffer.from(entries.map((entry) => `${encodeEntry(entry)}\n`).join(''));
    try {
      this.write(bytes);
    } catch (error) {
      this.close();
      if (isErrnoException(error, 'ENOENT')) {
        try {
          // First call in this repository: the data folder, with its .gitignore (never in git status).
          makeDataDir(this.dataDir, this.makeParents);
          createFileAtomic(join(this.dataDir, '.gitignore'), '*\n', this.dataDir);
          this.write(bytes);
        } catch {
          this.close();
          // The data folder cannot be created (read-only checkout): the call still answers.
        }
      }
    }
  }

  /** Append `bytes` to the file the path leads to now, rotating it first when it is large. */
  private write(bytes: Buffer): void {
    let now = statSync(this.where, { throwIfNoEntry: false });
    if (now && now.size >= AUDIT_ROTATE_BYTES) {
      this.close();
      // Under the lock and only if still large: a process that saw the old size must not rotate
      // the fresh log another process just started (its rename would throw the full one away).
      withFileLock(this.where, () => {
        if ((statSync(this.where, { throwIfNoEntry: false })?.size ?? 0) >= AUDIT_ROTATE_BYTES) renameSync(this.where, this.rotated);
      });
      now = undefined;
    }
    if (this.file && !(now && now.ino === this.file.ino && now.dev === this.file.dev)) this.close();
    if (!this.file) {
      const fd = openSync(this.where, 'a', 0o600);
      const opened = fstatSync(fd);
      this.file = { fd, dev: opened.dev, ino: opened.ino };
    }
    openLogs.delete(this);
    openLogs.set(this, true);
    if (openLogs.size > OPEN_LOGS_KEPT) openLogs.keys().next().value!.close();
    for (let at = 0; at < bytes.length; ) at += writeSync(this.file.fd, bytes, at, bytes.length - at);
  }

  private close(): void {
    openLogs.delete(this);
    const file = this.file;
    if (!file) return;
    this.file = undefined;
    try {
      closeSync(file.fd);
    } catch {
      // already closed
    }
  }

  async settled(): Promise<void> {}

  async read(from: number | undefined, limit: number): Promise<{ entries: AuditEntry[]; total: number; damaged: number }> {
    const entries: AuditEntry[] = [];
    let damaged = 0;
    for (const file of [this.rotated, this.where]) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) continue;
        throw error;
      }
      for (const line of linesOf(bytes)) {
        const entry = decodeLine(line);
        // A damaged line is never shown as if it were a call: left out, and counted.
        if ('damage' in entry) {
          damaged++;
          continue;
        }
        if (from !== undefined && !(Date.parse(entry.time) >= from)) continue;
        entries.push(entry);
      }
    }
    return { entries: entries.slice(Math.max(0, entries.length - limit)), total: entries.length, damaged };
  }

  /**
   * Every line's checksum in both files when `deep` (`verify`: at checksum speed, at most 8 MiB;
   * lines an older version wrote have none and are taken as they are). Otherwise (`status`) the
   * lines in each file's last QUICK_CHECK_BYTES: where appends land and a crash tears a line. A
   * busy server's log is megabytes, and checking all of it was most of what a `status` took; so
   * is reading all of it: only the tail is read, and the whole file only to number the lines of
   * damage found there.
   */
  async check(deep = false): Promise<PartCheck> {
    const checked: string[] = [];
    const problems: string[] = [];
    const notes: string[] = [];
    for (const name of [AUDIT_ROTATED_FILE, AUDIT_FILE]) {
      const path = join(this.dataDir, name);
      let damaged: number[];
      try {
        const quick = deep ? undefined : tailDamage(path);
        if (quick === null) continue; // no such file
        damaged = quick?.length === 0 ? [] : damagedLines(readFileSync(path), deep ? 0 : undefined);
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) continue;
        // The log is private to the user who writes it (0600): another user's check cannot read it, and that is no damage.
        if (isErrnoException(error, 'EACCES') || isErrnoException(error, 'EPERM')) notes.push(`${name} was not checked: only the user who writes it may read it`);
        else problems.push(`cannot read ${name}: ${errorMessage(error)}`);
        continue;
      }
      checked.push(name);
      const problem = damagedLinesProblem(name, damaged);
      if (problem) problems.push(problem);
    }
    return { checked, problems, ...(notes.length > 0 ? { notes } : {}) };
  }

  async redact(redact: (entry: AuditEntry) => AuditEntry): Promise<string[] | undefined> {
    const done: string[] = [];
    for (const name of [AUDIT_ROTATED_FILE, AUDIT_FILE]) {
      const changed = redactFile(join(this.dataDir, name), redact);
      // The log's lock could not be had: the caller tries again later.
      if (changed === undefined) return undefined;
      if (changed > 0) done.push(`${name}: ${changed} line(s) redacted`);
    }
    return done;
  }
}

/**
 * Rewrite one audit file with every entry passed through `redact`: changed entries get a new
 * checksum, sound unchanged lines are kept byte for byte, and a line that is not an entry at all
 * (cut by a crash, or damaged) is dropped, since it may hold part of a credential. Under the log's
 * lock, so it never races a rotation; lines other processes append meanwhile (appends take no
 * lock) are carried over to the new file. Returns how many lines changed, or undefined when the
 * lock could not be had.
 */
function redactFile(path: string, redact: (entry: AuditEntry) => AuditEntry): number | undefined {
  let changed = 0;
  const redactLines = (bytes: Buffer): string => {
    let out = '';
    for (const line of linesOf(bytes)) {
      const entry = decodeLine(line);
      if ('damage' in entry) {
        changed++;
        continue;
      }
      const again = redact(entry);
      if (JSON.stringify(again) === JSON.stringify(entry)) out += `${line.toString('utf8')}\n`;
      else {
        changed++;
        out += `${encodeEntry(again)}\n`;
      }
    }
    return out;
  };
  const locked = withFileLock(path, () => {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return;
      throw error;
    }
    try {
      const read = readFrom(fd, 0);
      const text = redactLines(read);
      if (changed === 0) return;
      const dir = join(path, '..');
      writeFileAtomic(path, text, dir);
      chmodSync(path, 0o600); // as the log is created: its queries are the user's
      // Whole lines appended to the old file between the read and the rename.
      const late = readFrom(fd, read.length);
      const whole = late.lastIndexOf(0x0a) + 1;
      if (whole > 0) appendFileSync(path, redactLines(late.subarray(0, whole)), { mode: 0o600 });
    } finally {
      closeSync(fd);
    }
  });
  return locked ? changed : undefined;
}

/** Everything in an open file from `offset` on. */
function readFrom(fd: number, offset: number): Buffer {
  const parts: Buffer[] = [];
  for (let at = offset; ; ) {
    const chunk = Buffer.alloc(1 << 16);
    const got = readSync(fd, chunk, 0, chunk.length, at);
    if (got === 0) break;
    parts.push(chunk.subarray(0, got));
    at += got;
  }
  return Buffer.concat(parts);
}

const ZERO: AnalyticsCounts = { queries: 0, hits: 0, misses: 0, last_query_ts: null };

/**
 * `.repodex/analytics.json`, a checked JSON file written atomically (temp file + rename), to which
 * each process adds its counts under a lock file: concurrent processes each add their own, and
 * none is lost to another's write.
 */
export class FileAnalytics implements AnalyticsStore {
  private readonly path: string;

  constructor(private readonly dataDir: string) {
    this.path = join(dataDir, ANALYTICS_FILE);
  }

  async add(delta: AnalyticsDelta): Promise<boolean> {
    try {
      makeDataDir(this.dataDir);
      const written = withFileLock(this.path, () => {
        const current = this.counts();
        this.write({ queries: current.queries + delta.queries, hits: current.hits + delta.hits, misses: current.misses + delta.misses, last_query_ts: delta.last ?? current.last_query_ts });
      });
      return written;
    } catch {
      // Statistics only: losing them must never fail a search.
      return true;
    }
  }

  async read(): Promise<AnalyticsCounts> {
    return this.counts();
  }

  private counts(): AnalyticsCounts {
    const counts = this.stored();
    return typeof counts === 'string' || 'damage' in counts ? ZERO : counts;
  }

  /** Damaged counts are never shown; the next search starts them again from zero, and so does `repodex sync` (`repair`). */
  async check(): Promise<PartCheck> {
    const counts = this.stored();
    if (counts === 'missing') return { checked: [], problems: [] };
    if ('damage' in counts) return { checked: [ANALYTICS_FILE], problems: [`${counts.damage}; its query counts are lost, and \`repodex sync\` starts them again from zero`] };
    return { checked: [ANALYTICS_FILE], problems: [] };
  }

  async repair(): Promise<void> {
    const counts = this.stored();
    if (typeof counts === 'string' || !('damage' in counts)) return;
    try {
      withFileLock(this.path, () => {
        const now = this.stored();
        if (typeof now !== 'string' && 'damage' in now) this.write(ZERO);
      });
    } catch {
      // Statistics only: a read-only index still answers.
    }
  }

  /** The counters in the file, `missing`, or why the file is damaged (then its counts are never used). */
  private stored(): AnalyticsCounts | 'missing' | { readonly damage: string } {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.path);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return 'missing';
      return { damage: `cannot read ${ANALYTICS_FILE}: ${errorMessage(error)}` };
    }
    let raw: Record<string, unknown>;
    try {
      raw = readCheckedJson(bytes, ANALYTICS_FILE, 'compact');
    } catch (error) {
      const older = olderCounts(bytes);
      if (older) return older;
      return { damage: isRepodexError(error) ? (error.detail ?? error.message) : errorMessage(error) };
    }
    const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined);
    const [queries, hits, misses] = [count(raw.queries), count(raw.hits), count(raw.misses)];
    const last = raw.last_query_ts;
    if (queries === undefined || hits === undefined || misses === undefined || (last !== null && typeof last !== 'string')) return { damage: `${ANALYTICS_FILE} is damaged: unexpected fields` };
    return { queries, hits, misses, last_query_ts: last };
  }

  /** Replace the file with `counts`, atomically (the caller holds its lock). */
  private write(counts: AnalyticsCounts): void {
    mkdirSync(this.dataDir, { recursive: true });
    const temp = `${this.path}.tmp-${process.pid}`;
    writeFileSync(temp, checkedJsonText({ ...counts }, 'compact'));
    renameSync(temp, this.path);
  }
}

/** Counts an older version wrote (no checksum: taken as they are, and checksummed at the next write), or undefined. */
function olderCounts(bytes: Buffer): AnalyticsCounts | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null || 'checksum' in raw || !bytes.equals(Buffer.from(`${JSON.stringify(raw)}\n`))) return undefined;
  const { queries, hits, misses, last_query_ts: last, ...rest } = raw as Record<string, unknown>;
  const count = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  if (Object.keys(rest).length > 0 || !count(queries) || !count(hits) || !count(misses) || (last !== null && typeof last !== 'string')) return undefined;
  return { queries, hits, misses, last_query_ts: last };
}

/**
 * The numbers (1-based, among all lines) of the damaged lines that start at or after byte `from`;
 * when `from` is undefined, of those in the last QUICK_CHECK_BYTES.
 */
function damagedLines(bytes: Buffer, from = bytes.length - QUICK_CHECK_BYTES): number[] {
  const damaged: number[] = [];
  forEachLine(
    bytes,
    (line, number) => {
      if (lineDamage(line) !== undefined) damaged.push(number);
    },
    from,
  );
  return damaged;
}

/**
 * Damage in the lines of a log's last QUICK_CHECK_BYTES, reading only those bytes (and the one
 * before them, which says whether a line starts where they do): a non-empty list when there is
 * some (numbered within the tail only), null when there is no such file.
 */
function tailDamage(path: string): number[] | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return null;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - QUICK_CHECK_BYTES - 1);
    const tail = Buffer.allocUnsafe(size - start);
    for (let got = 0; got < tail.length; ) {
      const n = readSync(fd, tail, got, tail.length - got, start + got);
      if (n === 0) return damagedLines(tail.subarray(0, got), size - QUICK_CHECK_BYTES - start);
      got += n;
    }
    return damagedLines(tail, size - QUICK_CHECK_BYTES - start);
  } finally {
    closeSync(fd);
  }
}
