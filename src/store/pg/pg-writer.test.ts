import { describe, expect, it } from 'vitest';
import { analyzeAfterCommit } from './pg-writer.js';

describe('analyzeAfterCommit', () => {
  it('refreshes statistics after a large write that is most of what the database holds (a first sync, a rebuild of the only repository)', () => {
    expect(analyzeAfterCommit(120_000, 120_000)).toBe(true);
    expect(analyzeAfterCommit(120_000, 480_000)).toBe(true);
  });

  it('leaves them to autovacuum after a small write, or a rebuild of one repository among many', () => {
    expect(analyzeAfterCommit(40_000, 40_000)).toBe(false);
    expect(analyzeAfterCommit(120_000, 1_200_000)).toBe(false);
  });
});
