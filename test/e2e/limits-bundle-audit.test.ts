import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, makeRepo, runCli } from '../helpers.js';

/** A repository with enough to hit every limit: long files, many matching files, a wide file. */
function limitsRepo(config?: Record<string, unknown>): string {
  const files: Record<string, string> = {
    'src/long.ts': Array.from({ length: 300 }, (_, i) => `export const line${i} = ${i};`).join('\n'),
    'src/wide.ts': Array.from({ length: 100 }, (_, i) => `export const wide${i} = '${'w'.repeat(1500)}';`).join('\n'),
    'src/medium.ts': `${'// a file of about 2 KB\n'.repeat(90)}export const medium = 1;\n`,
    'README.md': '# limits\n',
  };
  for (let i = 0; i < 30; i++) files[`src/widgets/widget${i}.ts`] = `export function renderWidget${i}(): string {\n  return 'widget render ${i}';\n}\n`;
  if (config) files['.repodex/config.json'] = JSON.stringify(config);
  return makeRepo(files);
}

type Json = Record<string, unknown>;

function cliJson(root: string, args: string[]): Json {
  const run = runCli([...args, '--root', root, '--json']);
  expect(run.code === 0 || run.code === 1, run.stderr).toBe(true);
  return run.json<Json>();
}

/** One JSONL session on `serve --stdio` with flags: the `data` (or the error line) of each request. */
function serve(root: string, flags: string[], requests: Json[]): Json[] {
  const result = spawnSync(process.execPath, [CLI, 'serve', '--stdio', '--root', root, ...flags], {
    input: requests.map((request) => `${JSON.stringify(request)}\n`).join(''),
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Json);
}

const dataOf = (reply: Json): Json => reply.data as Json;

describe('limits: default < config < flag, for every limit', () => {
  it('max_open_lines: 120 by default, the config value, then the flag', () => {
    expect(cliJson(limitsRepo(), ['open', 'src/long.ts'])).toMatchObject({ end_line: 120, truncated: true, next_start: 121 });
    const configured = limitsRepo({ limits: { max_open_lines: 50 } });
    expect(cliJson(configured, ['open', 'src/long.ts'])).toMatchObject({ end_line: 50, truncated: true, next_start: 51 });
    const [flagged] = serve(configured, ['--max-open-lines', '30'], [{ op: 'open', path: 'src/long.ts' }]);
    expect(dataOf(flagged!)).toMatchObject({ end_line: 30, truncated: true, next_start: 31 });
  });

  it('max_search_hits: 20 by default, the config value, then the flag', () => {
    const count = (reply: Json): number => (reply.results as unknown[]).length;
    expect(count(cliJson(limitsRepo(), ['search', 'render widget']))).toBe(20);
    const configured = limitsRepo({ limits: { max_search_hits: 5 } });
    expect(count(cliJson(configured, ['search', 'render widget', '--top-k', '20']))).toBe(5);
    const [flagged] = serve(configured, ['--max-search-hits', '3'], [{ op: 'search', q: 'render widget', top_k: 20 }]);
    expect(count(dataOf(flagged!))).toBe(3);
    expect(dataOf(flagged!).top_k).toBe(3);
  });

  it('max_file_bytes: 1 MiB by default, the config value (indexing and reads), then the flag (reads)', () => {
    const big = makeRepo({ 'src/big.ts': `export const big = '${'b'.repeat(1_100_000)}';\n`, 'src/small.ts': 'export const small = 1;\n' });
    expect(cliJson(big, ['open', 'src/big.ts'])).toMatchObject({ blocked: true, error: expect.stringContaining('over the 1048576-byte limit') as string });
    const configured = limitsRepo({ limits: { max_file_bytes: 1000 } });
    expect(cliJson(configured, ['open', 'src/medium.ts'])).toMatchObject({ blocked: true });
    expect(cliJson(configured, ['open', 'README.md'])).toMatchObject({ blocked: false });
    const sync = cliJson(configured, ['sync']);
    expect((sync.skipped_by_reason as Json)['too-large']).toBeGreaterThanOrEqual(3);
    // The old top-level spelling still works.
    expect(cliJson(limitsRepo({ max_file_bytes: 1000 }), ['open', 'src/medium.ts'])).toMatchObject({ blocked: true });
    const [flagged] = serve(limitsRepo(), ['--max-file-bytes', '100'], [{ op: 'open', path: 'src/medium.ts' }]);
    expect(flagged).toMatchObject({ ok: false, code: 'BLOCKED' });
  });

  it('max_total_bytes_per_response: 48 KiB by default, the config value, then the flag; a cut answer says how to continue', () => {
    const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
    const byDefault = cliJson(limitsRepo(), ['open', 'src/wide.ts']);
    expect(bytes(byDefault)).toBeLessThanOrEqual(48 * 1024);
    expect(byDefault).toMatchObject({ truncated: true });
    const configured = limitsRepo({ limits: { max_total_bytes_per_response: 8192 } });
    const cut = cliJson(configured, ['open', 'src/wide.ts']);
    expect(bytes(cut)).toBeLessThanOrEqual(8192);
    expect(cut.next_start).toBe((cut.end_line as number) + 1);
    const [flagged] = serve(configured, ['--max-total-bytes-per-response', '4096'], [{ op: 'open', path: 'src/wide.ts' }]);
    expect(bytes(dataOf(flagged!))).toBeLessThanOrEqual(4096);
    expect((flagged!.warnings as string[])[0]).toMatch(/max_total_bytes_per_response \(4096 bytes\).*continue with start_line \d+/);
  });

  it('max_bundle_files: 8 by default, the config value, then the flag', () => {
    const files = (reply: Json): number => new Set((reply.excerpts as { path: string }[]).map((excerpt) => excerpt.path)).size;
    const byDefault = cliJson(limitsRepo(), ['bundle', 'render widget', '--max-files', '50', '--max-lines', '4000']);
    expect(files(byDefault)).toBe(8);
    expect((byDefault.budget as Json).max_files).toBe(8);
    const configured = limitsRepo({ limits: { max_bundle_files: 3 } });
    expect(files(cliJson(configured, ['bundle', 'render widget', '--max-files', '50']))).toBe(3);
    const [flagged] = serve(configured, ['--max-bundle-files', '2'], [{ op: 'bundle', prompt: 'render widget', max_files: 50 }]);
    expect(files(dataOf(flagged!))).toBe(2);
  });

  it('refuses limits out of range from config and from flags, naming the key or flag and the range', () => {
    const bad = limitsRepo({ limits: { max_open_lines: 0 } });
    const run = runCli(['status', '--root', bad]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/limits\.max_open_lines: must be a whole number from 1 to 5000/);
    const flag = runCli(['serve', '--stdio', '--root', limitsRepo(), '--max-search-hits', '500'], { input: '' });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toMatch(/--max-search-hits must be a whole number from 1 to 100, got 500/);
  });
});

describe('bundles', () => {
  const repo = (): string => limitsRepo();

  it('never exceed their budget of files and lines', () => {
    const root = repo();
    for (const [prompt, maxFiles, maxLines] of [
      ['render widget 3', 2, 10],
      ['export const line', 5, 7],
      ['wide medium long widget render', 8, 200],
      ['nothing matches zzqqxx', 3, 50],
    ] as const) {
      const bundle = cliJson(root, ['bundle', prompt, '--max-files', String(maxFiles), '--max-lines', String(maxLines)]);
      const excerpts = bundle.excerpts as { path: string; lines: string[]; citation: string; rationale: string; start_line: number; end_line: number }[];
      expect(new Set(excerpts.map((excerpt) => excerpt.path)).size).toBeLessThanOrEqual(maxFiles);
      expect(excerpts.reduce((sum, excerpt) => sum + excerpt.lines.length, 0)).toBeLessThanOrEqual(maxLines);
      for (const excerpt of excerpts) {
        expect(excerpt.citation).toBe(`${excerpt.path}:${excerpt.start_line}-${excerpt.end_line}`);
        expect(excerpt.lines).toHaveLength(excerpt.end_line - excerpt.start_line + 1);
        expect(excerpt.rationale.length).toBeGreaterThan(10);
      }
      expect(bundle.prompt_fingerprint).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('are byte-identical for the same prompt on the same index, on the CLI and in last_bundle.json', () => {
    const root = repo();
    runCli(['sync', '--root', root]);
    const first = runCli(['bundle', 'where are widgets rendered', '--root', root, '--json']);
    const firstFile = readFileSync(join(root, '.repodex', 'last_bundle.json'));
    const second = runCli(['bundle', 'where are widgets rendered', '--root', root, '--json']);
    expect(second.stdout).toBe(first.stdout);
    expect(readFileSync(join(root, '.repodex', 'last_bundle.json')).equals(firstFile)).toBe(true);
    const markdown = runCli(['bundle', 'where are widgets rendered', '--root', root]);
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toContain('# Context bundle');
    expect(readFileSync(join(root, '.repodex', 'last_bundle.md'), 'utf8')).toBe(`${markdown.stdout.trimEnd()}\n`);
  });

  it('leave tests out unless asked', () => {
    const root = makeRepo({ 'src/parse.ts': 'export function parseNumber(s: string) { return Number(s); }\n', 'test/parse.test.ts': "test('parseNumber', () => parseNumber('1'));\n" });
    const paths = (args: string[]): string[] => (cliJson(root, ['bundle', 'parseNumber', ...args]).excerpts as { path: string }[]).map((excerpt) => excerpt.path);
    expect(paths([])).toEqual(['src/parse.ts']);
    expect(paths(['--include-tests'])).toContain('test/parse.test.ts');
  });
});

describe('the audit log', () => {
  it('records one line per call from the CLI and JSONL, with sanitized arguments and outcomes, and reads them back', () => {
    const root = limitsRepo();
    runCli(['search', 'render widget', '--root', root]);
    runCli(['open', '.env', '--root', root]);
    serve(root, [], [{ op: 'status' }, { op: 'search', q: 'x'.repeat(4000) }, { op: 'search', q: 'y', top_k: 0 }]);
    const audit = cliJson(root, ['audit', '--limit', '10']);
    const entries = audit.entries as { frontend: string; op: string; outcome: string; blocked: boolean; args: Json; request_id: string; duration_ms: number }[];
    expect(entries.map((entry) => [entry.frontend, entry.op, entry.outcome])).toEqual([
      ['cli', 'search', 'ok'],
      ['cli', 'open', 'BLOCKED'],
      ['jsonl', 'status', 'ok'],
      ['jsonl', 'search', 'ok'],
      ['jsonl', 'search', 'BAD_REQUEST'],
    ]);
    expect(entries[0]!.args).toEqual({ q: 'render widget' });
    expect(entries[1]).toMatchObject({ blocked: true, args: { path: '.env' } });
    expect(String(entries[3]!.args.q)).toMatch(/^x{200}… \(4000 characters\)$/);
    expect(entries[4]!.args).toEqual({ q: 'y', top_k: 0 });
    expect(new Set(entries.map((entry) => entry.request_id)).size).toBe(5);
    // `audit` itself is a call: the next read sees it.
    expect((cliJson(root, ['audit', '--limit', '1']).entries as { op: string }[])[0]!.op).toBe('audit');
    expect(cliJson(root, ['audit', '--since', '1h']).total).toBeGreaterThanOrEqual(6);
    const bad = runCli(['audit', '--since', 'yesterday', '--root', root]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--since must be an ISO time/);
  });

  it('is rotated by size: past 4 MiB the log moves to audit.1.jsonl, and reads span both', () => {
    const root = limitsRepo();
    runCli(['status', '--root', root]);
    const log = join(root, '.repodex', 'audit.jsonl');
    const filler = `${JSON.stringify({ time: '2026-01-01T00:00:00.000Z', request_id: 'old', frontend: 'cli', op: 'status', args: {}, outcome: 'ok', blocked: false, duration_ms: 1 })}\n`;
    writeFileSync(log, filler.repeat(Math.ceil((4 * 1024 * 1024) / filler.length) + 1), { flag: 'a' });
    runCli(['status', '--root', root]);
    expect(existsSync(join(root, '.repodex', 'audit.1.jsonl'))).toBe(true);
    expect(statSync(log).size).toBeLessThan(10_000);
    const audit = cliJson(root, ['audit', '--limit', '3']);
    // The newest three: two from the rotated file, then the call that rotated it (the audit call itself is logged after it answers).
    const newest = audit.entries as { op: string; request_id: string }[];
    expect(newest.map((entry) => entry.request_id.length > 3)).toEqual([false, false, true]);
    expect(audit.total).toBeGreaterThan(1000);
  });
});
