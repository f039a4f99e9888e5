import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { gitExcludes, parseGitConfig } from './git-config.js';
import { readRegularText } from './open-regular.js';
import type * as OpenRegular from './open-regular.js';

// Count the files read, to see the bounds on includes hold.
vi.mock('./open-regular.js', async (importOriginal) => {
  const actual = await importOriginal<typeof OpenRegular>();
  return { ...actual, readRegularText: vi.fn(actual.readRegularText) };
});

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
      { section: 'core', subsection: undefined, key: 'excludesfile', value: '~/my ignore', bare: false },
      { section: 'core', subsection: undefined, key: 'bare', value: 'true', bare: true },
      { section: 'remote', subsection: 'origin', key: 'url', value: 'x', bare: false },
      { section: 'core', subsection: 'sub', key: 'key', value: 'a"b\\c', bare: false },
      { section: 'include', subsection: undefined, key: 'path', value: 'other.inc', bare: false },
      { section: 'alias', subsection: undefined, key: 'long', value: 'one     two', bare: false },
    ]);
  });
});

describe('parseGitConfig line continuations, as `git config --get` reads them', () => {
  const value = (text: string): string | undefined => parseGitConfig(text).filter((entry) => entry.key === 'excludesfile').at(-1)?.value;
  it('continues a value only where the value itself ends in an unescaped backslash', () => {
    expect(value('[core]\n\texcludesFile = /a\\\n/b\n')).toBe('/a/b');
    // A comment ending in a backslash ends at its line.
    expect(value('[core]\n# note \\\n\texcludesFile = /a\n')).toBe('/a');
    expect(value('[core]\n\texcludesFile = /b # note \\\n\texcludesFile = /c\n')).toBe('/c');
    // An escaped backslash at the end is a backslash, not a continuation.
    expect(value('[core]\n\texcludesFile = /a\\\\\n\texcludesFile = /b\n')).toBe('/b');
    expect(parseGitConfig('[core]\n\texcludesFile = /a\\\\\n')[0]!.value).toBe('/a\\');
  });

  it('marks a key written without `=` as bare, and rejects blanks inside a section header as git does', () => {
    expect(parseGitConfig('[core]\n\texcludesFile\n')).toEqual([{ section: 'core', subsection: undefined, key: 'excludesfile', value: 'true', bare: true }]);
    expect(parseGitConfig('[ core ]\n\texcludesFile = /x\n')).toEqual([]);
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

  it('reads a config that includes itself many times over in bounded time, and ignores a bare excludesFile', () => {
    const { root, home, env } = setup();
    writeFileSync(join(home, '.gitconfig'), `[core]\n\texcludesFile = ~/kept\n${'[include]\n\tpath = ~/.gitconfig\n'.repeat(6)}[core]\n\texcludesFile\n`);
    const found = gitExcludes(root, env);
    // Read once: a file already on the include chain is not included again (unbounded, 6^10 reads).
    expect(found.consulted.filter((path) => path === join(home, '.gitconfig'))).toHaveLength(1);
    expect(found.global).toBe(join(home, 'kept'));
  });

  it('without HOME there is no global config and no default excludes file, as in git', () => {
    const { root, env } = setup();
    const found = gitExcludes(root, { ...env, HOME: '' });
    expect(found.global).toBeUndefined();
    expect(found.consulted).toEqual([join(root, '.git', 'config'), join(root, '.git', 'info', 'exclude')]);
  });

  it('reads at most 50 config files for one lookup, however the includes fan out', () => {
    const { root, home, env } = setup();
    // Each of 8 files includes every later one: 2^7 paths through them without a cap on reads.
    for (let i = 0; i < 8; i++) {
      const includes = Array.from({ length: 8 - i - 1 }, (_, j) => `[include]\n\tpath = f${i + j + 1}\n`).join('');
      writeFileSync(join(home, `f${i}`), includes);
    }
    writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = f0\n');
    const reads = vi.mocked(readRegularText);
    reads.mockClear();
    gitExcludes(root, env);
    const configReads = reads.mock.calls.filter(([path]) => path.startsWith(home)).length;
    expect(configReads).toBeGreaterThan(40); // the fan-out is real: far more reads than files
    expect(configReads).toBeLessThanOrEqual(50);
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
