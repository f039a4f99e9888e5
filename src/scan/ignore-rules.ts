import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import ignore, { type Ignore } from 'ignore';
import { RepodexError, errorMessage, isErrnoException, isRepodexError } from '../core/errors.js';
import { readAtMost, readRegularFile } from '../core/open-regular.js';

/** Folders never walked (SPEC §2): version control, dependencies, build output, caches. */
export const SKIP_DIRS: ReadonlySet<string> = new Set([
  '.git', '.hg', '.svn', '.repodex', 'node_modules', 'bower_components', 'dist', 'build', 'target', 'out',
  '.venv', 'venv', '__pycache__', '.mypy_cache', '.pytest_cache', '.tox', '.gradle', '.idea', '.vscode',
  '.next', '.nuxt', '.turbo', '.cache', 'coverage', '.yarn',
]);

/**
 * Files never indexed: dependency lock files are generated, huge and full of package names that
 * match every query about dependencies, and nobody edits them by hand.
 */
export const SKIP_FILES: ReadonlySet<string> = new Set([
  'package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock', 'bun.lock', 'composer.lock',
  'Cargo.lock', 'Gemfile.lock', 'poetry.lock', 'Pipfile.lock', 'uv.lock', 'go.sum', 'flake.lock', 'deno.lock',
]);

/** Per-folder ignore file names, read at every level of the walk (nearest wins). */
export const NESTED_IGNORE_FILES = ['.gitignore', '.ignore'] as const;

/** True for the name of a per-folder ignore file (the last part of a path). */
export function isNestedIgnoreName(name: string): boolean {
  return (NESTED_IGNORE_FILES as readonly string[]).includes(name);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One layer of gitignore-style rules, anchored at a folder (`''` = the root). */
export interface RuleLayer {
  readonly base: string;
  readonly rules: Ignore;
  readonly source: string;
}

/** Ignore files larger than this are refused (no real one comes close). */
const MAX_IGNORE_FILE_BYTES = 8 << 20;

/**
 * Read an ignore file of the tree (or `.repodex/ignore`) into a rule layer. Missing file, a folder
 * of that name, or a symlink (never followed: git ≥ 2.32 does not follow a symlinked `.gitignore`
 * either, and one could point anywhere) → undefined. A file that exists but cannot be read, is
 * not a regular file (a FIFO would block the read forever), is too large or is not text is an
 * error the user must see, not something to skip silently. At most MAX_IGNORE_FILE_BYTES are
 * read, whatever the file's size claims (`/proc` files claim 0).
 */
export function readIgnoreFile(absolutePath: string, base: string, displayPath: string): RuleLayer | undefined {
  let fd: number;
  try {
    fd = openSync(absolutePath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR') || isErrnoException(error, 'ELOOP')) return undefined;
    throw new RepodexError('IGNORE_UNREADABLE', `cannot read ${displayPath}: ${errorMessage(error)}`);
  }
  let bytes: Buffer;
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return undefined;
    if (!stat.isFile()) throw new RepodexError('IGNORE_UNREADABLE', `${displayPath} is not a regular file`);
    bytes = readAtMost(fd, MAX_IGNORE_FILE_BYTES + 1);
    if (bytes.length > MAX_IGNORE_FILE_BYTES) throw new RepodexError('IGNORE_UNREADABLE', `${displayPath} is larger than ${MAX_IGNORE_FILE_BYTES >> 20} MB`);
  } catch (error) {
    if (isRepodexError(error)) throw error;
    throw new RepodexError('IGNORE_UNREADABLE', `cannot read ${displayPath}: ${errorMessage(error)}`);
  } finally {
    closeSync(fd);
  }
  return parseIgnoreText(bytes, base, displayPath);
}

/**
 * Read one of git's own exclude files (`core.excludesFile`, `info/exclude`) into a rule layer, as
 * git reads them: one that is missing, unreadable, not a regular file (`/dev/null` is the usual
 * way to turn the global one off) or larger than MAX_IGNORE_FILE_BYTES applies no rules, and
 * bytes that are not UTF-8 are read as far as they go. Symlinks are followed (dotfiles often are).
 */
export function readGitExcludeFile(absolutePath: string, displayPath: string): RuleLayer | undefined {
  const bytes = readRegularFile(absolutePath, MAX_IGNORE_FILE_BYTES);
  if (!bytes || bytes.includes(0)) return undefined;
  try {
    return layerFromPatterns(lenientUtf8.decode(bytes).split(/\r?\n|\r/), '', displayPath);
  } catch {
    return undefined; // a pattern the matcher cannot compile: git would not apply it either
  }
}

const lenientUtf8 = new TextDecoder('utf-8');

/** Parse ignore-file bytes; NUL bytes or invalid UTF-8 mean the file is not an ignore file at all. */
export function parseIgnoreText(bytes: Uint8Array, base: string, displayPath: string): RuleLayer {
  let text: string;
  try {
    if (bytes.includes(0)) throw new Error('contains NUL bytes');
    text = utf8.decode(bytes);
  } catch (error) {
    throw new RepodexError('IGNORE_UNREADABLE', `${displayPath} is not a text ignore file (${errorMessage(error)})`);
  }
  return layerFromPatterns(text.split(/\r?\n|\r/), base, displayPath);
}

/** A rule layer from gitignore-syntax patterns. */
export function layerFromPatterns(patterns: readonly string[], base: string, source: string): RuleLayer {
  const rules = ignore({ allowRelativePaths: true });
  try {
    rules.add(patterns as string[]);
  } catch (error) {
    throw new RepodexError('IGNORE_UNREADABLE', `${source} has a pattern that cannot be parsed: ${errorMessage(error)}`);
  }
  return { base, rules, source };
}

/**
 * Evaluate layers in order, as git does: a later matching rule (deeper folder, or a higher
 * priority source) overrides an earlier one, and `!pattern` re-includes.
 */
export function isIgnored(layers: readonly RuleLayer[], relPath: string, isDir: boolean): boolean {
  let ignored = false;
  for (const layer of layers) {
    let sub: string;
    if (layer.base === '') sub = relPath;
    else if (relPath.startsWith(`${layer.base}/`)) sub = relPath.slice(layer.base.length + 1);
    else continue;
    const result = layer.rules.test(isDir ? `${sub}/` : sub);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}
