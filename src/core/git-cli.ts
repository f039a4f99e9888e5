import { spawnSync } from 'node:child_process';

/** Run git in `cwd`; the NUL-separated paths it prints, or undefined when git is missing or fails. */
export function gitPaths(cwd: string, args: readonly string[]): string[] | undefined {
  const result = spawnSync('git', ['-c', 'core.quotePath=off', ...args], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  if (result.error || result.status !== 0) return undefined;
  return result.stdout.split('\0').filter((path) => path !== '');
}

/** `git config --get` of one key in `cwd`, or undefined. */
export function gitConfig(cwd: string, key: string): string | undefined {
  const result = spawnSync('git', ['config', '--get', key], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return result.status === 0 ? result.stdout.trim() : undefined;
}
