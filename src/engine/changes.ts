import { readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { gitPaths } from '../core/git-cli.js';
import type { Tree } from '../index/model.js';
import { NESTED_IGNORE_FILES, isNestedIgnoreName } from '../scan/ignore-rules.js';
import { type RepoScope, controlLocation, isOutsideRoot, parentOf } from '../scan/scope.js';
import { type Candidate, type ControlFile, type SoftError, type WalkedDir, byPath, controlStat, sameControl, walkTree } from '../scan/walker.js';
import type { Catalog } from '../store/backend.js';
import { errorMessage } from '../core/errors.js';
import { sameStamp, stampOf, statIfExists } from '../core/stat.js';

/** How a file differs from the index. */
export type ChangeKind = 'added' | 'modified' | 'removed';

/** How the working tree differs from a generation's catalog. */
export interface Changes {
  /** Files to read: new ones and catalogued ones whose stat changed (size, mtime, ctime or inode), with their stat, by path. */
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
  /** How the changes were found: a full walk; stats of the catalog plus listings of changed folders; or git. */
  readonly how: 'walk' | 'stat' | 'git';
}

/** The total number of changed paths. */
export function changeCount(changes: Changes): number {
  return changes.changed.length + changes.removed.length;
}

/**
 * True when a generation's record of the control files (ignore and git config files: their
 * stats) still holds. When one was touched but nothing in the tree changed (a `git config
 * --global` rewrote ~/.gitconfig as it was), only a full walk proves the rules the same, and
 * every later check repeats that walk until a sync commits the new record. Folder times are left
 * out: one that changed costs a check one listing, not a walk, and a folder where an ignored file
 * comes and goes (a log, a build output) would otherwise have every check commit a generation.
 */
export function sameControls(recorded: Tree, now: Tree): boolean {
  if (recorded.controls.length !== now.controls.length) return false;
  return now.controls.every((control, i) => control.path === recorded.controls[i]!.path && sameControl(control, recorded.controls[i]!));
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
      if (!sameStamp(file, catalog!.stamp(j))) {
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
 * True when the rules are as the generation recorded them: the scope consults the same files
 * outside the walk (a different set — another HOME, another git config, an index from a version
 * that consulted fewer — changes the rules as surely as an edit), and every recorded ignore or
 * config file still has its recorded size, mtime and ctime.
 */
function controlsUnchanged(scope: RepoScope, catalog: Catalog): boolean {
  const recorded = new Set(catalog.tree.controls.map((control) => control.path));
  if (scope.rootControls.some((control) => !recorded.has(control.path))) return false;
  const roots = new Set(scope.rootControls.map((control) => control.path));
  for (const control of catalog.tree.controls) {
    const nested = !isOutsideRoot(control.path) && isNestedIgnoreName(control.path.slice(control.path.lastIndexOf('/') + 1));
    if (!nested && !roots.has(control.path)) return false;
    if (!sameControl(controlStat(controlLocation(scope.root, control.path), control.path), control)) return false;
  }
  return true;
}

/**
 * Find what changed since a generation from stats, without walking the tree: every catalogued
 * file is stat-ed (content edits change size, mtime or ctime), and only folders whose times changed are
 * listed again (adding, removing or renaming an entry changes its folder's mtime); a new folder
 * is walked. Returns undefined when an ignore file changed: the rules themselves differ then, and
 * only a full walk (`walkChanges`) can say what is in scope.
 */
export function statChanges(scope: RepoScope, catalog: Catalog): Changes | undefined {
  const root = scope.root;
  const prefix = root.endsWith(sep) ? root : root + sep;
  if (!controlsUnchanged(scope, catalog)) return undefined;
  const controlsByDir = new Map<string, Set<string>>();
  for (const control of catalog.tree.controls) {
    if (isOutsideRoot(control.path)) continue; // no folder of the tree
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
    const stat = statIfExists(dir.path === '' ? root : prefix + dir.path);
    if (!stat?.isDirectory()) continue; // gone: its catalogued files fail their stat below
    dirs.push({ path: dir.path, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs });
    if (stat.mtimeMs === dir.mtimeMs && stat.ctimeMs === dir.ctimeMs) continue;
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
    const ignoreNames = new Set(names.filter((entry) => !entry.isDir && isNestedIgnoreName(entry.name)).map((entry) => entry.name));
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
      const fileStat = statIfExists(prefix + rel);
      if (!fileStat) continue; // removed again while we looked
      changed.push({ path: rel, ...stampOf(fileStat) });
      added++;
    }
  }
  const removed: string[] = [];
  let modified = 0;
  let unchanged = 0;
  for (let i = 0; i < catalog.count; i++) {
    const path = catalog.path(i);
    const stat = statIfExists(prefix + path);
    if (!stat?.isFile()) {
      removed.push(path);
    } else if (!sameStamp(stampOf(stat), catalog.stamp(i))) {
      changed.push({ path, ...stampOf(stat) });
      modified++;
    } else unchanged++;
  }
  changed.sort(byPath);
  dirs.sort(byPath);
  controls.sort(byPath);
  return { changed, removed, added, modified, unchanged, tree: { dirs, controls }, errors, how: 'stat' };
}

/** From this many catalogued files on, asking git is cheaper than stat-ing every file (measured: see docs/design.md). */
export const GIT_MIN_FILES = 25_000;

/** What git says about the working tree against a commit: paths that differ, and untracked ones. */
export interface GitView {
  /** Paths (relative to the root) whose working-tree content differs from the commit, or that are untracked and not ignored. */
  readonly dirty: string[];
}

/**
 * Ask git which files differ from `commit` (`git diff --name-only`, staged and unstaged, plus
 * untracked files that are not ignored), relative to the root. Undefined when git cannot answer
 * here, or when the answer involves a folder (a submodule or a nested repository): git does not
 * see inside those, so stats must.
 */
export function gitDirty(root: string, commit: string): GitView | undefined {
  const changed = gitPaths(root, ['diff', '--name-only', '-z', '--no-renames', '--relative', commit]);
  if (!changed) return undefined;
  const untracked = gitPaths(root, ['ls-files', '-z', '--others', '--exclude-standard']);
  if (!untracked) return undefined;
  const dirty = [...new Set([...changed, ...untracked])].sort();
  if (dirty.some((path) => path.endsWith('/') || isDirectory(root, path))) return undefined;
  return { dirty };
}

function isDirectory(root: string, path: string): boolean {
  return statIfExists(join(root, path))?.isDirectory() ?? false;
}

/**
 * Find what changed since a generation by asking git instead of stat-ing every file: only paths
 * git reports as differing from the indexed commit — plus those that differed when the
 * generation was synced (they may have been reverted since) — are stat-ed and compared. Folders
 * are stat-ed to record their mtimes (a later check by stats stays exact). Undefined when git
 * cannot answer or an ignore file changed (then stats or a full walk decide).
 */
export function gitChanges(scope: RepoScope, catalog: Catalog, commit: string): { changes: Changes; dirtyNow: string[] } | undefined {
  const root = scope.root;
  const prefix = root.endsWith(sep) ? root : root + sep;
  if (catalog.gitDirty === null) return undefined;
  if (!controlsUnchanged(scope, catalog)) return undefined;
  const view = gitDirty(root, commit);
  if (!view) return undefined;
  const candidates = [...new Set([...view.dirty, ...catalog.gitDirty])].sort();
  const changed: Candidate[] = [];
  const removed: string[] = [];
  let added = 0;
  let modified = 0;
  const newDirs = new Set<string>();
  const knownDirs = new Set(catalog.tree.dirs.map((dir) => dir.path));
  for (const path of candidates) {
    const at = catalog.find(path);
    const stat = statIfExists(prefix + path);
    if (at >= 0) {
      if (!stat?.isFile()) removed.push(path);
      else if (!sameStamp(stampOf(stat), catalog.stamp(at))) {
        changed.push({ path, ...stampOf(stat) });
        modified++;
      }
    } else if (stat?.isFile() && scope.includesFile(path)) {
      changed.push({ path, ...stampOf(stat) });
      added++;
      for (let dir = parentOf(path); dir !== '' && !knownDirs.has(dir); dir = parentOf(dir)) newDirs.add(dir);
    }
  }
  const dirs: WalkedDir[] = [];
  for (const dir of [...catalog.tree.dirs.map((d) => d.path), ...newDirs]) {
    const stat = statIfExists(dir === '' ? root : prefix + dir);
    if (stat?.isDirectory()) dirs.push({ path: dir, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs });
  }
  dirs.sort(byPath);
  const changes: Changes = {
    changed,
    removed,
    added,
    modified,
    unchanged: catalog.count - modified - removed.length,
    tree: { dirs, controls: catalog.tree.controls },
    errors: [],
    how: 'git',
  };
  return { changes, dirtyNow: view.dirty };
}

/** Which way a sync of this catalog finds changes: git when configured, or when the tree is large enough that git is cheaper. */
export function usesGit(mode: 'auto' | 'stat' | 'git', catalogSize: number, indexedCommit: string | null | undefined): boolean {
  if (!indexedCommit || mode === 'stat') return false;
  return mode === 'git' || catalogSize >= GIT_MIN_FILES;
}

/**
 * The changes since a generation, the cheapest exact way: git where `usesGit` says so and git can
 * answer, else stats of the catalog (with listings of changed folders), else — when an ignore file
 * changed — a full walk. Also returns what git saw dirty, to record for the next sync.
 */
export function detectChanges(
  scope: RepoScope,
  catalog: Catalog,
  mode: 'auto' | 'stat' | 'git',
  indexedCommit: string | null | undefined,
  /** The catalog is a first answer's partial index: only a walk finds the files it has not read yet. */
  partial = false,
): { changes: Changes; dirtyNow: string[] | null } {
  if (partial) return { changes: walkChanges(scope, catalog), dirtyNow: null };
  if (usesGit(mode, catalog.count, indexedCommit)) {
    const viaGit = gitChanges(scope, catalog, indexedCommit!);
    if (viaGit) return viaGit;
  }
  return { changes: statChanges(scope, catalog) ?? walkChanges(scope, catalog), dirtyNow: null };
}
