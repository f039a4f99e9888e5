import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { gitExcludes, parseGitConfig } from './git-config.js';

/** A fake git repository (only what gitExcludes reads) and a home folder, with no system config. */
function setup(): { root: string; home: string; env: Record<string, string> } {
  const base = tempDir();
  const root = join(base, 'repo');
  const home = join(base, 'home');
  mkdirSync(join(root, '.git', 'info'), { recursive: true });
  mkdirSync(home);
  writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  return { root, home, env: { HOME: home, GIT_CONFIG_NOSYSTEM: '1' } };
}

describe('parseGitConfig', () => {
  it('reads sections, subsections, quoting, escapes, comments and continuations as git does', () => {
    const entries = parseGitConfig(
      [
        '# comment',
        '[Core]',
        '\texcludesFile = "~/my ignore" ; trailing comment',
        '  bare',
        '[remote "origin"]',
        '  url = x # comment',
        '[core.sub]',
        '  key = a\\"b\\\\c',
        '[include] path = other.inc',
        '[alias]',
        '  long = one \\',
        '    two',
      ].join('\n'),
    );
    expect(entries).toEqual([
      { section: 'core', subsection: undefined, key: 'excludesfile', value: '~/my ignore' },
      { section: 'core', subsection: undefined, key: 'bare', value: 'true' },
      { section: 'remote', subsection: 'origin', key: 'url', value: 'x' },
      { section: 'core', subsection: 'sub', key: 'key', value: 'a"b\\c' },
      { section: 'include', subsection: undefined, key: 'path', value: 'other.inc' },
      { section: 'alias', subsection: undefined, key: 'long', value: 'one     two' },
    ]);
  });
});

describe('gitExcludes', () => {
  it('finds nothing outside a git repository', () => {
    const root = tempDir();
    expect(gitExcludes(root, { HOME: root, GIT_CONFIG_NOSYSTEM: '1' })).toMatchObject({ global: undefined, infoExclude: undefined, consulted: [] });
  });

  it('defaults core.excludesFile to $XDG_CONFIG_HOME/git/ignore, else ~/.config/git/ignore, and records what it consulted', () => {
    const { root, home, env } = setup();
    const found = gitExcludes(root, env);
    expect(found.global).toBe(join(home, '.config', 'git', 'ignore'));
    expect(found.infoExclude).toBe(join(root, '.git', 'info', 'exclude'));
    expect(found.consulted).toEqual([
      join(home, '.config', 'git', 'config'),
      join(home, '.gitconfig'),
      join(root, '.git', 'config'),
      join(home, '.config', 'git', 'ignore'),
      join(root, '.git', 'info', 'exclude'),
    ]);
    expect(gitExcludes(root, { ...env, XDG_CONFIG_HOME: join(home, 'xdg') }).global).toBe(join(home, 'xdg', 'git', 'ignore'));
  });

  it('reads core.excludesFile from global config (with ~ expanded) and lets the repository config override it', () => {
    const { root, home, env } = setup();
    writeFileSync(join(home, '.gitconfig'), '[core]\n\texcludesfile = ~/.global-ignore\n');
    expect(gitExcludes(root, env).global).toBe(join(home, '.global-ignore'));
    writeFileSync(join(root, '.git', 'config'), '[core]\n\texcludesFile = /elsewhere/ignore\n');
    expect(gitExcludes(root, env).global).toBe('/elsewhere/ignore');
    // An empty value turns the global excludes file off.
    writeFileSync(join(root, '.git', 'config'), '[core]\n\texcludesFile =\n');
    expect(gitExcludes(root, env).global).toBeUndefined();
  });

  it('follows [include] path (relative to the including file) and GIT_CONFIG_GLOBAL', () => {
    const { root, home, env } = setup();
    mkdirSync(join(home, 'dotfiles'));
    writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = dotfiles/git.inc\n');
    writeFileSync(join(home, 'dotfiles', 'git.inc'), '[core]\n\texcludesFile = ~/from-include\n[include]\n\tpath = ../.gitconfig\n');
    const found = gitExcludes(root, env);
    expect(found.global).toBe(join(home, 'from-include'));
    expect(found.consulted).toContain(join(home, 'dotfiles', 'git.inc'));
    writeFileSync(join(home, 'alt.gitconfig'), '[core]\n\texcludesFile = ~/alt-ignore\n');
    expect(gitExcludes(root, { ...env, GIT_CONFIG_GLOBAL: join(home, 'alt.gitconfig') }).global).toBe(join(home, 'alt-ignore'));
  });

  it('uses the common git dir of a worktree for info/exclude and config', () => {
    const { root: main, env } = setup();
    const worktreeGit = join(main, '.git', 'worktrees', 'wt');
    mkdirSync(worktreeGit, { recursive: true });
    writeFileSync(join(worktreeGit, 'HEAD'), 'ref: refs/heads/feature\n');
    writeFileSync(join(worktreeGit, 'commondir'), '../..\n');
    writeFileSync(join(main, '.git', 'config'), '[core]\n\texcludesFile = /shared/ignore\n');
    const worktree = tempDir();
    writeFileSync(join(worktree, '.git'), `gitdir: ${worktreeGit}\n`);
    const found = gitExcludes(worktree, env);
    expect(found.infoExclude).toBe(join(main, '.git', 'info', 'exclude'));
    expect(found.global).toBe('/shared/ignore');
  });
});
