import { join, resolve } from 'node:path';
import { readRegularText } from './open-regular.js';

/** HEAD of a git checkout, read from files (no `git` process: status must stay fast). */
export interface GitHead {
  readonly commit: string | null;
  readonly branch: string | null;
}

/** Git's own files (HEAD, refs, packed-refs, config) are read only up to this size. */
const MAX_GIT_FILE_BYTES = 64 << 20;

/** A small regular file's text (never blocks on a FIFO put in its place); the path is added to `consulted`. */
function readText(path: string, consulted?: string[]): string | undefined {
  consulted?.push(path);
  return readRegularText(path, MAX_GIT_FILE_BYTES);
}

/**
 * The git dirs of a root: `dir` is `.git` itself, or where a `.git` file (worktree, submodule)
 * points; `common` is where a worktree's shared files (config, info/exclude, refs) live, else
 * `dir`. Undefined outside a git repository.
 */
export function gitDirs(root: string, consulted?: string[]): { dir: string; common: string } | undefined {
  const dotGit = join(root, '.git');
  const asFile = readText(dotGit, consulted);
  let dir: string;
  if (asFile !== undefined) {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(asFile);
    if (!match) return undefined;
    dir = resolve(root, match[1]!);
  } else {
    if (readText(join(dotGit, 'HEAD'), consulted) === undefined) return undefined;
    dir = dotGit;
  }
  const commonDir = readText(join(dir, 'commondir'), consulted)?.trim();
  return { dir, common: commonDir ? resolve(dir, commonDir) : dir };
}

/**
 * HEAD commit and branch, or undefined outside a git repository. Every path read or looked for is
 * added to `consulted` (for FileMemo).
 */
export function readGitHead(root: string, consulted?: string[]): GitHead | undefined {
  const dirs = gitDirs(root, consulted);
  if (!dirs) return undefined;
  const { dir, common } = dirs;
  const head = readText(join(dir, 'HEAD'), consulted)?.trim();
  if (!head) return undefined;
  if (!head.startsWith('ref:')) return { commit: head, branch: null };
  const ref = head.slice(4).trim();
  const branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref;
  const refDirs = common === dir ? [dir] : [dir, common];
  for (const refDir of refDirs) {
    const loose = readText(join(refDir, ref), consulted)?.trim();
    if (loose) return { commit: loose, branch };
    const packed = readText(join(refDir, 'packed-refs'), consulted);
    const line = packed?.split('\n').find((l) => l.endsWith(` ${ref}`));
    if (line) return { commit: line.slice(0, line.indexOf(' ')), branch };
  }
  return { commit: null, branch }; // a branch with no commits yet
}
