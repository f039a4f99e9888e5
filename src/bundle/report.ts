import type { Freshness } from '../engine/status.js';
import type { SyncSummary } from '../engine/sync.js';
import type { BundleExcerpt, BundleSearch } from './bundler.js';

/** The answer to `bundle` (seed 002 §11.7): what `last_bundle.json` holds, plus how the index was kept fresh. */
export interface BundleReport {
  /** Identifies this bundle: the same prompt, budget and index give the same id. */
  readonly bundle_id: string;
  /** sha256 of the prompt with its whitespace collapsed. */
  readonly prompt_fingerprint: string;
  readonly prompt: string;
  /** Which bundler made it (`deterministic-v1`). */
  readonly strategy: string;
  readonly budget: { readonly max_files: number; readonly max_lines: number; readonly include_tests: boolean };
  readonly used: { readonly files: number; readonly lines: number };
  readonly keywords: string[];
  readonly searches: BundleSearch[];
  readonly excerpts: BundleExcerpt[];
  readonly omitted: { readonly path: string; readonly reason: string }[];
  readonly generation: number;
  readonly freshness: Freshness;
  readonly synced?: SyncSummary;
  readonly warnings: string[];
}
