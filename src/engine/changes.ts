import { readdirSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import type { Tree } from '../index/model.js';
import { NESTED_IGNORE_FILES } from '../scan/ignore-rules.js';
import type { RepoScope } from '../scan/scope.js';
import { type Candidate, type ControlFile, type SoftError, type WalkedDir, byPath, walkTree } from '../scan/walker.js';
import type { Catalog } from '../store/backend.js';
import { errorMessage } from '../core/errors.js';

/** How a file differs from the index. */
export type ChangeKind = 'added' | 'modified' | 'removed';

/** How the working tree differs from a generation's catalog. */
export interface Changes {
  /** Files to read: new ones and catalogued ones whose size or mtime changed, with their stat, by path. */
  readonly changed: readonly Candidate[];
  /** Catalogued paths that are gone (or no longer files). */
  readonly removed: readonly string[];
  readonly added: number;
  readonly modified: number;
  /** Catalogued files whose stat is unchanged (not read). */
  readonly unchanged: number;
  /** The walk's shape after the changes: what the next generation records. */
  readonly tree: Tree;
  readonly errors: readonly SoftError[];
  /** How the changes were found: a full walk, or stats of the catalog plus listings of changed folders. */
  readonly how: 'walk' | 'stat';
}

/** The total number of changed paths. */
export function changeCount(changes: Changes): number {
  return changes.changed.length + changes.removed.length;
}

/** Up to `limit` changed paths with what happened to each, by path. */
export function changeExamples(changes: Changes, catalog: Catalog | undefined, limit: number): { path: string; change: ChangeKind }[] {
  const out: { path: string; change: ChangeKind }[] = [];
  for (const file of changes.changed) out.push({ path: file.path, change: catalog && catalog.find(file.path) >= 0 ? 'modified' : 'added' });
  for (const path of changes.removed) out.push({ path, change: 'removed' });
  return out.sort(byPath).slice(0, limit);
}

/**
 * Compare a full walk with a catalog (all files are new without one): used for the first sync,
 * after the rules changed (config, an ignore file), and by `--force`.
 */
export function walkChanges(scope: RepoScope, catalog: Catalog | undefined): Changes {
  const walk = walkTree(scope, '');
  const changed: Candidate[] = [];
  const removed: string[] = [];
  let added = 0;
  let modified = 0;
  let unchanged = 0;
  let i = 0;
  let j = 0;
  const count = catalog?.count ?? 0;
  while (i < walk.files.length || j < count) {
    const file = walk.files[i];
    const indexedPath = j < count ? catalog!.path(j) : undefined;
    if (file !== undefined && (indexedPath === undefined || file.path < indexedPath)) {
      changed.push(file);
      added++;
      i++;
    } else if (file === undefined || (indexedPath !== undefined && indexedPath < file.path)) {
      removed.push(indexedPath!);
      j++;
    } else {
      if (file.size !== catalog!.size(j) || file.mtimeMs !== catalog!.mtimeMs(j)) {
        changed.push(file);
        modified++;
      } else unchanged++;
      i++;
      j++;
    }
  }
  return { changed, removed, added, modified, unchanged, tree: { dirs: walk.dirs, controls: walk.controls }, errors: walk.errors, how: 'walk' };
}

/**
 * Find what changed since a generation from stats, without walking the tree: every catalogued
 * file is stat-ed (content edits change size or mtime), and only folders whose mtime changed are
 * listed again (adding, removing or renaming an entry changes its folder's mtime); a new folder
 * is walked. Returns undefined when an ignore file changed: the rules themselves differ then, and
 * only a full walk (`walkChanges`) can say what is in scope.
 */
export function statChanges(scope: RepoScope, catalog: Catalog): Changes | undefined {
  const root = scope.root;
  const prefix = root.endsWith(sep) ? root : root + sep;
  for (const control of catalog.tree.controls) {
    const stat = statSync(prefix + control.path, { throwIfNoEntry: false });
    if (!stat ? control.size !== -1 : stat.size !== control.size || stat.mtimeMs !== control.mtimeMs) return undefined;
  }
  const controlsByDir = new Map<string, Set<string>>();
  for (const control of catalog.tree.controls) {
    const slash = control.path.lastIndexOf('/');
    const dir = slash < 0 ? '' : control.path.slice(0, slash);
    const set = controlsByDir.get(dir) ?? new Set<string>();
    set.add(control.path.slice(slash + 1));
    controlsByDir.set(dir, set);
  }
  const knownDirs = new Set(catalog.tree.dirs.map((dir) => dir.path));
  const dirs: WalkedDir[] = [];
  const controls: ControlFile[] = [...catalog.tree.controls];
  const changed: Candidate[] = [];
  const errors: SoftError[] = [];
  let added = 0;
  for (const dir of catalog.tree.dirs) {
    const stat = statSync(dir.path === '' ? root : prefix + dir.path, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) continue; // gone: its catalogued files fail their stat below
    dirs.push({ path: dir.path, mtimeMs: stat.mtimeMs });
    if (stat.mtimeMs === dir.mtimeMs) continue;
    let names: { name: string; isDir: boolean; isFile: boolean; isLink: boolean }[];
    try {
      names = readdirSync(dir.path === '' ? root : prefix + dir.path, { withFileTypes: true }).map((entry) => ({
        name: entry.name,
        isDir: entry.isDirectory(),
        isFile: entry.isFile(),
        isLink: entry.isSymbolicLink(),
      }));
    } catch (error) {
      errors.push({ path: dir.path || '.', reason: `cannot list folder: ${errorMessage(error)}` });
      continue;
    }
    // An ignore file added to or removed from a folder changes the rules: only a full walk can follow.
    const ignoreNames = new Set(names.filter((entry) => !entry.isDir && (NESTED_IGNORE_FILES as readonly string[]).includes(entry.name)).map((entry) => entry.name));
    const recorded = controlsByDir.get(dir.path) ?? new Set<string>();
    for (const name of NESTED_IGNORE_FILES) if (ignoreNames.has(name) !== recorded.has(name)) return undefined;
    scope.enter(dir.path, ignoreNames);
    for (const entry of names) {
      const rel = dir.path === '' ? entry.name : `${dir.path}/${entry.name}`;
      if (entry.isLink) continue;
      if (entry.isDir) {
        if (knownDirs.has(rel) || !scope.includesDir(rel)) continue;
        const walk = walkTree(scope, rel);
        changed.push(...walk.files);
        added += walk.files.length;
        dirs.push(...walk.dirs);
        controls.push(...walk.controls);
        errors.push(...walk.errors);
        continue;
      }
      if (!entry.isFile || catalog.find(rel) >= 0 || !scope.includesFile(rel)) continue;
      const fileStat = statSync(prefix + rel, { throwIfNoEntry: false });
      if (!fileStat) continue; // removed again while we looked
      changed.push({ path: rel, size: fileStat.size, mtimeMs: fileStat.mtimeMs });
      added++;
    }
  }
  const removed: string[] = [];
  let modified = 0;
  let unchanged = 0;
  for (let i = 0; i < catalog.count; i++) {
    const path = catalog.path(i);
    const stat = statSync(prefix + path, { throwIfNoEntry: false });
    if (!stat?.isFile()) {
      removed.push(path);
    } else if (stat.size !== catalog.size(i) || stat.mtimeMs !== catalog.mtimeMs(i)) {
      changed.push({ path, size: stat.size, mtimeMs: stat.mtimeMs });
      modified++;
    } else unchanged++;
  }
  changed.sort(byPath);
  dirs.sort(byPath);
  controls.sort(byPath);
  return { changed, removed, added, modified, unchanged, tree: { dirs, controls }, errors, how: 'stat' };
}
