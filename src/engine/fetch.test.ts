import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo } from '../../test/helpers.js';
import { createEngine, createStore } from '../compose.js';
import type { ChunkRecord } from '../index/model.js';
import { handle } from '../protocol/index.js';
import { FetchRequest } from '../protocol/schemas.js';
import { Engine } from './engine.js';
import type { FetchedChunk } from './fetch.js';
import type { FetchReport } from './engine.js';

type Served = Extract<FetchedChunk, { lines: string[] }>;
type Refused = Exclude<FetchedChunk, { lines: string[] }>;

function served(chunk: FetchedChunk | undefined): Served {
  if (!chunk || !('lines' in chunk)) throw new Error(`expected content, got ${JSON.stringify(chunk)}`);
  return chunk;
}

function refused(chunk: FetchedChunk | undefined): Refused {
  if (!chunk || 'lines' in chunk) throw new Error(`expected a refusal, got ${JSON.stringify(chunk)}`);
  return chunk;
}

/** ~150 lines in three declarations, with blank lines, indentation, a tab and trailing spaces. */
function sourceLines(): string[] {
  const lines: string[] = [];
  for (let f = 0; f < 3; f++) {
    lines.push(`export function step${f}(input: number): number {`);
    for (let i = 0; i < 45; i++) {
      if (i % 11 === 10) lines.push('');
      else lines.push(`  const v${f}_${i} = input * ${i}; // line ${i} of step${f}${i % 7 === 0 ? '   ' : ''}${i % 9 === 0 ? '\tdone' : ''}`);
    }
    lines.push('  return input;', '}', '');
  }
  return lines;
}

const LINES = sourceLines();
const LF = `${LINES.join('\n')}\n`;
const CRLF = `${LINES.join('\r\n')}\r\n`;
const CR = `${LINES.join('\r')}\r`;
/**
 * Every line ending at once, and a byte-order mark, still numbers the same lines. (A lone CR is
 * never followed by an empty LF-ended line: that pair would be one CRLF.)
 */
const MIXED = `\ufeff${LINES.map((line, i) => line + (i % 3 === 2 && LINES[i + 1] !== '' ? '\r' : i % 2 === 0 ? '\n' : '\r\n')).join('')}`;
/** 300 lines with no blank line and no declaration: only the 120-line hard cap cuts it. */
const FLAT = Array.from({ length: 300 }, (_, i) => `    flat line ${i + 1} value_${i + 1}`);

/** The chunks of one file in the engine's current index, in order. */
async function chunksOf(engine: Engine, path: string): Promise<ChunkRecord[]> {
  const view = await engine.view();
  const slot = view.findFile(path);
  if (slot < 0) return [];
  const { from, to } = view.fileDocs(slot);
  return view.chunks(Array.from({ length: to - from }, (_, i) => from + i));
}

/** An engine that never syncs on its own (REPODEX_INDEXING=0): reads answer from the index as it is. */
function manualEngine(root: string): Engine {
  return new Engine(root, createStore(root), { autoIndex: false });
}

describe('line numbering and endings', () => {
  let engine: Engine;

  beforeAll(async () => {
    const root = makeRepo({
      'src/lf.ts': LF,
      'src/crlf.ts': CRLF,
      'src/cr.ts': CR,
      'src/mixed.ts': MIXED,
      'src/flat.ts': `${FLAT.join('\r\n')}\r\n`,
      'src/long.ts': `const short = 1;\nconst long = "${'x'.repeat(5000)}";\nconst after = 2;\n`,
      // Aim chunks at the cap, so the flat file has a chunk of exactly 120 lines.
      '.repodex/config.json': `${JSON.stringify({ chunk: { target_lines: 120 } })}\n`,
    });
    engine = createEngine({ root });
    await engine.sync();
  });

  it('CRLF, CR-only and mixed files chunk and number exactly like LF', async () => {
    const lfChunks = await chunksOf(engine, 'src/lf.ts');
    expect(lfChunks.length).toBeGreaterThan(1);
    const spans = (chunks: ChunkRecord[]): [number, number][] => chunks.map((chunk) => [chunk.startLine, chunk.endLine]);
    const lfReport = await engine.fetch(lfChunks.map((chunk) => chunk.id));
    for (const path of ['src/crlf.ts', 'src/cr.ts', 'src/mixed.ts']) {
      const chunks = await chunksOf(engine, path);
      expect(spans(chunks), path).toEqual(spans(lfChunks));
      const report = await engine.fetch(chunks.map((chunk) => chunk.id));
      report.chunks.forEach((chunk, i) => {
        const got = served(chunk);
        const lf = served(lfReport.chunks[i]);
        expect(got.stale, path).toBe(false);
        expect([got.start_line, got.end_line, got.lines]).toEqual([lf.start_line, lf.end_line, lf.lines]);
      });
    }
  });

  it('lines read "N| text" with N the line number in the file and no carriage returns', async () => {
    for (const path of ['src/lf.ts', 'src/crlf.ts', 'src/cr.ts', 'src/mixed.ts']) {
      const chunks = await chunksOf(engine, path);
      const report = await engine.fetch(chunks.map((chunk) => chunk.id));
      let covered = 0;
      for (const chunk of report.chunks.map(served)) {
        expect(chunk.lines).toHaveLength(chunk.end_line - chunk.start_line + 1);
        chunk.lines.forEach((line, i) => {
          expect(line).toBe(`${chunk.start_line + i}| ${LINES[chunk.start_line - 1 + i]}`);
          expect(line).not.toMatch(/[\r\ufeff]/);
        });
        covered = Math.max(covered, chunk.end_line);
      }
      // The last non-blank line is covered by some chunk.
      expect(covered).toBe(LINES.length - 1);
    }
  });

  it('max_lines defaults to 120; chunks never exceed the 120-line hard cap', async () => {
    const chunks = await chunksOf(engine, 'src/flat.ts');
    for (const chunk of chunks) expect(chunk.endLine - chunk.startLine + 1).toBeLessThanOrEqual(120);
    const full = chunks.find((chunk) => chunk.endLine - chunk.startLine + 1 === 120);
    expect(full).toBeDefined();
    const report = await engine.fetch([full!.id]);
    expect(report.max_lines).toBe(120);
    const got = served(report.chunks[0]);
    expect(got.lines).toHaveLength(120);
    expect(got.truncated).toBe(false);
    expect(got.lines).toEqual(FLAT.slice(full!.startLine - 1, full!.endLine).map((line, i) => `${full!.startLine + i}| ${line}`));
  });

  it('max_lines is capped at 120 by the protocol schema', async () => {
    const chunks = await chunksOf(engine, 'src/flat.ts');
    const full = chunks.find((chunk) => chunk.endLine - chunk.startLine + 1 === 120)!;
    for (const asked of [121, 500, 1_000_000]) {
      const request = FetchRequest.parse({ op: 'fetch', ids: [full.id], max_lines: asked });
      expect(request.max_lines).toBe(120);
      const report = (await handle(engine, request)) as FetchReport;
      expect(report.max_lines).toBe(120);
      expect(served(report.chunks[0]).lines).toHaveLength(120);
    }
    const byDefault = (await handle(engine, FetchRequest.parse({ op: 'fetch', ids: [full.id] }))) as FetchReport;
    expect(byDefault.max_lines).toBe(120);
    for (const max_lines of [0, -5, 1.5, '10']) {
      expect(FetchRequest.safeParse({ op: 'fetch', ids: [0], max_lines }).success).toBe(false);
    }
  });

  it('a chunk longer than max_lines returns its first max_lines lines, truncated', async () => {
    const chunk = (await chunksOf(engine, 'src/crlf.ts'))[0]!;
    const length = chunk.endLine - chunk.startLine + 1;
    expect(length).toBeGreaterThan(10);
    const report = await engine.fetch([chunk.id], 10);
    expect(report.max_lines).toBe(10);
    const got = served(report.chunks[0]);
    expect(got.truncated).toBe(true);
    expect(got.start_line).toBe(chunk.startLine);
    expect(got.end_line).toBe(chunk.endLine);
    expect(got.lines).toEqual(LINES.slice(chunk.startLine - 1, chunk.startLine - 1 + 10).map((line, i) => `${chunk.startLine + i}| ${line}`));
    // The boundary: exactly as many lines as the chunk has is not truncated, one fewer is.
    expect(served((await engine.fetch([chunk.id], length)).chunks[0]).truncated).toBe(false);
    expect(served((await engine.fetch([chunk.id], length)).chunks[0]).lines).toHaveLength(length);
    const short = served((await engine.fetch([chunk.id], length - 1)).chunks[0]);
    expect(short.truncated).toBe(true);
    expect(short.lines).toHaveLength(length - 1);
    const flat = (await chunksOf(engine, 'src/flat.ts')).find((chunk) => chunk.endLine - chunk.startLine + 1 === 120)!;
    const fifty = served((await engine.fetch([flat.id], 50)).chunks[0]);
    expect(fifty.lines).toEqual(FLAT.slice(flat.startLine - 1, flat.startLine - 1 + 50).map((line, i) => `${flat.startLine + i}| ${line}`));
    expect(fifty.truncated).toBe(true);
  });

  it('overlong lines are cut and flagged, never dropped', async () => {
    const [chunk] = await chunksOf(engine, 'src/long.ts');
    const got = served((await engine.fetch([chunk!.id])).chunks[0]);
    expect(got.lines).toHaveLength(3);
    expect(got.long_lines_cut).toBe(true);
    expect(got.lines[1]!.startsWith('2| const long = "xxx')).toBe(true);
    expect(got.lines[1]!.length).toBeLessThan(2100);
    expect(got.lines[2]).toBe('3| const after = 2;');
  });

  it('processes at most 5 distinct ids and lists the rest as ignored_ids', async () => {
    const ids = [...(await chunksOf(engine, 'src/lf.ts')), ...(await chunksOf(engine, 'src/crlf.ts'))].map((chunk) => chunk.id);
    const seven = [...ids.slice(0, 6), 424242];
    expect(new Set(seven).size).toBe(7);
    const report = await engine.fetch(seven);
    expect(report.chunks.map((chunk) => chunk.chunk_id)).toEqual(seven.slice(0, 5));
    expect(report.ignored_ids).toEqual(seven.slice(5));
    const viaSchema = (await handle(engine, FetchRequest.parse({ op: 'fetch', ids: seven }))) as FetchReport;
    expect(viaSchema.chunks).toHaveLength(5);
    expect(viaSchema.ignored_ids).toEqual([ids[5], 424242]);
    expect((await engine.fetch(seven.slice(0, 5))).ignored_ids).toEqual([]);
    // A repeated id is fetched once.
    const repeated = await engine.fetch([ids[0]!, ids[0]!, ids[1]!]);
    expect(repeated.chunks.map((chunk) => chunk.chunk_id)).toEqual([ids[0], ids[1]]);
  });

  it('ids that name no chunk get an error entry saying to search again, in request order', async () => {
    const [known] = await chunksOf(engine, 'src/lf.ts');
    const report = await engine.fetch([99_999, known!.id, 2 ** 32 - 1]);
    const first = refused(report.chunks[0]);
    expect(first.chunk_id).toBe(99_999);
    expect(first.blocked).toBe(false);
    expect(first.error).toBe('chunk 99999 is gone: search again');
    expect(first.hint).toMatch(/unchanged/);
    expect(served(report.chunks[1]).chunk_id).toBe(known!.id);
    expect(refused(report.chunks[2]).error).toMatch(/is gone/);
    expect(report.generation).toBe((await engine.view()).meta.generation);
  });
});

describe('files changed after sync, automatic indexing off', () => {
  it('an edited file is served as it is now, flagged stale; untouched chunks are not stale', async () => {
    const root = makeRepo({ 'src/edit.ts': CRLF, 'src/same.ts': LF });
    const engine = manualEngine(root);
    await engine.sync();
    const chunks = await chunksOf(engine, 'src/edit.ts');
    expect(chunks.length).toBeGreaterThan(1);
    const last = chunks[chunks.length - 1]!;
    // Change one line of the last chunk, keeping the line count: earlier chunks keep their text.
    const edited = [...LINES];
    edited[last.startLine] = '  const changed = "after sync";';
    writeFileSync(join(root, 'src/edit.ts'), `${edited.join('\r\n')}\r\n`);
    const report = await engine.fetch([last.id, chunks[0]!.id, (await chunksOf(engine, 'src/same.ts'))[0]!.id]);
    expect(report.freshness.dirty).toBe(true);
    expect(report.warnings.join(' ')).toMatch(/stale/);
    const stale = served(report.chunks[0]);
    expect(stale.stale).toBe(true);
    expect(stale.lines[1]).toBe(`${last.startLine + 1}|   const changed = "after sync";`);
    expect(served(report.chunks[1]).stale).toBe(false);
    expect(served(report.chunks[2]).stale).toBe(false);
  });

  it('lines inserted above a chunk make it stale', async () => {
    const root = makeRepo({ 'src/shift.ts': LF });
    const engine = manualEngine(root);
    await engine.sync();
    const [first] = await chunksOf(engine, 'src/shift.ts');
    writeFileSync(join(root, 'src/shift.ts'), `// a new header line\n${LF}`);
    expect(served((await engine.fetch([first!.id])).chunks[0]).stale).toBe(true);
  });

  it('a deleted file gives an error entry that says to sync', async () => {
    const root = makeRepo({ 'src/gone.ts': LF });
    const engine = manualEngine(root);
    await engine.sync();
    const [chunk] = await chunksOf(engine, 'src/gone.ts');
    rmSync(join(root, 'src/gone.ts'));
    const entry = refused((await engine.fetch([chunk!.id])).chunks[0]);
    expect(entry.blocked).toBe(false);
    expect(entry.path).toBe('src/gone.ts');
    expect(entry.error).toMatch(/does not exist/);
    expect(entry.hint).toMatch(/sync/);
  });

  it('a credential written into a file after sync blocks all its chunks, the unchanged ones too, each time it is asked; taken out, they are served again', async () => {
    const root = makeRepo({ 'src/keys.ts': LF });
    const engine = manualEngine(root);
    await engine.sync();
    const chunks = await chunksOf(engine, 'src/keys.ts');
    const ids = chunks.map((chunk) => chunk.id).slice(0, 2);
    const clean = await engine.fetch(ids);
    expect(clean.chunks.map(served).every((chunk) => !chunk.stale)).toBe(true);
    // The last line only: the first chunks keep their text, so only the credential can refuse them.
    const key = `ghp_${'k7Qm2xVb9Lr4Tn6Wp8Zc'}${'3Hd5Jf1Gs0Ya'}${'E4uR'}`;
    writeFileSync(join(root, 'src/keys.ts'), `${LF}export const deployToken = "${key}";\n`);
    for (let ask = 0; ask < 2; ask++) {
      const report = await engine.fetch(ids);
      for (const chunk of report.chunks.map(refused)) expect(chunk.blocked).toBe(true);
      expect(JSON.stringify(report)).not.toContain(key);
    }
    writeFileSync(join(root, 'src/keys.ts'), LF);
    expect((await engine.fetch(ids)).chunks.map(served).map((chunk) => chunk.lines)).toEqual(clean.chunks.map(served).map((chunk) => chunk.lines));
  });

  it('a file swapped for a symlink leaving the root, or to a secret, is blocked', async () => {
    const outside = makeRepo({ 'secret.ts': 'export const outsideSecret = "zq-outside-7731";\n' });
    const root = makeRepo({ 'src/a.ts': LF, 'src/b.ts': LF, '.env': 'TOKEN=zq-env-5501\n' });
    const engine = manualEngine(root);
    await engine.sync();
    const [a] = await chunksOf(engine, 'src/a.ts');
    const [b] = await chunksOf(engine, 'src/b.ts');
    rmSync(join(root, 'src/a.ts'));
    symlinkSync(join(outside, 'secret.ts'), join(root, 'src/a.ts'));
    rmSync(join(root, 'src/b.ts'));
    symlinkSync('../.env', join(root, 'src/b.ts'));
    const report = await engine.fetch([a!.id, b!.id]);
    for (const chunk of report.chunks.map(refused)) {
      expect(chunk.blocked).toBe(true);
      expect(chunk.hint.length).toBeGreaterThan(0);
    }
    expect(refused(report.chunks[0]).error).toMatch(/outside the repository/);
    expect(refused(report.chunks[1]).error).toMatch(/denylist/);
    expect(JSON.stringify(report)).not.toMatch(/zq-outside-7731|zq-env-5501/);
  });
});

describe('stable chunk ids across syncs', () => {
  it('a fetched id returns the same code after an unrelated sync, and is refused after its chunk is removed', async () => {
    const root = makeRepo({ 'src/keep.ts': LF, 'src/other.ts': 'export const other = 1;\n' });
    const engine = createEngine({ root });
    await engine.sync();
    const [kept] = await chunksOf(engine, 'src/keep.ts');
    const before = served((await engine.fetch([kept!.id])).chunks[0]);
    // An unrelated edit: the next fetch syncs first, and the id still names the same code.
    writeFileSync(join(root, 'src/other.ts'), 'export const other = 2;\nexport const more = 3;\n');
    writeFileSync(join(root, 'src/new.ts'), 'export const brandNew = 4;\n');
    const after = await engine.fetch([kept!.id]);
    expect(after.synced?.mode).toBe('incremental');
    expect(after.generation).toBe(2);
    expect(served(after.chunks[0])).toEqual(before);
    // Its file deleted: the id is refused, never answered with other code.
    rmSync(join(root, 'src/keep.ts'));
    const gone = refused((await engine.fetch([kept!.id])).chunks[0]);
    expect(gone.error).toBe(`chunk ${kept!.id} is gone: search again`);
    expect(gone.path).toBeUndefined();
  });

  it('an edited chunk loses its id (refused); the untouched chunks of the same file keep theirs', async () => {
    const root = makeRepo({ 'src/edit.ts': LF });
    const engine = createEngine({ root });
    await engine.sync();
    const chunks = await chunksOf(engine, 'src/edit.ts');
    expect(chunks.length).toBeGreaterThan(2);
    const last = chunks[chunks.length - 1]!;
    const edited = [...LINES];
    edited[last.startLine] = '  const changed = "after sync";';
    writeFileSync(join(root, 'src/edit.ts'), `${edited.join('\n')}\n`);
    const report = await engine.fetch(chunks.map((chunk) => chunk.id));
    expect(report.synced?.chunks_created).toBe(1);
    expect(refused(report.chunks[chunks.length - 1]).error).toBe(`chunk ${last.id} is gone: search again`);
    for (const chunk of report.chunks.slice(0, -1)) expect(served(chunk).stale).toBe(false);
  });

  it('lines inserted above keep the ids of the chunks below, at their new lines', async () => {
    const root = makeRepo({ 'src/shift.ts': LF });
    const engine = createEngine({ root });
    await engine.sync();
    const chunks = await chunksOf(engine, 'src/shift.ts');
    writeFileSync(join(root, 'src/shift.ts'), `// a new header line\n${LF}`);
    const report = await engine.fetch(chunks.map((chunk) => chunk.id));
    // The first chunk took the header in (its content changed); every later one is the same chunk, one line down.
    expect(refused(report.chunks[0]).error).toMatch(/is gone/);
    report.chunks.slice(1).forEach((chunk, i) => {
      const got = served(chunk);
      expect(got.start_line).toBe(chunks[i + 1]!.startLine + 1);
      expect(got.stale).toBe(false);
      expect(got.lines[0]).toBe(`${got.start_line}| ${LINES[chunks[i + 1]!.startLine - 1]}`);
    });
  });
});
