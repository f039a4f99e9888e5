import { statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { type GitHead, readGitHead } from '../core/git.js';
import { RepodexError, isRepodexError } from '../core/errors.js';
import { isLockHeld } from '../index/lock.js';
import type { IndexMeta } from '../index/meta.js';
import { type Candidate, walkRepository } from '../scan/walker.js';
import type { Catalog, IndexStore } from '../store/backend.js';
import type { RepoContext } from './context.js';

/** Index state as seed 001 names it (plus `missing`): what an agent must do next follows from it. */
export type IndexState = 'missing' | 'indexing' | 'ready' | 'stale';

/** How the working tree differs from the index. */
export interface TreeChanges {
  readonly added: number;
  readonly modified: number;
  readonly removed: number;
  /** Up to 10 changed paths, each with what happened to it. */
  readonly examples: { readonly path: string; readonly change: 'added' | 'modified' | 'removed' }[];
}

/** The answer to `status`. */
export interface StatusReport {
  readonly root: string;
  readonly indexed: boolean;
  readonly dirty: boolean;
  readonly state: IndexState;
  /** Why the index is dirty, one short sentence each; empty when clean. */
  readonly reasons: string[];
  readonly changes: TreeChanges | null;
  readonly generation: number | null;
  readonly last_sync: string | null;
  readonly files: number;
  readonly files_indexed: number;
  readonly chunks: number;
  readonly terms: number;
  readonly source_bytes: number;
  readonly size_on_disk: number;
  readonly git: { readonly indexed_commit: string | null; readonly head: string | null; readonly branch: string | null } | null;
  readonly sync_running: boolean;
  readonly tool_version: string | null;
}

const MAX_EXAMPLES = 10;

/** Compare a sorted walk with the sorted catalog of the index. */
export function diffCatalog(walk: readonly Candidate[], catalog: Catalog): TreeChanges {
  let added = 0;
  let modified = 0;
  let removed = 0;
  const examples: TreeChanges['examples'] = [];
  const note = (path: string, change: 'added' | 'modified' | 'removed'): void => {
    if (examples.length < MAX_EXAMPLES) examples.push({ path, change });
  };
  let i = 0;
  let j = 0;
  while (i < walk.length || j < catalog.count) {
    const file = walk[i];
    const indexedPath = j < catalog.count ? catalog.path(j) : undefined;
    if (file !== undefined && (indexedPath === undefined || file.path < indexedPath)) {
      added++;
      note(file.path, 'added');
      i++;
    } else if (file === undefined || (indexedPath !== undefined && indexedPath < file.path)) {
      removed++;
      note(indexedPath!, 'removed');
      j++;
    } else {
      if (file.size !== catalog.size(j) || file.mtimeMs !== catalog.mtimeMs(j)) {
        modified++;
        note(file.path, 'modified');
      }
      i++;
      j++;
    }
  }
  return { added, modified, removed, examples };
}

/**
 * Prove "nothing changed" from stats alone: every ignore file, every listed folder and every
 * catalogued file has the size and mtime it had at sync time. A folder's mtime changes when an
 * entry is added, removed or renamed in it, so unchanged folders need no listing and no ignore
 * matching. Any difference sends the caller to a full walk, which says exactly what changed.
 */
export function unchangedSinceSync(root: string, catalog: Catalog): boolean {
  // Catalog paths are normalized relative paths, so plain concatenation is a correct (and cheaper) join.
  const prefix = root.endsWith(sep) ? root : root + sep;
  for (const control of catalog.controls) {
    const stat = statSync(join(root, control.path), { throwIfNoEntry: false });
    if (!stat) {
      if (control.size !== -1) return false;
    } else if (stat.size !== control.size || stat.mtimeMs !== control.mtimeMs) return false;
  }
  for (const dir of catalog.dirs) {
    const stat = statSync(dir.path === '' ? root : join(root, dir.path), { throwIfNoEntry: false });
    if (!stat || stat.mtimeMs !== dir.mtimeMs) return false;
  }
  for (let i = 0; i < catalog.count; i++) {
    const stat = statSync(`${prefix}${catalog.path(i)}`, { throwIfNoEntry: false });
    if (!stat || stat.size !== catalog.size(i) || stat.mtimeMs !== catalog.mtimeMs(i)) return false;
  }
  return true;
}

/**
 * Why an index no longer matches the working tree (empty when it does): config bytes, files
 * added/removed/changed (proved from stats when nothing changed, else by a full walk), git HEAD.
 */
export function indexStaleness(ctx: RepoContext, meta: IndexMeta, catalog: Catalog, head: GitHead | undefined): { reasons: string[]; changes: TreeChanges } {
  const root = ctx.paths.root;
  const reasons: string[] = [];
  if (meta.config_hash !== ctx.loaded.hash) reasons.push('config.json changed since the last sync');
  const changes = unchangedSinceSync(root, catalog)
    ? { added: 0, modified: 0, removed: 0, examples: [] }
    : diffCatalog(walkRepository(root, ctx.loaded.config, ctx.denylist).files, catalog);
  const total = changes.added + changes.modified + changes.removed;
  if (total > 0) reasons.push(`${total} file(s) changed: ${changes.added} added, ${changes.modified} modified, ${changes.removed} removed`);
  if (head && meta.git && head.commit !== meta.git.commit) {
    reasons.push(`HEAD moved: indexed ${short(meta.git.commit)}, now ${short(head.commit)}${head.branch ? ` on ${head.branch}` : ''}`);
  }
  return { reasons, changes };
}

/**
 * Status per seed 000 §3.7: dirty when an artifact is missing, the config bytes changed, or any
 * file was added, removed or changed (size or mtime); in git, also when HEAD moved.
 */
export async function computeStatus(ctx: RepoContext, store: IndexStore): Promise<StatusReport> {
  const root = ctx.paths.root;
  const syncRunning = isLockHeld(ctx.paths.lock);
  const head = readGitHead(root);
  let meta: IndexMeta | undefined;
  const reasons: string[] = [];
  try {
    meta = store.readMeta();
  } catch (error) {
    if (!isRepodexError(error)) throw error;
    reasons.push(error.message);
  }
  if (!meta) {
    if (reasons.length === 0) reasons.push('no index yet: run `repodex sync`');
    return {
      root,
      indexed: false,
      dirty: true,
      state: syncRunning ? 'indexing' : 'missing',
      reasons,
      changes: null,
      generation: null,
      last_sync: null,
      files: 0,
      files_indexed: 0,
      chunks: 0,
      terms: 0,
      source_bytes: 0,
      size_on_disk: 0,
      git: head ? { indexed_commit: null, head: head.commit, branch: head.branch } : null,
      sync_running: syncRunning,
      tool_version: null,
    };
  }
  const missing = store.missingArtifacts(meta);
  for (const name of missing) reasons.push(`artifact ${name} is missing`);
  let changes: TreeChanges | null = null;
  if (missing.length === 0) {
    try {
      const staleness = indexStaleness(ctx, meta, await store.openCatalog(meta), head);
      changes = staleness.changes;
      reasons.push(...staleness.reasons);
    } catch (error) {
      if (!(error instanceof RepodexError)) throw error;
      reasons.push(error.message);
    }
  } else if (meta.config_hash !== ctx.loaded.hash) {
    reasons.push('config.json changed since the last sync');
  }
  const dirty = reasons.length > 0;
  return {
    root,
    indexed: true,
    dirty,
    state: syncRunning ? 'indexing' : dirty ? 'stale' : 'ready',
    reasons,
    changes,
    generation: meta.generation,
    last_sync: meta.synced_at,
    files: meta.counts.files,
    files_indexed: meta.counts.files_indexed,
    chunks: meta.counts.chunks,
    terms: meta.counts.terms,
    source_bytes: meta.source_bytes,
    size_on_disk: store.sizeOnDisk(meta),
    git: head ? { indexed_commit: meta.git?.commit ?? null, head: head.commit, branch: head.branch } : null,
    sync_running: syncRunning,
    tool_version: meta.tool_version,
  };
}

function short(commit: string | null | undefined): string {
  return commit ? commit.slice(0, 10) : '(none)';
}
