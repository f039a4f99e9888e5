import { SNIPPET_LINES, makeSnippet } from '../chunk/chunker.js';
import { tokenize } from '../text/tokenizer.js';

/** The words a query scored, each with the query term it stands for and how much it tells (idf). */
export type QueryWords = ReadonlyMap<string, { readonly term: string; readonly weight: number }>;

/** A snippet placed on the lines that matched. */
export interface FocusedSnippet {
  readonly snippet: string;
  /** The first line of the window that holds a matched term (1-based, in the file). */
  readonly line: number;
}

/** The query terms a text holds, directly or through a scored inflection. */
function termsIn(text: string, words: QueryWords): Set<string> {
  const held = new Set<string>();
  for (const token of tokenize(text)) {
    const word = words.get(token);
    if (word) held.add(word.term);
  }
  return held;
}

/**
 * The snippet of a chunk that shows what matched: the window of SNIPPET_LINES non-blank lines of
 * `lines[startLine..endLine]` (1-based, inclusive) whose distinct matched terms weigh the most,
 * starting on a matching line, earliest on ties. Undefined when no line matches or when the
 * chunk's first lines (its stored snippet) already weigh as much as the best window.
 */
export function focusSnippet(lines: readonly string[], startLine: number, endLine: number, words: QueryWords): FocusedSnippet | undefined {
  const weightOf = new Map<string, number>();
  for (const { term, weight } of words.values()) weightOf.set(term, Math.max(weightOf.get(term) ?? 0, weight, 1e-6));
  const rows: { line: number; terms: Set<string> }[] = [];
  for (let n = startLine; n <= Math.min(endLine, lines.length); n++) {
    const text = lines[n - 1]!;
    if (text.trim() !== '') rows.push({ line: n, terms: termsIn(text, words) });
  }
  const windowWeight = (from: number): number => {
    const seen = new Set<string>();
    for (let k = from; k < Math.min(from + SNIPPET_LINES, rows.length); k++) for (const term of rows[k]!.terms) seen.add(term);
    let total = 0;
    for (const term of seen) total += weightOf.get(term)!;
    return total;
  };
  let best = -1;
  let bestWeight = 0;
  for (let k = 0; k < rows.length; k++) {
    if (rows[k]!.terms.size === 0) continue;
    const weight = windowWeight(k);
    if (weight > bestWeight) {
      best = k;
      bestWeight = weight;
    }
  }
  if (best < 0 || windowWeight(0) >= bestWeight) return undefined;
  const first = rows[best]!.line;
  const last = rows[Math.min(best + SNIPPET_LINES, rows.length) - 1]!.line;
  return { snippet: makeSnippet(lines, first, last), line: first };
}

/** True when a stored snippet already shows every term a hit matched: no window can show more. */
export function snippetShowsAll(snippet: string, matched: readonly string[], words: QueryWords): boolean {
  const held = termsIn(snippet, words);
  return matched.every((term) => held.has(term));
}
