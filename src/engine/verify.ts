import { FEATURE_VERSION } from '../core/version.js';
import { isRepodexError } from '../core/errors.js';
import type { IndexStore } from '../store/backend.js';

/** The answer to `verify`. */
export interface VerifyReport {
  readonly root: string;
  /** True when an index exists and nothing is damaged. */
  readonly ok: boolean;
  readonly indexed: boolean;
  readonly generation: number | null;
  /** What is damaged, one line each, naming the file (empty when sound). */
  readonly problems: string[];
  /** The files that were checked. */
  readonly checked: string[];
  /** Not damage, but the index will not be served as it is (built with other rules): `repodex sync` rebuilds it. */
  readonly warnings: string[];
}

/**
 * Check the whole index (seed 003 addendum): every artifact's checksums, sizes and format
 * version, and every cross-reference (chunk ranges, postings, tombstones, unique chunk ids),
 * plus the parse cache.
 */
export async function verifyIndex(root: string, store: IndexStore): Promise<VerifyReport> {
  let meta;
  try {
    meta = await store.readMeta();
  } catch (error) {
    if (!isRepodexError(error)) throw error;
    return { root, ok: false, indexed: true, generation: null, problems: [error.message], checked: ['meta.json'], warnings: [] };
  }
  if (!meta) return { root, ok: false, indexed: false, generation: null, problems: ['no index: run `repodex sync`'], checked: [], warnings: [] };
  const report = await store.check({ deep: true });
  const warnings = meta.feature_version === FEATURE_VERSION ? [] : [`built with other rules (feature version ${meta.feature_version}, this repodex uses ${FEATURE_VERSION}): \`repodex sync\` rebuilds it`];
  return { root, ok: report.problems.length === 0, indexed: true, generation: meta.generation, problems: report.problems, checked: report.checked, warnings: [...warnings, ...report.notes] };
}
