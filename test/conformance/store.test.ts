import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/compose.js';
import { HISTORY_FIELD, NAME_FIELD, PATH_FIELD } from '../../src/index/fields.js';
import type { NewFile, Tree } from '../../src/index/model.js';
import type { IndexStore, MetaDraft, StoreSpec } from '../../src/store/backend.js';
import type { EmbedderIdentity } from '../../src/vector/embedder.js';
import { makeRepo, outlineSymbol } from '../helpers.js';
import { testBackends } from './backends.js';

// What every index store promises at its own interface, below the engine (kysely-style: one suite,
// every backend BACKENDS names). Records go in as a sync hands them over; views come out.

const DRAFT: MetaDraft = {
  config_hash: 'c'.repeat(64),
  index_config_key: 'k'.repeat(64),
  project_type: 'auto',
  chunker: { name: 'tree-sitter', version: 1, params_key: 'p' },
  git: { commit: 'a'.repeat(40), branch: 'main' },
  synced_at: '2026-01-01T00:00:00.000Z',
  duration_ms: 1,
};

const hashOf = (text: string): Uint8Array => createHash('sha256').update(text).digest();

/** A file of `texts.length` chunks, one line each, with a declaration on the first. */
function file(path: string, texts: readonly string[], firstId: number, extra: Partial<NewFile['record']> = {}): NewFile {
  return {
    record: { path, state: 'indexed', language: 'typescript', size: 10 * texts.length, mtimeMs: 1_700_000_000_000, ctimeMs: 1_700_000_000_000, ino: 7, contentHash: createHash('sha256').update(texts.join('\n')).digest('hex'), ...extra },
    chunks: texts.map((text, i) => ({
      id: firstId + i,
      startLine: i + 1,
      endLine: i + 1,
      hash: hashOf(`${path}:${text}`),
      snippet: text.slice(0, 40),
      symbol: i === 0 ? 'function main' : null,
      text,
      fields: { path: path.split(/[/.]/).filter(Boolean), names: i === 0 ? ['main'] : [], ...(i === 0 ? { history: ['fix'] } : {}) },
    })),
    symbols: texts.length > 0 ? [outlineSymbol('function', 'main', 1, Math.max(1, texts.length))] : [],
    fallback: null,
  };
}

const TREE: Tree = {
  dirs: [
    { path: '', mtimeMs: 1_700_000_000_000.5, ctimeMs: 1_700_000_000_001.25 },
    { path: 'src', mtimeMs: 1_700_000_000_002, ctimeMs: 1_700_000_000_003 },
  ],
  controls: [{ path: '.gitignore', size: 12, mtimeMs: 1_700_000_000_004, ctimeMs: 1_700_000_000_005 }],
};

/** Commit one generation holding `files` (full) or changing the current one (incremental). */
async function commit(store: IndexStore, files: readonly NewFile[], options: { incremental?: boolean; remove?: readonly string[] } = {}): Promise<void> {
  const base = options.incremental ? await store.open() : undefined;
  const writer = await store.beginGeneration(base);
  for (const path of options.remove ?? []) await writer.remove(path);
  for (const f of [...files].sort((a, b) => (a.record.path < b.record.path ? -1 : 1))) await writer.add(f);
  await writer.setTree(TREE, ['src/dirty.ts']);
  await writer.commit(DRAFT);
}

const IDENTITY: EmbedderIdentity = { engine: 'builtin', model: 'test-4', dim: 4, metric: 'cosine' };
const unit = (values: number[]): Float32Array => {
  const v = Float32Array.from(values);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

for (const backend of testBackends()) {
  describe.skipIf(backend.missing !== undefined)(`store conformance (store: ${backend.name})`, () => {
    const spec: StoreSpec = backend.spec;
    const fresh = (): { store: IndexStore; root: string } => {
      const root = makeRepo({ 'README.md': '# a repository\n' });
      return { store: openStore(root, spec), root };
    };

    it('has no index before the first commit: no meta, an empty stamp, and open says INDEX_MISSING', async () => {
      const { store } = fresh();
      expect(await store.readMeta()).toBeUndefined();
      expect(await store.stamp()).toBe('');
      await expect(store.open()).rejects.toMatchObject({ code: 'INDEX_MISSING' });
    });

    it('a commit makes a generation whose meta counts files, indexed files, skipped files and chunks', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha one', 'alpha two'], 1), file('src/big.bin', [], 0, { state: 'too-large' }), file('src/b.ts', ['beta'], 10)]);
      const meta = (await store.readMeta())!;
      expect(meta).toMatchObject({ generation: 1, config_hash: DRAFT.config_hash, git: DRAFT.git, counts: { files: 3, files_indexed: 2, files_skipped: 1, chunks: 3 } });
      expect(meta.partial).toBeUndefined();
      expect(await store.stamp()).not.toBe('');
      // Its size, whole and by part: the index's part holds what the generation wrote.
      const { index, parts } = await store.diskUsage();
      expect(Object.values(parts).every((bytes) => bytes > 0)).toBe(true);
      expect(index).toBeGreaterThan(0);
      expect(Object.keys(parts)).toEqual(expect.arrayContaining(backend.name === 'fs' ? ['index'] : ['chunks', 'files', 'postings']));
    });

    it('a first answer\'s partial generation says so in its meta (and in its view\'s), and the next commit does not', async () => {
      const { store } = fresh();
      const writer = await store.beginGeneration(undefined);
      await writer.add(file('src/a.ts', ['alpha one'], 1));
      await writer.setTree(TREE, []);
      await writer.commit({ ...DRAFT, partial: { files: 1, of: 40 } });
      expect((await store.readMeta())!.partial).toEqual({ files: 1, of: 40 });
      expect((await store.open()).meta.partial).toEqual({ files: 1, of: 40 });
      await commit(store, [file('src/b.ts', ['beta'], 10)], { incremental: true });
      expect((await store.readMeta())!.partial).toBeUndefined();
    });

    it('keeps the layout a generation records (what the repository declares about its folders), as written', async () => {
      const { store } = fresh();
      const layout = {
        version: 2,
        folders: [{ folder: 'packages/create/template-react', role: 'template', why: 'not-a-workspace-package' }],
        attributes: [{ pattern: 'site/**', role: 'docs' }, { pattern: 'site/api/**', role: 'source' }],
      } as const;
      const writer = await store.beginGeneration(undefined);
      await writer.add(file('src/a.ts', ['alpha one'], 1));
      await writer.setTree(TREE, []);
      await writer.commit({ ...DRAFT, layout });
      expect((await store.readMeta())!.layout).toEqual(layout);
      expect((await store.open()).meta.layout).toEqual(layout);
    });

    it('the stamp changes with every commit and not with an abort, which leaves no trace', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha'], 1)]);
      const stamp = await store.stamp();
      const writer = await store.beginGeneration(await store.open());
      await writer.add(file('src/b.ts', ['beta'], 2));
      await writer.abort();
      expect(await store.stamp()).toBe(stamp);
      const view = await store.open();
      expect(view.findFile('src/b.ts')).toBe(-1);
      await commit(store, [file('src/c.ts', ['gamma'], 3)], { incremental: true });
      expect(await store.stamp()).not.toBe(stamp);
      expect((await store.readMeta())!.generation).toBe(2);
    });

    it('after forgetStamp, a stamp sees a generation another store object committed (a server whose sync ran in a worker thread)', async () => {
      const { store, root } = fresh();
      expect(await store.stamp()).toBe('');
      const worker = openStore(root, spec);
      await commit(worker, [file('src/a.ts', ['alpha'], 1)]);
      store.forgetStamp();
      const first = await store.stamp();
      expect(first).not.toBe('');
      expect((await store.open()).meta.generation).toBe(1);
      await commit(worker, [file('src/b.ts', ['beta'], 2)], { incremental: true });
      store.forgetStamp();
      expect(await store.stamp()).not.toBe(first);
      expect((await store.open()).findFile('src/b.ts')).toBeGreaterThanOrEqual(0);
    });

    it('readers see nothing of a generation until it commits, and a view keeps answering from its own generation', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha'], 1)]);
      const before = await store.open();
      const writer = await store.beginGeneration(before);
      await writer.add(file('src/b.ts', ['beta'], 2));
      await writer.setTree(TREE, null);
      const during = await store.open();
      expect(during.findFile('src/b.ts')).toBe(-1);
      expect((await during.postings(['beta']))[0]).toBeUndefined();
      await writer.commit(DRAFT);
      expect((await store.open()).findFile('src/b.ts')).toBeGreaterThanOrEqual(0);
      expect(before.meta.generation).toBe(1);
    });

    it('postings hold every live chunk of a term with its frequency; document frequencies agree', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['retry retry backoff', 'retry once'], 1), file('src/b.ts', ['backoff'], 5)]);
      const view = await store.open();
      const [retry, backoff, none] = await view.postings(['retry', 'backoff', 'absent']);
      expect(retry!.df).toBe(2);
      expect(Array.from(retry!.tfs)).toEqual([2, 1]);
      const records = await view.chunks(Array.from(retry!.docs));
      expect(records.map((r) => r.id)).toEqual([1, 2]);
      expect(backoff!.df).toBe(2);
      expect(none).toBeUndefined();
      expect(await view.documentFrequencies(['retry', 'backoff', 'absent'])).toEqual([2, 2, 0]);
    });

    it('field terms (path, declared names, commit subjects) are postings of their own, present once', async () => {
      const { store } = fresh();
      await commit(store, [file('src/router.ts', ['match route', 'other'], 1)]);
      const view = await store.open();
      const [path, name, history] = await view.postings([`${PATH_FIELD}router`, `${NAME_FIELD}main`, `${HISTORY_FIELD}fix`]);
      expect(path!.df).toBe(2);
      expect(Array.from(path!.tfs)).toEqual([1, 1]);
      expect(name!.df).toBe(1);
      expect(history!.df).toBe(1);
    });

    it('token counts and corpus statistics are over live chunks (BM25 lengths)', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['one two three', 'four'], 1)]);
      const view = await store.open();
      expect(view.stats).toEqual({ chunkCount: 2, fileCount: 1, avgChunkTokens: 2 });
      const slot = view.findFile('src/a.ts');
      const { from, to } = view.fileDocs(slot);
      expect(Array.from(view.docTokens.subarray(from, to))).toEqual([3, 1]);
      expect(view.docFile[from]).toBe(slot);
    });

    it('chunk records carry id, position, lines, hash, snippet, symbol and language; docOf finds live ids only', async () => {
      const { store } = fresh();
      const added = file('src/a.ts', ['alpha line', 'beta line'], 41);
      await commit(store, [added]);
      const view = await store.open();
      const doc = view.docOf(42);
      const [record] = await view.chunks([doc]);
      expect(record).toMatchObject({ id: 42, doc, path: 'src/a.ts', chunkIndex: 1, startLine: 2, endLine: 2, snippet: 'beta line', symbol: null, language: 'typescript' });
      expect(record!.hash).toBe(Buffer.from(added.chunks[1]!.hash).toString('hex'));
      expect(view.docOf(999)).toBe(-1);
      expect(Buffer.from(view.chunkHashes().subarray(doc * 32, doc * 32 + 32)).toString('hex')).toBe(record!.hash);
    });

    it('outlines and the declaration a line range sits in come back as stored', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['function main() {', '  return 1;', '}'], 1)]);
      const view = await store.open();
      const slot = view.findFile('src/a.ts');
      const outline = await view.outline(slot);
      expect(outline.fallback).toBeNull();
      expect(outline.symbols.map((s) => [s.kind, s.name, s.start_line, s.end_line])).toEqual([['function', 'main', 1, 3]]);
      expect(await view.symbolAt(slot, 2, 2)).toBe('function main');
    });

    it('the catalog lists files in path order with their stats, skipped ones included, and keeps the tree and dirty paths', async () => {
      const { store } = fresh();
      await commit(store, [file('src/z.ts', ['z'], 1), file('src/a.ts', ['a'], 2, { size: 123, mtimeMs: 1_600_000_000_500.25, ctimeMs: 1_600_000_000_600.5, ino: 99 }), file('src/bin.dat', [], 0, { state: 'binary' })]);
      const catalog = (await store.open()).catalog();
      expect(Array.from({ length: catalog.count }, (_, i) => catalog.path(i))).toEqual(['src/a.ts', 'src/bin.dat', 'src/z.ts']);
      expect(catalog.stamp(0)).toEqual({ size: 123, mtimeMs: 1_600_000_000_500.25, ctimeMs: 1_600_000_000_600.5, ino: 99 });
      expect(catalog.record(1)).toMatchObject({ path: 'src/bin.dat', state: 'binary', chunkCount: 0 });
      expect(catalog.find('src/z.ts')).toBe(2);
      expect(catalog.find('src/none.ts')).toBe(-1);
      expect(catalog.gitDirty).toEqual(['src/dirty.ts']);
      expect(catalog.tree).toEqual(TREE);
    });

    it('a catalog view holds what the whole view holds of files and the record, also of the next generation', async () => {
      const { store } = fresh();
      await commit(store, [file('src/z.ts', ['z'], 1), file('src/a.ts', ['a'], 2, { size: 123, ino: 99 }), file('src/bin.dat', [], 0, { state: 'binary' })]);
      await store.stamp();
      const catalogView = await store.openCatalog();
      const view = await store.open();
      expect(catalogView.meta).toEqual(view.meta);
      expect(catalogView.fileSlots).toBe(view.fileSlots);
      const records = (v: typeof catalogView): unknown[] => Array.from({ length: v.fileSlots }, (_, slot) => [v.filePath(slot), v.fileLanguage(slot), v.fileRecord(slot)]);
      expect(records(catalogView)).toEqual(records(view));
      expect(catalogView.findFile('src/z.ts')).toBe(view.findFile('src/z.ts'));
      const [one, two] = [catalogView.catalog(), view.catalog()];
      expect([one.count, one.tree, one.gitDirty, one.stamp(0)]).toEqual([two.count, two.tree, two.gitDirty, two.stamp(0)]);
      await catalogView.ensureCurrent();
      await commit(store, [file('src/a.ts', ['b'], 3)]);
      await store.stamp();
      // Opened after a commit, both see the new generation (a database store reads the catalog again).
      expect(records(await store.openCatalog())).toEqual(records(await store.open()));
      expect((await store.open()).fileSlots).toBe(1);
    });

    it('an incremental generation drops removed files and replaces re-added ones, chunks and postings with them', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha old'], 1), file('src/b.ts', ['beta'], 2), file('src/c.ts', ['gamma'], 3)]);
      await commit(store, [file('src/a.ts', ['alpha new'], 4)], { incremental: true, remove: ['src/b.ts'] });
      const view = await store.open();
      expect(view.findFile('src/b.ts')).toBe(-1);
      expect(view.docOf(2)).toBe(-1);
      expect(view.docOf(1)).toBe(-1);
      expect((await view.postings(['old', 'beta', 'new', 'gamma'])).map((list) => list?.df ?? 0)).toEqual([0, 0, 1, 1]);
      expect((await store.readMeta())!.counts).toMatchObject({ files: 2, chunks: 2 });
    });

    it('a full generation replaces everything the previous one held', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha'], 1), file('src/b.ts', ['beta'], 2)]);
      await commit(store, [file('src/c.ts', ['gamma'], 3)]);
      const view = await store.open();
      expect(view.catalog().count).toBe(1);
      expect((await view.postings(['alpha']))[0]).toBeUndefined();
    });

    it('a writer that never commits (its process died) leaves the previous generation readable, and the next one commits', async () => {
      const { store, root } = fresh();
      await commit(store, [file('src/a.ts', ['alpha'], 1)]);
      const writer = await store.beginGeneration(await store.open());
      await writer.add(file('src/b.ts', ['beta'], 2));
      // Abandoned: a second store (another process) opens and writes as if the first had died.
      const other = openStore(root, spec);
      expect((await other.open()).findFile('src/b.ts')).toBe(-1);
      await writer.abort();
      await commit(other, [file('src/c.ts', ['gamma'], 3)], { incremental: true });
      expect((await other.open()).catalog().count).toBe(2);
    });

    it('one writer lock per repository: a second taker waits or is told LOCKED with the holder, and may take it once released', async () => {
      const { store, root } = fresh();
      const held = await store.lock();
      const other = openStore(root, spec);
      await expect(other.lock({ waitMs: 0 })).rejects.toMatchObject({ code: 'LOCKED' });
      expect(await other.syncRunning()).toMatchObject({ pid: process.pid });
      const waiting = other.lock({ waitMs: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await held.release();
      const taken = await waiting;
      await taken.release();
      expect(await other.syncRunning()).toBeUndefined();
    });

    it('the vectors lock is separate from the writer lock', async () => {
      const { store } = fresh();
      const writer = await store.lock();
      const vectors = await store.vectorLock();
      expect(await store.embeddingRunning()).toMatchObject({ pid: process.pid });
      await expect(store.vectorLock({ waitMs: 0 })).rejects.toMatchObject({ code: 'LOCKED' });
      await vectors.release();
      await writer.release();
      expect(await store.embeddingRunning()).toBeUndefined();
    });

    it('locks of two repositories are independent', async () => {
      const a = fresh();
      const b = fresh();
      const held = await a.store.lock();
      // Another process sees a's lock held and b's free, takes b's at once, and is refused a's.
      const otherA = openStore(a.root, spec);
      const otherB = openStore(b.root, spec);
      expect(await otherB.syncRunning()).toBeUndefined();
      const taken = await otherB.lock({ waitMs: 0 });
      expect(await b.store.syncRunning()).toMatchObject({ pid: process.pid });
      await expect(otherA.lock({ waitMs: 0 })).rejects.toMatchObject({ code: 'LOCKED' });
      // Releasing one leaves the other held.
      await taken.release();
      expect(await otherB.syncRunning()).toBeUndefined();
      expect(await otherA.syncRunning()).toMatchObject({ pid: process.pid });
      await expect(otherA.lock({ waitMs: 0 })).rejects.toMatchObject({ code: 'LOCKED' });
      await held.release();
      await (await otherA.lock({ waitMs: 0 })).release();
    });

    it('a fresh index checks sound, deep too', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha', 'beta'], 1)]);
      expect((await store.check()).problems).toEqual([]);
      expect((await store.check({ deep: true })).problems).toEqual([]);
    });

    it('clean removes the index: no meta, and the next commit starts over', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha'], 1)]);
      expect((await store.clean()).length).toBeGreaterThan(0);
      expect(await store.readMeta()).toBeUndefined();
      await commit(store, [file('src/b.ts', ['beta'], 2)]);
      expect((await store.readMeta())!.generation).toBe(1);
    });

    it('vectors: appended vectors are held by chunk hash, and the stamp moves with each append', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha', 'beta'], 1)]);
      const vectors = store.vectors(IDENTITY);
      const before = await vectors.stamp();
      const hashes = (await store.open()).chunkHashes();
      const [h0, h1] = [hashes.slice(0, 32), hashes.slice(32, 64)];
      await vectors.append([h0], [unit([1, 0, 0, 0])]);
      const once = await vectors.holdings();
      expect([once.count, once.has(h0), once.has(h1)]).toEqual([1, true, false]);
      const between = await vectors.stamp();
      expect(between).not.toBe(before);
      await vectors.append([h1], [unit([0, 1, 0, 0])]);
      const twice = await vectors.holdings();
      expect([twice.count, twice.has(h0), twice.has(h1)]).toEqual([2, true, true]);
      expect(await vectors.stamp()).not.toBe(between);
    });

    it('vectors: nearest is best first with cosine similarity, honours a file filter, and similarities score any doc', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha', 'beta'], 1), file('src/b.ts', ['gamma'], 3)]);
      const view = await store.open();
      const hashes = view.chunkHashes();
      const vectors = store.vectors(IDENTITY);
      const rows = [unit([1, 0, 0, 0]), unit([1, 1, 0, 0]), unit([0, 0, 1, 0])];
      await vectors.append([0, 1, 2].map((doc) => hashes.slice(doc * 32, doc * 32 + 32)), rows);
      const search = await vectors.searcher(view, { annFrom: 1_000 });
      expect(search).toMatchObject({ count: 3, live: 3, approximate: false });
      const near = await search.nearest(unit([1, 0.1, 0, 0]), 2);
      expect(near.docs).toEqual([0, 1]);
      expect(near.sims[0]!).toBeGreaterThan(near.sims[1]!);
      const onlyB = new Uint8Array(view.fileSlots);
      onlyB[view.findFile('src/b.ts')] = 1;
      expect((await search.nearest(unit([1, 0, 0, 0]), 3, { files: onlyB })).docs).toEqual([2]);
      const sims = await search.similarities(unit([0, 0, 1, 0]), [2, 0]);
      expect(sims[0]!).toBeCloseTo(1, 5);
      expect(sims[1]!).toBeCloseTo(0, 5);
    });

    it('vectors: compact keeps only the vectors asked for', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha', 'beta'], 1)]);
      const hashes = (await store.open()).chunkHashes();
      const [h0, h1] = [hashes.slice(0, 32), hashes.slice(32, 64)];
      const vectors = store.vectors(IDENTITY);
      await vectors.append([h0, h1], [unit([1, 0, 0, 0]), unit([0, 1, 0, 0])]);
      await vectors.compact((hash) => Buffer.from(hash).equals(Buffer.from(h1)));
      const held = await vectors.holdings();
      expect([held.has(h0), held.has(h1), held.count]).toEqual([false, true, 1]);
    });

    it('vectors: another embedder identity is another set; dropping the others of an engine keeps the current one', async () => {
      const { store } = fresh();
      await commit(store, [file('src/a.ts', ['alpha'], 1)]);
      const hash = (await store.open()).chunkHashes().slice(0, 32);
      const old = { ...IDENTITY, model: 'test-old' };
      await store.vectors(old).append([hash], [unit([1, 0, 0, 0])]);
      await store.vectors(IDENTITY).append([hash], [unit([0, 1, 0, 0])]);
      expect((await store.vectors({ ...IDENTITY, dim: 8 }).holdings()).count).toBe(0);
      expect(await store.dropOtherVectors(IDENTITY)).toBe(1);
      expect((await store.vectors(old).holdings()).count).toBe(0);
      expect((await store.vectors(IDENTITY).holdings()).count).toBe(1);
    });

    it('vectors: from annFrom on, the approximate index answers, and finds a stored vector as its own nearest', async () => {
      const { store } = fresh();
      const texts = Array.from({ length: 40 }, (_, i) => `chunk number ${i}`);
      await commit(store, [file('src/many.ts', texts, 100)]);
      const view = await store.open();
      const hashes = view.chunkHashes();
      const rows = texts.map((_, i) => unit([Math.cos(i), Math.sin(i), Math.cos(i / 3), 1 + (i % 5)]));
      const vectors = store.vectors(IDENTITY);
      await vectors.append(texts.map((_, i) => hashes.slice(i * 32, i * 32 + 32)), rows);
      const steps = vectors.updateIndex({ annFrom: 10 });
      let outcome;
      for (let step = await steps.next(); ; step = await steps.next()) {
        if (step.done) {
          outcome = step.value;
          break;
        }
      }
      const search = await vectors.searcher(view, { annFrom: 10 });
      expect(search.approximate).toBe(outcome.kind === 'current');
      for (const i of [3, 17, 29]) expect((await search.nearest(rows[i]!, 3)).docs[0]).toBe(view.docOf(100 + i));
    });

    it('the semantic manifest round-trips', async () => {
      const { store } = fresh();
      expect(await store.readVectorManifest()).toBeUndefined();
      await commit(store, [file('src/a.ts', ['alpha'], 1)]);
      const manifest = {
        engine: 'builtin',
        model: 'test-4',
        dim: 4,
        metric: 'cosine',
        chunk: { mode: 'auto' as const, target_lines: 60, max_lines: 120, overlap_lines: 10 },
        repo: { root: '.' as const, git_sha: null },
        counts: { files: 1, chunks: 1, vectors: 0 },
        generation: 1,
        created_at: '2026-01-01T00:00:00.000Z',
        last_refresh: '2026-01-01T00:00:00.000Z',
      };
      await store.writeVectorManifest(manifest);
      expect(await store.readVectorManifest()).toMatchObject(manifest);
    });
  });
}
