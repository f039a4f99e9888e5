import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliRun, liveChunkIds, makeRepo, runCli, tempDir } from '../helpers.js';

// End-to-end safety and scanning rules (seed 000 §3.2, §4.2; SPEC §2, §8), through the built CLI
// (`npm run build` first). Every secret fixture carries a unique token; the token must never come
// back from search or fetch, and must not appear anywhere in the index bytes.

interface Hit {
  chunk_id: number;
  path: string;
  start_line: number;
  end_line: number;
  why: string[];
}
interface SearchJson {
  results: Hit[];
}
interface SyncJson {
  files_scanned: number;
  files_indexed: number;
  files_skipped: number;
  skipped_by_reason: Record<string, number>;
  chunks_total: number;
}
interface StatusJson {
  root: string;
  indexed: boolean;
  dirty: boolean;
  state: string;
  reasons: string[];
  changes: { added: number; modified: number; removed: number } | null;
  files: number;
  files_indexed: number;
  chunks: number;
}
interface FetchJson {
  chunks: ({ chunk_id: number; path?: string; lines?: string[]; error?: string; blocked?: boolean })[];
}

function ok(run: CliRun): CliRun {
  if (run.code !== 0) throw new Error(`exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run;
}

const cli = (root: string, ...args: string[]): CliRun => runCli([...args, '--root', root]);
const sync = (root: string): SyncJson => ok(cli(root, 'sync', '--json')).json<SyncJson>();
const status = (root: string): StatusJson => ok(cli(root, 'status', '--json')).json<StatusJson>();
const search = (root: string, q: string): Hit[] => ok(cli(root, 'search', q, '--json')).json<SearchJson>().results;

/** Every chunk of the index, fetched back through the CLI (5 ids per call, as fetch allows). */
function fetchAll(root: string): FetchJson['chunks'] {
  const all = liveChunkIds(root);
  expect(all.length).toBe(status(root).chunks);
  const out: FetchJson['chunks'] = [];
  for (let at = 0; at < all.length; at += 5) {
    out.push(...ok(cli(root, 'fetch', '--ids', all.slice(at, at + 5).join(','), '--json')).json<FetchJson>().chunks);
  }
  return out;
}

/** Raw bytes of every file under .repodex/ (segments and manifests of every generation, the parse cache, meta.json, …). */
function indexFiles(root: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      // The audit log records what callers asked (these tests search for the secrets' own words), never answers.
      else if (entry.isFile() && !entry.name.startsWith('audit')) out.push({ path, bytes: readFileSync(path) });
    }
  };
  walk(join(root, '.repodex'));
  return out;
}

function expectNotInIndexBytes(root: string, tokens: readonly string[]): void {
  const files = indexFiles(root);
  // At least a manifest and a segment; the parse cache and meta.json are checked too.
  expect(files.filter((file) => file.path.endsWith('.rpdx')).length).toBeGreaterThanOrEqual(2);
  for (const file of files) {
    for (const token of tokens) expect(file.bytes.includes(token), `${token} in ${file.path}`).toBe(false);
  }
}

const config = (root: string, value: Record<string, unknown>): void => {
  mkdirSync(join(root, '.repodex'), { recursive: true });
  writeFileSync(join(root, '.repodex', 'config.json'), `${JSON.stringify(value, null, 2)}\n`);
};

describe('symlink escapes', () => {
  it('a symlinked file and a symlinked folder pointing outside are neither indexed nor fetchable', () => {
    const outside = makeRepo({
      'secret.ts': 'export const zqxoutsidefile = "outside the root";\n',
      'inner/deep.ts': 'export const zqxoutsidedir = "outside the root";\n',
    });
    const root = makeRepo({ 'src/main.ts': 'export const zqxinsidemarker = 1;\n' });
    symlinkSync(join(outside, 'secret.ts'), join(root, 'link-file.ts'));
    symlinkSync(`${outside}/`, join(root, 'linkdir'));
    symlinkSync(join(outside, 'inner'), join(root, 'src', 'linked-inner'));

    const summary = sync(root);
    expect(summary.files_scanned).toBe(1);
    const state = status(root);
    expect([state.files, state.files_indexed, state.dirty]).toEqual([1, 1, false]);

    const chunks = fetchAll(root);
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) {
      expect(chunk.path).toBe('src/main.ts');
      expect(chunk.path?.startsWith('link')).toBe(false);
    }
    expect(search(root, 'zqxoutsidefile')).toEqual([]);
    expect(search(root, 'zqxoutsidedir')).toEqual([]);
    expect(search(root, 'zqxinsidemarker').map((hit) => hit.path)).toEqual(['src/main.ts']);
    expectNotInIndexBytes(root, ['zqxoutsidefile', 'zqxoutsidedir', 'outside the root']);
  });
});

describe('secrets', () => {
  const SECRET_TOKENS = {
    '.env': 'zqxenvsecret',
    '.env.production': 'zqxenvprod',
    'id_rsa': 'zqxidrsa',
    'server.pem': 'zqxpemkey',
    'config/secrets.json': 'zqxsecretsjson',
    // Names the extension filter alone would let through: only the denylist stops them.
    'src/.env.ts': 'zqxenvts',
    'deploy/id_rsa.pub': 'zqxidrsapub',
    'certs/site.key': 'zqxsitekey',
    'nested/.env.local.json': 'zqxenvlocaljson',
  } as const;

  it('the unique contents of .env, id_rsa, *.pem and other secrets are never returned by search', () => {
    const files: Record<string, string> = {
      'src/app.ts': 'export const zqxbenignmarker = "app";\n',
      'docs/guide.md': '# Guide\n\nzqxbenignguide: how the app works.\n',
      'notes.md': [
        '# Deployment notes',
        '',
        'zqxnotesbody lives next to a key that was pasted here by mistake:',
        '',
        // Split so this test file is not itself a file holding a key (repodex indexes its own tests).
        ['-----BEGIN RSA', 'PRIVATE KEY-----'].join(' '),
        'MIIEowIBAAKCAQEAzqxprivatekeyblock0123456789abcdefghijklmnop',
        'zqxprivatekeyblock',
        '-----END RSA PRIVATE KEY-----',
        '',
      ].join('\n'),
    };
    for (const [path, token] of Object.entries(SECRET_TOKENS)) files[path] = `${token}=${token}\nexport const value = "${token}";\n`;
    const root = makeRepo(files);
    // Let every secret's extension through, so the denylist (not the extension filter) is what is tested.
    config(root, { include_extensions: ['.ts', '.md', '.json', '.pem', '.production', '.key', '.pub', '.env', '.local'] });

    const summary = sync(root);
    expect(summary.files_indexed).toBe(2);
    expect(summary.skipped_by_reason).toEqual({ secret: 1 });
    const state = status(root);
    expect(state.files_indexed).toBe(2);
    expect(state.files).toBe(3); // notes.md is catalogued as a skipped secret; denylisted files are not even catalogued
    expect(state.dirty).toBe(false);

    const tokens = [...Object.values(SECRET_TOKENS), 'zqxnotesbody', 'zqxprivatekeyblock'];
    for (const token of tokens) expect(search(root, token), token).toEqual([]);
    expect(search(root, tokens.join(' '))).toEqual([]);
    expect(search(root, 'zqxbenignmarker zqxbenignguide').map((hit) => hit.path).sort()).toEqual(['docs/guide.md', 'src/app.ts']);

    const fetched = JSON.stringify(fetchAll(root));
    for (const token of tokens) expect(fetched.includes(token), token).toBe(false);
    expectNotInIndexBytes(root, [...tokens, 'PRIVATE KEY']);
  });
});

describe('scanner rules', () => {
  it('skips binary files, files over max_file_bytes and .d.ts files', () => {
    const atLimit = 'export const zqxatlimit = 1;\n';
    const root = makeRepo({
      'src/ok.ts': 'export const zqxplainfile = 1;\n',
      'src/nul.ts': Buffer.concat([Buffer.from('export const zqxnulbyte = 1;\n'), Buffer.from([0, 1, 2]), Buffer.from('\n')]),
      'src/image.md': Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('\nzqxpngmagic\n')]),
      // Not UTF-8, and control bytes too: binary. (Latin-1 text without them is indexed: test/regression/n20-latin1-source.test.ts.)
      'src/badutf.ts': Buffer.concat([Buffer.from('export const zqxbadutf = "caf'), Buffer.from([0xe9, 0xff, 0x01, 0x02]), Buffer.from('";\n')]),
      'src/big.ts': `export const zqxtoolarge = 1;\n${'// padding\n'.repeat(300)}`,
      'src/edge.ts': atLimit + '/'.repeat(2000 - atLimit.length - 1) + '\n',
      'src/types.d.ts': 'export declare const zqxdeclaration: number;\n',
      'src/other.d.mts': 'export declare const zqxdeclarationmts: number;\n',
    });
    config(root, { max_file_bytes: 2000 });
    const summary = sync(root);
    expect(summary.skipped_by_reason).toEqual({ binary: 3, 'too-large': 1 });
    expect(summary.files_indexed).toBe(2);
    for (const token of ['zqxnulbyte', 'zqxpngmagic', 'zqxbadutf', 'zqxtoolarge', 'zqxdeclaration', 'zqxdeclarationmts']) {
      expect(search(root, token), token).toEqual([]);
    }
    expect(search(root, 'zqxatlimit').map((hit) => hit.path)).toEqual(['src/edge.ts']);
    expect(search(root, 'zqxplainfile').map((hit) => hit.path)).toEqual(['src/ok.ts']);
    expectNotInIndexBytes(root, ['zqxnulbyte', 'zqxpngmagic', 'zqxbadutf', 'zqxtoolarge', 'zqxdeclaration']);

    // Declaration files are a default, not a rule: the config can turn them on.
    config(root, { max_file_bytes: 2000, include_declaration_files: true });
    sync(root);
    expect(search(root, 'zqxdeclaration').map((hit) => hit.path)).toEqual(['src/types.d.ts']);
  });

  it('honours nested .gitignore files with negation, and .repodex/ignore', () => {
    const root = makeRepo({
      '.gitignore': 'generated/\n*.tmp.ts\n',
      'src/.gitignore': '*.gen.ts\n!keep.gen.ts\n',
      'src/a.gen.ts': 'export const zqxgenignored = 1;\n',
      'src/keep.gen.ts': 'export const zqxgenkept = 1;\n',
      'src/sub/.gitignore': '!b.gen.ts\n',
      'src/sub/b.gen.ts': 'export const zqxgenreincluded = 1;\n',
      'src/sub/c.gen.ts': 'export const zqxgenstillignored = 1;\n',
      'other/c.gen.ts': 'export const zqxgenother = 1;\n',
      // A file inside an excluded folder cannot be re-included (as in git).
      'generated/.gitignore': '!x.ts\n',
      'generated/x.ts': 'export const zqxgenerateddir = 1;\n',
      'scratch.tmp.ts': 'export const zqxtmpignored = 1;\n',
      '.repodex/ignore': '# repodex-only rules\nfixtures/\n*.snap.ts\n!keep.snap.ts\n',
      'fixtures/data.ts': 'export const zqxrepodexignoredir = 1;\n',
      'src/x.snap.ts': 'export const zqxsnapignored = 1;\n',
      'src/keep.snap.ts': 'export const zqxsnapkept = 1;\n',
    });
    const summary = sync(root);
    expect(summary.files_indexed).toBe(4);
    const kept = search(root, 'zqxgenkept zqxgenreincluded zqxgenother zqxsnapkept');
    expect(kept.map((hit) => hit.path).sort()).toEqual(['other/c.gen.ts', 'src/keep.gen.ts', 'src/keep.snap.ts', 'src/sub/b.gen.ts']);
    const ignoredTokens = ['zqxgenignored', 'zqxgenstillignored', 'zqxgenerateddir', 'zqxtmpignored', 'zqxrepodexignoredir', 'zqxsnapignored'];
    expect(search(root, ignoredTokens.join(' '))).toEqual([]);
  });

  it('a missing .repodex/ignore is fine', () => {
    const root = makeRepo({ 'src/a.ts': 'export const zqxnoignore = 1;\n' });
    config(root, {});
    expect(existsSync(join(root, '.repodex', 'ignore'))).toBe(false);
    expect(sync(root).files_indexed).toBe(1);
    expect(search(root, 'zqxnoignore')).toHaveLength(1);
  });

  it('a non-UTF-8 .repodex/ignore makes sync exit 1 naming the file', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', '.repodex/ignore': Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x80, 0x0a]) });
    const run = cli(root, 'sync');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/\.repodex\/ignore/);
    expect(run.stderr).not.toMatch(/\n\s+at /); // a user error, not a stack trace
    const json = cli(root, 'sync', '--json');
    expect(json.code).toBe(1);
    expect(json.json<{ ok: boolean; code: string; error: string }>()).toMatchObject({ ok: false, code: 'IGNORE_UNREADABLE' });
    expect(json.json<{ error: string }>().error).toMatch(/\.repodex\/ignore/);
  });

  it('a non-UTF-8 nested .gitignore makes sync exit 1 naming the file', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', 'src/.gitignore': Buffer.from([0xc3, 0x28, 0x0a]) });
    const run = cli(root, 'sync');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/src\/\.gitignore/);
  });

  const HAS_MKFIFO = spawnSync('mkfifo', ['--version']).status === 0;
  it.skipIf(!HAS_MKFIFO)('a FIFO in place of a .gitignore or .git makes sync exit 1 naming it, never hang on the read', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n' });
    execFileSync('mkfifo', [join(root, 'src/.gitignore')]);
    const run = runCli(['sync', '--root', root], { timeoutMs: 20_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/src\/\.gitignore is not a regular file/);
    // A FIFO named .git is not a repository: status and sync go on without git.
    rmSync(join(root, 'src/.gitignore'));
    execFileSync('mkfifo', [join(root, '.git')]);
    const synced = runCli(['sync', '--json', '--root', root], { timeoutMs: 20_000 });
    expect(synced.code, synced.stderr).toBe(0);
    expect(runCli(['status', '--json', '--root', root], { timeoutMs: 20_000 }).json<{ git: unknown }>().git).toBeNull();
  });

  it('a .gitignore that is a symlink is not followed, as git ≥ 2.32 does not: not to rules elsewhere, not to an endless /proc file', () => {
    const outside = tempDir();
    writeFileSync(join(outside, 'rules'), '*.ts\n');
    const root = makeRepo({ 'src/a.ts': 'export const zqxsymlinked = 1;\n', 'lib/b.ts': 'export const zqxproc = 1;\n' });
    symlinkSync(join(outside, 'rules'), join(root, 'src/.gitignore'));
    symlinkSync('/proc/self/pagemap', join(root, 'lib/.gitignore'));
    const run = runCli(['sync', '--json', '--root', root], { timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(search(root, 'zqxsymlinked zqxproc').map((hit) => hit.path).sort()).toEqual(['lib/b.ts', 'src/a.ts']);
  });

  const isRoot = process.getuid?.() === 0;
  it.skipIf(isRoot)('an unreadable .repodex/ignore (chmod 000) makes sync exit 1 naming the file [skipped as root: chmod 000 does not stop root reading]', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', '.repodex/ignore': 'fixtures/\n' });
    const ignore = join(root, '.repodex', 'ignore');
    chmodSync(ignore, 0o000);
    try {
      const run = cli(root, 'sync');
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/\.repodex\/ignore/);
    } finally {
      chmodSync(ignore, 0o644);
    }
  });
});

describe('config.json errors', () => {
  it('an unknown key makes sync and status exit 1 naming the key', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', '.repodex/config.json': '{ "project_type": "ts", "max_file_byte": 10 }\n' });
    for (const command of ['sync', 'status']) {
      const run = cli(root, command);
      expect(run.code, command).toBe(1);
      expect(run.stderr).toMatch(/max_file_byte/);
      expect(run.stderr).toMatch(/config\.json/);
    }
    expect(cli(root, 'sync', '--json').json<{ code: string }>().code).toBe('CONFIG_INVALID');
  });

  it('bad JSON makes sync exit 1 saying so', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', '.repodex/config.json': '{ "project_type": ' });
    const run = cli(root, 'sync');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/config\.json/);
    expect(run.stderr).toMatch(/not valid JSON/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('a value of the wrong type is named too', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', '.repodex/config.json': '{ "max_file_bytes": "big" }\n' });
    const run = cli(root, 'sync');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/max_file_bytes/);
  });
});

describe('status: dirty and clean', () => {
  it('is dirty after an edit, an addition, a deletion or one changed config byte, and clean after sync', () => {
    const root = makeRepo({
      'src/a.ts': 'export const alpha = 1;\n',
      'src/b.ts': 'export const beta = 2;\n',
      'src/c.ts': 'export const gamma = 3;\n',
    });
    expect(ok(cli(root, 'init', '--json')).json<{ created: string[] }>().created).toContain('.repodex/config.json');
    expect(status(root)).toMatchObject({ indexed: false, dirty: true, state: 'pending' });
    sync(root);
    expect(status(root)).toMatchObject({ indexed: true, dirty: false, state: 'ready', reasons: [] });

    const later = (path: string): void => {
      const at = new Date(Date.now() + 10_000);
      utimesSync(join(root, path), at, at);
    };

    // Edit without changing the size (the mtime moves, as with any save).
    writeFileSync(join(root, 'src/a.ts'), 'export const alpha = 7;\n');
    later('src/a.ts');
    expect(status(root)).toMatchObject({ dirty: true, state: 'stale', changes: { added: 0, modified: 1, removed: 0 } });
    sync(root);
    expect(status(root)).toMatchObject({ dirty: false, state: 'ready' });

    // Edit that changes the size.
    writeFileSync(join(root, 'src/c.ts'), 'export const gamma = 3;\nexport const more = 4;\n');
    expect(status(root)).toMatchObject({ dirty: true, changes: { modified: 1 } });
    sync(root);
    expect(status(root).dirty).toBe(false);

    writeFileSync(join(root, 'src/d.ts'), 'export const delta = 4;\n');
    expect(status(root)).toMatchObject({ dirty: true, changes: { added: 1, modified: 0, removed: 0 } });
    sync(root);
    expect(status(root).dirty).toBe(false);

    rmSync(join(root, 'src/b.ts'));
    expect(status(root)).toMatchObject({ dirty: true, changes: { added: 0, modified: 0, removed: 1 } });
    sync(root);
    expect(status(root).dirty).toBe(false);

    // One byte of config.json: same meaning, same size, different bytes.
    const configPath = join(root, '.repodex', 'config.json');
    const text = readFileSync(configPath, 'utf8');
    const changed = text.replace('\n  ', '\n\t ');
    expect(changed).not.toBe(text);
    expect(changed.length).toBe(text.length);
    writeFileSync(configPath, changed);
    const configDirty = status(root);
    expect(configDirty.dirty).toBe(true);
    expect(configDirty.reasons.join(' ')).toMatch(/config/);
    sync(root);
    expect(status(root)).toMatchObject({ dirty: false, state: 'ready', reasons: [] });

    // Changes the index never sees do not make it dirty.
    makeRepo({ 'node_modules/pkg/index.ts': 'export const ignored = 1;\n', 'notes.bin': 'x' }, root);
    expect(status(root).dirty).toBe(false);
  });
});

describe('finding the repository root', () => {
  it('from a subfolder: the nearest folder holding .repodex/', () => {
    const root = makeRepo({ 'src/deep/file.ts': 'export const zqxdeepmarker = 1;\n', 'src/top.ts': 'export const top = 1;\n' });
    sync(root);
    const cwd = join(root, 'src', 'deep');
    const state = runCli(['status', '--json'], { cwd });
    expect(state.code).toBe(0);
    expect(realpathSync(state.json<StatusJson>().root)).toBe(realpathSync(root));
    expect(state.json<StatusJson>().dirty).toBe(false);
    const found = runCli(['search', 'zqxdeepmarker', '--json'], { cwd });
    expect(found.code).toBe(0);
    expect(found.json<SearchJson>().results.map((hit) => hit.path)).toEqual(['src/deep/file.ts']);
    expect(existsSync(join(cwd, '.repodex'))).toBe(false);
  });

  it('from a subfolder of a git repository without an index yet: the folder holding .git', () => {
    const root = makeRepo({ 'src/deep/file.ts': 'export const zqxgitroot = 1;\n' });
    mkdirSync(join(root, '.git'));
    const cwd = join(root, 'src', 'deep');
    ok(runCli(['sync', '--json'], { cwd }));
    expect(existsSync(join(root, '.repodex', 'meta.json'))).toBe(true);
    expect(existsSync(join(cwd, '.repodex'))).toBe(false);
    expect(ok(runCli(['search', 'zqxgitroot', '--json'], { cwd })).json<SearchJson>().results.map((hit) => hit.path)).toEqual(['src/deep/file.ts']);
  });

  it('--root overrides the working folder, relative or absolute; a missing root is a user error', () => {
    const root = makeRepo({ 'lib/x.ts': 'export const zqxrootflag = 1;\n' });
    const elsewhere = tempDir();
    const absolute = runCli(['sync', '--json', '--root', root], { cwd: elsewhere });
    expect(absolute.code).toBe(0);
    expect(existsSync(join(elsewhere, '.repodex'))).toBe(false);
    const relative = runCli(['search', 'zqxrootflag', '--json', '--root', basename(root)], { cwd: dirname(root) });
    expect(relative.code).toBe(0);
    expect(relative.json<SearchJson>().results.map((hit) => hit.path)).toEqual(['lib/x.ts']);
    const missing = runCli(['status', '--root', join(elsewhere, 'does-not-exist')], { cwd: elsewhere });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--root/);
  });
});
