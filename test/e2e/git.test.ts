import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, PROJECT_ROOT, git, makeRepo, runCli, tempDir } from '../helpers.js';

// Git awareness (seed 001 §2.2, §2.3, §2.5): status reports the indexed commit against HEAD and
// the state, a branch switch flips it to stale and back, search follows, and a switch re-indexes
// only the files that differ (parsing none it has parsed before). Changes found by asking git
// equal changes found by stats.

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
if (!HAS_GIT) console.warn('SKIPPED: git is not installed, so the git-awareness tests cannot run (install git)');

interface Status {
  state: string;
  dirty: boolean;
  reasons: string[];
  git: { indexed_commit: string | null; head: string | null; branch: string | null } | null;
  freshness: { generation: number; indexed_commit: string | null; dirty: boolean };
}
interface Sync {
  mode: string;
  found_by: string;
  files_scanned: number;
  files_cached: number;
  files_removed: number;
  chunks_created: number;
}
interface Search {
  results: { path: string; chunk_id: number }[];
  synced?: Sync;
  freshness: { indexed_commit: string | null; dirty: boolean };
}

const status = (root: string): Status => runCli(['status', '--json', '--root', root]).json<Status>();
const sync = (root: string): Sync => {
  const run = runCli(['sync', '--json', '--root', root]);
  expect(run.code, run.stderr).toBe(0);
  return run.json<Sync>();
};
const search = (root: string, q: string): Search => {
  const run = runCli(['search', q, '--json', '--root', root]);
  expect(run.code, run.stderr).toBe(0);
  return run.json<Search>();
};

function moduleText(name: string, extra = ''): string {
  return `export function ${name}(value: number): number {\n  return value * 2;\n}\n${extra}`;
}

describe.skipIf(!HAS_GIT)('git awareness', () => {
  let root: string;
  let mainCommit: string;
  let featureCommit: string;

  beforeAll(() => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`src/module${i}.ts`] = moduleText(`helperNumber${i}`);
    files['src/shared.ts'] = moduleText('sharedHelper');
    files['src/removed-on-feature.ts'] = moduleText('mainOnlyPelican');
    root = makeRepo(files);
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'main');
    mainCommit = git(root, 'rev-parse', 'HEAD');
    git(root, 'checkout', '-q', '-b', 'feature');
    writeFileSync(join(root, 'src/shared.ts'), moduleText('sharedHelper', 'export const featureOnlyAlbatross = 1;\n'));
    rmSync(join(root, 'src/removed-on-feature.ts'));
    writeFileSync(join(root, 'src/added-on-feature.ts'), moduleText('featureOnlyCormorant'));
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'feature');
    featureCommit = git(root, 'rev-parse', 'HEAD');
    git(root, 'checkout', '-q', 'main');
  });

  it('status: pending before the first sync, ready after it, with the indexed commit and HEAD', () => {
    expect(status(root)).toMatchObject({ state: 'pending', dirty: true, git: { head: mainCommit, branch: 'main', indexed_commit: null } });
    const first = sync(root);
    expect(first.mode).toBe('full');
    // The index lives in .repodex/, which git never sees (.repodex/.gitignore holds `*`).
    expect(git(root, 'status', '--porcelain')).toBe('');
    expect(status(root)).toMatchObject({ state: 'ready', dirty: false, reasons: [], git: { head: mainCommit, indexed_commit: mainCommit, branch: 'main' } });
  });

  it('a branch switch flips status to stale, search follows, and only the differing files are read', () => {
    git(root, 'checkout', '-q', 'feature');
    const stale = status(root);
    expect(stale).toMatchObject({ state: 'stale', dirty: true, git: { head: featureCommit, indexed_commit: mainCommit, branch: 'feature' } });
    expect(stale.reasons.join('\n')).toMatch(/HEAD moved/);
    expect(stale.reasons.join('\n')).toMatch(/3 file\(s\) changed: 1 added, 1 modified, 1 removed/);

    const found = search(root, 'featureOnlyAlbatross');
    expect(found.results[0]?.path).toBe('src/shared.ts');
    expect(found.synced).toMatchObject({ mode: 'incremental', files_scanned: 2, files_removed: 1 });
    expect(found.freshness).toMatchObject({ indexed_commit: featureCommit, dirty: false });
    expect(search(root, 'featureOnlyCormorant').results[0]?.path).toBe('src/added-on-feature.ts');
    expect(search(root, 'mainOnlyPelican').results.map((hit) => hit.path)).not.toContain('src/removed-on-feature.ts');
    expect(status(root)).toMatchObject({ state: 'ready', git: { indexed_commit: featureCommit } });
  });

  it('switching back is stale again, and re-indexing it parses nothing: every content was parsed before', () => {
    git(root, 'checkout', '-q', 'main');
    expect(status(root)).toMatchObject({ state: 'stale', git: { head: mainCommit, indexed_commit: featureCommit } });
    const back = sync(root);
    expect(back).toMatchObject({ mode: 'incremental', files_scanned: 2, files_removed: 1 });
    expect(back.files_cached).toBe(2);
    expect(search(root, 'mainOnlyPelican').results[0]?.path).toBe('src/removed-on-feature.ts');
    expect(search(root, 'featureOnlyCormorant').results.map((hit) => hit.path)).not.toContain('src/added-on-feature.ts');
    expect(status(root)).toMatchObject({ state: 'ready', dirty: false, git: { indexed_commit: mainCommit } });
  });

  it('a commit that changes no file moves HEAD: stale until a sync records the new commit, reading nothing', () => {
    git(root, 'commit', '-q', '--allow-empty', '-m', 'empty');
    const head = git(root, 'rev-parse', 'HEAD');
    const before = status(root);
    expect(before.state).toBe('stale');
    expect(before.reasons).toEqual([expect.stringMatching(/^HEAD moved: indexed .+, now .+ on main$/)]);
    expect(sync(root)).toMatchObject({ mode: 'incremental', files_scanned: 0, chunks_created: 0 });
    expect(status(root)).toMatchObject({ state: 'ready', git: { indexed_commit: head, head } });
  });

  it('changes found by asking git equal changes found by stats, through edits, reverts, adds and deletes', () => {
    const viaGit = makeRepo({ 'src/a.ts': moduleText('alphaWidget'), 'src/b.ts': moduleText('betaWidget'), 'src/c.ts': moduleText('gammaWidget') });
    git(viaGit, 'init', '-q');
    git(viaGit, 'add', '-A');
    git(viaGit, 'commit', '-q', '-m', 'base');
    // The same repository twice: one finds changes with git, the other with stats.
    const viaStat = makeRepo({});
    execFileSync('cp', ['-a', `${viaGit}/.`, viaStat]);
    makeRepo({ '.repodex/config.json': JSON.stringify({ change_detection: 'git' }) }, viaGit);
    makeRepo({ '.repodex/config.json': JSON.stringify({ change_detection: 'stat' }) }, viaStat);
    const steps: ((root: string) => void)[] = [
      () => undefined,
      (r) => appendFileSync(join(r, 'src/a.ts'), 'export const editedDolphin = 1;\n'),
      (r) => writeFileSync(join(r, 'src/new.ts'), moduleText('freshNarwhal')),
      // Back to the committed content: only the record of what was dirty at the last sync shows it.
      (r) => git(r, 'checkout', '-q', '--', 'src/a.ts'),
      (r) => rmSync(join(r, 'src/b.ts')),
      (r) => {
        git(r, 'add', '-A');
        git(r, 'commit', '-q', '-m', 'more');
      },
      (r) => writeFileSync(join(r, 'src/c.ts'), moduleText('gammaWidget', 'export const lateOtter = 2;\n')),
    ];
    const queries = ['widget value', 'editedDolphin freshNarwhal lateOtter'];
    for (const [i, step] of steps.entries()) {
      step(viaGit);
      step(viaStat);
      const a = sync(viaGit);
      const b = sync(viaStat);
      expect(a.found_by, `step ${i}`).toBe(i === 0 ? 'walk' : 'git');
      expect(b.found_by, `step ${i}`).toBe(i === 0 ? 'walk' : 'stat');
      expect({ ...a, duration_ms: 0, generation: 0 }, `step ${i}`).toMatchObject({ files_scanned: b.files_scanned, files_removed: b.files_removed, chunks_created: b.chunks_created });
      for (const q of queries) {
        const ra = search(viaGit, q).results.map((hit) => [hit.path, hit.chunk_id]);
        const rb = search(viaStat, q).results.map((hit) => [hit.path, hit.chunk_id]);
        expect(ra, `step ${i}, query ${q}`).toEqual(rb);
      }
      expect(status(viaGit).dirty, `step ${i}`).toBe(false);
    }
  });
});

// Git's own exclude files beyond .gitignore (gitignore(5)): core.excludesFile (by default
// ~/.config/git/ignore) and info/exclude apply as git applies them, and an edit to either (or to
// the config naming the first) is a change like any ignore file's: status goes stale, the next
// sync follows, and a watching process sees it.
describe.skipIf(!HAS_GIT)('git exclude files', () => {
  /** A git repository and a home folder of its own, so the machine's git config plays no part. */
  function setup(): { root: string; home: string; env: NodeJS.ProcessEnv } {
    const home = tempDir();
    const root = makeRepo({ 'src/keep.ts': 'export const zqxkeep = 1;\n', 'src/mine.local.ts': 'export const zqxlocal = 1;\n', 'src/scratch.ts': 'export const zqxscratch = 1;\n' });
    git(root, 'init', '-q');
    return { root, home, env: { HOME: home, XDG_CONFIG_HOME: '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: undefined } };
  }
  const paths = (root: string, env: NodeJS.ProcessEnv): string[] => {
    const run = runCli(['search', 'zqxkeep zqxlocal zqxscratch', '--json', '--root', root], { env });
    expect(run.code, run.stderr).toBe(0);
    return run.json<Search>().results.map((hit) => hit.path).sort();
  };
  /** What git itself ignores among the files, to compare with. */
  const gitIgnored = (root: string, env: NodeJS.ProcessEnv): string[] =>
    execFileSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=all'], { cwd: root, encoding: 'utf8', env: { ...process.env, ...env } })
      .split('\n')
      .filter((line) => line.startsWith('!! src/'))
      .map((line) => line.slice(3))
      .sort();

  it('applies the default global excludes file and info/exclude, as git does, and follows edits to them', () => {
    const { root, home, env } = setup();
    mkdirSync(join(home, '.config', 'git'), { recursive: true });
    writeFileSync(join(home, '.config', 'git', 'ignore'), '*.local.ts\n');
    writeFileSync(join(root, '.git', 'info', 'exclude'), 'src/scratch.ts\n');
    expect(gitIgnored(root, env)).toEqual(['src/mine.local.ts', 'src/scratch.ts']);
    expect(paths(root, env)).toEqual(['src/keep.ts']);

    // Emptying the global file: stale, and the next sync indexes what it no longer ignores.
    writeFileSync(join(home, '.config', 'git', 'ignore'), '');
    expect(runCli(['status', '--json', '--root', root], { env }).json<Status>().dirty).toBe(true);
    const run = runCli(['sync', '--json', '--root', root], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(paths(root, env)).toEqual(['src/keep.ts', 'src/mine.local.ts']);
  });

  it('reads core.excludesFile from the global config, and a change of the setting is a change of the rules', () => {
    const { root, home, env } = setup();
    writeFileSync(join(home, 'my-ignore'), 'scratch.ts\n');
    writeFileSync(join(home, '.gitconfig'), '[core]\n\texcludesFile = ~/my-ignore\n');
    expect(gitIgnored(root, env)).toEqual(['src/scratch.ts']);
    expect(paths(root, env)).toEqual(['src/keep.ts', 'src/mine.local.ts']);
    // The repository's own config overrides the global one.
    writeFileSync(join(root, 'other-ignore'), '*.local.ts\n');
    git(root, 'config', 'core.excludesFile', 'other-ignore');
    expect(gitIgnored(root, env)).toEqual(['src/mine.local.ts']);
    expect(runCli(['status', '--json', '--root', root], { env }).json<Status>().dirty).toBe(true);
    expect(paths(root, env)).toEqual(['src/keep.ts', 'src/scratch.ts']);
  });

  it('another set of git files behind the rules (another HOME, or an index recorded without them) is a change of the rules', () => {
    const { root, home, env } = setup();
    mkdirSync(join(home, '.config', 'git'), { recursive: true });
    writeFileSync(join(home, '.config', 'git', 'ignore'), '*.local.ts\n');
    expect(paths(root, env)).toEqual(['src/keep.ts', 'src/scratch.ts']);
    // The same tree seen from a home without that excludes file: the index no longer matches the rules.
    const otherHome = { ...env, HOME: tempDir() };
    expect(runCli(['status', '--json', '--root', root], { env: otherHome }).json<Status>().dirty).toBe(true);
    expect(paths(root, otherHome)).toEqual(['src/keep.ts', 'src/mine.local.ts', 'src/scratch.ts']);
  });

  it('a server watching the tree sees an edit to .git/info/exclude, which its file watcher does not', async () => {
    const { root, env } = setup();
    const server = spawn(process.execPath, [CLI, 'watch', '--json', '--debounce-ms', '100', '--root', root], { cwd: PROJECT_ROOT, env: { ...process.env, NO_COLOR: '1', ...env } });
    let out = '';
    let err = '';
    server.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
    server.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    const until = async (test: () => boolean, what: string): Promise<void> => {
      const deadline = performance.now() + 20_000;
      while (!test()) {
        if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout: ${out}; stderr: ${err}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      await until(() => err.includes('watching '), 'watch to start');
      const searchable = (): string[] => {
        const run = runCli(['search', 'zqxkeep zqxlocal zqxscratch', '--json', '--root', root], { env: { ...env, REPODEX_INDEXING: '0' } });
        return run.code === 0 ? run.json<Search>().results.map((hit) => hit.path).sort() : [];
      };
      expect(searchable()).toEqual(['src/keep.ts', 'src/mine.local.ts', 'src/scratch.ts']);
      writeFileSync(join(root, '.git', 'info', 'exclude'), '*.local.ts\nsrc/scratch.ts\n');
      await until(() => searchable().length === 1, 'the watcher to drop the excluded files');
      expect(searchable()).toEqual(['src/keep.ts']);
    } finally {
      server.kill('SIGKILL');
    }
  });
});
