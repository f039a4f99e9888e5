import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends } from '../conformance/backends.js';
import { CLI, type CliRun, makeRepo, runCli, tempDir } from '../helpers.js';

const STACK = /^\s+at |EROFS|EACCES|Error:/m;

/** Why a read-only bind mount cannot be made here (not root, or no mount in this container), or undefined. */
function bindMountMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'SKIPPED: a read-only bind mount needs root';
  const dir = tempDir();
  const mounted = spawnSync('mount', ['--bind', dir, dir], { encoding: 'utf8' });
  if (mounted.status !== 0) return `SKIPPED: mount --bind fails here: ${mounted.stderr.trim() || mounted.error?.message}`;
  const readOnly = spawnSync('mount', ['-o', 'remount,ro,bind', dir], { encoding: 'utf8' });
  spawnSync('umount', [dir]);
  return readOnly.status === 0 ? undefined : `SKIPPED: a read-only remount fails here: ${readOnly.stderr.trim()}`;
}

/** Why another user (nobody) cannot be run here, or undefined. */
function otherUserMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'SKIPPED: running a command as another user needs root (runuser)';
  const probe = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(CLI)})`], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `SKIPPED: user nobody cannot run the built CLI here: ${probe.stderr.trim()}`;
}

const noMount = bindMountMissing();
if (noMount) console.warn(`M4: ${noMount}`);
const noOtherUser = otherUserMissing();
if (noOtherUser) console.warn(`M4: ${noOtherUser}`);

function repository(): string {
  const files: Record<string, string> = { '.git/HEAD': 'ref: refs/heads/main\n' };
  for (let i = 0; i < 12; i++) files[`src/part${i}.ts`] = `export function part${i}(value: number): number {\n  return value + ${i};\n}\n`;
  return makeRepo(files);
}

/** `.repodex/` of `root` as a read-only mount of itself until `release` (what a CI cache or an index shipped in an image is). */
function mountReadOnly(root: string): () => void {
  const dataDir = join(root, '.repodex');
  execFileSync('mount', ['--bind', dataDir, dataDir]);
  execFileSync('mount', ['-o', 'remount,ro,bind', dataDir]);
  return () => void execFileSync('umount', [dataDir]);
}

/** A file's name and bytes size, for every file under `.repodex/`: what a read must leave alone. */
function dataDirState(root: string): string {
  return readdirSync(join(root, '.repodex'))
    .sort()
    .map((name) => `${name}:${statSync(join(root, '.repodex', name)).size}`)
    .join(',');
}

/**
 * The reads and the write of M4, where `.repodex/` cannot be written: `run` runs the CLI as the
 * case needs (as root on a read-only mount, or as another user), `why` is what the messages give
 * as the reason.
 */
function readOnlyCases(setup: () => { root: string; run: (args: string[]) => CliRun; why: RegExp; done: () => void }): void {
  let root: string;
  let run: (args: string[]) => CliRun;
  let why: RegExp;
  let done: () => void;
  beforeAll(() => {
    ({ root, run, why, done } = setup());
  });
  afterAll(() => done?.());

  it('M4: reads of a fresh index answer with no warning, and write nothing', () => {
    const before = dataDirState(root);
    for (const args of [['search', 'part3'], ['bundle', 'change part3'], ['status'], ['verify'], ['outline', 'src/part3.ts'], ['open', 'src/part3.ts'], ['files'], ['init']]) {
      const answer = run(args);
      expect(answer.code, `${args.join(' ')}: ${answer.stderr}`).toBe(0);
      expect(answer.stderr, args.join(' ')).not.toMatch(STACK);
      // A fresh answer needs no warning; a bundle only says its copy for people was not written.
      if (args[0] === 'bundle') expect(answer.stdout).toMatch(/warning: last_bundle\.json and last_bundle\.md were not written: cannot write \S+last_bundle\.json: /);
      // (Another user's verify says it could not read the owner's private audit log: a note, not damage.)
      else if (args[0] !== 'init') {
        const warnings = `${answer.stdout}${answer.stderr}`.split('\n').filter((line) => /warning/i.test(line) && !/audit\.jsonl was not checked: only the user who writes it may read it/.test(line));
        expect(warnings, args.join(' ')).toEqual([]);
      }
    }
    expect(run(['search', 'part3']).stdout).toContain('src/part3.ts');
    expect(dataDirState(root)).toBe(before);
  });

  it('M4: reads of a stale index answer from it as it is, with one warning saying why it was not refreshed', () => {
    appendFileSync(join(root, 'src', 'part5.ts'), 'export const lateAddition = 5;\n');
    for (const args of [['search', 'part5'], ['bundle', 'change part5'], ['files']]) {
      const answer = run(args);
      expect(answer.code, `${args.join(' ')}: ${answer.stderr}`).toBe(0);
      expect(`${answer.stdout}${answer.stderr}`).not.toMatch(STACK);
      const warning = `${answer.stdout}${answer.stderr}`.split('\n').filter((line) => line.includes('cannot refresh'));
      expect(warning, args.join(' ')).toHaveLength(1);
      expect(warning[0]).toMatch(/the index is stale and \.repodex\/ is not writable \((.*)\): cannot refresh; results may miss these changes: 1 file\(s\) changed/);
      expect(warning[0]).toMatch(why);
    }
    expect(run(['search', 'part5', '--json']).json<{ freshness: { dirty: boolean } }>().freshness.dirty).toBe(true);
  });

  it('M4: sync says why in one line and exits 1; the index is left as it was', () => {
    const answer = run(['sync']);
    expect(answer.code, answer.stderr).toBe(1);
    expect(answer.stdout).toBe('');
    expect(answer.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(answer.stderr).toMatch(/^repodex: \S+\/\.repodex is not writable \(.*\): the index was left as it was \(make it writable or mount it read-write, or run repodex as the user who owns it\)\n$/);
    expect(answer.stderr).toMatch(why);
    const json = run(['sync', '--json']);
    expect(json.json<{ code: string }>().code).toBe('NOT_WRITABLE');
  });
}

describe.skipIf(noMount !== undefined)('M4: a read-only .repodex/ (a read-only mount)', () => {
  readOnlyCases(() => {
    const root = repository();
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    runCli(['status', '--root', root]); // checked.json: what a fresh status writes is already there
    const release = mountReadOnly(root);
    return { root, run: (args) => runCli([...args, '--root', root]), why: /the file system is read-only/, done: release };
  });
});

describe.skipIf(noOtherUser !== undefined)('M4: another user on a shared checkout', () => {
  readOnlyCases(() => {
    const root = repository();
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    runCli(['status', '--root', root]);
    chmodSync(root, 0o755); // a temporary folder is private to its owner
    const home = tempDir();
    chmodSync(home, 0o777);
    const run = (args: string[]): CliRun => {
      const result = spawnSync('runuser', ['-u', 'nobody', '--', 'env', `HOME=${home}`, 'NO_COLOR=1', 'REPODEX_DAEMON=0', process.execPath, CLI, ...args, '--root', root], { encoding: 'utf8', timeout: 60_000 });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr, json: <T>() => JSON.parse(result.stdout) as T };
    };
    return { root, run, why: /permission denied: it belongs to root, this is nobody/, done: () => undefined };
  });
});

const postgres = testBackends({ ...process.env, BACKENDS: 'postgres' })[0]!;

describe.skipIf(noMount !== undefined || postgres.missing !== undefined)('M4: a read-only .repodex/ beside an index in PostgreSQL', () => {
  it('M4: the index in the database is refreshed; only the parse cache beside the checkout is not saved, said once', () => {
    const store = postgres.spec.kind === 'postgres' ? postgres.spec.url : '';
    const root = repository();
    expect(runCli(['sync', '--root', root, '--store', store]).code).toBe(0);
    const release = mountReadOnly(root);
    try {
      appendFileSync(join(root, 'src', 'part2.ts'), 'export const inTheDatabase = 2;\n');
      const search = runCli(['search', 'inTheDatabase', '--root', root, '--store', store]);
      expect(search.code, search.stderr).toBe(0);
      expect(search.stdout).toContain('src/part2.ts');
      expect(search.stderr).not.toMatch(STACK);
      const saved = search.stderr.split('\n').filter((line) => line.includes('not saved'));
      expect(saved).toHaveLength(1);
      expect(saved[0]).toMatch(/\.repodex\/parse-cache\.rpdx: not saved \(cannot write \S+parse-cache\.rpdx: the file system is read-only\): the next sync parses these files again/);
      const fresh = runCli(['search', 'inTheDatabase', '--root', root, '--store', store, '--json']);
      expect(fresh.json<{ freshness: { dirty: boolean } }>().freshness.dirty).toBe(false);
    } finally {
      release();
    }
  });
});
