import { type GitHead, readGitHead } from '../core/git.js';
import { isRepodexError } from '../core/errors.js';
import { FEATURE_VERSION } from '../core/version.js';
import { RepoScope } from '../scan/scope.js';
import type { CatalogView, IndexMeta, IndexStore, LockOwner } from '../store/backend.js';
import { type ChangeKind, type Changes, changeCount, changeExamples, detectChanges } from './changes.js';
import type { TreeCheck } from './probe.js';
import type { Embedder } from '../vector/embedder.js';
import type { RepoContext } from './context.js';
import { chunkRules } from './sync.js';
import { checkOtherFiles } from './verify.js';

/** Index state as seed 001 names it: what an agent must do next follows from it. */
export type IndexState = 'pending' | 'indexing' | 'ready' | 'stale';

/** How the working tree differs from the index. */
export interface TreeChanges {
  readonly added: number;
  readonly modified: number;
  readonly removed: number;
  /** Up to 10 changed paths, each with what happened to it. */
  readonly examples: { readonly path: string; readonly change: ChangeKind }[];
}

/** Which generation an answer came from, and whether the tree still matches it: carried by status, search and fetch. */
export interface Freshness {
  /** The generation answered from (null: no index). */
  readonly generation: number | null;
  /** HEAD when that generation was synced (null outside git or without an index). */
  readonly indexed_commit: string | null;
  /** True when the working tree (or HEAD, config, rules) no longer matches that generation. */
  readonly dirty: boolean;
  /** That generation is a first search's partial index: `files` of the `of` files found (the rest is being indexed). */
  readonly partial?: { readonly files: number; readonly of: number };
}

/** The answer to `status`. */
export interface StatusReport {
  readonly root: string;
  readonly indexed: boolean;
  readonly dirty: boolean;
  readonly state: IndexState;
  /** Why the index is dirty, one short sentence each; empty when clean. */
  readonly reasons: string[];
  /**
   * What is damaged under `.repodex/` (checksums, sizes, missing files), one line each naming the
   * file and its fix, as `verify` finds it: the lexical index (then the state is stale), the parse
   * cache, the vectors, the embedder's table, history.json, analytics.json, the audit log. Empty
   * when sound. Damage outside the lexical index leaves the state as it is: what is damaged is
   * never used, and `sync` repairs it (the audit log excepted: the line says what to do).
   */
  readonly damage: string[];
  readonly changes: TreeChanges | null;
  readonly generation: number | null;
  readonly last_sync: string | null;
  readonly files: number;
  readonly files_indexed: number;
  readonly chunks: number;
  readonly segments: number;
  readonly source_bytes: number;
  readonly size_on_disk: number;
  /** Bytes kept for the repository by part (`index`, `parse cache`, `history`, `audit log`, …): where the space goes. */
  readonly size_by_part: Record<string, number>;
  readonly git: { readonly indexed_commit: string | null; readonly head: string | null; readonly branch: string | null } | null;
  readonly sync_running: boolean;
  /** Who runs the sync in progress (null when none). */
  readonly sync_owner: LockOwner | null;
  readonly tool_version: string | null;
  /** Whether searches build and refresh the index themselves (config `auto_index` and REPODEX_INDEXING). */
  readonly auto_index: boolean;
  readonly freshness: Freshness;
  /** The semantic index (seed 003 status panel); filled in by the engine, which knows the embedder. */
  readonly semantic?: SemanticStatus;
}

/** Seed 003's status panel: the semantic index's state, what made it, its size and how often it answered. */
export interface SemanticStatus {
  /** `off`: embeddings disabled; `missing`: no vectors from the configured embedder; `building`: embedding now; `stale`: behind the lexical index. */
  readonly state: 'ready' | 'building' | 'stale' | 'missing' | 'off';
  readonly engine: string | null;
  readonly model: string | null;
  readonly dim: number | null;
  /** Live chunks with a vector, of `chunks`. */
  readonly vectors: number;
  readonly chunks: number;
  readonly files: number;
  /** When vectors were last brought up to date (ISO 8601), or null. */
  readonly last_indexed: string | null;
  readonly size_on_disk: number;
  /** Why the last embedding run or the embedder failed, or null. */
  readonly problem: string | null;
  /** How vector queries find neighbours: `graph` (the saved HNSW graph), `exact` (a scan of every vector), or null without vectors. */
  readonly search: 'graph' | 'exact' | null;
  readonly analytics: { readonly queries: number; readonly hits: number; readonly misses: number; readonly hit_ratio: number | null; readonly last_query_ts: string | null };
}

const MAX_EXAMPLES = 10;

function short(commit: string | null | undefined): string {
  return commit ? commit.slice(0, 10) : '(none)';
}

/**
 * Why a generation no longer matches the repository (empty when it does), without the tree:
 * other rules, other chunking settings, other config bytes, HEAD moved.
 */
export function ruleStaleness(ctx: RepoContext, meta: IndexMeta, head: GitHead | undefined): string[] {
  const reasons: string[] = [];
  if (meta.feature_version !== FEATURE_VERSION) reasons.push(`index built with other rules (feature version ${meta.feature_version}, this repodex uses ${FEATURE_VERSION})`);
  else if (meta.chunker.params_key !== chunkRules(ctx.loaded.config.chunk).key) reasons.push('chunking settings changed since the last sync');
  if (meta.config_hash !== ctx.loaded.hash) reasons.push('config.json changed since the last sync');
  if (head && meta.git && head.commit !== meta.git.commit) {
    reasons.push(`HEAD moved: indexed ${short(meta.git.commit)}, now ${short(head.commit)}${head.branch ? ` on ${head.branch}` : ''}`);
  }
  return reasons;
}

/** What changed in the tree since `view` was synced (the way a sync would find it: stats, or git on large trees). */
export function treeChanges(ctx: RepoContext, view: CatalogView): Changes {
  const scope = new RepoScope(ctx.paths.root, ctx.loaded.config, ctx.denylist);
  return detectChanges(scope, view.catalog(), ctx.loaded.config.change_detection, view.meta.git?.commit, view.meta.partial !== undefined).changes;
}

/** The tree exactly as `view` catalogued it (what a watcher proved). */
function noChanges(view: CatalogView): Changes {
  const catalog = view.catalog();
  return { changed: [], removed: [], added: 0, modified: 0, unchanged: catalog.count, tree: catalog.tree, errors: [], how: 'stat' };
}

/** One sentence on tree changes, or undefined when there are none. */
export function describeChanges(changes: Changes): string | undefined {
  const total = changeCount(changes);
  if (total === 0) return undefined;
  return `${total} file(s) changed: ${changes.added} added, ${changes.modified} modified, ${changes.removed.length} removed`;
}

/**
 * Status per seed 000 §3.7 and seed 001 §2.2: dirty when the index is damaged or missing, the
 * config bytes or the indexing rules changed, any file was added, removed or changed (size or
 * mtime), or git HEAD moved. `damage` lists what `verify` would find damaged (every checksum of
 * every file, without the cross-references), `embedder` being the one the config names.
 */
export async function computeStatus(ctx: RepoContext, store: IndexStore, autoIndex: boolean, embedder?: Embedder, checkTree?: (view: CatalogView) => Promise<TreeCheck>): Promise<StatusReport> {
  const root = ctx.paths.root;
  const owner = (await store.syncRunning()) ?? null;
  const head = readGitHead(root);
  const reasons: string[] = [];
  const damage: string[] = [];
  let meta: IndexMeta | undefined;
  try {
    meta = await store.readMeta();
  } catch (error) {
    if (!isRepodexError(error)) throw error;
    damage.push(error.message);
  }
  let view: CatalogView | undefined;
  if (meta) {
    damage.push(...(await store.check()).problems);
    if (damage.length === 0) {
      try {
        // The catalog is all status reads (a database store then reads no chunk rows: the page's status panel asks often).
        view = await store.openCatalog();
      } catch (error) {
        if (!isRepodexError(error)) throw error;
        damage.push(error.message);
      }
    }
  }
  const others = (await checkOtherFiles(store, embedder)).problems;
  const usage = await store.diskUsage();
  const gitInfo = head ? { indexed_commit: meta?.git?.commit ?? null, head: head.commit, branch: head.branch } : null;
  if (!meta || !view) {
    if (damage.length > 0) reasons.push(`the index is damaged: run \`repodex sync\` to rebuild it`);
    else reasons.push('no index yet: run `repodex sync`');
    return {
      root,
      indexed: false,
      dirty: true,
      state: owner ? 'indexing' : damage.length > 0 ? 'stale' : 'pending',
      reasons,
      damage: [...damage, ...others],
      changes: null,
      generation: meta?.generation ?? null,
      last_sync: meta?.synced_at ?? null,
      files: 0,
      files_indexed: 0,
      chunks: 0,
      segments: 0,
      source_bytes: 0,
      size_on_disk: usage.index,
      size_by_part: usage.parts,
      git: gitInfo,
      sync_running: owner !== null,
      sync_owner: owner,
      tool_version: meta?.tool_version ?? null,
      auto_index: autoIndex,
      freshness: { generation: meta?.generation ?? null, indexed_commit: meta?.git?.commit ?? null, dirty: true },
    };
  }
  reasons.push(...ruleStaleness(ctx, meta, head));
  if (meta.partial) reasons.push(`a first search's partial index: ${meta.partial.files} of ${meta.partial.of} files indexed so far`);
  // A server's check: its watcher proves the tree unchanged without a walk, or it walks once (and says what it found).
  const checked = checkTree ? await checkTree(view) : undefined;
  const found = checked ? (checked.changes ?? noChanges(view)) : treeChanges(ctx, view);
  const described = describeChanges(found);
  if (described) reasons.push(described);
  const changes: TreeChanges = {
    added: found.added,
    modified: found.modified,
    removed: found.removed.length,
    examples: changeExamples(found, view.catalog(), MAX_EXAMPLES),
  };
  const dirty = reasons.length > 0;
  return {
    root,
    indexed: true,
    dirty,
    state: owner ? 'indexing' : dirty ? 'stale' : 'ready',
    reasons,
    damage: [...damage, ...others],
    changes,
    generation: meta.generation,
    last_sync: meta.synced_at,
    files: meta.counts.files,
    files_indexed: meta.counts.files_indexed,
    chunks: meta.counts.chunks,
    segments: meta.counts.segments,
    source_bytes: meta.source_bytes,
    size_on_disk: usage.index,
    size_by_part: usage.parts,
    git: gitInfo,
    sync_running: owner !== null,
    sync_owner: owner,
    tool_version: meta.tool_version,
    auto_index: autoIndex,
    freshness: { generation: meta.generation, indexed_commit: meta.git?.commit ?? null, dirty, ...(meta.partial ? { partial: meta.partial } : {}) },
  };
}
