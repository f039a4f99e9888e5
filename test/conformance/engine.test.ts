import { cpSync, mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/compose.js';
import { Engine } from '../../src/engine/engine.js';
import { type ResponseOf, handle } from '../../src/protocol/index.js';
import type { IndexStore, StoreSpec } from '../../src/store/backend.js';
import { capitalize, makeRepo, pick, prng, tempDir, yieldToEventLoop } from '../helpers.js';
import { testBackends } from './backends.js';

// Engine behaviour every index store must show (kysely-style: one suite, every backend): the
// backends BACKENDS names (default fs, postgres, citus; a database backend runs where its test
// server's URL is set, see backends.ts).

const VERBS = ['load', 'parse', 'render', 'merge', 'resolve', 'flush', 'encode', 'decode', 'retry', 'validate'];
const NOUNS = ['config', 'buffer', 'token', 'segment', 'cursor', 'ledger', 'socket', 'session', 'payload', 'cache'];

function tsModule(rng: () => number, tag: number): string {
  const lines: string[] = [];
  for (let f = 0; f < 1 + Math.floor(rng() * 4); f++) {
    const name = `${pick(rng, VERBS)}${capitalize(pick(rng, NOUNS))}${tag}x${f}`;
    lines.push(`/** ${pick(rng, VERBS)} the ${pick(rng, NOUNS)}. */`, `export function ${name}(input: number): number {`);
    for (let b = 0; b < 2 + Math.floor(rng() * 30); b++) lines.push(`  input += ${Math.floor(rng() * 100)}; // ${pick(rng, VERBS)} ${pick(rng, NOUNS)}`);
    lines.push('  return input;', '}', '');
  }
  return lines.join('\n');
}

function mdNote(rng: () => number, tag: number): string {
  return `# Note ${tag}\n\n${Array.from({ length: 1 + Math.floor(rng() * 6) }, () => `${pick(rng, VERBS)} the ${pick(rng, NOUNS)}`).join(', ')}\n`;
}

function fileFor(rng: () => number, tag: number): [string, string] {
  const folder = pick(rng, ['src', 'src/core', 'lib', 'docs', 'src/deep/nested']);
  return rng() < 0.75 ? [`${folder}/m${tag}.ts`, tsModule(rng, tag)] : [`${folder}/n${tag}.md`, mdNote(rng, tag)];
}

const QUERIES = ['load config', 'parse token cursor', 'flush buffer', 'retry session payload', 'validate ledger', 'encode decode segment', 'note', 'input'];

/** What an index answers, apart from which generation answered: searches (both modes), the catalog, fetched chunks, outlines. */
async function answers(engine: Engine): Promise<unknown> {
  const searches: unknown[] = [];
  const ids = new Set<number>();
  for (const q of QUERIES) {
    for (const mode of ['bm25', 'idf'] as const) {
      const report = await handle(engine, { op: 'search', q, mode });
      searches.push(report.results);
      for (const hit of report.results.slice(0, 3)) ids.add(hit.chunk_id);
    }
  }
  const files = (await handle(engine, { op: 'files' })).files.map(({ path, size, language, state, chunks }) => ({ path, size, language, state, chunks }));
  const fetched = (await handle(engine, { op: 'fetch', ids: [...ids].slice(0, 5) })).chunks;
  const outlines = [];
  for (const file of files.filter((f) => f.path.endsWith('.ts')).slice(0, 3)) outlines.push(await handle(engine, { op: 'outline', path: file.path }));
  return { searches, files, fetched, outlines };
}

/** A fresh build of a copy of the tree on the store `spec` names: what an incremental index must answer like. */
async function freshAnswersOn(root: string, spec: StoreSpec): Promise<unknown> {
  const copy = tempDir('repodex-fresh-');
  cpSync(root, copy, { recursive: true, filter: (source) => !source.includes('.repodex') });
  const engine = new Engine(copy, openStore(copy, spec), { autoIndex: true, lockWaitMs: 0 });
  await engine.sync();
  return answers(engine);
}

for (const backend of testBackends()) {
describe.skipIf(backend.missing !== undefined)(`engine conformance (store: ${backend.name})`, () => {
  const store = (root: string): IndexStore => openStore(root, backend.spec);
  /** An engine over the store under test; `auto` false behaves as REPODEX_INDEXING=0. */
  const engineFor = (root: string, auto = true): Engine => new Engine(root, store(root), { autoIndex: auto, lockWaitMs: 0 });
  const freshAnswers = (root: string): Promise<unknown> => freshAnswersOn(root, backend.spec);

  it('property: an incremental index answers exactly like a fresh build, over random add/modify/delete/rename/touch sequences', async () => {
    // Five random histories on the embedded store; two on a database, where each step's fresh build is a new repository in the same database.
    for (const seed of backend.spec.kind === 'fs' ? [11, 23, 37, 41, 59] : [11, 37]) {
      const rng = prng(seed);
      const files: Record<string, string> = {};
      for (let i = 0; i < 14; i++) {
        const [path, text] = fileFor(rng, i);
        files[path] = text;
      }
      const root = makeRepo(files);
      const engine = engineFor(root);
      expect((await engine.sync()).mode).toBe('full');
      const paths = (): string[] => Object.keys(files).filter((path) => files[path] !== undefined);
      const log: string[] = [];
      let tag = 100;
      for (let step = 0; step < 16; step++) {
        await yieldToEventLoop();
        // One to three operations per step, then one sync.
        for (let op = 0; op < 1 + Math.floor(rng() * 3); op++) {
          const kind = pick(rng, ['add', 'modify', 'delete', 'rename', 'touch', 'modify']);
          const existing = paths();
          if (kind === 'add' || existing.length < 3) {
            const [path, text] = fileFor(rng, tag++);
            files[path] = text;
            makeRepo({ [path]: text }, root);
            log.push(`add ${path}`);
          } else if (kind === 'modify') {
            const path = pick(rng, existing);
            const text = path.endsWith('.md') ? mdNote(rng, tag++) : tsModule(rng, tag++);
            files[path] = text;
            writeFileSync(join(root, path), text);
            log.push(`modify ${path}`);
          } else if (kind === 'delete') {
            const path = pick(rng, existing);
            delete files[path];
            rmSync(join(root, path));
            log.push(`delete ${path}`);
          } else if (kind === 'rename') {
            const path = pick(rng, existing);
            const to = path.replace(/(\.\w+)$/, `-moved${tag++}$1`);
            files[to] = files[path]!;
            delete files[path];
            mkdirSync(dirname(join(root, to)), { recursive: true });
            renameSync(join(root, path), join(root, to));
            log.push(`rename ${path} → ${to}`);
          } else {
            const path = pick(rng, existing);
            const at = new Date(Date.now() + 60_000 * (step + 1));
            utimesSync(join(root, path), at, at);
            log.push(`touch ${path}`);
          }
        }
        const summary = await engine.sync();
        expect(summary.mode, `seed ${seed} step ${step}: ${log.join('; ')}`).not.toBe('full');
        expect(await answers(engine), `seed ${seed} step ${step}: ${log.join('; ')}`).toEqual(await freshAnswers(root));
      }
    }
  });

  it('freshness: builds a missing index, refreshes a stale one, and with automatic indexing off answers with a `stale` warning', async () => {
    const root = makeRepo({ 'src/a.ts': 'export const alphaMarker = 1;\n' });
    const auto = engineFor(root);
    const first = await auto.search({ q: 'alphaMarker' });
    expect(first.synced?.mode).toBe('full');
    expect(first.results.map((hit) => hit.path)).toEqual(['src/a.ts']);
    expect(first.freshness).toMatchObject({ dirty: false, generation: first.generation });

    writeFileSync(join(root, 'src/b.ts'), 'export const betaMarker = 2;\n');
    const manual = engineFor(root, false);
    const stale = await manual.search({ q: 'betaMarker' });
    expect(stale.results.map((hit) => hit.path)).not.toContain('src/b.ts');
    expect(stale.freshness.dirty).toBe(true);
    expect(stale.warnings.join(' ')).toMatch(/index is stale/);
    expect((await manual.fetch([first.results[0]!.chunk_id])).warnings.join(' ')).toMatch(/index is stale/);

    const refreshed = await auto.search({ q: 'betaMarker' });
    expect(refreshed.synced).toMatchObject({ mode: 'incremental', files_scanned: 1 });
    expect(refreshed.results[0]?.path).toBe('src/b.ts');
    expect(refreshed.generation).toBe(first.generation + 1);

    // Without automatic indexing, no index is an error that says what to do.
    const empty = engineFor(makeRepo({ 'x.ts': 'export const x = 1;\n' }), false);
    await expect(empty.search({ q: 'x' })).rejects.toMatchObject({ code: 'INDEX_MISSING' });
  });

  it('a no-change sync writes nothing; chunk ids survive unrelated syncs and are refused once their chunk is gone', async () => {
    const root = makeRepo({ 'src/keep.ts': tsModule(prng(5), 1), 'src/edit.ts': tsModule(prng(6), 2) });
    const engine = engineFor(root);
    const built = await engine.sync();
    const again = await engine.sync();
    expect(again).toMatchObject({ mode: 'none', files_scanned: 0, generation: built.generation, chunks_created: 0 });
    const keep = (await engine.search({ q: 'input', glob: 'src/keep.ts' })).results[0]!;
    const before = (await engine.fetch([keep.chunk_id])).chunks[0];
    writeFileSync(join(root, 'src/edit.ts'), tsModule(prng(7), 3));
    const after = await engine.fetch([keep.chunk_id]);
    expect(after.synced?.mode).toBe('incremental');
    expect(after.chunks[0]).toEqual(before);
    rmSync(join(root, 'src/keep.ts'));
    expect((await engine.fetch([keep.chunk_id])).chunks[0]).toMatchObject({ chunk_id: keep.chunk_id, error: `chunk ${keep.chunk_id} is gone: search again` });
  });

  it('one writer at a time: a second engine syncing the same root is told a sync is running, and readers never wait', async () => {
    const root = makeRepo({ 'src/a.ts': tsModule(prng(8), 1) });
    const a = engineFor(root);
    await a.sync();
    const lock = await store(root).lock();
    try {
      await expect(engineFor(root).sync()).rejects.toMatchObject({ code: 'LOCKED' });
      writeFileSync(join(root, 'src/b.ts'), 'export const whileLocked = 1;\n');
      const read = await a.search({ q: 'input' });
      expect(read.results.length).toBeGreaterThan(0);
      expect(read.warnings.join(' ')).toMatch(/a sync is running in another process/);
    } finally {
      await lock.release();
    }
  });

  it('status walks the states: pending, ready, stale', async () => {
    const root = makeRepo({ 'src/a.ts': 'export const alpha = 1;\n' });
    const engine = engineFor(root);
    expect(await engine.status()).toMatchObject({ state: 'pending', indexed: false });
    await engine.sync();
    const ready: ResponseOf<'status'> = await engine.status();
    expect(ready).toMatchObject({ state: 'ready', dirty: false, damage: [] });
    writeFileSync(join(root, 'src/a.ts'), 'export const alpha = 2;\n');
    expect(await engine.status()).toMatchObject({ state: 'stale', dirty: true, changes: { modified: 1 } });
    await engine.sync();
    expect(await engine.status()).toMatchObject({ state: 'ready', dirty: false });
  });
});
}
