import { flushBeforeExit, written } from '../core/before-exit.js';
import { RepodexError } from '../core/errors.js';
import { redactSecrets } from '../safety/secrets.js';
import { AUDIT_FIX, type AuditEntry } from '../store/audit-lines.js';
import type { AuditStore } from '../store/control.js';

export type { AuditEntry } from '../store/audit-lines.js';

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

/** The most recent entries of `store` at or after `since` (ISO time or a duration such as `15m`, `2h`, `7d`), at most `limit`, oldest first. */
export async function readAudit(store: AuditStore, since: string | undefined, limit: number, now = Date.now()): Promise<AuditReport> {
  const from = since === undefined ? undefined : parseSince(since, now);
  await store.settled();
  const { entries, total, damaged } = await store.read(from, limit);
  const report = { entries, total, truncated: entries.length < total, path: store.where };
  return damaged === 0 ? report : { ...report, warnings: [`${damaged} damaged line(s) of the audit log left out (\`repodex verify\` names them); ${AUDIT_FIX}`] };
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

/**
 * The audit log as the engine records calls: an entry is made (arguments sanitized, credentials
 * redacted) and handed to the store right after the call's answer is on its way — on the next turn
 * of the event loop, in call order — so a call never waits for its line. Reading the log, and the
 * process's exit, write what is pending first.
 */
export class CallLog {
  private pending: (() => AuditEntry)[] = [];
  private scheduled = false;

  constructor(readonly store: AuditStore) {}

  /** Keep a call: `make` builds its entry when it is written. */
  record(make: () => AuditEntry): void {
    this.pending.push(make);
    flushBeforeExit(this);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Hand every pending entry to the store now (a file store writes them before this returns). */
  flush(): void {
    this.scheduled = false;
    written(this);
    const pending = this.pending;
    this.pending = [];
    const entries: AuditEntry[] = [];
    for (const make of pending) {
      try {
        entries.push(make());
      } catch {
        // A call never fails because its line could not be kept.
      }
    }
    this.store.append(...entries);
  }

  /** Wait until every call recorded so far is kept. */
  async settled(): Promise<void> {
    this.flush();
    await this.store.settled();
  }
}
