import picomatch from 'picomatch';
import type { IndexView } from '../store/backend.js';
import type { Language } from '../scan/language.js';
import { queryTerms } from '../text/tokenizer.js';
import { bm25Idf, bm25TermScore, idfWeight } from './scoring.js';
import { selectTop } from './select.js';

/** Result caps from seed 000: 20 results by default and at most, at most 2 per file. */
export const DEFAULT_TOP_K = 20;
export const MAX_TOP_K = 20;
export const MAX_PER_FILE = 2;
/** Queries are cut to this many unique terms (the match mask is 32 bits wide). */
export const MAX_QUERY_TERMS = 32;

/** Ranking modes this engine can run on the lexical index. */
export type LexicalMode = 'bm25' | 'idf';

/** A validated search request. */
export interface SearchQuery {
  readonly q: string;
  readonly topK: number;
  readonly mode: LexicalMode;
  readonly glob?: string | undefined;
  readonly lang?: Language | undefined;
}

/** One ranked candidate (seed 000 §4.1 fields). */
export interface SearchHit {
  readonly chunk_id: number;
  readonly path: string;
  readonly start_line: number;
  readonly end_line: number;
  readonly score: number;
  readonly snippet: string;
  /** Query terms this chunk matched, in query order. */
  readonly why: string[];
}

/** Ranked candidates plus what the query was understood as. */
export interface SearchOutcome {
  readonly terms: string[];
  readonly hits: SearchHit[];
  /** How many chunks matched at least one term (after filters). */
  readonly matched: number;
}

interface Scratch {
  scores: Float64Array;
  masks: Uint32Array;
  touched: Uint32Array;
}

const scratchByView = new WeakMap<IndexView, Scratch>();

/** Per-view buffers reused across queries: a served index allocates them once. */
function scratchFor(view: IndexView): Scratch {
  let scratch = scratchByView.get(view);
  if (!scratch) {
    const n = view.stats.chunkCount;
    scratch = { scores: new Float64Array(n), masks: new Uint32Array(n), touched: new Uint32Array(n) };
    scratchByView.set(view, scratch);
  }
  return scratch;
}

const fileFilterCache = new WeakMap<IndexView, Map<string, Uint8Array>>();

/** Which files pass the glob and language filters, cached per view and filter. */
function fileFilter(view: IndexView, glob: string | undefined, lang: Language | undefined): Uint8Array | undefined {
  if (glob === undefined && lang === undefined) return undefined;
  const key = `${glob ?? ''}\0${lang ?? ''}`;
  let cache = fileFilterCache.get(view);
  if (!cache) {
    cache = new Map();
    fileFilterCache.set(view, cache);
  }
  const cached = cache.get(key);
  if (cached) return cached;
  const matches = glob === undefined ? undefined : picomatch(glob, { dot: true, basename: !glob.includes('/') });
  const allowed = new Uint8Array(view.fileCount);
  for (let f = 0; f < view.fileCount; f++) {
    const ok = (lang === undefined || view.fileLanguage(f) === lang) && (matches === undefined || matches(view.filePath(f)));
    allowed[f] = ok ? 1 : 0;
  }
  if (cache.size > 64) cache.clear();
  cache.set(key, allowed);
  return allowed;
}

/**
 * Rank chunks for a query: collect candidates from the postings of each unique query term,
 * score them (`bm25` or `idf`), apply filters, then take the best in result order with at most
 * MAX_PER_FILE per file.
 */
export async function search(view: IndexView, query: SearchQuery): Promise<SearchOutcome> {
  const terms = queryTerms(query.q).slice(0, MAX_QUERY_TERMS);
  const n = view.stats.chunkCount;
  if (terms.length === 0 || n === 0) return { terms, hits: [], matched: 0 };
  const lists = await view.postings(terms);
  const { scores, masks, touched } = scratchFor(view);
  const allowed = fileFilter(view, query.glob, query.lang);
  const chunkFile = view.chunkFile;
  const lengths = view.chunkTokens;
  const avg = view.stats.avgChunkTokens;
  let count = 0;
  let ranked: number[];
  let rankedScores: number[];
  let rankedMasks: number[];
  // No await while the scratch buffers hold this query's state: they are shared by every query on the view.
  try {
    lists.forEach((list, t) => {
      if (!list) return;
      const bit = 1 << t;
      const { chunkIds, tfs } = list;
      if (query.mode === 'idf') {
        const weight = idfWeight(n, list.df);
        for (let i = 0; i < chunkIds.length; i++) {
          const id = chunkIds[i]!;
          if (allowed && allowed[chunkFile[id]!] === 0) continue;
          if (masks[id] === 0) touched[count++] = id;
          masks[id]! |= bit;
          scores[id]! += weight;
        }
      } else {
        const idf = bm25Idf(n, list.df);
        for (let i = 0; i < chunkIds.length; i++) {
          const id = chunkIds[i]!;
          if (allowed && allowed[chunkFile[id]!] === 0) continue;
          if (masks[id] === 0) touched[count++] = id;
          masks[id]! |= bit;
          scores[id]! += bm25TermScore(idf, tfs[i]!, lengths[id]!, avg);
        }
      }
    });
    ranked = capPerFile(touched, count, scores, chunkFile, query.topK);
    rankedScores = ranked.map((id) => scores[id]!);
    rankedMasks = ranked.map((id) => masks[id]!);
  } finally {
    for (let i = 0; i < count; i++) {
      const id = touched[i]!;
      scores[id] = 0;
      masks[id] = 0;
    }
  }
  const records = await view.chunks(ranked);
  const hits = ranked.map((id, i): SearchHit => {
    const record = records[i]!;
    return {
      chunk_id: id,
      path: record.path,
      start_line: record.startLine,
      end_line: record.endLine,
      score: rankedScores[i]!,
      snippet: record.snippet,
      why: terms.filter((_, t) => (rankedMasks[i]! & (1 << t)) !== 0),
    };
  });
  return { terms, hits, matched: count };
}

/** The top `topK` in result order with at most MAX_PER_FILE per file; widens the heap until enough survive. */
function capPerFile(touched: Uint32Array, count: number, scores: Float64Array, chunkFile: Uint32Array, topK: number): number[] {
  for (let limit = topK * 4; ; limit *= 4) {
    const best = selectTop(touched, count, scores, Math.min(limit, count));
    const perFile = new Map<number, number>();
    const accepted: number[] = [];
    for (const id of best) {
      const file = chunkFile[id]!;
      const seen = perFile.get(file) ?? 0;
      if (seen >= MAX_PER_FILE) continue;
      perFile.set(file, seen + 1);
      accepted.push(id);
      if (accepted.length === topK) return accepted;
    }
    if (limit >= count) return accepted;
  }
}
