import { describe, expect, it } from 'vitest';
import { promptIdentifiers, shareLines } from './deterministic.js';

describe('shareLines', () => {
  it('gives each excerpt a fair share first, then the rest to the best ranked that were cut, never over the budget', () => {
    expect(shareLines([57, 40, 30], 60)).toEqual([20, 20, 20]);
    expect(shareLines([10, 40, 30], 60)).toEqual([10, 30, 20]);
    expect(shareLines([100], 60)).toEqual([60]);
    expect(shareLines([3, 3], 60)).toEqual([3, 3]);
    // Too many for the budget: the lowest ranked get nothing rather than a useless sliver.
    expect(shareLines([50, 50, 50, 50], 12)).toEqual([7, 5, 0, 0]);
    for (const [wanted, budget] of [
      [[1, 2, 3, 4, 5, 6, 7, 8, 9], 17],
      [[120, 4, 90], 33],
      [[], 10],
    ] as const) {
      const given = shareLines(wanted, budget);
      expect(given.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget);
      given.forEach((n, i) => expect(n).toBeLessThanOrEqual(wanted[i]!));
    }
  });
});

describe('promptIdentifiers', () => {
  it('finds backticked code, CamelCase, snake_case and dotted names, not prose', () => {
    expect(promptIdentifiers('Fix `parse_args` in HttpClient.sendWithRetries so that retries stop; see config_loader and fooBar')).toEqual([
      'parse_args',
      'HttpClient.sendWithRetries',
      'config_loader',
      'fooBar',
    ]);
  });
});
