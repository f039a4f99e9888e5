import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../core/config.js';
import { includedExtensions } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import { repoPaths } from '../core/paths.js';
import type { Denylist } from '../safety/denylist.js';
import { NESTED_IGNORE_FILES, SKIP_DIRS, SKIP_FILES, isIgnored, layerFromPatterns, readIgnoreFile, type RuleLayer } from './ignore-rules.js';
import { extensionOf } from './language.js';

/** A file the walk selected for indexing, with the stat that dirty checks compare. */
export interface Candidate {
  /** Repository-relative path with `/` separators. */
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** A problem with one path that did not stop the walk. */
export interface SoftError {
  readonly path: string;
  readonly reason: string;
}

/** A folder the walk listed, with its mtime: unchanged mtimes mean unchanged listings. */
export interface WalkedDir {
  readonly path: string;
  readonly mtimeMs: number;
}

/** An ignore file that shaped the walk; `size` is -1 when it did not exist. */
export interface ControlFile {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** Everything the walk found: candidates sorted by path, the folders and ignore files behind it, and soft errors. */
export interface WalkResult {
  readonly files: Candidate[];
  readonly dirs: WalkedDir[];
  readonly controls: ControlFile[];
  readonly errors: SoftError[];
}

/** Ignore files outside the walked tree that are always consulted (recorded even when absent). */
export const ROOT_CONTROL_FILES = ['.git/info/exclude', '.repodex/ignore'] as const;

const DECLARATION_FILE = /\.d\.[mc]?ts$/i;

/**
 * Walk a repository the way the index sees it: built-in skip folders, nested `.gitignore` and
 * `.ignore`, `.git/info/exclude`, `.repodex/ignore`, config `exclude`, the denylist and the
 * extension filter. Symlinks are never followed, so the walk cannot leave the root.
 */
export function walkRepository(root: string, config: Config, denylist: Denylist): WalkResult {
  const paths = repoPaths(root);
  const extensions = includedExtensions(config);
  const gitLayers: RuleLayer[] = [];
  const infoExclude = readIgnoreFile(join(root, '.git', 'info', 'exclude'), '', '.git/info/exclude');
  if (infoExclude) gitLayers.push(infoExclude);
  // Highest priority, evaluated after every .gitignore: the user's own repodex rules.
  const repodexLayers: RuleLayer[] = [];
  const repodexIgnore = readIgnoreFile(paths.ignore, '', '.repodex/ignore');
  if (repodexIgnore) repodexLayers.push(repodexIgnore);
  if (config.exclude.length > 0) repodexLayers.push(layerFromPatterns(config.exclude, '', 'config.json "exclude"'));

  const files: Candidate[] = [];
  const dirs: WalkedDir[] = [];
  const controls: ControlFile[] = ROOT_CONTROL_FILES.map((rel) => controlStat(join(root, rel), rel));
  const errors: SoftError[] = [];

  const visit = (dirAbs: string, dirRel: string): void => {
    // Stat before listing: a change during the listing then shows up as a newer mtime later.
    const dirStat = statOrError(dirAbs, dirRel || '.', errors);
    if (dirStat) dirs.push({ path: dirRel, mtimeMs: dirStat.mtimeMs });
    let entries: Dirent[];
    try {
      entries = readdirSync(dirAbs, { withFileTypes: true });
    } catch (error) {
      errors.push({ path: dirRel || '.', reason: `cannot list folder: ${errorMessage(error)}` });
      return;
    }
    const added: number = pushNestedLayers(entries, dirAbs, dirRel, gitLayers, controls);
    const layers = repodexLayers.length > 0 ? [...gitLayers, ...repodexLayers] : gitLayers;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
      // Symlinks are never followed, neither to files nor to folders (seed 000 §3.2).
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (SKIP_DIRS.has(entry.name) || denylist.matches(rel) || isIgnored(layers, rel, true)) continue;
        visit(join(dirAbs, entry.name), rel);
        continue;
      }
      if (!entry.isFile()) continue;
      if (SKIP_FILES.has(entry.name) || !extensions.has(extensionOf(entry.name))) continue;
      if (!config.include_declaration_files && DECLARATION_FILE.test(entry.name)) continue;
      if (denylist.matches(rel) || isIgnored(layers, rel, false)) continue;
      const stat = statOrError(join(dirAbs, entry.name), rel, errors);
      if (stat) files.push({ path: rel, size: stat.size, mtimeMs: stat.mtimeMs });
    }
    gitLayers.length -= added;
  };

  visit(root, '');
  const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  files.sort(byPath);
  dirs.sort(byPath);
  controls.sort(byPath);
  return { files, dirs, controls, errors };
}

function controlStat(absolute: string, rel: string): ControlFile {
  const stat = statSync(absolute, { throwIfNoEntry: false });
  return stat ? { path: rel, size: stat.size, mtimeMs: stat.mtimeMs } : { path: rel, size: -1, mtimeMs: 0 };
}

function pushNestedLayers(entries: readonly Dirent[], dirAbs: string, dirRel: string, layers: RuleLayer[], controls: ControlFile[]): number {
  let added = 0;
  for (const name of NESTED_IGNORE_FILES) {
    if (!entries.some((entry) => entry.name === name && !entry.isDirectory())) continue;
    const rel = dirRel === '' ? name : `${dirRel}/${name}`;
    controls.push(controlStat(join(dirAbs, name), rel));
    const layer = readIgnoreFile(join(dirAbs, name), dirRel, rel);
    if (layer) {
      layers.push(layer);
      added++;
    }
  }
  return added;
}

function statOrError(absolute: string, rel: string, errors: SoftError[]): { size: number; mtimeMs: number } | undefined {
  try {
    const stat = statSync(absolute);
    return { size: stat.size, mtimeMs: stat.mtimeMs };
  } catch (error) {
    errors.push({ path: rel, reason: `cannot stat: ${errorMessage(error)}` });
    return undefined;
  }
}
