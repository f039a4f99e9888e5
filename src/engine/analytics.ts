import { flushBeforeExit, written } from '../core/before-exit.js';
import type { AnalyticsDelta, AnalyticsStore } from '../store/control.js';

export type { AnalyticsCounts } from '../store/control.js';

/**
 * How long counts wait in memory before a server writes them: a write per query would cost more
 * than the query, and a team server of twenty repositories writes twenty files (each under a lock,
 * through a temporary file) per period. One-shot commands write theirs as they exit.
 */
const FLUSH_DELAY_MS = 5000;

/**
 * Seed 003's counters as a process gathers them: queries, hits (a search with at least one result),
 * misses, last query time. Counts gather in memory and are added to the store's at most every five
 * seconds, and before the process exits (`beforeExit`, which lets a database write finish; `exit`
 * for a store that writes synchronously), so concurrent processes each add their own.
 */
export class Analytics {
  private pending = { queries: 0, hits: 0, misses: 0, last: null as string | null };
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly store: AnalyticsStore) {}

  /** Count one search. */
  record(hit: boolean): void {
    this.pending.queries++;
    if (hit) this.pending.hits++;
    else this.pending.misses++;
    this.pending.last = new Date().toISOString();
    flushBeforeExit(this);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  }

  /** Add what was counted to the store now. Never throws: a read-only index must still answer. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    written(this);
    const delta = this.pending;
    if (delta.queries === 0) return this.writing;
    this.pending = { queries: 0, hits: 0, misses: 0, last: null };
    // The store call starts now (a file store writes before this returns); writes follow one another.
    const write = this.store.add(delta).then(
      (written) => {
        if (!written) this.keep(delta);
      },
      () => undefined,
    );
    this.writing = this.writing.then(() => write);
    return this.writing;
  }

  /** Put counts that could not be written back, for the next flush. */
  private keep(delta: AnalyticsDelta): void {
    this.pending = { queries: this.pending.queries + delta.queries, hits: this.pending.hits + delta.hits, misses: this.pending.misses + delta.misses, last: this.pending.last ?? delta.last };
    flushBeforeExit(this);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  }
}
