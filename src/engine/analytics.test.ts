import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Analytics, readAnalytics } from './analytics.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('Analytics', () => {
  it('adds its counts to the file, and many counters share one exit listener', () => {
    const before = process.listenerCount('exit');
    const counters = Array.from({ length: 20 }, () => {
      const dir = mkdtempSync(join(tmpdir(), 'repodex-analytics-'));
      dirs.push(dir);
      return { dir, analytics: new Analytics(dir) };
    });
    for (const { analytics } of counters) {
      analytics.record(true);
      analytics.record(false);
    }
    expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(1);
    for (const { dir, analytics } of counters) {
      analytics.flush();
      expect(readAnalytics(dir)).toMatchObject({ queries: 2, hits: 1, misses: 1 });
      // A second process's counts add up.
      const other = new Analytics(dir);
      other.record(true);
      other.flush();
      expect(readAnalytics(dir)).toMatchObject({ queries: 3, hits: 2, misses: 1 });
      expect(readAnalytics(dir).last_query_ts).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
  });
});
