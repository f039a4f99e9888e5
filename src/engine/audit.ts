import { appendFileSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RepodexError, isErrnoException } from '../core/errors.js';
import { createFileAtomic } from '../core/fs-atomic.js';
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
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, clean(item, depth + 1)]));
    }
    return typeof value;
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (key === 'op' || value === undefined) continue;
    out[key] = clean(value, 0);
  }
  return out;
}

/**
 * `.repodex/audit.jsonl`: one JSON line per call, appended (one `write` per line, so lines from
 * concurrent processes never interleave), rotated to `audit.1.jsonl` past 4 MiB.
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
      appendFileSync(this.path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) {
        try {
          // First call in this repository: the data folder, with its .gitignore (never in git status).
          mkdirSync(this.dataDir, { recursive: true });
          createFileAtomic(join(this.dataDir, '.gitignore'), '*\n', this.dataDir);
          appendFileSync(this.path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
        } catch {
          // The data folder cannot be created (read-only checkout): the call still answers.
        }
      }
    }
  }

  private rotateIfLarge(): void {
    const size = statSync(this.path, { throwIfNoEntry: false })?.size ?? 0;
    if (size < AUDIT_ROTATE_BYTES) return;
    try {
      renameSync(this.path, this.rotated);
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT')) throw error; // another process rotated it first
    }
  }

  /** The most recent entries at or after `since` (ISO time or a duration such as `15m`, `2h`, `7d`), at most `limit`, oldest first. */
  read(since: string | undefined, limit: number, now = Date.now()): AuditReport {
    const from = since === undefined ? undefined : parseSince(since, now);
    const entries: AuditEntry[] = [];
    for (const file of [this.rotated, this.path]) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) continue;
        throw error;
      }
      for (const line of text.split('\n')) {
        if (line === '') continue;
        let entry: AuditEntry;
        try {
          entry = JSON.parse(line) as AuditEntry;
        } catch {
          continue; // a line cut by a crash mid-write
        }
        if (from !== undefined && !(Date.parse(entry.time) >= from)) continue;
        entries.push(entry);
      }
    }
    const kept = entries.slice(Math.max(0, entries.length - limit));
    return { entries: kept, total: entries.length, truncated: kept.length < entries.length, path: this.path };
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
