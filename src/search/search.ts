import { RepodexError } from '../core/errors.js';
import type { PostingList } from '../index/model.js';
import type { ChunkVectors, IndexView } from '../store/backend.js';
import type { Language } from '../scan/language.js';
import { tokenize, wordForms } from '../text/tokenizer.js';
import { GENERATED_MARK, HISTORY_FIELD, NAME_FIELD, PATH_FIELD } from '../index/fields.js';
import { type PathRole, pathRole } from '../scan/file-role.js';
import { layoutReader } from '../scan/layout.js';
import { globMatcher } from '../scan/glob.js';
import { isTestPath } from '../scan/test-paths.js';
import { DEFAULT_RANKING, type RankingProfile } from './ranking.js';
import { bm25Idf, bm25Norm, bm25Weight, idfWeight } from './scoring.js';
import { selectTop } from './select.js';
import type { QueryWords } from './snippet.js';

/** Result caps from seed 000: 20 results by default and at most, at most 2 per file. */
export const DEFAULT_TOP_K = 20;
export const MAX_TOP_K = 20;
export const MAX_PER_FILE = 2;
/** Queries are cut to this many unique terms (the match mask is 32 bits wide). */
export const MAX_QUERY_TERMS = 32;
/** Longest query accepted: a bug report with its stack trace, or a pasted diff. */
export const MAX_QUERY_CHARS = 65_536;

/** Ranking modes this engine can run on the lexical index. */
export type LexicalMode = 'bm25' | 'idf';

/** Every ranking mode: lexical, nearest chunk vectors, or both fused (SPEC §4). */
export type SearchMode = LexicalMode | 'vector' | 'hybrid';

/** The modes, in the order `--help` lists them. */
export const SEARCH_MODES: readonly SearchMode[] = ['bm25', 'idf', 'vector', 'hybrid'];

/** What `vector` and `hybrid` need: the generation's chunk vectors and the query's vector. */
export interface SemanticQuery {
  readonly vectors: ChunkVectors;
  /** The query embedded by the same embedder as the chunks (unit length). */
  readonly query: Float32Array;
}

/** What a search asks: the protocol's `search` request field for field (without its envelope). */
export interface SearchFields {
  readonly q: string;
  readonly top_k?: number | undefined;
  readonly mode?: SearchMode | undefined;
  readonly glob?: string | undefined;
  readonly lang?: Language | undefined;
}

/** A search as the ranker runs it: the request's query and filters, its count and mode resolved, and what the engine adds. */
export interface SearchQuery extends Pick<SearchFields, 'q' | 'glob' | 'lang'> {
  readonly topK: number;
  readonly mode: SearchMode;
  /** Required by `vector` and `hybrid`. */
  readonly semantic?: SemanticQuery | undefined;
  /** Leave out test files (by the conventions of `isTestPath`). */
  readonly excludeTests?: boolean | undefined;
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
  /**
   * What ranked the chunk: the query terms it matched, in query order, then each structure signal
   * that changed its score as `signal:detail` (`path:retry`, `name:retry`, `file:+deadline`,
   * `form:retries→retry`, `role:test×0.5`). Terms never hold a colon.
   */
  readonly why: string[];
  /** The query terms alone (what excerpts and highlights look for). */
  readonly matched: string[];
  /** The chunk's hash, hex (what a snippet read from disk is checked against). */
  readonly hash: string;
}

/** Ranked candidates plus what the query was understood as. */
export interface SearchOutcome {
  readonly terms: string[];
  readonly hits: SearchHit[];
  /** How many chunks matched at least one term (after filters). */
  readonly matched: number;
  /** The words scored (terms and their inflections) with the term each stands for and its idf. */
  readonly words: QueryWords;
}

interface Scratch {
  scores: Float64Array;
  masks: Uint32Array;
  touched: Uint32Array;
  /** Per file slot. */
  files: FileScratch;
}

/** Buffers sized to a view, zero between queries, kept per view so a served index allocates them once. */
const scratchPools = new WeakMap<IndexView, Scratch[]>();
/** Spare buffers kept per view (queries running at once beyond this allocate their own). */
const SCRATCH_KEPT = 4;

/** Buffers for one query on `view`, its own until `releaseScratch` (so a query may await while holding them). */
function takeScratch(view: IndexView): Scratch {
  const spare = scratchPools.get(view)?.pop();
  if (spare) return spare;
  const n = view.docCount;
  return {
    scores: new Float64Array(n),
    masks: new Uint32Array(n),
    touched: new Uint32Array(n),
    files: { mask: new Uint32Array(view.fileSlots), add: new Float64Array(view.fileSlots), whole: new Float64Array(view.fileSlots) },
  };
}

/** Give back buffers the query has zeroed again. */
function releaseScratch(view: IndexView, scratch: Scratch): void {
  let pool = scratchPools.get(view);
  if (!pool) scratchPools.set(view, (pool = []));
  if (pool.length < SCRATCH_KEPT) pool.push(scratch);
}

const fileFilterCache = new WeakMap<IndexView, Map<string, Uint8Array>>();

/** How many indexed files a glob and language filter let through (all of them without a filter). */
export function filesAllowed(view: IndexView, glob: string | undefined, lang: Language | undefined): number {
  const allowed = fileFilter(view, glob, lang, false);
  if (!allowed) return view.fileSlots;
  let count = 0;
  for (let f = 0; f < allowed.length; f++) count += allowed[f]!;
  return count;
}

/** Which files pass the glob, language and test filters, cached per view and filter. */
function fileFilter(view: IndexView, glob: string | undefined, lang: Language | undefined, excludeTests: boolean): Uint8Array | undefined {
  if (glob === undefined && lang === undefined && !excludeTests) return undefined;
  const key = `${glob ?? ''}\0${lang ?? ''}\0${excludeTests ? 1 : 0}`;
  let cache = fileFilterCache.get(view);
  if (!cache) {
    cache = new Map();
    fileFilterCache.set(view, cache);
  }
  const cached = cache.get(key);
  if (cached) return cached;
  const matches = glob === undefined ? undefined : globMatcher(glob);
  const allowed = new Uint8Array(view.fileSlots);
  for (let f = 0; f < view.fileSlots; f++) {
    const ok =
      (lang === undefined || view.fileLanguage(f) === lang) && (matches === undefined || matches(view.filePath(f))) && !(excludeTests && isTestPath(view.filePath(f)));
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
  (await fileRoles(view)).searchBegins();
  const terms = await selectQueryTerms(view, query.q);
  if (query.mode === 'vector' || query.mode === 'hybrid') {
    if (!query.semantic) throw new RepodexError('INTERNAL', `mode ${query.mode} without vectors`);
    if (query.mode === 'vector' || terms.length === 0) return searchVectors(view, query, query.semantic, terms);
  }
  if (terms.length === 0 || view.stats.chunkCount === 0) return { terms, hits: [], matched: 0, words: new Map() };
  const rank = query.ranking ?? DEFAULT_RANKING;
  const lexical = query.mode === 'hybrid' ? 'bm25' : query.mode;
  const boosted = lexical === 'bm25' && (rank.path > 0 || rank.name > 0);
  const forms = lexical === 'bm25' ? inflections(terms, rank) : [];
  const lists = await queryLists(view, terms, forms, { boosted, history: lexical === 'bm25' && rank.history > 0 });
  const roles = await fileRoles(view);
  const roleWeight = roleWeights(terms, rank);
  const mentioned = lexical === 'bm25' && rank.mention > 0 ? mentionedFiles(view, query.q) : new Set<number>();
  const scratch = takeScratch(view);
  const state: QueryState = { view, ...scratch, allowed: fileFilter(view, query.glob, query.lang, query.excludeTests === true), terms: terms.length, count: 0 };
  let ranked: number[];
  let rankedScores: number[];
  let rankedMasks: number[];
  let explained: string[][] = [];
  const words = new Map<string, { term: string; weight: number }>(terms.map((term) => [term, { term, weight: 0 }]));
  const files = scratch.files;
  try {
    if (lexical === 'idf') {
      collectCandidates(state, lists.content);
      scoreIdf(state, lists.content);
    } else {
      const idf = scoreBm25(state, lists.content, rank.whole > 0 ? files : undefined);
      terms.forEach((term, t) => words.set(term, { term, weight: idf[t]! }));
      for (const { form, term } of forms) words.set(form, { term: terms[term]!, weight: rank.forms * idf[term]! });
      scoreForms(state, forms, lists.forms, rank.forms);
      addFieldBoost(state, lists.path, rank.path);
      addFieldBoost(state, lists.name, rank.name);
      applyFileSignals(state, idf, rank, roles, roleWeight, mentioned, lists.history, files);
    }
    const similarity = query.mode === 'hybrid' ? await fuse(state, query, query.semantic!, rank) : undefined;
    // bm25 scores are rounded as they are selected (`selectTop`); fused ones are rounded already.
    const rounded = query.mode === 'bm25';
    ranked = capPerFile(state.touched, state.count, state.scores, view.docOrder, view.docFile, query.topK, rank.distinct, rounded);
    rankedScores = ranked.map((id) => state.scores[id]!);
    rankedMasks = ranked.map((id) => state.masks[id]!);
    if (lexical === 'bm25') {
      const signals: Signals = { terms, rank, lists, forms, fileMasks: files.mask, roles, weights: roleWeight, mentioned, wholeFile: files.whole };
      explained = ranked.map((id) => (state.masks[id] === 0 ? [] : explain(state, signals, id)));
    }
    if (similarity) explained = ranked.map((id, i) => [...(explained[i] ?? []), ...(similarity.has(id) ? [`vector:${similarity.get(id)!.toFixed(2)}`] : [])]);
  } finally {
    clearScratch(state, files);
    releaseScratch(view, scratch);
  }
  const records = await view.chunks(ranked);
  const hits = ranked.map((_, i): SearchHit => {
    const record = records[i]!;
    const matched = terms.filter((_, t) => (rankedMasks[i]! & (1 << t)) !== 0);
    return {
      chunk_id: record.id,
      path: record.path,
      start_line: record.startLine,
      end_line: record.endLine,
      score: rankedScores[i]!,
      snippet: record.snippet,
      symbol: record.symbol,
      why: [...matched, ...(explained[i] ?? [])],
      matched,
      hash: record.hash,
    };
  });
  return { terms, hits, matched: state.count, words };
}

/**
 * `hybrid`: fuse the lexical ranking already in `state` with the nearest chunk vectors. Each
 * list contributes `weight / (k + rank)` for its best FUSION_DEPTH docs (reciprocal rank fusion,
 * `fusion` 0), or each candidate scores its lexical score over the best one plus `vector` × its
 * cosine similarity (`fusion` 1). Leaves the fused candidates in `touched[0..count)` and returns
 * the similarity of those the vectors found. Whichever fusion the dev set measured best is the
 * default (docs/benchmarks.md, "Semantic layer").
 */
async function fuse(state: QueryState, query: SearchQuery, semantic: SemanticQuery, rank: RankingProfile): Promise<Map<number, number>> {
  const { view, touched, scores, allowed } = state;
  const depth = Math.max(FUSION_DEPTH, query.topK * 4);
  const lexical = selectTop(touched, state.count, scores, view.docOrder, depth, true);
  const lexicalScores = lexical.map((doc) => scores[doc]!);
  const near = await semantic.vectors.nearest(semantic.query, depth, allowed ? { files: allowed } : undefined);
  const similarity = new Map<number, number>();
  near.docs.forEach((doc, i) => similarity.set(doc, near.sims[i]!));
  // Every touched doc's score is cleared below; vector-only docs join `touched` so they are too.
  for (let i = 0; i < state.count; i++) scores[touched[i]!] = 0;
  const fused = new Map<number, number>();
  if (rank.fusion === 1) {
    const best = lexicalScores[0] ?? 0;
    lexical.forEach((doc, i) => fused.set(doc, best > 0 ? lexicalScores[i]! / best : 0));
    for (const doc of near.docs) if (!fused.has(doc)) fused.set(doc, 0);
    const unscored = [...fused.keys()].filter((doc) => !similarity.has(doc));
    const sims = await semantic.vectors.similarities(semantic.query, unscored);
    const lexicalOnly = new Map(unscored.map((doc, i) => [doc, sims[i]!]));
    for (const doc of fused.keys()) fused.set(doc, fused.get(doc)! + rank.vector * Math.max(0, similarity.get(doc) ?? lexicalOnly.get(doc)!));
  } else {
    lexical.forEach((doc, i) => fused.set(doc, 1 / (rank.rrfK + i + 1)));
    near.docs.forEach((doc, i) => fused.set(doc, (fused.get(doc) ?? 0) + rank.vector / (rank.rrfK + i + 1)));
  }
  // Docs only the vectors found were never touched (every touched doc matched a term): add them, so the cleanup clears their scores.
  for (const doc of near.docs) if (state.masks[doc] === 0) touched[state.count++] = doc;
  // Candidates are now exactly the fused docs: the rest of the lexical matches sit at 0, below all of them.
  for (const [doc, score] of fused) scores[doc] = Math.round(score * 1e9) / 1e9 || Number.MIN_VALUE;
  return similarity;
}

/** How deep each list goes into a fusion: a chunk ranked past it by both is not a hybrid answer. */
const FUSION_DEPTH = 100;

/** `vector`: the nearest chunks to the query, filtered and capped per file like every mode. */
async function searchVectors(view: IndexView, query: SearchQuery, semantic: SemanticQuery, terms: string[]): Promise<SearchOutcome> {
  const allowed = fileFilter(view, query.glob, query.lang, query.excludeTests === true);
  const depth = Math.max(FUSION_DEPTH, query.topK * 8);
  const near = await semantic.vectors.nearest(semantic.query, depth, allowed ? { files: allowed } : undefined);
  const scratch = takeScratch(view);
  const { scores } = scratch;
  const candidates = Uint32Array.from(near.docs);
  near.docs.forEach((doc, i) => (scores[doc] = Math.round(near.sims[i]! * 1e6) / 1e6));
  let ranked: number[];
  try {
    ranked = capPerFile(candidates, candidates.length, scores, view.docOrder, view.docFile, query.topK, (query.ranking ?? DEFAULT_RANKING).distinct);
  } finally {
    for (const doc of near.docs) scores[doc] = 0;
    releaseScratch(view, scratch);
  }
  const similarity = new Map(near.docs.map((doc, i) => [doc, near.sims[i]!]));
  return view.chunks(ranked).then((records) => ({
    terms,
    matched: near.docs.length,
    words: new Map(terms.map((term) => [term, { term, weight: 1 }])),
    hits: records.map((record) => {
      const sim = similarity.get(record.doc)!;
      return {
        chunk_id: record.id,
        path: record.path,
        start_line: record.startLine,
        end_line: record.endLine,
        score: Math.round(sim * 1e6) / 1e6,
        snippet: record.snippet,
        symbol: record.symbol,
        why: [`vector:${sim.toFixed(2)}`],
        matched: [],
        hash: record.hash,
      };
    }),
  }));
}

/**
 * The terms a query is scored on, in query order. A short query keeps all of them. A long one (a
 * pasted bug report, a stack trace) keeps the MAX_QUERY_TERMS that tell the most: weighted by how
 * rare they are in the index (idf) and how often the query repeats them; terms no chunk holds are
 * dropped. Only document frequencies are read, so a 64 KB query costs a dictionary lookup per
 * distinct word.
 */
/** Lines of an issue template that describe the form, not the bug. */
const TEMPLATE_LINE =
  /^\s*(?:[-*]\s*)?\[[ xX]?\]|^\s*(?:#+\s*)?(?:what|which|please|steps to reproduce|expected|actual|describe|provide|are you)\b[^\n]{0,120}?(?:\?[^\n]{0,60}|:)\s*$|^\s*(?:#+\s*)?tell us\b[^\n]{0,80}$|^\s*[\w .-]{1,30}\bversion:\s*v?[\d.x]+\s*$/i;

/**
 * A query without the boilerplate of issue templates (checkboxes, the form's questions, version
 * lines, HTML comments): what the reporter wrote is kept, what the template wrote is not. Only
 * multi-line queries (pasted reports) are touched.
 */
export function stripIssueTemplate(q: string): string {
  if (!q.includes('\n')) return q;
  return q
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .split('\n')
    .filter((line) => !TEMPLATE_LINE.test(line))
    .join('\n');
}

export async function selectQueryTerms(view: IndexView, query: string): Promise<string[]> {
  const q = stripIssueTemplate(query);
  const all = tokenize(q);
  const unique = [...new Set(all)];
  if (unique.length <= MAX_QUERY_TERMS) return unique;
  const counts = new Map<string, number>();
  for (const term of all) counts.set(term, (counts.get(term) ?? 0) + 1);
  const dfs = await view.documentFrequencies(unique);
  const n = Math.max(1, view.stats.chunkCount);
  const weighted = unique
    .map((term, i) => ({ term, i, df: dfs[i]! }))
    .filter((entry) => entry.df > 0)
    .map((entry) => ({ ...entry, weight: Math.log(1 + (n - entry.df + 0.5) / (entry.df + 0.5)) * (1 + Math.log(counts.get(entry.term)!)) }));
  weighted.sort((a, b) => b.weight - a.weight || a.i - b.i);
  // A term only prose holds (a version number in a changelog, a pull request template's checkbox
  // text) finds no code: it would give every one of the few places to the file that holds it.
  // Terms that code holds are the query; prose-only ones only when code holds too few of them.
  const roles = await fileRoles(view);
  const chosen: typeof weighted = [];
  const proseOnly: typeof weighted = [];
  const prose = ROLE_CODE.get('prose')!;
  const docs = ROLE_CODE.get('docs')!;
  const looked = weighted.slice(0, MAX_QUERY_TERMS * PROSE_LOOKAHEAD);
  for (let from = 0; from < looked.length && chosen.length < MAX_QUERY_TERMS; from += MAX_QUERY_TERMS) {
    const batch = looked.slice(from, from + MAX_QUERY_TERMS);
    const lists = await view.postings(batch.map((entry) => entry.term));
    batch.forEach((entry, k) => {
      const docsOf = lists[k]?.docs;
      let inCode = false;
      if (docsOf) {
        for (let j = 0; j < docsOf.length && !inCode; j++) {
          const role = roles.of(view.docFile[docsOf[j]!]!);
          inCode = role !== prose && role !== docs;
        }
      }
      (inCode && chosen.length < MAX_QUERY_TERMS ? chosen : proseOnly).push(entry);
    });
  }
  const rest = chosen.length >= MIN_CODE_TERMS ? [] : [...proseOnly, ...weighted.slice(looked.length)].sort((a, b) => b.weight - a.weight || a.i - b.i);
  return [...chosen, ...rest]
    .slice(0, MAX_QUERY_TERMS)
    .sort((a, b) => a.i - b.i)
    .map((entry) => entry.term);
}

/** How far past the first MAX_QUERY_TERMS a long query's terms are looked at for ones code holds (in multiples of it). */
const PROSE_LOOKAHEAD = 4;
/** A long query with fewer terms that code holds is searched with its prose-only terms as well. */
const MIN_CODE_TERMS = 4;

/** One query's working state: per-chunk scores and matched-term masks, and the candidates touched. */
interface QueryState extends Scratch {
  readonly view: IndexView;
  readonly allowed: Uint8Array | undefined;
  /** Number of query terms (bit t of a mask = term t matched). */
  readonly terms: number;
  /** Candidates so far, in `touched[0..count)`. */
  count: number;
}

/** Mark every chunk matching a query term and passing the filters (the candidates), without scoring. */
function collectCandidates(state: QueryState, lists: readonly (PostingList | undefined)[]): void {
  const { allowed, masks, touched } = state;
  const chunkFile = state.view.docFile;
  let count = state.count;
  lists.forEach((list, t) => {
    if (!list) return;
    const bit = 1 << t;
    for (const id of list.docs) {
      if (allowed && allowed[chunkFile[id]!] === 0) continue;
      count = touch(touched, count, masks, id, bit);
    }
  });
  state.count = count;
}

/**
 * Mark `id` as matching the term of `bit`, adding it to the candidates the first time; returns the
 * candidate count. Branch-free: whether a doc is new is a coin toss the processor cannot predict,
 * so the id is always written and the count moves only for a new one (the slot is overwritten
 * otherwise; a write one past a full `touched` is dropped by the typed array).
 */
function touch(touched: Uint32Array, count: number, masks: Uint32Array, id: number, bit: number): number {
  const mask = masks[id]!;
  touched[count] = id;
  masks[id] = mask | bit;
  return count + (mask === 0 ? 1 : 0);
}

/**
 * `idf` (seed 000 §4.1): Σ log(1 + N/df) over matched terms, summed in ascending weight order so
 * equal sets of weights give bit-identical totals whatever the term order (exact ties then fall
 * to path and line order).
 */
function scoreIdf(state: QueryState, lists: readonly (PostingList | undefined)[]): void {
  const n = state.view.stats.chunkCount;
  const weights = lists.map((list, t) => ({ bit: 1 << t, w: list ? idfWeight(n, list.df) : 0 }));
  weights.sort((a, b) => a.w - b.w || a.bit - b.bit);
  for (let i = 0; i < state.count; i++) {
    const id = state.touched[i]!;
    let total = 0;
    for (const { bit, w } of weights) if (state.masks[id]! & bit) total += w;
    state.scores[id] = total;
  }
}

/** BM25 over chunk text; returns each query term's idf (0 for terms not in the index). */
function scoreBm25(state: QueryState, lists: readonly (PostingList | undefined)[], files?: FileScratch): Float64Array {
  const n = state.view.stats.chunkCount;
  const norms = docNorms(state.view);
  const { allowed, masks, scores, touched } = state;
  const chunkFile = state.view.docFile;
  const idfs = new Float64Array(lists.length);
  // Whole files as documents too (`files`): each term's frequency summed over a file's chunks.
  const fileNorm = files ? fileNorms(state.view) : undefined;
  let count = state.count;
  lists.forEach((list, t) => {
    if (!list) return;
    const idf = bm25Idf(n, list.df);
    idfs[t] = idf;
    const bit = 1 << t;
    const { docs, tfs } = list;
    if (!fileNorm) {
      for (let i = 0; i < docs.length; i++) {
        const id = docs[i]!;
        if (allowed && allowed[chunkFile[id]!] === 0) continue;
        count = touch(touched, count, masks, id, bit);
        scores[id]! += bm25Weight(idf, tfs[i]!, norms[id]!);
      }
      return;
    }
    // A file's docs are consecutive and postings are in doc order: a file's frequency is a run.
    const whole = files!.whole;
    let runFile = -1;
    let runTf = 0;
    for (let i = 0; i < docs.length; i++) {
      const id = docs[i]!;
      const file = chunkFile[id]!;
      if (allowed && allowed[file] === 0) continue;
      count = touch(touched, count, masks, id, bit);
      const tf = tfs[i]!;
      scores[id]! += bm25Weight(idf, tf, norms[id]!);
      if (file !== runFile) {
        if (runFile >= 0) whole[runFile]! += bm25Weight(idf, runTf, fileNorm[runFile]!);
        runFile = file;
        runTf = 0;
      }
      runTf += tf;
    }
    if (runFile >= 0) whole[runFile]! += bm25Weight(idf, runTf, fileNorm[runFile]!);
  });
  state.count = count;
  return idfs;
}

const fileNormCache = new WeakMap<IndexView, Float64Array>();

/** Every file's BM25 length norm as one document (the tokens of all its chunks), once per loaded index. */
function fileNorms(view: IndexView): Float64Array {
  let norms = fileNormCache.get(view);
  if (norms) return norms;
  const lengths = new Float64Array(view.fileSlots);
  for (let id = 0; id < view.docCount; id++) lengths[view.docFile[id]!]! += view.docTokens[id]!;
  const avg = (view.stats.avgChunkTokens * view.stats.chunkCount) / Math.max(1, view.stats.fileCount);
  norms = lengths.map((length) => bm25Norm(length, avg));
  fileNormCache.set(view, norms);
  return norms;
}

const normCache = new WeakMap<IndexView, Float64Array>();

/** Every chunk's BM25 length norm, once per loaded index. */
function docNorms(view: IndexView): Float64Array {
  let norms = normCache.get(view);
  if (norms) return norms;
  const lengths = view.docTokens;
  const avg = view.stats.avgChunkTokens;
  norms = new Float64Array(view.docCount);
  for (let id = 0; id < norms.length; id++) norms[id] = bm25Norm(lengths[id]!, avg);
  normCache.set(view, norms);
  return norms;
}

/** A query's posting lists by what they score, each in term order (inflections: in `forms` order); empty when not weighed. */
interface QueryLists {
  readonly content: readonly (PostingList | undefined)[];
  readonly path: readonly (PostingList | undefined)[];
  readonly name: readonly (PostingList | undefined)[];
  readonly forms: readonly (PostingList | undefined)[];
  readonly history: readonly (PostingList | undefined)[];
}

/** Every posting list a query needs, looked up in one call. */
async function queryLists(view: IndexView, terms: readonly string[], forms: readonly Inflection[], want: { readonly boosted: boolean; readonly history: boolean }): Promise<QueryLists> {
  const n = terms.length;
  const fieldTerms = (prefix: string, wanted: boolean): string[] => (wanted ? terms.map((t) => prefix + t) : []);
  const lookups = [...terms, ...fieldTerms(PATH_FIELD, want.boosted), ...fieldTerms(NAME_FIELD, want.boosted), ...forms.map((f) => f.form), ...fieldTerms(HISTORY_FIELD, want.history)];
  const lists = await view.postings(lookups);
  const fields = want.boosted ? n : 0;
  const formEnd = n + 2 * fields + forms.length;
  return {
    content: lists.slice(0, n),
    path: lists.slice(n, n + fields),
    name: lists.slice(n + fields, n + 2 * fields),
    forms: lists.slice(n + 2 * fields, formEnd),
    history: lists.slice(formEnd),
  };
}

/** An inflection of query term `term` (`retries` for `retry`). */
interface Inflection {
  readonly form: string;
  readonly term: number;
}

/** The other inflections of each query term, for short queries when the profile weighs them. */
function inflections(terms: readonly string[], rank: RankingProfile): Inflection[] {
  if (rank.forms === 0 || terms.length > rank.formsUpTo) return [];
  const asked = new Set(terms);
  const out: Inflection[] = [];
  terms.forEach((term, t) => {
    for (const form of wordForms(term)) if (!asked.has(form)) out.push({ form, term: t });
  });
  return out;
}

/**
 * Chunks holding an inflection of a query term but not the term itself score the inflection at
 * `weight` × its BM25; the term counts as matched (its bit is set), once per chunk.
 */
function scoreForms(state: QueryState, forms: readonly Inflection[], lists: readonly (PostingList | undefined)[], weight: number): void {
  const n = state.view.stats.chunkCount;
  const norms = docNorms(state.view);
  const { allowed, masks, scores, touched } = state;
  const chunkFile = state.view.docFile;
  let count = state.count;
  forms.forEach(({ term }, f) => {
    const list = lists[f];
    if (!list) return;
    const bit = 1 << term;
    const idf = bm25Idf(n, list.df);
    const { docs, tfs } = list;
    for (let i = 0; i < docs.length; i++) {
      const id = docs[i]!;
      if ((masks[id]! & bit) !== 0 || (allowed && allowed[chunkFile[id]!] === 0)) continue;
      count = touch(touched, count, masks, id, bit);
      scores[id]! += weight * bm25Weight(idf, tfs[i]!, norms[id]!);
    }
  });
  state.count = count;
}

/** A field (path or declared names): weight × the field term's idf, for chunks that already match content. */
function addFieldBoost(state: QueryState, lists: readonly (PostingList | undefined)[], weight: number): void {
  if (weight === 0) return;
  const n = state.view.stats.chunkCount;
  const { allowed, masks, scores } = state;
  const chunkFile = state.view.docFile;
  lists.forEach((list, t) => {
    if (!list) return;
    const bit = 1 << t;
    const boost = weight * bm25Idf(n, list.df);
    for (let i = 0; i < list.docs.length; i++) {
      const id = list.docs[i]!;
      // Fields refine content matches; they do not add candidates.
      if (masks[id] === 0 || (allowed && allowed[chunkFile[id]!] === 0)) continue;
      masks[id]! |= bit;
      scores[id]! += boost;
    }
  });
}

/** Per-file working arrays of one view (matched-term masks, history scores), zero between queries. */
interface FileScratch {
  readonly mask: Uint32Array;
  readonly add: Float64Array;
  /** Each file's BM25 score as one document (its chunks' terms together). */
  readonly whole: Float64Array;
}

/** Zero what a query set: its candidates' scores and masks, and their files' scratch entries. */
function clearScratch(state: QueryState, files: FileScratch): void {
  const { masks, scores, touched, count } = state;
  // A query that touched much of the index (common words in a large repository): zero it all at memory speed.
  if (count * 4 > scores.length) {
    scores.fill(0);
    masks.fill(0);
    files.mask.fill(0);
    files.add.fill(0);
    files.whole.fill(0);
    return;
  }
  const chunkFile = state.view.docFile;
  for (let i = 0; i < count; i++) {
    const id = touched[i]!;
    const file = chunkFile[id]!;
    files.mask[file] = 0;
    files.add[file] = 0;
    files.whole[file] = 0;
    scores[id] = 0;
    masks[id] = 0;
  }
}

/**
 * File-level signals: terms the chunk's file matches elsewhere, the share of terms it covers, the
 * file's role, its history field, and whether the query names it. Leaves each candidate file's
 * matched-term mask in `files.mask` (for `explain`); the caller clears it. Scores leave unrounded:
 * selection rounds only the candidates that could still rank (`selectTop`).
 */
function applyFileSignals(
  state: QueryState,
  idfs: Float64Array,
  rank: RankingProfile,
  roles: FileRoles,
  weights: Float64Array,
  mentioned: ReadonlySet<number>,
  history: readonly (PostingList | undefined)[],
  files: FileScratch,
): void {
  const { masks, scores, touched, view, count } = state;
  const chunkFile = view.docFile;
  const { mask: fileMask, whole, add } = files;
  for (let i = 0; i < count; i++) {
    const id = touched[i]!;
    fileMask[chunkFile[id]!]! |= masks[id]!;
  }
  addHistory(view, history, rank.history, fileMask, add);
  const mentions = rank.mention > 0 && mentioned.size > 0;
  // The coverage factor of a file matching k of the query's terms, for every k.
  const coord = state.terms <= rank.coordUpTo ? rank.coord : 0;
  const coverage = Float64Array.from({ length: state.terms + 1 }, (_, k) => Math.pow(k / state.terms, coord));
  const roleCodes = roles.codes;
  const { file: fileWeight, whole: wholeWeight, mention } = rank;
  for (let i = 0; i < count; i++) {
    const id = touched[i]!;
    const file = chunkFile[id]!;
    const inFile = fileMask[file]!;
    let score = scores[id]!;
    // Each term the file matches elsewhere, lowest term first (the order the sum has always taken).
    if (fileWeight > 0) for (let elsewhere = inFile & ~masks[id]!; elsewhere !== 0; elsewhere &= elsewhere - 1) score += fileWeight * idfs[31 - Math.clz32(elsewhere & -elsewhere)]!;
    if (coord > 0) score *= coverage[popcount(inFile)]!;
    score += wholeWeight * whole[file]!;
    const role = roleCodes[file]!;
    score *= weights[role !== UNKNOWN_ROLE ? role : roles.of(file)]!;
    score += add[file]!;
    if (mentions && mentioned.has(file)) score *= 1 + mention;
    scores[id] = score;
  }
}

/**
 * The history field, added to `add` for each candidate file (a non-zero `fileMask`): weight × idf
 * (over files) of each query term in the file's recent commit subjects. It refines candidates
 * (chunks that match content), never adds any. A file's first chunk alone holds the field, so
 * each list names a file at most once.
 */
function addHistory(view: IndexView, lists: readonly (PostingList | undefined)[], weight: number, fileMask: Uint32Array, add: Float64Array): void {
  if (weight === 0) return;
  const files = Math.max(1, view.stats.fileCount);
  const docFile = view.docFile;
  for (const list of lists) {
    if (!list) continue;
    const boost = weight * bm25Idf(files, list.df);
    const docs = list.docs;
    for (let i = 0; i < docs.length; i++) {
      const file = docFile[docs[i]!]!;
      if (fileMask[file] !== 0) add[file]! += boost;
    }
  }
}

/** What `explain` needs to say which signals moved a chunk. */
interface Signals {
  readonly terms: readonly string[];
  readonly rank: RankingProfile;
  readonly lists: QueryLists;
  readonly forms: readonly Inflection[];
  /** Each candidate file's matched-term mask. */
  readonly fileMasks: Uint32Array;
  readonly roles: FileRoles;
  readonly weights: Float64Array;
  readonly mentioned: ReadonlySet<number>;
  /** Each candidate file's whole-file BM25 score (0 when the profile does not weigh it). */
  readonly wholeFile: Float64Array;
}

/** The structure signals that changed one ranked chunk's score, as `signal:detail` (see SearchHit.why). */
function explain(state: QueryState, signals: Signals, id: number): string[] {
  const { terms, rank, lists, forms, fileMasks, roles, weights, mentioned, wholeFile } = signals;
  const { view, masks } = state;
  const file = view.docFile[id]!;
  const out: string[] = [];
  terms.forEach((term, t) => {
    if (holds(lists.content[t], id)) return;
    const form = forms.findIndex((f, k) => f.term === t && holds(lists.forms[k], id));
    if (form >= 0) out.push(`form:${forms[form]!.form}→${term}`);
  });
  terms.forEach((term, t) => {
    if (rank.path > 0 && holds(lists.path[t], id)) out.push(`path:${term}`);
  });
  terms.forEach((term, t) => {
    if (rank.name > 0 && holds(lists.name[t], id)) out.push(`name:${term}`);
  });
  if (rank.file > 0) {
    const elsewhere = fileMasks[file]! & ~masks[id]!;
    terms.forEach((term, t) => {
      if (elsewhere & (1 << t)) out.push(`file:+${term}`);
    });
  }
  if (lists.history.length > 0) {
    const first = view.fileDocs(file).from;
    terms.forEach((term, t) => {
      if (holds(lists.history[t], first)) out.push(`history:${term}`);
    });
  }
  if (mentioned.has(file) && rank.mention > 0) out.push(`mention:×${1 + rank.mention}`);
  if (rank.whole > 0 && wholeFile[file]! > 0) out.push(`whole-file:+${(rank.whole * wholeFile[file]!).toFixed(2)}`);
  const role = roles.of(file);
  if (weights[role] !== 1) out.push(`role:${ROLES[role]}×${weights[role]}`);
  return out;
}

/** True when a posting list holds a doc (its docs are sorted). */
function holds(list: PostingList | undefined, doc: number): boolean {
  if (!list) return false;
  const docs = list.docs;
  let lo = 0;
  let hi = docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = docs[mid]!;
    if (at === doc) return true;
    if (at < doc) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** A file name or path as queries write them: `router.ts`, `lib/router/index.js:12:5`, `File "app/models.py"`. */
const FILE_MENTION = /(?:[\w$@.-]+\/)*[\w$@-][\w$@.-]*\.[A-Za-z][\w]{0,5}\b/g;
/** A mention naming more files than this says too little (`index.js`, `__init__.py`). */
const MAX_MENTIONED_FILES = 3;

const basenameCache = new WeakMap<IndexView, Map<string, number[]>>();

/** Live file slots by lower-cased base name, once per loaded index. */
function filesByBasename(view: IndexView): Map<string, number[]> {
  let map = basenameCache.get(view);
  if (map) return map;
  map = new Map();
  for (let f = 0; f < view.fileSlots; f++) {
    const path = view.filePath(f);
    if (view.findFile(path) !== f) continue;
    const base = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
    const slots = map.get(base);
    if (slots) slots.push(f);
    else map.set(base, [f]);
  }
  basenameCache.set(view, map);
  return map;
}

/**
 * Files the query names (a stack frame's `at f (lib/router.js:10:5)`, `File "app/models.py"`,
 * `Router.java:120`, or a file name in prose): each mention's base name is looked up, narrowed by
 * its directories when it has some, and kept when it names at most MAX_MENTIONED_FILES files.
 */
export function mentionedFiles(view: IndexView, query: string): Set<number> {
  const out = new Set<number>();
  for (const match of query.matchAll(FILE_MENTION)) {
    const mention = match[0].replace(/^\.?\//, '').toLowerCase();
    const base = mention.slice(mention.lastIndexOf('/') + 1);
    // Built on the first mention: most queries name no file, and a one-shot search need not list them all.
    let slots = filesByBasename(view).get(base);
    if (!slots) continue;
    if (mention.includes('/')) {
      const suffix = mention.split('/').filter((part) => part !== '' && part !== '.' && part !== '..').join('/');
      slots = slots.filter((f) => {
        const path = view.filePath(f).toLowerCase();
        return path === suffix || path.endsWith(`/${suffix}`);
      });
    }
    if (slots.length > 0 && slots.length <= MAX_MENTIONED_FILES) for (const f of slots) out.add(f);
  }
  return out;
}

/** File roles as ranking weighs them; `source` is weighed 1. */
const ROLES = ['source', 'test', 'example', 'vendored', 'generated', 'prose', 'docs', 'bench', 'template'] as const;
type Role = (typeof ROLES)[number];
const ROLE_CODE = new Map<Role, number>(ROLES.map((role, i) => [role, i]));

const roleCache = new WeakMap<IndexView, FileRoles>();

/** Not worked out yet (FileRoles.codes). */
const UNKNOWN_ROLE = 255;

/**
 * The role of each file slot (an index into ROLES), worked out the first time a query asks for
 * it and kept with the loaded index: tests by path; then what the repository declares (its
 * layout: workspaces, `.gitattributes`); then examples, benchmarks, templates, docs, vendored and
 * generated code by folder names; generated code also by the content mark sync sets; prose and
 * data files by language. Only the files a query touches are looked at: a one-shot search need
 * not classify the whole catalog.
 */
class FileRoles {
  /** The role of each slot, UNKNOWN_ROLE until asked: hot loops read it and call `of` only for those. */
  readonly codes: Uint8Array;
  private searches = 0;

  constructor(
    private readonly view: IndexView,
    private readonly declared: ReturnType<typeof layoutReader> | undefined,
    /** Slots whose content carries the generated mark. */
    private readonly marked: ReadonlySet<number>,
  ) {
    this.codes = new Uint8Array(view.fileSlots).fill(UNKNOWN_ROLE);
  }

  of(file: number): number {
    const code = this.codes[file]!;
    return code !== UNKNOWN_ROLE ? code : this.work(file);
  }

  /**
   * A search begins. The second one on this index works out every file's role at once: a process
   * that searches more than once (a server) pays for the whole catalog one time, as it did before
   * roles were lazy, instead of a little in each of its next thousand searches.
   */
  searchBegins(): void {
    if (this.searches++ !== 1) return;
    for (let f = 0; f < this.codes.length; f++) this.of(f);
  }

  private work(file: number): number {
    const path = this.view.filePath(file);
    const role = byLanguage(pathRole(path, this.declared?.(path)), this.view.fileLanguage(file));
    const settled = role === 'source' && this.marked.has(file) ? 'generated' : role;
    const code = ROLE_CODE.get(settled)!;
    this.codes[file] = code;
    return code;
  }
}

async function fileRoles(view: IndexView): Promise<FileRoles> {
  let roles = roleCache.get(view);
  if (roles) return roles;
  const [marked] = await view.postings([PATH_FIELD + GENERATED_MARK]);
  const markedFiles = new Set<number>();
  if (marked) for (const doc of marked.docs) markedFiles.add(view.docFile[doc]!);
  roles = new FileRoles(view, view.meta.layout ? layoutReader(view.meta.layout) : undefined, markedFiles);
  roleCache.set(view, roles);
  return roles;
}

/** Query words that ask for a role by name: such a query gets that role at full weight. */
const ROLE_WORDS: Readonly<Record<Exclude<Role, 'source'>, readonly string[]>> = {
  test: ['test', 'tests', 'testing', 'spec', 'specs', 'unittest', 'fixture', 'fixtures', 'e2e'],
  example: ['example', 'examples', 'sample', 'samples', 'demo', 'demos', 'playground'],
  vendored: ['vendor', 'vendored', 'third', 'party', 'thirdparty'],
  generated: ['generated', 'codegen', 'autogenerated'],
  prose: ['doc', 'docs', 'documentation', 'readme', 'guide', 'changelog'],
  docs: ['doc', 'docs', 'documentation', 'readme', 'guide', 'website', 'changelog', 'changeset', 'release', 'notes', 'github', 'workflow', 'workflows'],
  bench: ['bench', 'benchmark', 'benchmarks', 'benches', 'perf', 'performance'],
  template: ['template', 'templates', 'scaffold', 'starter', 'boilerplate'],
};
/**
 * Only a short query asks for a role by naming it ("where are the router tests"): a pasted report
 * or a commit message says "test" or "example" in passing (measured: honouring it there costs R@5).
 */
const ROLE_QUERY_MAX_TERMS = 8;

/** The multiplier of each role for this query (ROLES order). */
function roleWeights(terms: readonly string[], rank: RankingProfile): Float64Array {
  const weights = Float64Array.from(ROLES, (role) => (role === 'source' ? 1 : role === 'test' ? rank.test : role === 'prose' ? rank.prose : role === 'docs' ? rank.docs : rank.aux));
  if (terms.length > ROLE_QUERY_MAX_TERMS) return weights;
  const asked = new Set(terms);
  for (const [role, words] of Object.entries(ROLE_WORDS)) if (words.some((word) => asked.has(word))) weights[ROLE_CODE.get(role as Role)!] = 1;
  return weights;
}

const PROSE: ReadonlySet<string> = new Set(['markdown', 'json', 'yaml', 'toml', 'text']);

/** A path's role with its language considered: a prose or data file its path calls source is prose. */
function byLanguage(role: PathRole, language: string): PathRole | 'prose' {
  return role === 'source' && PROSE.has(language) ? 'prose' : role;
}

/**
 * The role multiplier a search for `terms` would give a file, by its path and language alone
 * (before an index has learned the repository's layout): what a first search uses to choose
 * which files to index first.
 */
export function pathRoleWeigher(terms: readonly string[], rank: RankingProfile = DEFAULT_RANKING): (path: string, language: string) => number {
  const weights = roleWeights(terms, rank);
  return (path, language) => weights[ROLE_CODE.get(byLanguage(pathRole(path), language))!]!;
}

function popcount(v: number): number {
  let x = v - ((v >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * The top `topK` in result order with at most MAX_PER_FILE per file, the first `distinct` of them
 * from distinct files: a file's second chunk waits until that many files have their first, so one
 * file's chunks do not crowd the second file a change needs out of the top; past them, score
 * order again. Widens the heap until enough survive.
 */
function capPerFile(touched: Uint32Array, count: number, scores: Float64Array, order: Uint32Array, chunkFile: Uint32Array, topK: number, distinct = 0, rounded = false): number[] {
  const window = Math.min(distinct, topK);
  for (let limit = topK * 4; ; limit *= 4) {
    const best = selectTop(touched, count, scores, order, Math.min(limit, count), rounded);
    const perFile = new Map<number, number>();
    const accepted: number[] = [];
    const waiting: number[] = [];
    let leading = 0;
    for (const id of best) {
      const file = chunkFile[id]!;
      const seen = perFile.get(file) ?? 0;
      if (seen >= MAX_PER_FILE) continue;
      perFile.set(file, seen + 1);
      if (leading < window) {
        if (seen > 0) {
          waiting.push(id);
          continue;
        }
        accepted.push(id);
        if (++leading < window) continue;
        // The window is full: the chunks that waited come next, in score order among the rest.
        for (const held of waiting.splice(0)) if (accepted.length < topK) accepted.push(held);
        if (accepted.length === topK) return accepted;
        continue;
      }
      accepted.push(id);
      if (accepted.length === topK) return accepted;
    }
    if (limit >= count) {
      // Fewer distinct files than the window: the waiting chunks follow the files there are.
      for (const held of waiting) if (accepted.length < topK) accepted.push(held);
      return accepted;
    }
  }
}
