import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkedJsonText, readCheckedJson } from '../core/checked-json.js';
import { errorMessage, isErrnoException, isRepodexError } from '../core/errors.js';
import { withFileLock } from '../core/file-lock.js';

/** Seed 003's counters: how often the index is asked, and how often it had an answer. */
export interface AnalyticsCounts {
  readonly queries: number;
  readonly hits: number;
  readonly misses: number;
  /** ISO 8601 time of the last query, or null. */
  readonly last_query_ts: string | null;
}

/** The file, under `.repodex/`. */
export const ANALYTICS_FILE = 'analytics.json';

/** How long counts wait in memory before a server writes them (a write per query would cost more than the query). */
const FLUSH_DELAY_MS = 1000;

const ZERO: AnalyticsCounts = { queries: 0, hits: 0, misses: 0, last_query_ts: null };

/** The counters in the file, `missing`, or why the file is damaged (then its counts are never used). */
function readCounts(dataDir: string): AnalyticsCounts | 'missing' | { readonly damage: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dataDir, ANALYTICS_FILE));
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

/** Read the counters; zeros when the file is missing, damaged or from an older version (they are statistics, not data). */
export function readAnalytics(dataDir: string): AnalyticsCounts {
  const counts = readCounts(dataDir);
  return typeof counts === 'string' || 'damage' in counts ? ZERO : counts;
}

/**
 * Check analytics.json (`verify`, `status`). Damaged counts are never shown; the next search
 * starts them again from zero, and so does `repodex sync` (`repairAnalytics`).
 */
export function checkAnalytics(dataDir: string): { checked: string[]; problems: string[] } {
  const counts = readCounts(dataDir);
  if (counts === 'missing') return { checked: [], problems: [] };
  if ('damage' in counts) return { checked: [ANALYTICS_FILE], problems: [`${counts.damage}; its query counts are lost, and \`repodex sync\` starts them again from zero`] };
  return { checked: [ANALYTICS_FILE], problems: [] };
}

/** Start the counters again from zero when the file is damaged (a sync does it); never throws. */
export function repairAnalytics(dataDir: string): void {
  const counts = readCounts(dataDir);
  if (typeof counts === 'string' || !('damage' in counts)) return;
  try {
    withFileLock(join(dataDir, ANALYTICS_FILE), () => {
      const now = readCounts(dataDir);
      if (typeof now !== 'string' && 'damage' in now) writeCounts(dataDir, ZERO);
    });
  } catch {
    // Statistics only: a read-only index still answers.
  }
}

/** Replace the file with `counts`, atomically (the caller holds its lock). */
function writeCounts(dataDir: string, counts: AnalyticsCounts): void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, ANALYTICS_FILE);
  const temp = `${path}.tmp-${process.pid}`;
  writeFileSync(temp, checkedJsonText({ ...counts }, 'compact'));
  renameSync(temp, path);
}

/** Counters with something not yet written: flushed when the process exits, by one listener for all. */
const unwritten = new Set<Analytics>();
let exitHooked = false;

/**
 * `.repodex/analytics.json`, a checked JSON file written atomically (temp file + rename): queries,
 * hits (a search with at least one result), misses, last query time. Counts gather in memory and
 * are added to the file's at most once a second, and when the process exits, under a lock file:
 * concurrent processes each add their own deltas, and none is lost to another's write.
 */
export class Analytics {
  private pending = { queries: 0, hits: 0, misses: 0, last: null as string | null };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly dataDir: string) {}

  /** Count one search. */
  record(hit: boolean): void {
    this.pending.queries++;
    if (hit) this.pending.hits++;
    else this.pending.misses++;
    this.pending.last = new Date().toISOString();
    unwritten.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', () => {
        for (const analytics of unwritten) analytics.flush();
      });
    }
    this.timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS).unref();
  }

  /** Add what was counted to the file now. Never throws: a read-only index must still answer. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    unwritten.delete(this);
    const delta = this.pending;
    if (delta.queries === 0) return;
    this.pending = { queries: 0, hits: 0, misses: 0, last: null };
    try {
      mkdirSync(this.dataDir, { recursive: true });
      const written = withFileLock(join(this.dataDir, ANALYTICS_FILE), () => {
        const current = readAnalytics(this.dataDir);
        writeCounts(this.dataDir, { queries: current.queries + delta.queries, hits: current.hits + delta.hits, misses: current.misses + delta.misses, last_query_ts: delta.last ?? current.last_query_ts });
      });
      if (!written) this.keep(delta);
    } catch {
      // Statistics only: losing them must never fail a search.
    }
  }

  /** Put counts that could not be written back, for the next flush. */
  private keep(delta: { queries: number; hits: number; misses: number; last: string | null }): void {
    this.pending = { queries: this.pending.queries + delta.queries, hits: this.pending.hits + delta.hits, misses: this.pending.misses + delta.misses, last: this.pending.last ?? delta.last };
    unwritten.add(this);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_DELAY_MS).unref();
  }
}
