import { appendFileSync, chmodSync, closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkJsonBytes, checkedJsonText } from '../core/checked-json.js';
import { RepodexError, errorMessage, isErrnoException } from '../core/errors.js';
import { withFileLock } from '../core/file-lock.js';
import { createFileAtomic, writeFileAtomic } from '../core/fs-atomic.js';
import { redactSecrets } from '../safety/secrets.js';

/** One call as the audit log records it: who asked what, how it went, never any file content. */
export interface AuditEntry {
  /** When the call started (ISO 8601, UTC). */
  readonly time: string;
  readonly request_id: string;
  /** The front end: `cli`, `jsonl` or `mcp`. */
  readonly frontend: string;
  /** The operation (`search`) and, for MCP, the tool name the client used (`repo.search`). */
  readonly op: string;
  readonly tool?: string;
  /** The request's arguments, sanitized (`sanitizeArguments`). */
  readonly args: Record<string, unknown>;
  /** `ok`, or the error code of a failed call (`BLOCKED`, `BAD_REQUEST`, …). */
  readonly outcome: string;
  readonly blocked: boolean;
  readonly duration_ms: number;
}

/** The answer to `audit`: the most recent entries, oldest first. */
export interface AuditReport {
  readonly entries: AuditEntry[];
  /** Entries that matched `since` before `limit` was applied. */
  readonly total: number;
  readonly truncated: boolean;
  readonly path: string;
  /** Present when lines of the log are damaged: they are left out, and this says how many and what to do. */
  readonly warnings?: string[];
}

/** File name of the audit log under `.repodex/`, and of its one rotated predecessor. */
export const AUDIT_FILE = 'audit.jsonl';
export const AUDIT_ROTATED_FILE = 'audit.1.jsonl';
/** The log is rotated when it grows past this size: at most twice this much is ever kept. */
export const AUDIT_ROTATE_BYTES = 4 * 1024 * 1024;
/** Longest string argument kept whole; longer ones (a pasted bug report) are cut. */
const MAX_ARGUMENT_CHARS = 200;
/** Default and largest number of entries one `audit` returns. */
export const DEFAULT_AUDIT_LIMIT = 50;
export const MAX_AUDIT_LIMIT = 1000;

/**
 * Arguments as the log keeps them: every credential replaced by `[REDACTED:rule]` (a query may be
 * a pasted log line with a token in it; `redactSecrets`, before the cut, so a credential across the
 * cut is still found), strings cut to 200 characters (with the original length), arrays to their
 * first 20 items, nested objects one level deep. Requests never carry file content, so what
 * remains is queries, paths, ids and numbers.
 */
export function sanitizeArguments(args: Record<string, unknown>): Record<string, unknown> {
  const clean = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') {
      const text = redactSecrets(value);
      return text.length > MAX_ARGUMENT_CHARS ? `${text.slice(0, MAX_ARGUMENT_CHARS)}… (${text.length} characters)` : text;
    }
    if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return value;
    if (Array.isArray(value)) return value.slice(0, 20).map((item) => clean(item, depth + 1));
    if (typeof value === 'object' && depth < 2) {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [redactSecrets(key), clean(item, depth + 1)]));
    }
    return typeof value;
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (key === 'op' || value === undefined) continue;
    out[redactSecrets(key)] = clean(value, 0);
  }
  return out;
}

/** The fields an entry can have: a line without its checksum is an older version's only if it has no others. */
const ENTRY_FIELDS = new Set(['time', 'request_id', 'frontend', 'op', 'tool', 'args', 'outcome', 'blocked', 'duration_ms']);

/** What a log cannot do, and what the user can: said wherever a damaged line is reported. */
const AUDIT_FIX = 'an audit log cannot be rebuilt, so `repodex audit` leaves damaged lines out; to clear this, keep a copy of the file if you need it and delete it (a new log starts with the next call)';

/** Why a line is damaged, or undefined when it is sound or an older version's (no checksum). */
function lineDamage(line: Buffer): string | undefined {
  const why = checkJsonBytes(line, 'line');
  return why !== undefined && !looksOlder(line) ? why : undefined;
}

/** One line of the log: its entry, or why it is damaged. */
function decodeLine(line: Buffer): AuditEntry | { readonly damage: string } {
  const damage = lineDamage(line);
  if (damage) return { damage };
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { damage: 'it is not valid JSON' };
  }
  const { checksum: _checksum, ...fields } = entry;
  if (Object.keys(fields).some((key) => !ENTRY_FIELDS.has(key))) return { damage: 'it has fields an entry never has' };
  return fields as unknown as AuditEntry;
}

/**
 * A line an older version wrote, without a checksum: an entry from its time to its duration, the
 * last field it always has. (A checksummed line ends with its checksum: no single changed byte
 * makes one look like this.)
 */
function looksOlder(line: Buffer): boolean {
  return line.toString('latin1', 0, 9) === '{"time":"' && /,"duration_ms":[0-9.eE+-]+\}$/.test(line.toString('latin1', Math.max(0, line.length - 40)));
}

/** The lines of a log file, without their newlines; a last line without one counts too. */
function linesOf(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    let end = bytes.indexOf(0x0a, at);
    if (end < 0) end = bytes.length;
    if (end > at) lines.push(bytes.subarray(at, end));
    at = end + 1;
  }
  return lines;
}

/**
 * Check the audit log and its rotated predecessor (`verify`, `status`) at checksum speed: every
 * line's checksum (lines an older version wrote have none and are taken as they are). A damaged
 * line is a problem whose message says what the user can do, since nothing can rebuild it.
 */
export function checkAuditLog(dataDir: string): { checked: string[]; problems: string[] } {
  const checked: string[] = [];
  const problems: string[] = [];
  for (const name of [AUDIT_ROTATED_FILE, AUDIT_FILE]) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dataDir, name));
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) continue;
      problems.push(`cannot read ${name}: ${errorMessage(error)}`);
      continue;
    }
    checked.push(name);
    const damaged: number[] = [];
    linesOf(bytes).forEach((line, i) => {
      if (lineDamage(line) !== undefined) damaged.push(i + 1);
    });
    if (damaged.length > 0) problems.push(`${name}: ${damaged.length === 1 ? `line ${damaged[0]} is` : `${damaged.length} lines (${damaged.slice(0, 5).join(', ')}${damaged.length > 5 ? ', …' : ''}) are`} damaged; ${AUDIT_FIX}`);
  }
  return { checked, problems };
}

/**
 * Rewrite an audit log with every name and string in every entry passed through `redactSecrets`
 * again (after the credential rules grew): changed entries get a new checksum, sound unchanged
 * lines are kept byte for byte, and a line that is not an entry at all (cut by a crash, or
 * damaged) is dropped, since it may hold part of a credential. Under the log's lock, so it never
 * races a rotation; lines other processes append meanwhile (appends take no lock) are carried over
 * to the new file. Returns how many lines changed, or undefined when the lock could not be had.
 */
export function redactAuditFile(path: string): number | undefined {
  let changed = 0;
  const redactLines = (bytes: Buffer): string => {
    let out = '';
    for (const line of linesOf(bytes)) {
      const entry = decodeLine(line);
      if ('damage' in entry) {
        changed++;
        continue;
      }
      const again = { ...entry, op: redactSecrets(entry.op), ...(entry.tool !== undefined ? { tool: redactSecrets(entry.tool) } : {}), args: redactValue(entry.args) as Record<string, unknown> };
      if (JSON.stringify(again) === JSON.stringify(entry)) out += `${line.toString('utf8')}\n`;
      else {
        changed++;
        out += `${checkedJsonText(again, 'line')}\n`;
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

/** A logged value with every string in it redacted (already cut and bounded when it was logged). */
function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactSecrets(key), redactValue(item)]));
  return value;
}

/**
 * `.repodex/audit.jsonl`: one JSON line per call, each with a checksum of its own (its last field,
 * see core/checked-json.ts), appended (one `write` per line, so lines from concurrent processes never
 * interleave), rotated to `audit.1.jsonl` past 4 MiB (under a lock file, so two processes never
 * both rotate and one's rename never throws the log the other just rotated away).
 */
export class AuditLog {
  readonly path: string;
  private readonly rotated: string;

  constructor(private readonly dataDir: string) {
    this.path = join(dataDir, AUDIT_FILE);
    this.rotated = join(dataDir, AUDIT_ROTATED_FILE);
  }

  /** Append one entry. Never throws: a call must not fail because its log line could not be written. */
  record(entry: AuditEntry): void {
    try {
      this.rotateIfLarge();
      appendFileSync(this.path, `${checkedJsonText({ ...entry }, 'line')}\n`, { mode: 0o600 });
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) {
        try {
          // First call in this repository: the data folder, with its .gitignore (never in git status).
          mkdirSync(this.dataDir, { recursive: true });
          createFileAtomic(join(this.dataDir, '.gitignore'), '*\n', this.dataDir);
          appendFileSync(this.path, `${checkedJsonText({ ...entry }, 'line')}\n`, { mode: 0o600 });
        } catch {
          // The data folder cannot be created (read-only checkout): the call still answers.
        }
      }
    }
  }

  private rotateIfLarge(): void {
    const large = (): boolean => (statSync(this.path, { throwIfNoEntry: false })?.size ?? 0) >= AUDIT_ROTATE_BYTES;
    if (!large()) return;
    // Under the lock and only if still large: a process that saw the old size must not rotate
    // the fresh log another process just started (its rename would throw the full one away).
    withFileLock(this.path, () => {
      if (large()) renameSync(this.path, this.rotated);
    });
  }

  /** The most recent entries at or after `since` (ISO time or a duration such as `15m`, `2h`, `7d`), at most `limit`, oldest first. */
  read(since: string | undefined, limit: number, now = Date.now()): AuditReport {
    const from = since === undefined ? undefined : parseSince(since, now);
    const entries: AuditEntry[] = [];
    let damaged = 0;
    for (const file of [this.rotated, this.path]) {
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
    const kept = entries.slice(Math.max(0, entries.length - limit));
    const report = { entries: kept, total: entries.length, truncated: kept.length < entries.length, path: this.path };
    return damaged === 0 ? report : { ...report, warnings: [`${damaged} damaged line(s) of the audit log left out (\`repodex verify\` names them); ${AUDIT_FIX}`] };
  }
}

const DURATION = /^(\d+)\s*(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `since` as epoch milliseconds: an ISO 8601 time, or a duration back from now (`30s`, `15m`, `2h`, `7d`, `1w`). */
export function parseSince(since: string, now = Date.now()): number {
  const text = since.trim();
  const duration = DURATION.exec(text);
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]!]!;
  const time = Date.parse(text);
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && Number.isFinite(time)) return time;
  throw new RepodexError('BAD_REQUEST', `since must be an ISO time (2026-11-24T10:00:00Z) or a duration such as 15m, 2h or 7d, got ${JSON.stringify(since)}`);
}
