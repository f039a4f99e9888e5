import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** Read the counters; zeros when the file is missing or unreadable (they are statistics, not data). */
export function readAnalytics(dataDir: string): AnalyticsCounts {
  try {
    const raw = JSON.parse(readFileSync(join(dataDir, ANALYTICS_FILE), 'utf8')) as Partial<Record<keyof AnalyticsCounts, unknown>>;
    const count = (value: unknown): number => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
    return { queries: count(raw.queries), hits: count(raw.hits), misses: count(raw.misses), last_query_ts: typeof raw.last_query_ts === 'string' ? raw.last_query_ts : null };
  } catch {
    return { queries: 0, hits: 0, misses: 0, last_query_ts: null };
  }
}

/** Counters with something not yet written: flushed when the process exits, by one listener for all. */
const unwritten = new Set<Analytics>();
let exitHooked = false;

/**
 * `.repodex/analytics.json`, written atomically (temp file + rename): queries, hits (a search
 * with at least one result), misses, last query time. Counts gather in memory and are added to
 * the file's at most once a second, and when the process exits; concurrent processes each add
 * their own deltas, so a lost race costs a few counts, never a torn file.
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
      const current = readAnalytics(this.dataDir);
      const next: AnalyticsCounts = { queries: current.queries + delta.queries, hits: current.hits + delta.hits, misses: current.misses + delta.misses, last_query_ts: delta.last ?? current.last_query_ts };
      mkdirSync(this.dataDir, { recursive: true });
      const path = join(this.dataDir, ANALYTICS_FILE);
      const temp = `${path}.tmp-${process.pid}`;
      writeFileSync(temp, `${JSON.stringify(next)}\n`);
      renameSync(temp, path);
    } catch {
      // Statistics only: losing them must never fail a search.
    }
  }
}
