import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { RepodexError } from './errors.js';

/** Name of the per-repository data directory. */
export const DATA_DIR_NAME = '.repodex';

/** Where the user's repodex files of one repository live (the store decides where its index files go). */
export interface RepoPaths {
  readonly root: string;
  readonly dataDir: string;
  readonly config: string;
  readonly ignore: string;
}

/** Paths for a repository root. */
export function repoPaths(root: string): RepoPaths {
  const dataDir = join(root, DATA_DIR_NAME);
  return { root, dataDir, config: join(dataDir, 'config.json'), ignore: join(dataDir, 'ignore') };
}

/**
 * The repository root for a starting directory: the nearest ancestor holding `.repodex/`, else
 * the nearest holding `.git`, else the directory itself — unless `required`, when finding neither
 * is an error (`repodex search` in `/` or `$HOME` must not index everything below it). An explicit
 * root is used as given.
 */
export function discoverRoot(start: string, explicit?: string, required = false): string {
  if (explicit !== undefined) {
    const root = resolve(explicit);
    if (!isDirectory(root)) throw new RepodexError('ROOT_NOT_FOUND', `--root ${explicit} is not a directory`);
    return root;
  }
  const from = resolve(start);
  const withData = findUp(from, DATA_DIR_NAME);
  if (withData !== undefined) return withData;
  const withGit = findUp(from, '.git');
  if (withGit !== undefined) return withGit;
  if (required) {
    throw new RepodexError(
      'NO_REPOSITORY',
      `no repository found at ${from} or above it (no .git, no .repodex)`,
    );
  }
  return from;
}

/** The nearest of `from` and its ancestors that holds `marker`, or undefined. */
export function findUp(from: string, marker: string): string | undefined {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, marker))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
