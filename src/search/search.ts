import picomatch from 'picomatch';
import type { IndexView } from '../store/backend.js';
import type { Language } from '../scan/language.js';
import { queryTerms } from '../text/tokenizer.js';
import { NAME_FIELD, PATH_FIELD } from '../index/builder.js';
import { DEFAULT_RANKING, type RankingProfile } from './ranking.js';
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
  /** Structure signals for bm25 (ignored by `idf`, which is seed 000's formula exactly). */
  readonly ranking?: RankingProfile | undefined;
}

/** One ranked candidate (seed 000 §4.1 fields). */
export interface SearchHit {
  readonly chunk_id: number;
  readonly path: string;
  readonly start_line: number;
  readonly end_line: number;
  readonly score: number;
  readonly snippet: string;
  /** The declaration the chunk sits in, outermost first (`class Router › match`), or null. */
  readonly symbol: string | null;
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
  const rank = query.ranking ?? DEFAULT_RANKING;
  const boosted = query.mode === 'bm25' && (rank.path > 0 || rank.name > 0);
  const lookups = boosted ? [...terms, ...terms.map((t) => PATH_FIELD + t), ...terms.map((t) => NAME_FIELD + t)] : terms;
  const lists = await view.postings(lookups);
  const { scores, masks, touched } = scratchFor(view);
  const allowed = fileFilter(view, query.glob, query.lang);
  const chunkFile = view.chunkFile;
  const lengths = view.chunkTokens;
  const avg = view.stats.avgChunkTokens;
  const q = terms.length;
  let count = 0;
  let ranked: number[];
  let rankedScores: number[];
  let rankedMasks: number[];
  // No await while the scratch buffers hold this query's state: they are shared by every query on the view.
  try {
    const termIdf = new Float64Array(q);
    for (let t = 0; t < q; t++) {
      const list = lists[t];
      if (!list) continue;
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
        termIdf[t] = idf;
        for (let i = 0; i < chunkIds.length; i++) {
          const id = chunkIds[i]!;
          if (allowed && allowed[chunkFile[id]!] === 0) continue;
          if (masks[id] === 0) touched[count++] = id;
          masks[id]! |= bit;
          scores[id]! += bm25TermScore(idf, tfs[i]!, lengths[id]!, avg);
        }
      }
    }
    if (query.mode === 'idf') {
      // Sum each chunk's weights in ascending order, so equal sets of weights give bit-identical
      // totals whatever the term order: exact ties then fall to path and line order.
      const weights = lists.slice(0, q).map((list, t) => ({ t, w: list ? idfWeight(n, list.df) : 0 }));
      weights.sort((a, b) => a.w - b.w || a.t - b.t);
      for (let i = 0; i < count; i++) {
        const id = touched[i]!;
        let total = 0;
        for (const { t, w } of weights) if (masks[id]! & (1 << t)) total += w;
        scores[id] = total;
      }
    }
    if (boosted) {
      // Field matches: the file's path and the names the chunk declares.
      for (let f = 0; f < 2; f++) {
        const weight = f === 0 ? rank.path : rank.name;
        if (weight === 0) continue;
        for (let t = 0; t < q; t++) {
          const list = lists[q * (f + 1) + t];
          if (!list) continue;
          const bit = 1 << t;
          const boost = weight * bm25Idf(n, list.df);
          for (let i = 0; i < list.chunkIds.length; i++) {
            const id = list.chunkIds[i]!;
            if (allowed && allowed[chunkFile[id]!] === 0) continue;
            if (masks[id] === 0) continue; // fields refine content matches; they do not add candidates
            masks[id]! |= bit;
            scores[id]! += boost;
          }
        }
      }
    }
    if (query.mode === 'bm25' && (rank.file > 0 || rank.coord > 0 || rank.prose !== 1)) {
      // File-level evidence: which query terms each candidate's file matches anywhere.
      const fileMask = new Map<number, number>();
      for (let i = 0; i < count; i++) {
        const id = touched[i]!;
        const file = chunkFile[id]!;
        fileMask.set(file, (fileMask.get(file) ?? 0) | masks[id]!);
      }
      for (let i = 0; i < count; i++) {
        const id = touched[i]!;
        const inFile = fileMask.get(chunkFile[id]!)!;
        let score = scores[id]!;
        if (rank.file > 0) {
          const elsewhere = inFile & ~masks[id]!;
          for (let t = 0; t < q; t++) if (elsewhere & (1 << t)) score += rank.file * termIdf[t]!;
        }
        if (rank.coord > 0) score *= Math.pow(popcount(inFile) / q, rank.coord);
        if (rank.prose !== 1 && PROSE.has(view.fileLanguage(chunkFile[id]!))) score *= rank.prose;
        scores[id] = score;
      }
    }
    if (query.mode === 'bm25') {
      // bm25 scores that are mathematically equal can differ in their last bits (the order terms
      // were added in); rounding far below any meaningful difference lets them tie, and ties go
      // to path. (idf sums are exact already: see above.)
      for (let i = 0; i < count; i++) {
        const id = touched[i]!;
        scores[id] = Math.round(scores[id]! * 1e9) / 1e9;
      }
    }
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
      symbol: record.symbol,
      why: terms.filter((_, t) => (rankedMasks[i]! & (1 << t)) !== 0),
    };
  });
  return { terms, hits, matched: count };
}

const PROSE: ReadonlySet<string> = new Set(['markdown', 'json', 'yaml', 'toml', 'text']);

function popcount(v: number): number {
  let x = v - ((v >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
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
