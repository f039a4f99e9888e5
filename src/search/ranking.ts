import { RepodexError } from '../core/errors.js';

/**
 * The bm25 ranking profile: plain BM25 over chunk text plus structure signals, each measured on
 * the retrieval dev set (bench/quality, docs/benchmarks.md) before it became a default.
 */
export interface RankingProfile {
  /** Weight × idf added when a query term is in the file's path (directory or file name). */
  readonly path: number;
  /** Weight × idf added when a query term is in a name the chunk declares. */
  readonly name: number;
  /** Weight × idf added for each query term the chunk lacks but its file matches elsewhere. */
  readonly file: number;
  /** Exponent of the share of query terms the chunk's file matches (coordination); 0 = off. */
  readonly coord: number;
  /** Coordination applies only to queries of at most this many terms (a fix's description, not a pasted report, whose terms no one file holds). */
  readonly coordUpTo: number;
  /** Multiplier for prose and data files (Markdown, JSON, YAML, TOML, text): code answers "where". */
  readonly prose: number;
  /** Multiplier for test files (by path: `test/`, `__tests__/`, `*.test.ts`, `test_*.py`, …). */
  readonly test: number;
  /** Weight × idf (over files) added for each query term in the file's recent commit subjects. */
  readonly history: number;
  /** A file the query names (a stack frame, `router.ts`) has its chunks' scores × (1 + mention). */
  readonly mention: number;
  /** Multiplier for examples, benchmarks, templates, vendored and generated code (by the repository's layout and folder names; generated also by content). */
  readonly aux: number;
  /** Multiplier for files of a documentation site (code and prose under `docs/`, or declared documentation). */
  readonly docs: number;
  /**
   * Weight of a query word's other inflections (`retries` for `retry`, `saved` for `save`) in
   * chunks that lack the word itself; 0 = off.
   */
  readonly forms: number;
  /** Inflections are tried only for queries of at most this many terms (questions, not pasted reports). */
  readonly formsUpTo: number;
  /** Weight of the chunk's file scored by BM25 as one document (all its chunks' terms), added to the chunk's score; 0 = off. */
  readonly whole: number;
  /** How many leading results come from distinct files (a file's second chunk waits); 0 = score order throughout. */
  readonly distinct: number;
  /** `hybrid`: weight of the vector ranking against the lexical one (whose weight is 1). */
  readonly vector: number;
  /** `hybrid`: 0 = reciprocal rank fusion, 1 = normalized lexical score + `vector` × cosine similarity. */
  readonly fusion: number;
  /** `hybrid` with reciprocal rank fusion: the `k` of 1 / (k + rank). */
  readonly rrfK: number;
}

/** The default profile (see docs/benchmarks.md, "Retrieval quality"). */
export const DEFAULT_RANKING: RankingProfile = { path: 2, name: 2, file: 0.5, coord: 0.3, coordUpTo: 12, prose: 0.7, test: 0.5, history: 1, mention: 1, aux: 0.5, docs: 0.5, forms: 0.5, formsUpTo: 8, whole: 0.5, distinct: 5, vector: 0.25, fusion: 0, rrfK: 60 };

/** Plain BM25: every structure signal off (`REPODEX_BOOSTS=0`). */
export const PLAIN_BM25: RankingProfile = { path: 0, name: 0, file: 0, coord: 0, coordUpTo: 0, prose: 1, test: 1, history: 0, mention: 0, aux: 1, docs: 1, forms: 0, formsUpTo: 0, whole: 0, distinct: 0, vector: 1, fusion: 0, rrfK: 60 };

const KEYS = Object.keys(DEFAULT_RANKING) as (keyof RankingProfile)[];

/**
 * The profile for this process: `REPODEX_BOOSTS=0` gives plain BM25 (for comparisons);
 * `REPODEX_RANKING='{"path":2}'` overrides single weights (for ranking experiments).
 */
export function rankingFromEnv(env: NodeJS.ProcessEnv = process.env): RankingProfile {
  const base = env.REPODEX_BOOSTS === '0' ? PLAIN_BM25 : DEFAULT_RANKING;
  const raw = env.REPODEX_RANKING;
  if (raw === undefined || raw.trim() === '') return base;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new RepodexError('ENV_INVALID', `REPODEX_RANKING is not JSON: ${raw}`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new RepodexError('ENV_INVALID', 'REPODEX_RANKING must be a JSON object');
  const profile: Record<string, number> = { ...base };
  for (const [key, value] of Object.entries(parsed)) {
    if (!KEYS.includes(key as keyof RankingProfile) || typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new RepodexError('ENV_INVALID', `REPODEX_RANKING: ${key} must be one of ${KEYS.join(', ')} with a non-negative number`);
    }
    profile[key] = value;
  }
  return profile as unknown as RankingProfile;
}
