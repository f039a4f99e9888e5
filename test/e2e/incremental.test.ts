import { appendFileSync, existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS } from '../../src/index/meta.js';
import { type CliRun, makeRepo, runCli, tempDir, prng, pick, capitalize } from '../helpers.js';

// Incremental sync (files unchanged since the previous generation reuse its chunk boundaries and
// outline) and worker-thread preparation must both be invisible in the artifacts: whatever path a
// sync takes, the generation it writes is byte-identical to a `sync --force` of the same tree.

const VERBS = ['load', 'parse', 'render', 'merge', 'resolve', 'flush', 'encode', 'decode', 'retry', 'validate'];
const NOUNS = ['config', 'buffer', 'token', 'segment', 'cursor', 'ledger', 'socket', 'session', 'payload', 'cache'];

function pad(index: number): string {
  return String(index).padStart(3, '0');
}

/** `count` valid statements, each a line, accumulating into `total`. */
function statements(rng: () => number, count: number, indent: string, comment: string): string[] {
  return Array.from({ length: count }, (_, i) => `${indent}total += ${Math.floor(rng() * 1000)}; ${comment} ${pick(rng, VERBS)} ${pick(rng, NOUNS)} step ${i}`);
}

/** A TypeScript module: a class with a field and methods, a function and an arrow-function const; some are long enough to be split at their members. */
function tsModule(rng: () => number, index: number): string {
  const noun = pick(rng, NOUNS);
  const className = `${capitalize(noun)}Service${index}`;
  const lines = [`import type { Options } from './options';`, '', `/** Service number ${index}. */`, `export class ${className} {`, '  private calls = 0;', ''];
  const methods = 2 + Math.floor(rng() * 4);
  for (let m = 0; m < methods; m++) {
    const verb = pick(rng, VERBS);
    lines.push(
      `  ${verb}${capitalize(noun)}${index}x${m}(input: string): number {`,
      '    let total = input.length;',
      ...statements(rng, 3 + Math.floor(rng() * 40), '    ', '//'),
      '    this.calls++;',
      '    return total;',
      '  }',
      '',
    );
  }
  lines.push('}', '');
  lines.push(
    `export function ${pick(rng, VERBS)}${capitalize(noun)}Helper${index}(options: Options): number {`,
    '  let total = 0;',
    ...statements(rng, 2 + Math.floor(rng() * 12), '  ', '//'),
    '  return total;',
    '}',
    '',
  );
  lines.push(`export const ${pick(rng, VERBS)}${capitalize(noun)}Arrow${index} = (value: number): number => value * ${index};`, '');
  return lines.join('\n');
}

/** A Python module: a class with methods and a top-level function. */
function pyModule(rng: () => number, index: number): string {
  const noun = pick(rng, NOUNS);
  const lines = [`class ${capitalize(noun)}Store${index}(object):`, `    """Store number ${index}."""`, ''];
  for (let m = 0; m < 3; m++) {
    lines.push(
      `    def ${pick(rng, VERBS)}_${noun}_${index}_${m}(self, value):`,
      '        total = 0',
      ...statements(rng, 2 + Math.floor(rng() * 10), '        ', '#'),
      '        return total',
      '',
    );
  }
  lines.push('', `def ${pick(rng, VERBS)}_${noun}_helper_${index}(value):`, '    total = 0', ...statements(rng, 3, '    ', '#'), '    return total', '');
  return lines.join('\n');
}

/** A Markdown note (no language adapter: always chunked as text). */
function mdNote(rng: () => number, index: number): string {
  const paragraphs = Array.from({ length: 3 }, () => Array.from({ length: 8 }, () => `${pick(rng, VERBS)} the ${pick(rng, NOUNS)}`).join(', '));
  return `# Note ${index}\n\n${paragraphs.join('\n\n')}\n`;
}

const TS_FILES = 136;
const PY_FILES = 14;
const MD_FILES = 8;

function repoFiles(): Record<string, string> {
  const rng = prng(0x51ac0de5);
  const files: Record<string, string> = {
    'src/options.ts': 'export interface Options {\n  verbose: boolean;\n  retries: number;\n}\n',
  };
  for (let i = 0; i < TS_FILES; i++) files[`src/gen/part-${i % 4}/module-${pad(i)}.ts`] = tsModule(rng, i);
  for (let i = 0; i < PY_FILES; i++) files[`py/store_${pad(i)}.py`] = pyModule(rng, i);
  for (let i = 0; i < MD_FILES; i++) files[`docs/note-${pad(i)}.md`] = mdNote(rng, i);
  return files;
}

const FILE_COUNT = TS_FILES + PY_FILES + MD_FILES + 1;
/** Files with a language adapter: enough to cross the worker threshold (96). */
const PARSE_COUNT = TS_FILES + PY_FILES + 1;

interface SyncSummary {
  files_scanned: number;
  files_indexed: number;
  files_reused: number;
  text_fallbacks: Record<string, number>;
  chunks_created: number;
  chunks_unchanged: number;
  chunks_deleted: number;
  chunks_total: number;
  errors: { path: string; reason: string }[];
}

interface SearchReport {
  results: { path: string; start_line: number; end_line: number; symbol: string | null }[];
}

interface OutlineReport {
  path: string;
  parsed: boolean;
  source: 'index' | 'parse';
  symbols: { kind: string; name: string; start_line: number; end_line: number }[];
}

describe('incremental sync and worker threads', () => {
  let root: string;
  /** A preload script that records every worker thread it runs in (one line per thread). */
  let preload: string;
  let marks: string;

  const meta = (): { generation_dir: string } => JSON.parse(readFileSync(join(root, '.repodex', 'meta.json'), 'utf8')) as { generation_dir: string };
  /** The five artifacts of the current generation, copied (later syncs remove old generations). */
  const artifacts = (): Map<string, Buffer> => {
    const dir = join(root, '.repodex', meta().generation_dir);
    return new Map(ARTIFACTS.map((name) => [name, Buffer.from(readFileSync(join(dir, name)))]));
  };
  const expectSameBytes = (expected: Map<string, Buffer>, actual: Map<string, Buffer>, what: string): void => {
    for (const name of ARTIFACTS) {
      expect(expected.get(name)!.length, name).toBeGreaterThan(0);
      // Buffer.equals, not toEqual: a failing diff of binary files is unreadable.
      expect(actual.get(name)!.equals(expected.get(name)!), `${name} differs: ${what}`).toBe(true);
    }
  };

  /** Run `sync`, returning its summary and the ids of the worker threads it started. */
  const sync = (args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): { summary: SyncSummary; workers: Set<string> } => {
    rmSync(marks, { force: true });
    const run: CliRun = runCli(['sync', ...args, '--json', '--root', root], {
      env: { REPODEX_SYNC_WORKERS: undefined, ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(preload)}`, REPODEX_TEST_MARKS: marks },
    });
    expect(run.code, run.stderr).toBe(0);
    const workers = new Set(existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean) : []);
    return { summary: run.json<SyncSummary>(), workers };
  };
  const search = (query: string): SearchReport => {
    const run = runCli(['search', query, '--json', '--root', root], { env: { REPODEX_INDEXING: '0' } });
    expect(run.code, run.stderr).toBe(0);
    return run.json<SearchReport>();
  };
  const outline = (path: string): OutlineReport => {
    const run = runCli(['outline', path, '--json', '--root', root]);
    expect(run.code, run.stderr).toBe(0);
    return run.json<OutlineReport>();
  };

  beforeAll(() => {
    const tools = tempDir('repodex-preload-');
    preload = join(tools, 'mark-workers.cjs');
    marks = join(tools, 'workers.txt');
    writeFileSync(
      preload,
      [
        "const { isMainThread, threadId } = require('node:worker_threads');",
        "if (!isMainThread && process.env.REPODEX_TEST_MARKS) require('node:fs').appendFileSync(process.env.REPODEX_TEST_MARKS, `${threadId}\\n`);",
        '',
      ].join('\n'),
    );
    root = makeRepo(repoFiles());
  });

  it('parses a large tree in worker threads', () => {
    const { summary, workers } = sync(['--force']);
    expect(summary).toMatchObject({ files_scanned: FILE_COUNT, files_indexed: FILE_COUNT, files_reused: 0, text_fallbacks: {}, errors: [] });
    expect(PARSE_COUNT).toBeGreaterThanOrEqual(96);
    expect(workers.size).toBeGreaterThanOrEqual(1);
    // The generated classes are long enough to be split at their members.
    expect(summary.chunks_total).toBeGreaterThan(FILE_COUNT);
  });

  it('an incremental sync gives the same bytes as a full rebuild (regression)', () => {
    // Regression: reused files were recorded as `no-adapter` in symbols.bin instead of parsed,
    // so an incremental sync wrote different bytes than --force and its outlines were ignored.
    const before = sync(['--force']).summary;
    const modified = 'src/gen/part-3/module-007.ts';
    const added = 'src/gen/added/fresh-module.ts';
    const deleted = 'src/gen/part-3/module-011.ts';
    appendFileSync(join(root, modified), '\nexport function appendedQuokkaHelper(count: number): number {\n  return count * 2;\n}\n');
    makeRepo({ [added]: 'export class FreshWombat {\n  greetWombat(): string {\n    return "hello";\n  }\n}\n' }, root);
    const deletedClass = /export class (\w+)/.exec(readFileSync(join(root, deleted), 'utf8'))![1]!;
    rmSync(join(root, deleted));

    const { summary, workers } = sync();
    expect(summary.files_indexed).toBe(before.files_indexed);
    // Every indexed file except the modified one is unchanged; the added one is new; the deleted one is gone.
    expect(summary.files_reused).toBe(before.files_indexed - 2);
    expect(summary.chunks_created).toBeGreaterThanOrEqual(2); // the modified file's last chunk and the new file
    expect(summary.chunks_deleted).toBeGreaterThanOrEqual(2); // the deleted file's chunks and the modified file's old last chunk
    expect(summary.chunks_unchanged + summary.chunks_created).toBe(summary.chunks_total);
    expect(summary.text_fallbacks).toEqual({});
    // Two files to parse: far below the worker threshold, so no thread is started.
    expect(workers.size).toBe(0);

    const incremental = artifacts();
    const reused = outline('src/gen/part-0/module-000.ts');
    expect(search('appendedQuokkaHelper').results[0]?.path).toBe(modified);
    expect(search('FreshWombat').results[0]).toMatchObject({ path: added, symbol: 'class FreshWombat' });
    expect(search(deletedClass).results.map((hit) => hit.path)).not.toContain(deleted);

    const full = sync(['--force']).summary;
    expect(full.files_reused).toBe(0);
    expectSameBytes(incremental, artifacts(), 'incremental sync vs sync --force');
    // A reused file's stored outline is complete, so outline answered from the incremental generation.
    expect(reused.source).toBe('index');
    expect(reused.symbols.length).toBeGreaterThan(3);
  });

  it('worker threads and in-process preparation give the same bytes', () => {
    const inProcess = sync(['--force'], { REPODEX_SYNC_WORKERS: '0' });
    expect(inProcess.workers.size).toBe(0);
    const inline = artifacts();
    const pooled = sync(['--force'], { REPODEX_SYNC_WORKERS: '2' });
    expect(pooled.workers.size).toBe(2);
    expect(pooled.summary).toEqual({ ...inProcess.summary, generation: expect.any(Number) as number, duration_ms: expect.any(Number) as number });
    expectSameBytes(inline, artifacts(), 'REPODEX_SYNC_WORKERS=0 vs 2');
  });

  it('a sync with nothing changed reuses every indexed file and writes the same bytes', () => {
    const previous = artifacts();
    const { summary, workers } = sync();
    expect(summary.files_reused).toBe(summary.files_indexed);
    expect(summary).toMatchObject({ files_indexed: FILE_COUNT, chunks_created: 0, chunks_deleted: 0, text_fallbacks: {} });
    expect(summary.chunks_unchanged).toBe(summary.chunks_total);
    expect(workers.size).toBe(0);
    expectSameBytes(previous, artifacts(), 'no-change sync vs the previous generation');
  });

  it('a file whose mtime changed but not its content is reused (the content hash decides) and changes no chunk', () => {
    const touched = 'py/store_003.py';
    const future = new Date('2031-01-01T00:00:00Z');
    utimesSync(join(root, touched), future, future);
    // The stat changed, so the index is dirty until a sync records the new mtime…
    expect(runCli(['status', '--json', '--root', root]).json<{ dirty: boolean }>().dirty).toBe(true);
    const { summary } = sync();
    // …but the content hash proves the file unchanged: it is reused, not parsed again.
    expect(summary.files_reused).toBe(summary.files_indexed);
    expect(summary).toMatchObject({ chunks_created: 0, chunks_deleted: 0 });
    expect(summary.chunks_unchanged).toBe(summary.chunks_total);
    expect(runCli(['status', '--json', '--root', root]).json<{ dirty: boolean }>().dirty).toBe(false);
  });

  it('indexes a file that does not parse as text, names it, and keeps it searchable', () => {
    const broken = 'src/broken/unterminated.ts';
    makeRepo({ [broken]: 'export class {\n  brokenPlatypusMarker(): number {\n    return 1;\n' }, root);
    const first = sync().summary;
    expect(first.files_indexed).toBe(FILE_COUNT + 1);
    expect(first.text_fallbacks).toEqual({ 'parse-error': 1 });
    expect(first.errors).toEqual([{ path: broken, reason: expect.stringContaining('parse error') as string }]);
    expect(first.files_reused).toBe(FILE_COUNT);

    const hit = search('brokenPlatypusMarker').results[0];
    expect(hit).toMatchObject({ path: broken, start_line: 1, end_line: 3, symbol: null });
    expect(outline(broken)).toMatchObject({ parsed: false, source: 'index', symbols: [] });

    // Reused next time, still recorded as a parse-error fallback, and byte-identical to --force.
    const again = sync().summary;
    expect(again.files_reused).toBe(FILE_COUNT + 1);
    expect(again.text_fallbacks).toEqual({ 'parse-error': 1 });
    expect(again.errors.map((error) => error.path)).toEqual([broken]);
    const incremental = artifacts();
    sync(['--force']);
    expectSameBytes(incremental, artifacts(), 'incremental sync with a parse-error file vs sync --force');
  });
});
