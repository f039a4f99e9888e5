import { describe, expect, it } from 'vitest';
import { type QueryWords, focusSnippet } from './snippet.js';

/** Query words that stand for themselves, with these weights. */
function wordsOf(weights: Record<string, number>): QueryWords {
  return new Map(Object.entries(weights).map(([word, weight]) => [word, { term: word, weight }]));
}

describe('focusSnippet', () => {
  it('places the snippet on the window whose terms weigh the most, starting on its heaviest line', () => {
    const lines = ['import a', 'import b', '', 'import c', 'function retry() {', '  return backoff(retry)', '}', 'const other = 1'];
    // Both windows from line 14 and from line 15 hold both terms; the one whose first line holds both wins. Blank lines do not count.
    expect(focusSnippet(lines, 10, wordsOf({ retry: 2, backoff: 3 }))).toEqual({ snippet: '  return backoff(retry)\n}\nconst other = 1', line: 15, last: 17 });
  });

  it('keeps the stored snippet when nothing matches or the first lines already show as much', () => {
    expect(focusSnippet(['a', 'b', 'c', 'd'], 1, wordsOf({ retry: 1 }))).toBeUndefined();
    expect(focusSnippet(['retry here', 'b', 'c', 'd', 'retry again'], 1, wordsOf({ retry: 1 }))).toBeUndefined();
  });

  it('counts an inflection as its query term, once per window', () => {
    const words: QueryWords = new Map([
      ['retry', { term: 'retry', weight: 2 }],
      ['retries', { term: 'retry', weight: 1 }],
    ]);
    expect(focusSnippet(['x', 'y', 'z', 'w', 'max retries'], 1, words)?.line).toBe(5);
  });

  it('weighs windows holding the same terms the same, whatever order it meets them in', () => {
    // 1.1 + 2.2 + 3.3 summed in the order gamma, alpha, beta is a hair larger than in the order
    // alpha, beta, gamma: the later window must not win on that hair. On a true tie, the window
    // whose first line holds more wins, then the earlier one.
    const lines = ['const x = 1;', 'const y = 2;', 'const z = 3;', 'alpha beta gamma', 'nothing here', 'nothing there', 'gamma', 'alpha beta', 'end'];
    expect(focusSnippet(lines, 1, wordsOf({ alpha: 1.1, beta: 2.2, gamma: 3.3 }))).toEqual({ snippet: 'alpha beta gamma\nnothing here\nnothing there', line: 4, last: 6 });
  });

  it('finds words case-insensitively inside identifiers', () => {
    const lines = ['a', 'b', 'c', 'd', 'const connectionPool = new Pool()'];
    expect(focusSnippet(lines, 1, wordsOf({ pool: 1 }))?.line).toBe(5);
  });
});
