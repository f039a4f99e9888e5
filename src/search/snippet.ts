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
  const weightOf = new Map<string, number>();
  for (const { term, weight } of words.values()) weightOf.set(term, Math.max(weightOf.get(term) ?? 0, weight, 1e-6));
  const text = lines.join('\n').toLowerCase();
  const starts: number[] = [];
  for (let at = 0, i = 0; i < lines.length; i++) {
    starts.push(at);
    at += lines[i]!.length + 1;
  }
  const held: (Set<string> | undefined)[] = new Array(lines.length);
  for (const [word, { term }] of words) {
    for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + word.length)) {
      const line = lineAt(starts, at);
      (held[line] ??= new Set()).add(term);
    }
  }
  // Non-blank lines and the terms each holds.
  const rows: { line: number; terms: Set<string> | undefined }[] = [];
  lines.forEach((line, i) => {
    if (line.trim() !== '') rows.push({ line: i, terms: held[i] });
  });
  const windowWeight = (from: number): number => {
    const seen = new Set<string>();
    for (let k = from; k < Math.min(from + SNIPPET_LINES, rows.length); k++) for (const term of rows[k]!.terms ?? []) seen.add(term);
    let total = 0;
    for (const term of seen) total += weightOf.get(term)!;
    return total;
  };
  // On a tie, the window whose first line holds more: it starts where the matches are, not on a stray one above them.
  const lineWeight = (k: number): number => {
    let total = 0;
    for (const term of rows[k]!.terms ?? []) total += weightOf.get(term)!;
    return total;
  };
  let best = -1;
  let bestWeight = 0;
  for (let k = 0; k < rows.length; k++) {
    if (!rows[k]!.terms) continue;
    const weight = windowWeight(k);
    if (weight > bestWeight || (weight === bestWeight && best >= 0 && lineWeight(k) > lineWeight(best))) {
      best = k;
      bestWeight = weight;
    }
  }
  if (best < 0 || windowWeight(0) >= bestWeight) return undefined;
  const first = rows[best]!.line;
  const last = rows[Math.min(best + SNIPPET_LINES, rows.length) - 1]!.line;
  return { snippet: makeSnippet(lines, first + 1, last + 1), line: startLine + first, last: startLine + last };
}

/** Index of the line holding character `at`, given each line's start offset (ascending). */
function lineAt(starts: readonly number[], at: number): number {
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
