import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { Denylist } from '../safety/denylist.js';
import { isNestedIgnoreName } from './ignore-rules.js';
import { RepoScope } from './scope.js';
import { type FileStamp, stampOf, statIfExists } from '../core/stat.js';

/** A file the walk selected for indexing, with the stat that dirty checks compare. */
export interface Candidate extends FileStamp {
  /** Repository-relative path with `/` separators. */
  readonly path: string;
}

/** A problem with one path that did not stop the walk. */
export interface SoftError {
  readonly path: string;
  readonly reason: string;
}

/**
 * A folder the walk listed, with its mtime and ctime: unchanged times mean an unchanged listing
 * (adding, removing or renaming an entry moves both; putting the mtime back, as `rsync -a` does
 * after filling a folder, still moves the ctime).
 */
export interface WalkedDir {
  readonly path: string;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/** An ignore or git config file that shaped the walk (see controlLocation); `size` is -1 when it did not exist. */
export interface ControlFile {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/** True when a control file's recorded stat still holds. */
export function sameControl(a: ControlFile, b: ControlFile): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

/** Everything the walk found: candidates sorted by path, the folders and ignore files behind it, and soft errors. */
export interface WalkResult {
  readonly files: Candidate[];
  readonly dirs: WalkedDir[];
  readonly controls: ControlFile[];
  readonly errors: SoftError[];
}

/** Order by path, as every list the index keeps is ordered. */
export const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * Walk a repository the way the index sees it (see RepoScope for the rules). Symlinks are never
 * followed, so the walk cannot leave the root.
 */
export function walkRepository(root: string, config: Config, denylist: Denylist): WalkResult {
  return walkTree(new RepoScope(root, config, denylist), '');
}

/**
 * Walk the folder `from` ('' = the whole root) and everything below it that the scope includes.
 * Folders are listed in name order; each listed folder's mtime and each ignore file's stat are
 * recorded, so a later check can prove "nothing changed" from stats alone.
 */
export function walkTree(scope: RepoScope, from: string): WalkResult {
  const root = scope.root;
  const files: Candidate[] = [];
  const dirs: WalkedDir[] = [];
  const controls: ControlFile[] = from === '' ? scope.rootControls.map((control) => controlStat(control.absolute, control.path)) : [];
  const errors: SoftError[] = [];

  const visit = (dirRel: string): void => {
    const dirAbs = dirRel === '' ? root : join(root, dirRel);
    // Stat before listing: a change during the listing then shows up as a newer mtime later.
    const dirStat = statOrError(dirAbs, dirRel || '.', errors);
    if (dirStat) dirs.push({ path: dirRel, mtimeMs: dirStat.mtimeMs, ctimeMs: dirStat.ctimeMs });
    let entries: Dirent[];
    try {
      entries = readdirSync(dirAbs, { withFileTypes: true });
    } catch (error) {
      errors.push({ path: dirRel || '.', reason: `cannot list folder: ${errorMessage(error)}` });
      return;
    }
    const ignoreFiles = new Set(entries.filter((entry) => !entry.isDirectory() && isNestedIgnoreName(entry.name)).map((entry) => entry.name));
    for (const name of ignoreFiles) {
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      controls.push(controlStat(join(dirAbs, name), rel));
    }
    scope.enter(dirRel, ignoreFiles);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
      // Symlinks are never followed, neither to files nor to folders (seed 000 §3.2).
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (scope.includesDir(rel)) visit(rel);
        continue;
      }
      if (!entry.isFile() || !scope.includesFile(rel)) continue;
      const stat = statOrError(join(dirAbs, entry.name), rel, errors);
      if (stat) files.push({ path: rel, ...stat });
    }
  };

  if (scope.includesDir(from)) visit(from);
  files.sort(byPath);
  dirs.sort(byPath);
  controls.sort(byPath);
  return { files, dirs, controls, errors };
}

/** A file or folder the walk leaves out for its names (`RepoScope.leftOutByName`). */
export interface LeftOut {
  readonly path: string;
  readonly isDir: boolean;
}

/**
 * The files and folders under the root that the scope leaves out only for their names (a secret
 * file name, a name shaped like a credential), in path order; a folder left out is one entry,
 * not walked. A walk of its own, for `files --blocked`: the index walk never looks at them.
 */
export function walkLeftOut(scope: RepoScope): LeftOut[] {
  const out: LeftOut[] = [];
  const visit = (dirRel: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dirRel === '' ? scope.root : join(scope.root, dirRel), { withFileTypes: true });
    } catch {
      return; // a folder that cannot be listed holds nothing this walk could name (the index walk reports it)
    }
    scope.enter(dirRel, new Set(entries.filter((entry) => !entry.isDirectory() && isNestedIgnoreName(entry.name)).map((entry) => entry.name)));
    for (const entry of entries) {
      if (entry.isSymbolicLink() || (!entry.isDirectory() && !entry.isFile())) continue;
      const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
      if (entry.isDirectory() && scope.includesDir(rel)) visit(rel);
      else if (scope.leftOutByName(rel, entry.isDirectory())) out.push({ path: rel, isDir: entry.isDirectory() });
    }
  };
  visit('');
  return out.sort(byPath);
}

/** The stat an ignore file is recorded with (size -1 when it does not exist). */
export function controlStat(absolute: string, rel: string): ControlFile {
  const stat = statIfExists(absolute);
  return stat ? { path: rel, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs } : { path: rel, size: -1, mtimeMs: 0, ctimeMs: 0 };
}

function statOrError(absolute: string, rel: string, errors: SoftError[]): FileStamp | undefined {
  try {
    return stampOf(statSync(absolute));
  } catch (error) {
    errors.push({ path: rel, reason: `cannot stat: ${errorMessage(error)}` });
    return undefined;
  }
}
