import { SNIPPET_LINES, makeSnippet } from '../chunk/chunker.js';

/** The words a query scored, each with the query term it stands for and how much it tells (idf). */
export type QueryWords = ReadonlyMap<string, { readonly term: string; readonly weight: number }>;

/** A snippet placed on the lines that matched. */
export interface FocusedSnippet {
  readonly snippet: string;
  /** The first line of the window that holds a matched term (1-based, in the file). */
  readonly line: number;
  /** The window's last line (1-based, in the file). */
  readonly last: number;
}

/** The query terms a text holds, directly or through a scored inflection (as substrings, like focusSnippet). */
function termsIn(text: string, words: QueryWords): Set<string> {
  const lower = text.toLowerCase();
  const held = new Set<string>();
  for (const [word, { term }] of words) if (lower.includes(word)) held.add(term);
  return held;
}

/**
 * The snippet of a chunk that shows what matched: the window of SNIPPET_LINES non-blank lines of
 * the chunk (`lines`, the first being line `startLine` of its file) whose distinct matched terms
 * weigh the most, starting on a matching line; on ties, the one whose first line weighs most, then
 * the earliest. Undefined when no line matches or when the chunk's first lines (its stored
 * snippet) already weigh as much as the best window.
 * Words are found as case-insensitive substrings (`pool` in `connectionPool`), which is what
 * the tokenizer's identifier parts amount to, at the cost of native string search.
 */
export function focusSnippet(lines: readonly string[], startLine: number, words: QueryWords): FocusedSnippet | undefined {
  // Each term a bit (a query has at most MAX_QUERY_TERMS = 32), and its weight: a window's terms are then a mask.
  const bitOf = new Map<string, number>();
  const weights: number[] = [];
  for (const { term, weight } of words.values()) {
    let bit = bitOf.get(term);
    if (bit === undefined) {
      bit = weights.length;
      bitOf.set(term, bit);
      weights.push(0);
    }
    weights[bit] = Math.max(weights[bit]!, weight, 1e-6);
  }
  // Summed lowest term first, so windows holding the same terms weigh exactly the same.
  const weightOf = (mask: number): number => {
    let total = 0;
    for (let rest = mask; rest !== 0; rest &= rest - 1) total += weights[31 - Math.clz32(rest & -rest)]!;
    return total;
  };
  const text = lines.join('\n').toLowerCase();
  const starts = new Uint32Array(lines.length);
  for (let at = 0, i = 0; i < lines.length; i++) {
    starts[i] = at;
    at += lines[i]!.length + 1;
  }
  const held = new Int32Array(lines.length);
  for (const [word, { term }] of words) {
    const bit = 1 << bitOf.get(term)!;
    for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + word.length)) {
      const line = lineAt(starts, at);
      held[line] = held[line]! | bit;
    }
  }
  // Non-blank lines and the terms each holds.
  const rowLine: number[] = [];
  const rowMask: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!NON_BLANK.test(lines[i]!)) continue;
    rowLine.push(i);
    rowMask.push(held[i]!);
  }
  const windowWeight = (from: number): number => {
    let mask = 0;
    for (let k = from; k < Math.min(from + SNIPPET_LINES, rowMask.length); k++) mask |= rowMask[k]!;
    return weightOf(mask);
  };
  let best = -1;
  let bestWeight = 0;
  for (let k = 0; k < rowMask.length; k++) {
    if (rowMask[k] === 0) continue;
    const weight = windowWeight(k);
    // On a tie, the window whose first line holds more: it starts where the matches are, not on a stray one above them.
    if (weight > bestWeight || (weight === bestWeight && best >= 0 && weightOf(rowMask[k]!) > weightOf(rowMask[best]!))) {
      best = k;
      bestWeight = weight;
    }
  }
  if (best < 0 || windowWeight(0) >= bestWeight) return undefined;
  const first = rowLine[best]!;
  const last = rowLine[Math.min(best + SNIPPET_LINES, rowLine.length) - 1]!;
  return { snippet: makeSnippet(lines, first + 1, last + 1), line: startLine + first, last: startLine + last };
}

/** A line with something on it (what `trim() !== ''` says, without making the trimmed copy). */
const NON_BLANK = /\S/;

/** Index of the line holding character `at`, given each line's start offset (ascending). */
function lineAt(starts: Uint32Array, at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** True when a stored snippet already shows every term a hit matched: no window can show more. */
export function snippetShowsAll(snippet: string, matched: readonly string[], words: QueryWords): boolean {
  const held = termsIn(snippet, words);
  return matched.every((term) => held.has(term));
}
