import type { OutlineSymbol } from '../lang/types.js';
import type { SearchHit } from '../search/search.js';

/**
 * Context bundles (SPEC §5, seed 002 §11.7): the excerpts a task needs, with citations and a
 * reason for each, within a strict budget. A bundler only sees the tools below, so another one
 * (an LLM-assisted bundler, say) can replace the deterministic one without changing any schema.
 */

/** What a bundle is asked for. */
export interface BundleRequest {
  readonly prompt: string;
  /** Most files cited (at most the `max_bundle_files` limit). */
  readonly maxFiles: number;
  /** Most lines of excerpts, all files together. */
  readonly maxLines: number;
  readonly includeTests: boolean;
}

/** What a bundler may use: search, outlines and safe reads of the index it is answered from. */
export interface BundleTools {
  search(q: string, options: { readonly topK: number; readonly excludeTests: boolean }): Promise<SearchHit[]>;
  /** How many chunks hold each term (0 for terms no chunk has): how telling a keyword is. */
  documentFrequency(terms: readonly string[]): Promise<number[]>;
  /** The outline of an indexed file (empty when it has none). */
  outline(path: string): Promise<readonly OutlineSymbol[]>;
  /** Lines of a file through the path guard, or why it cannot be read. */
  read(path: string): Promise<{ readonly ok: true; readonly lines: readonly string[] } | { readonly ok: false; readonly reason: string }>;
}

/** One cited excerpt. */
export interface BundleExcerpt {
  readonly path: string;
  readonly start_line: number;
  readonly end_line: number;
  /** `path:start-end`. */
  readonly citation: string;
  /** The declaration the excerpt covers (`class Router › match`), or null. */
  readonly symbol: string | null;
  /** Why this excerpt is in the bundle: what matched, from which searches, how it was widened. */
  readonly rationale: string;
  /** `"N| text"` lines. */
  readonly lines: string[];
  /** True when the line budget cut the excerpt short. */
  readonly truncated: boolean;
  /** Fused rank score (higher is more relevant). */
  readonly score: number;
}

/** A search the bundler ran, and how many candidates it gave. */
export interface BundleSearch {
  readonly query: string;
  readonly hits: number;
}

/** What a bundler returns (the engine adds id, fingerprint, budget and freshness). */
export interface BundleDraft {
  readonly keywords: string[];
  readonly searches: BundleSearch[];
  readonly excerpts: BundleExcerpt[];
  /** Candidates left out, and why (budget, blocked, unreadable). */
  readonly omitted: { readonly path: string; readonly reason: string }[];
}

/** Builds bundles. Implementations must be deterministic for a given index and request. */
export interface Bundler {
  /** Recorded in the bundle (`strategy`). */
  readonly name: string;
  build(request: BundleRequest, tools: BundleTools): Promise<BundleDraft>;
}
