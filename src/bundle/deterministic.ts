import { numberLines } from '../engine/read-file.js';
import type { OutlineSymbol } from '../lang/types.js';
import type { SearchHit } from '../search/search.js';
import { queryTerms } from '../text/tokenizer.js';
import type { BundleDraft, BundleExcerpt, BundleRequest, BundleSearch, BundleTools, Bundler } from './bundler.js';

/** Longest query text sent to one search (the search op's own bound). */
const MAX_QUERY_CHARS = 4096;
/** Results asked of each search. */
const HITS_PER_SEARCH = 20;
/** Keywords searched on their own, rarest first. */
const KEYWORD_SEARCHES = 4;
/** Reciprocal-rank fusion constant: how fast a lower rank stops counting. */
const RRF_K = 20;
/** Excerpts taken from one file. */
const EXCERPTS_PER_FILE = 2;
/** A hit is widened to its enclosing declaration only if that declaration is at most this long. */
const MAX_WIDENED_LINES = 150;
/** An excerpt shorter than this is not worth starting when the budget is nearly spent. */
const MIN_EXCERPT_LINES = 5;

/** Identifier-like words of a prompt: backticked code, CamelCase, snake_case, dotted names, file names. */
export function promptIdentifiers(prompt: string): string[] {
  const found: string[] = [];
  for (const match of prompt.matchAll(/`([^`\n]{1,120})`/g)) found.push(match[1]!.trim());
  for (const match of prompt.matchAll(/[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_$][\w$]*/g)) {
    const word = match[0];
    const isCode = /[a-z][A-Z]/.test(word) || /^[A-Z][a-z]+[A-Z]/.test(word) || /[a-z0-9]_[a-z0-9]/i.test(word) || word.includes('.');
    if (isCode && word.length >= 3) found.push(word);
  }
  return [...new Set(found.filter((word) => word !== ''))];
}

interface Candidate {
  hit: SearchHit;
  score: number;
  foundBy: string[];
}

/**
 * The default bundler: keywords from the prompt, several searches (the prompt itself, its
 * identifiers, its rarest keywords one by one) fused by reciprocal rank, at most two excerpts per
 * file, each widened to its enclosing declaration, cut to the budget in rank order. Deterministic:
 * every tie is broken by path and line.
 */
export const deterministicBundler: Bundler = {
  name: 'deterministic-v1',
  async build(request: BundleRequest, tools: BundleTools): Promise<BundleDraft> {
    const prompt = request.prompt.trim();
    const identifiers = promptIdentifiers(prompt);
    const terms = queryTerms(prompt);
    const df = await tools.documentFrequency(terms);
    // Rarest first (most telling), then first mentioned; terms no chunk has are dropped.
    const keywords = terms
      .map((term, i) => ({ term, df: df[i]!, i }))
      .filter((entry) => entry.df > 0)
      .sort((a, b) => a.df - b.df || a.i - b.i)
      .map((entry) => entry.term);

    const searches: { query: string; weight: number; label: string }[] = [{ query: prompt.slice(0, MAX_QUERY_CHARS), weight: 1, label: 'the prompt' }];
    if (identifiers.length > 0) searches.push({ query: identifiers.join(' ').slice(0, MAX_QUERY_CHARS), weight: 1, label: 'its identifiers' });
    for (const keyword of keywords.slice(0, KEYWORD_SEARCHES)) searches.push({ query: keyword, weight: 0.5, label: `"${keyword}"` });

    const candidates = new Map<number, Candidate>();
    const ran: BundleSearch[] = [];
    for (const search of searches) {
      const hits = await tools.search(search.query, { topK: HITS_PER_SEARCH, excludeTests: !request.includeTests });
      ran.push({ query: search.query.length > 200 ? `${search.query.slice(0, 200)}…` : search.query, hits: hits.length });
      hits.forEach((hit, rank) => {
        const entry = candidates.get(hit.chunk_id) ?? { hit, score: 0, foundBy: [] };
        entry.score += search.weight / (RRF_K + rank + 1);
        entry.foundBy.push(`${search.label} #${rank + 1}`);
        // Keep the hit that matched the most terms (its `why` explains the excerpt best).
        if (hit.matched.length > entry.hit.matched.length) entry.hit = hit;
        candidates.set(hit.chunk_id, entry);
      });
    }

    const ranked = [...candidates.values()].sort((a, b) => b.score - a.score || a.hit.path.localeCompare(b.hit.path) || a.hit.start_line - b.hit.start_line);
    // Files in order of their best candidate; at most maxFiles of them, two excerpts each.
    const byFile = new Map<string, Candidate[]>();
    for (const candidate of ranked) {
      const list = byFile.get(candidate.hit.path);
      if (list) {
        if (list.length < EXCERPTS_PER_FILE) list.push(candidate);
      } else if (byFile.size < request.maxFiles) {
        byFile.set(candidate.hit.path, [candidate]);
      }
    }

    const omitted: BundleDraft['omitted'] = [];
    // Every file's ranges first, so the line budget can be shared out before anything is cut.
    const planned: { path: string; lines: readonly string[]; range: Range }[] = [];
    for (const [path, list] of byFile) {
      const read = await tools.read(path);
      if (!read.ok) {
        omitted.push({ path, reason: read.reason });
        continue;
      }
      const symbols = await tools.outline(path);
      for (const range of mergeRanges(list.map((candidate) => widen(candidate, symbols, read.lines.length)))) planned.push({ path, lines: read.lines, range });
    }
    const lengths = shareLines(planned.map(({ range }) => range.end - range.start + 1), request.maxLines);
    const excerpts: BundleExcerpt[] = [];
    planned.forEach(({ path, lines, range }, i) => {
      const length = lengths[i]!;
      if (length === 0) {
        omitted.push({ path, reason: `line budget spent (${request.maxLines} lines): ${path}:${range.start}-${range.end} left out` });
        return;
      }
      const start = windowStart(lines, range, length);
      const end = start + length - 1;
      const numbered = numberLines(lines.slice(start - 1, end), start);
      excerpts.push({
        path,
        start_line: start,
        end_line: end,
        citation: `${path}:${start}-${end}`,
        symbol: range.symbol,
        rationale: range.rationale,
        lines: numbered.lines,
        truncated: start > range.start || end < range.end,
        score: Math.round(range.score * 1e6) / 1e6,
      });
    });
    // Files that ranked but did not fit the file budget.
    const cited = new Set(byFile.keys());
    for (const candidate of ranked) {
      if (omitted.length >= 10) break;
      if (!cited.has(candidate.hit.path)) {
        cited.add(candidate.hit.path);
        omitted.push({ path: candidate.hit.path, reason: `file budget spent (${request.maxFiles} files)` });
      }
    }
    return { keywords: [...identifiers, ...keywords.filter((keyword) => !identifiers.includes(keyword))].slice(0, 24), searches: ran, excerpts, omitted };
  },
};

interface Range {
  start: number;
  end: number;
  score: number;
  symbol: string | null;
  rationale: string;
  /** Query terms the hits in it matched: where a cut excerpt's window goes. */
  terms: string[];
}

/**
 * Lines for each excerpt (in rank order) within `budget`: first a fair share each (at least
 * MIN_EXCERPT_LINES; the lowest ranked get nothing when even that does not fit), then what is
 * left goes to the excerpts that were cut, best ranked first.
 */
export function shareLines(wanted: readonly number[], budget: number): number[] {
  const given = wanted.map(() => 0);
  let left = budget;
  const share = Math.max(MIN_EXCERPT_LINES, Math.floor(budget / Math.max(1, wanted.length)));
  wanted.forEach((length, i) => {
    const take = Math.min(length, share, left);
    if (take < Math.min(MIN_EXCERPT_LINES, length)) return;
    given[i] = take;
    left -= take;
  });
  wanted.forEach((length, i) => {
    if (given[i]! === 0 || left === 0) return;
    const more = Math.min(length - given[i]!, left);
    given[i]! += more;
    left -= more;
  });
  return given;
}

/** Where a window of `length` lines starts inside a range: at the first line holding a matched term (two lines of lead-in), else at the top. */
function windowStart(lines: readonly string[], range: Range, length: number): number {
  const span = range.end - range.start + 1;
  if (length >= span || range.terms.length === 0) return range.start;
  const pattern = new RegExp(range.terms.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i');
  for (let line = range.start; line <= range.end; line++) {
    if (pattern.test(lines[line - 1] ?? '')) return Math.min(Math.max(range.start, line - 2), range.end - length + 1);
  }
  return range.start;
}

/** A hit widened to the smallest enclosing declaration that is larger than it and not too long. */
function widen(candidate: Candidate, symbols: readonly OutlineSymbol[], totalLines: number): Range {
  const { hit } = candidate;
  const matched = hit.matched.length > 0 ? `matched ${hit.matched.map((term) => `"${term}"`).join(', ')}` : 'ranked by path and name';
  const found = `found by ${candidate.foundBy.join(', ')}`;
  let best: OutlineSymbol | undefined;
  for (const symbol of symbols) {
    const length = symbol.end_line - symbol.start_line + 1;
    const encloses = symbol.start_line <= hit.start_line && symbol.end_line >= hit.end_line;
    const larger = symbol.start_line < hit.start_line || symbol.end_line > hit.end_line;
    if (!encloses || !larger || length > MAX_WIDENED_LINES) continue;
    if (!best || length < best.end_line - best.start_line + 1) best = symbol;
  }
  const end = Math.min(hit.end_line, Math.max(totalLines, 1));
  if (!best) {
    const what = hit.symbol ? `the chunk of ${hit.symbol}` : 'the chunk';
    return { start: hit.start_line, end, score: candidate.score, symbol: hit.symbol, rationale: `${matched}; ${found}; ${what}`, terms: [...hit.matched] };
  }
  const name = best.parent_symbol ? `${best.parent_symbol} › ${best.name}` : best.name;
  return {
    start: best.start_line,
    end: Math.min(best.end_line, Math.max(totalLines, 1)),
    score: candidate.score,
    symbol: name,
    rationale: `${matched}; ${found}; widened from lines ${hit.start_line}-${hit.end_line} to the enclosing ${best.kind} ${name}`,
    terms: [...hit.matched],
  };
}

/** Overlapping or touching ranges of one file joined (the higher score and both reasons kept), in rank order. */
function mergeRanges(ranges: Range[]): Range[] {
  const out: Range[] = [];
  for (const range of ranges) {
    const overlapping = out.find((other) => range.start <= other.end + 1 && other.start <= range.end + 1);
    if (!overlapping) {
      out.push({ ...range, terms: [...range.terms] });
      continue;
    }
    overlapping.start = Math.min(overlapping.start, range.start);
    overlapping.end = Math.max(overlapping.end, range.end);
    overlapping.rationale = `${overlapping.rationale}; also ${range.rationale}`;
    overlapping.terms = [...new Set([...overlapping.terms, ...range.terms])];
  }
  return out;
}
