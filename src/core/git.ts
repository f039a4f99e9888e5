import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isErrnoException } from './errors.js';

/** HEAD of a git checkout, read from files (no `git` process: status must stay fast). */
export interface GitHead {
  readonly commit: string | null;
  readonly branch: string | null;
}

function readText(path: string, consulted?: string[]): string | undefined {
  consulted?.push(path);
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error)) return undefined;
    throw error;
  }
}

/** The git dir of a root: `.git` itself, or where a `.git` file (worktree, submodule) points. */
function gitDir(root: string, consulted?: string[]): string | undefined {
  const dotGit = join(root, '.git');
  const asFile = readText(dotGit, consulted);
  if (asFile !== undefined) {
    const match = /^gitdir:\s*(.+)\s*$/m.exec(asFile);
    return match ? resolve(root, match[1]!) : undefined;
  }
  return readText(join(dotGit, 'HEAD'), consulted) === undefined ? undefined : dotGit;
}

/**
 * HEAD commit and branch, or undefined outside a git repository. Every path read or looked for is
 * added to `consulted` (for FileMemo).
 */
export function readGitHead(root: string, consulted?: string[]): GitHead | undefined {
  const dir = gitDir(root, consulted);
  if (!dir) return undefined;
  const head = readText(join(dir, 'HEAD'), consulted)?.trim();
  if (!head) return undefined;
  if (!head.startsWith('ref:')) return { commit: head, branch: null };
  const ref = head.slice(4).trim();
  const branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref;
  const commonDir = readText(join(dir, 'commondir'), consulted)?.trim();
  const refDirs = commonDir ? [dir, resolve(dir, commonDir)] : [dir];
  for (const refDir of refDirs) {
    const loose = readText(join(refDir, ref), consulted)?.trim();
    if (loose) return { commit: loose, branch };
    const packed = readText(join(refDir, 'packed-refs'), consulted);
    const line = packed?.split('\n').find((l) => l.endsWith(` ${ref}`));
    if (line) return { commit: line.slice(0, line.indexOf(' ')), branch };
  }
  return { commit: null, branch }; // a branch with no commits yet
}
