import { describe, expect, it } from 'vitest';
import { analyzeAfterCommit } from './pg-writer.js';

describe('analyzeAfterCommit', () => {
  it('refreshes statistics after a large write into a table they never counted (a first sync)', () => {
    expect(analyzeAfterCommit(120_000, -1)).toBe(true);
    expect(analyzeAfterCommit(120_000, 0)).toBe(true);
  });

  it('refreshes them when the write is a large part of what they counted (a rebuild of the only repository)', () => {
    expect(analyzeAfterCommit(120_000, 118_000)).toBe(true);
    expect(analyzeAfterCommit(120_000, 480_000)).toBe(true);
  });

  it('leaves them to autovacuum after a small write, or a rebuild of one repository among many', () => {
    expect(analyzeAfterCommit(40_000, -1)).toBe(false);
    expect(analyzeAfterCommit(120_000, 1_200_000)).toBe(false);
  });
});
