import { FEATURE_VERSION } from '../core/version.js';
import { isRepodexError } from '../core/errors.js';
import type { IndexStore, IntegrityReport } from '../store/backend.js';
import type { Embedder } from '../vector/embedder.js';
import { checkHistory } from './history.js';
import { checkSecretRulesMarker } from './purge.js';

/** The answer to `verify`. */
export interface VerifyReport {
  readonly root: string;
  /** True when an index exists and nothing is damaged. */
  readonly ok: boolean;
  readonly indexed: boolean;
  readonly generation: number | null;
  /** What is damaged, one line each, naming the file and what fixes it (empty when sound). */
  readonly problems: string[];
  /** The files that were checked. */
  readonly checked: string[];
  /** Not damage, but the index will not be served as it is (built with other rules): `repodex sync` rebuilds it. */
  readonly warnings: string[];
}

/**
 * Every file under `.repodex/` besides the lexical generation that an answer depends on, checked
 * byte for byte (what `status` and `verify` share): the parse cache, the vector manifest, log and
 * graph, the embedder's own files (the builtin table), history.json, analytics.json, the audit
 * log and the credential rules' marker. Each problem names the file and its fix. `embedder` is the one the config names (its files
 * are checked only when it is in use).
 */
export async function checkOtherFiles(store: IndexStore, embedder: Embedder | undefined, deep = false): Promise<IntegrityReport> {
  const parts: { checked: string[]; problems: string[]; notes?: string[] }[] = [
    await store.checkCache(),
    await store.checkVectors(),
    embedder?.check?.() ?? { checked: [], problems: [] },
    await checkHistory(store.control),
    await store.control.analytics.check(),
    await store.control.audit.check(deep),
    await checkSecretRulesMarker(store.control),
  ];
  return {
    problems: parts.flatMap((part) => part.problems),
    checked: parts.flatMap((part) => part.checked),
    notes: parts.flatMap((part) => part.notes ?? []),
  };
}

/**
 * Check the whole index (seed 003 addendum): every artifact's checksums, sizes and format
 * version, and every cross-reference (chunk ranges, postings, tombstones, unique chunk ids),
 * plus every other file an answer depends on (`checkOtherFiles`) and the vectors' coverage.
 */
export async function verifyIndex(root: string, store: IndexStore, embedder: Embedder | undefined): Promise<VerifyReport> {
  let meta;
  try {
    meta = await store.readMeta();
  } catch (error) {
    if (!isRepodexError(error)) throw error;
    return { root, ok: false, indexed: true, generation: null, problems: [error.message], checked: ['meta.json'], warnings: [] };
  }
  if (!meta) return { root, ok: false, indexed: false, generation: null, problems: ['no index: run `repodex sync`'], checked: [], warnings: [] };
  const report = await store.check({ deep: true });
  const others = await checkOtherFiles(store, embedder, true);
  const coverage = report.problems.length === 0 ? await verifyCoverage(store, meta.generation) : { problems: [], notes: [] };
  const warnings = meta.feature_version === FEATURE_VERSION ? [] : [`built with other rules (feature version ${meta.feature_version}, this repodex uses ${FEATURE_VERSION}): \`repodex sync\` rebuilds it`];
  const problems = [...report.problems, ...others.problems, ...coverage.problems];
  return {
    root,
    ok: problems.length === 0,
    indexed: true,
    generation: meta.generation,
    problems,
    checked: [...report.checked, ...others.checked],
    warnings: [...warnings, ...report.notes, ...others.notes, ...coverage.notes],
  };
}

/**
 * The semantic index against the lexical one (seed 003 `verify`): when the vectors were brought up
 * to this generation, every chunk the manifest counts as covered has a vector. Identical chunks
 * share one vector, and each counts. Vectors behind the lexical index are a note (the next sync
 * embeds the rest), not damage.
 */
async function verifyCoverage(store: IndexStore, generation: number): Promise<{ problems: string[]; notes: string[] }> {
  let manifest;
  try {
    manifest = await store.readVectorManifest();
  } catch (error) {
    if (isRepodexError(error)) return { problems: [], notes: [] }; // a damaged manifest is reported by checkVectors
    throw error;
  }
  if (!manifest) return { problems: [], notes: [] };
  const vectors = store.vectors({ engine: manifest.engine, model: manifest.model, dim: manifest.dim, metric: 'cosine' });
  // Counts only: no approximate index is opened.
  const { count: covered, live } = await vectors.searcher(await store.open(), { annFrom: Number.POSITIVE_INFINITY });
  if (covered >= live) return { problems: [], notes: [] };
  const line = `vectors cover ${covered} of ${live} chunks`;
  if (manifest.generation === generation && covered < manifest.counts.vectors) return { problems: [`${line}, though the manifest counts ${manifest.counts.vectors}: \`repodex sync\` embeds them again`], notes: [] };
  return { problems: [], notes: [`${line} (embedding is behind the index): \`repodex sync\` embeds the rest`] };
}
