// Building an earlier commit of repodex to measure against, in the same run (shared by the benchmark scripts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { git, tail } from './lib.mjs';

/** Newest mtime under a folder, to warn when dist/ is older than the sources it was built from. */
export function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The lines of a failed build that say what went wrong (esbuild's `[ERROR]` lines), else its tail. */
function buildError(output) {
  const errors = output.split('\n').filter((line) => /\[ERROR\]|^error:/i.test(line.trim()));
  return errors.length > 0 ? errors[0].trim() : tail(output, 3).replace(/\n/g, ' / ');
}

function unlinkIfPresent(path) {
  try {
    unlinkSync(path);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
}

/**
 * Check out `ref` of the repodex repo into a temporary worktree (outside the repo), reuse the
 * current node_modules and build it. Returns the CLI path and a cleanup, or the reason it failed.
 */
export function prepareBaseline(repo, ref, holder, log) {
  const sha = git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (!sha) return { problem: `${JSON.stringify(ref)} is not a commit in ${repo}` };
  const dir = mkdtempSync(join(os.tmpdir(), 'repodex-bench-baseline-'));
  const worktree = join(dir, 'repodex');
  const modules = join(worktree, 'node_modules');
  let added = false;
  const cleanup = () => {
    if (added) {
      unlinkIfPresent(modules); // the link only, never the shared node_modules
      const removed = spawnSync('git', ['worktree', 'remove', '--force', worktree], { cwd: repo, encoding: 'utf8' });
      if (removed.status !== 0) log(`could not remove the baseline worktree ${worktree}: ${tail(removed.stderr ?? '')}`);
      added = false;
    }
    rmSync(dir, { recursive: true, force: true });
    spawnSync('git', ['worktree', 'prune'], { cwd: repo });
  };
  holder.cleanup = cleanup; // from here on a signal must remove the worktree too
  const add = spawnSync('git', ['worktree', 'add', '--detach', worktree, sha], { cwd: repo, encoding: 'utf8' });
  if (add.status !== 0) {
    cleanup();
    return { sha, problem: `git worktree add failed: ${tail(add.stderr ?? '')}` };
  }
  added = true;
  symlinkSync(join(repo, 'node_modules'), modules, 'dir');
  log(`building ${ref} (${sha.slice(0, 10)}) in ${worktree}`);
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: worktree, encoding: 'utf8' });
  const bin = join(worktree, 'bin', 'repodex.js');
  if (build.error || build.status !== 0) return { sha, cleanup, problem: `build failed (exit ${build.status}): ${buildError(`${build.stdout ?? ''}\n${build.stderr ?? ''}`)}` };
  if (!existsSync(bin)) return { sha, cleanup, problem: 'the build has no bin/repodex.js' };
  return { sha, bin, cleanup };
}
