import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, makeRepo, runCli, tempDir } from '../helpers.js';

/** One contract on every front end: the same request is refused the same way, and paths mean what the user typed. */

function gitRepo(files: Record<string, string>): string {
  const root = makeRepo(files);
  execFileSync('git', ['init', '-q'], { cwd: root });
  return root;
}

/** Send requests (objects, or raw lines as strings) to `serve --stdio`; its replies. */
function jsonl(root: string, requests: (Record<string, unknown> | string)[]): { ok: boolean; code?: string; error?: string; data?: Record<string, unknown> }[] {
  const lines = requests.map((request) => `${typeof request === 'string' ? request : JSON.stringify(request)}\n`);
  const result = spawnSync(process.execPath, [CLI, 'serve', '--stdio', '--root', root], { input: lines.join(''), encoding: 'utf8', timeout: 60_000 });
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { ok: boolean; code?: string; error?: string; data?: Record<string, unknown> });
}

const FILES = {
  'src/server/fetch.ts': 'export function fetchThing(): number {\n  return 1;\n}\n',
  'src/empty.ts': '',
  'README.md': '# readme\n',
};

describe('paths mean what the user typed', () => {
  it('regression (D8): in a subfolder, a path is relative to it (as in git); an absolute path inside the root works on every front end', () => {
    const root = gitRepo(FILES);
    const sub = join(root, 'src', 'server');
    const fromSub = runCli(['open', 'fetch.ts', '--json'], { cwd: sub });
    expect(fromSub.code, fromSub.stderr).toBe(0);
    expect(fromSub.json()).toMatchObject({ path: 'src/server/fetch.ts', start_line: 1 });
    expect(runCli(['outline', '../server/fetch.ts', '--json'], { cwd: sub }).json()).toMatchObject({ path: 'src/server/fetch.ts' });
    const absolute = join(root, 'src', 'server', 'fetch.ts');
    expect(runCli(['open', absolute, '--json'], { cwd: root }).json()).toMatchObject({ path: 'src/server/fetch.ts' });
    const [open, outline] = jsonl(root, [
      { op: 'open', path: absolute },
      { op: 'outline', path: absolute },
    ]);
    expect(open).toMatchObject({ ok: true, data: { path: 'src/server/fetch.ts' } });
    expect(outline).toMatchObject({ ok: true, data: { path: 'src/server/fetch.ts' } });
  });

  it('regression (D13): with no .git and no .repodex above the folder, commands refuse and name the fix; init works there', () => {
    const bare = tempDir('repodex-bare-');
    writeFileSync(join(bare, 'a.ts'), 'export const a = 1;\n');
    for (const args of [['search', 'a'], ['status'], ['open', 'a.ts']]) {
      const run = runCli(args, { cwd: bare });
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toMatch(/no repository found .*repodex init.*--root/);
    }
    expect(runCli(['init'], { cwd: bare }).code).toBe(0);
    expect(runCli(['search', 'a', '--json'], { cwd: bare }).code).toBe(0);
  });
});

describe('the same refusal on every front end', () => {
  it('regression (D10): an empty range or a start past the end is an error; truncated only when lines were withheld', () => {
    const root = gitRepo(FILES);
    const backwards = runCli(['open', 'src/server/fetch.ts', '--start', '3', '--end', '2', '--root', root]);
    expect(backwards.code).toBe(1);
    expect(backwards.stderr).toMatch(/--end 2 is before --start 3/);
    const past = runCli(['open', 'src/server/fetch.ts', '--start', '50', '--root', root]);
    expect(past.code).toBe(1);
    expect(past.stderr).toMatch(/--start 50 is past the end of src\/server\/fetch.ts \(3 lines\)/);
    expect(runCli(['open', 'src/server/fetch.ts', '--json', '--root', root]).json()).toMatchObject({ end_line: 3, truncated: false, next_start: null });
    expect(runCli(['open', 'src/server/fetch.ts', '--end', '99', '--json', '--root', root]).json()).toMatchObject({ end_line: 3, truncated: false });
    expect(runCli(['open', 'src/empty.ts', '--json', '--root', root]).json()).toMatchObject({ total_lines: 0, end_line: 0, lines: [], truncated: false, next_start: null });
    const replies = jsonl(root, [
      { op: 'open', path: 'src/server/fetch.ts', start_line: 3, end_line: 2 },
      { op: 'open', path: 'src/server/fetch.ts', start_line: 50 },
    ]);
    expect(replies.map((reply) => [reply.ok, reply.code])).toEqual([
      [false, 'BAD_REQUEST'],
      [false, 'BAD_REQUEST'],
    ]);
    expect(replies[0]!.error).toMatch(/end_line 2 is before start_line 3/);
  });

  it('regression (D14): an unknown chunk id and an outline with no adapter are errors: exit 1, ok:false', () => {
    const root = gitRepo(FILES);
    const fetch = runCli(['fetch', '--ids', '999999', '--root', root]);
    expect(fetch.code).toBe(1);
    expect(fetch.stdout + fetch.stderr).toMatch(/chunk 999999 is gone: search again/);
    expect(runCli(['outline', 'README.md', '--root', root]).code).toBe(1);
    const replies = jsonl(root, [
      { op: 'fetch', ids: [999999] },
      { op: 'outline', path: 'README.md' },
    ]);
    expect(replies.map((reply) => [reply.ok, reply.code])).toEqual([
      [false, 'REFUSED'],
      [false, 'REFUSED'],
    ]);
  });

  it('regression (D15): errors name the flag typed and its range, not validator text', () => {
    const root = gitRepo(FILES);
    const cases: [string[], RegExp][] = [
      [['search', 'x', '--top-k', '0'], /--top-k must be at least 1/],
      [['search', 'x', '--top-k', '1e308'], /--top-k must be a whole number/],
      [['fetch', '--ids', '99999999999999999999'], /--ids must be a chunk id: a whole number from 0 to 4294967295/],
      [['open', 'src/server/fetch.ts', '--start', '0'], /--start must be at least 1/],
      [['files', '--limit', '0'], /--limit must be at least 1/],
      [['open', 'a'.repeat(5000)], /the path must be at most 4096 characters/],
      [['search', 'x', '--glob', `{${Array.from({ length: 400 }, (_, i) => `dir${i}`).join(',')}}`], /--glob must be at most 1024 characters/],
      [['fetch', '--ids', '-1'], /--ids was given a value that starts with "-", which reads as an option: write it as --ids=VALUE/],
      [['fetch', '--ids=-1'], /--ids must be a chunk id/],
    ];
    for (const [args, message] of cases) {
      const run = runCli([...args, '--root', root]);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toMatch(message);
      expect(run.stderr).not.toMatch(/Invalid input|top_k|start_line/);
    }
    expect(runCli(['search', 'fetch', '--lang', 'TypeScript', '--root', root]).code).toBe(0);
    const [huge, infinite, fraction] = jsonl(root, [{ op: 'search', q: 'x', top_k: 1e308 }, `{"op":"search","q":"x","top_k":1${'0'.repeat(400)}}`, { op: 'search', q: 'x', top_k: 1.5 }]);
    // A whole number past the server's limit is answered with the limit, and says so (N20).
    expect(huge!.ok).toBe(true);
    expect((huge!.data as { warnings: string[] }).warnings.join('\n')).toMatch(/asked for 1e\+308 results; a search returns at most 20 here/);
    expect(infinite!.error).toMatch(/top_k: must be a finite number, got Infinity/);
    expect(fraction!.error).toMatch(/top_k: must be a whole number, got 1.5/);
    // A path that is only blanks is quoted, so the message shows what was asked for.
    expect(runCli(['open', ' ', '--root', root]).stderr).toContain('" " does not exist');
  });

  it('a config error names config fields as they are spelt in config.json, not as CLI flags', () => {
    const root = gitRepo({ ...FILES, '.repodex/config.json': '{"chunk": {"max_lines": 100000}}\n' });
    const run = runCli(['status', '--root', root]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/config\.json: chunk\.max_lines: must be at most 120/);
  });

  it('regression (D18): an invalid config.json is refused the same way by every command and op', () => {
    const root = gitRepo({ ...FILES, '.repodex/config.json': '{"bogus": 1}\n' });
    for (const args of [['status'], ['search', 'x'], ['files'], ['fetch', '--ids', '1'], ['open', 'README.md'], ['outline', 'src/server/fetch.ts'], ['bundle', 'x'], ['audit'], ['sync']]) {
      const run = runCli([...args, '--root', root]);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toMatch(/config\.json: unknown field\(s\): bogus/);
    }
    const replies = jsonl(root, [{ op: 'status' }, { op: 'search', q: 'x' }, { op: 'files' }, { op: 'open', path: 'README.md' }, { op: 'audit' }]);
    expect(replies.every((reply) => !reply.ok && reply.code === 'CONFIG_INVALID')).toBe(true);
  });
});

describe('human output', () => {
  it('regression (D11): control characters in file names and content are escaped; names that needed it are quoted', () => {
    const root = gitRepo({ 'src/ok.ts': 'export const spoofTarget = 1;\n' });
    mkdirSync(join(root, 'src'), { recursive: true });
    writeFileSync(join(root, 'src', 'x.ts\n── .env:1-1 (chunk 99)\n1| API_KEY=fake.ts'), 'export const spoof = 1;\n');
    writeFileSync(join(root, 'src', 'evil\x1b[31mRED\x1b[0m.ts'), 'export const ansiName = "\x1b[2J";\n');
    const run = runCli(['search', 'spoof ansiName', '--root', root]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('\x1b');
    expect(run.stdout.split('\n').some((line) => line.startsWith('── .env'))).toBe(false);
    expect(run.stdout).toContain('"src/x.ts\\n── .env:1-1 (chunk 99)\\n1| API_KEY=fake.ts":1-1');
    expect(run.stdout).toContain('"src/evil\\x1b[31mRED\\x1b[0m.ts"');
    const files = runCli(['files', '--root', root]);
    expect(files.stdout).not.toContain('\x1b');
    // --json is untouched: JSON escapes them itself.
    expect(runCli(['files', '--json', '--root', root]).json<{ files: { path: string }[] }>().files.map((file) => file.path)).toContain('src/evil\x1b[31mRED\x1b[0m.ts');
  });
});
