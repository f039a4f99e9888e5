import { isAbsolute, join, relative, sep } from 'node:path';
import type { Config } from '../core/config.js';
import { includedExtensions } from '../core/config.js';
import { FileMemo } from '../core/file-memo.js';
import { type GitEnv, gitExcludes } from '../core/git-config.js';
import { DATA_DIR_NAME } from '../core/paths.js';
import type { Denylist } from '../safety/denylist.js';
import { NESTED_IGNORE_FILES, SKIP_DIRS, SKIP_FILES, type RuleLayer, isIgnored, isNestedIgnoreName, layerFromPatterns, readGitExcludeFile, readIgnoreFile } from './ignore-rules.js';
import { extensionOf } from './language.js';

/**
 * A file outside the walk that shapes the scope: `path` is how the index records it (relative to
 * the root when inside it, else absolute), `absolute` where to stat it.
 */
export interface RootControl {
  readonly path: string;
  readonly absolute: string;
}

/** True for a recorded control path outside the root (recorded absolute). */
export function isOutsideRoot(path: string): boolean {
  return isAbsolute(path);
}

/** Where a recorded control file is: recorded paths are root-relative, or absolute when outside the root. */
export function controlLocation(root: string, path: string): string {
  return isOutsideRoot(path) ? path : join(root, path);
}

const DECLARATION_FILE = /\.d\.[mc]?ts$/i;

/** The parent folder of a relative path (`''` for the root's children). */
export function parentOf(rel: string): string {
  const slash = rel.lastIndexOf('/');
  return slash < 0 ? '' : rel.slice(0, slash);
}

function nameOf(rel: string): string {
  return rel.slice(rel.lastIndexOf('/') + 1);
}

/** How the index records a control file at `absolute`: relative to `root` inside it, else absolute. */
function recordedPath(root: string, absolute: string): string {
  const rel = relative(root, absolute);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? absolute : rel.split(sep).join('/');
}

/** Git's exclude files of a root as rule layers (lowest priority first), and the files behind them. */
interface GitRoot {
  readonly layers: readonly RuleLayer[];
  readonly controls: readonly RootControl[];
}

/**
 * Roots whose git exclude layers are kept, least recently used dropped first: a team server
 * serves many repositories, each checked on every request (a memo is a few rule layers).
 */
const MAX_GIT_ROOTS = 1024;
const gitRoots = new Map<string, FileMemo<GitRoot>>();

/**
 * Git's exclude layers for `root`, read again only when one of the files behind them changed:
 * every search checks freshness through a new RepoScope, and finding and parsing git's config
 * files costs more than the stats that prove them unchanged.
 */
function gitRoot(root: string, env: GitEnv): GitRoot {
  const key = [root, env.HOME, env.XDG_CONFIG_HOME, env.GIT_CONFIG_GLOBAL, env.GIT_CONFIG_SYSTEM, env.GIT_CONFIG_NOSYSTEM].join('\0');
  let memo = gitRoots.get(key);
  if (memo) {
    // Most recently used last: the first key is the one to drop.
    gitRoots.delete(key);
    gitRoots.set(key, memo);
  } else {
    if (gitRoots.size >= MAX_GIT_ROOTS) gitRoots.delete(gitRoots.keys().next().value!);
    memo = new FileMemo((consulted) => {
      const excludes = gitExcludes(root, env);
      consulted.push(...excludes.located, ...excludes.consulted);
      // Lowest priority first, as git applies them: core.excludesFile, then info/exclude.
      const layers: RuleLayer[] = [];
      for (const file of [excludes.global, excludes.infoExclude]) {
        const layer = file === undefined ? undefined : readGitExcludeFile(file, recordedPath(root, file));
        if (layer) layers.push(layer);
      }
      return { layers, controls: excludes.consulted.map((absolute) => ({ path: recordedPath(root, absolute), absolute })) };
    });
    gitRoots.set(key, memo);
  }
  return memo.get();
}

/**
 * Which paths under a root the index covers, decidable for any single path: built-in skip
 * folders and files, nested `.gitignore`/`.ignore` (evaluated as git does: deeper and later rules
 * win, `!` re-includes), git's `core.excludesFile` and `info/exclude` (in a git repository),
 * `.repodex/ignore`, config `exclude`, the denylist, the extension filter and `.d.ts`. The walk,
 * incremental change detection and the watcher all ask this one object, so they can never
 * disagree. Ignore files are read once per folder.
 */
export class RepoScope {
  private readonly extensions: ReadonlySet<string>;
  /** Git-style layers (info/exclude, then nested ignore files) in force inside each folder. */
  private readonly gitLayers = new Map<string, readonly RuleLayer[]>();
  /** The user's repodex rules, evaluated after every git layer. */
  private readonly repodexLayers: readonly RuleLayer[];
  private readonly deciding = new Map<string, readonly RuleLayer[]>();
  private readonly included = new Map<string, boolean>();
  /**
   * The files outside the walk whose change changes the scope (recorded even when absent): git's
   * config files and exclude files, and `.repodex/ignore`. Nested ignore files are found by the walk.
   */
  readonly rootControls: readonly RootControl[];

  /** `env` locates git's global config and excludes file (HOME, XDG_CONFIG_HOME, GIT_CONFIG_*). */
  constructor(
    readonly root: string,
    readonly config: Config,
    readonly denylist: Denylist,
    env: GitEnv = process.env,
  ) {
    this.extensions = includedExtensions(config);
    const git = gitRoot(root, env);
    this.gitLayers.set('\0root', git.layers);
    this.rootControls = [...git.controls, { path: `${DATA_DIR_NAME}/ignore`, absolute: join(root, DATA_DIR_NAME, 'ignore') }];
    const repodex: RuleLayer[] = [];
    const repodexIgnore = readIgnoreFile(join(root, DATA_DIR_NAME, 'ignore'), '', `${DATA_DIR_NAME}/ignore`);
    if (repodexIgnore) repodex.push(repodexIgnore);
    if (config.exclude.length > 0) repodex.push(layerFromPatterns(config.exclude, '', 'config.json "exclude"'));
    this.repodexLayers = repodex;
  }

  /**
   * The git-style layers in force for entries of folder `dir`: its parent's, plus its own ignore
   * files. `names`, when the caller has listed the folder, says which ignore files exist (no
   * failed reads); otherwise each is tried.
   */
  private layersIn(dir: string, names?: ReadonlySet<string>): readonly RuleLayer[] {
    const cached = this.gitLayers.get(dir);
    if (cached) return cached;
    const inherited = dir === '' ? this.gitLayers.get('\0root')! : this.layersIn(parentOf(dir));
    const own: RuleLayer[] = [];
    for (const name of NESTED_IGNORE_FILES) {
      if (names && !names.has(name)) continue;
      const rel = dir === '' ? name : `${dir}/${name}`;
      const layer = readIgnoreFile(join(this.root, rel), dir, rel);
      if (layer) own.push(layer);
    }
    const layers = own.length === 0 ? inherited : [...inherited, ...own];
    this.gitLayers.set(dir, layers);
    return layers;
  }

  /** Prepare folder `dir` for deciding its entries, given the names it holds (the walk lists it anyway). */
  enter(dir: string, names: ReadonlySet<string>): void {
    this.layersIn(dir, names);
  }

  /** Every layer deciding entries of `dir`: git-style ones, then the user's repodex rules (evaluated in one pass, so a later `!` re-includes). */
  private decidingLayers(dir: string): readonly RuleLayer[] {
    let layers = this.deciding.get(dir);
    if (!layers) {
      const git = this.layersIn(dir);
      layers = this.repodexLayers.length === 0 ? git : [...git, ...this.repodexLayers];
      this.deciding.set(dir, layers);
    }
    return layers;
  }

  private ignored(rel: string, isDir: boolean): boolean {
    return isIgnored(this.decidingLayers(parentOf(rel)), rel, isDir);
  }

  /** True when the walk descends into folder `rel` (and into every folder above it). */
  includesDir(rel: string): boolean {
    if (rel === '') return true;
    const known = this.included.get(rel);
    if (known !== undefined) return known;
    const parent = parentOf(rel);
    const result = this.includesDir(parent) && !SKIP_DIRS.has(nameOf(rel)) && !this.denylist.matches(rel) && !this.ignored(rel, true);
    this.included.set(rel, result);
    return result;
  }

  /** True when file `rel` is a candidate for the index (it may still be skipped for its content). */
  includesFile(rel: string): boolean {
    const name = nameOf(rel);
    if (SKIP_FILES.has(name) || !this.extensions.has(extensionOf(name))) return false;
    if (!this.config.include_declaration_files && DECLARATION_FILE.test(name)) return false;
    return this.includesDir(parentOf(rel)) && !this.denylist.matches(rel) && !this.ignored(rel, false);
  }

  /**
   * True when `rel` (a file, or a folder when `isDir`) would be walked but for its names: it stands
   * in a folder the walk enters, no ignore rule and no built-in skip leaves it out, but the
   * denylist does (a secret file name, or a name shaped like a credential). What `files
   * --blocked` lists, whatever the extension filter says: a withheld `*.pem` fixture is worth
   * knowing about.
   */
  leftOutByName(rel: string, isDir: boolean): boolean {
    const name = nameOf(rel);
    if ((isDir ? SKIP_DIRS : SKIP_FILES).has(name) || !this.includesDir(parentOf(rel))) return false;
    return this.denylist.matches(rel) && !this.ignored(rel, isDir);
  }

  /** True when a change to `rel` changes what the scope includes (an ignore file or the config). */
  isControl(rel: string): boolean {
    return isNestedIgnoreName(nameOf(rel)) || this.rootControls.some((control) => control.path === rel) || rel === `${DATA_DIR_NAME}/config.json`;
  }
}
