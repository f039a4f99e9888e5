import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AnnGraph } from '../../vector/ann-graph.js';
import { DocVectors, type VectorSet } from './doc-vectors.js';
import { normalize } from '../../vector/embedder.js';
import type { IndexView } from '../backend.js';
import { DEAD_DOC } from '../backend.js';
import { FsVectorStore, dropVectorSets, identityKey } from './fs-vectors.js';

const DIM = 24;
const identity = { engine: 'test', model: 'clusters', dim: DIM, metric: 'cosine' as const };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

if (!AnnGraph.available()) console.warn('SKIPPED: the nearest-neighbour graph tests need usearch (an optional dependency), which does not load here');

/** `n` unit vectors in 40 clusters (like chunk embeddings: topical, not uniform), seeded. */
function vectors(n: number, seed: number): Float32Array[] {
  let state = seed;
  const random = (): number => (state = (state * 1103515245 + 12345) >>> 0) / 4294967296 - 0.5;
  const centres = Array.from({ length: 40 }, () => Float32Array.from({ length: DIM }, random));
  return Array.from({ length: n }, (_, i) => normalize(Float32Array.from(centres[i % 40]!, (x) => x + random() * 0.6)));
}

const hashOf = (i: number): Uint8Array => createHash('sha256').update(`chunk ${i}`).digest();

/** A view whose doc d holds chunk `hashOfDoc[d]` (a number for hashOf, or null for a dead doc). */
function viewOf(hashOfDoc: (number | null)[]): IndexView {
  const hashes = new Uint8Array(hashOfDoc.length * 32);
  hashOfDoc.forEach((h, d) => {
    if (h !== null) hashes.set(hashOf(h), d * 32);
  });
  return {
    docCount: hashOfDoc.length,
    docOrder: Uint32Array.from(hashOfDoc, (h, d) => (h === null ? DEAD_DOC : d)),
    chunkHashes: () => hashes,
  } as unknown as IndexView;
}

async function storeWith(count: number): Promise<{ store: FsVectorStore; all: Float32Array[]; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'repodex-vectors-'));
  dirs.push(dir);
  const store = new FsVectorStore(dir, identity);
  const all = vectors(count, 11);
  await store.append(
    all.map((_, i) => hashOf(i)),
    all,
  );
  return { store, all, dir };
}

async function update(store: FsVectorStore, set: VectorSet): Promise<{ result: boolean; steps: number }> {
  const run = store.updateGraph(set);
  let steps = 0;
  for (let step = await run.next(); ; step = await run.next()) {
    if (step.done) return { result: step.value, steps };
    steps++;
    expect(step.value.done).toBeLessThanOrEqual(step.value.total);
  }
}

describe.skipIf(!AnnGraph.available())('the saved nearest-neighbour graph', () => {
  it('is built over the log, reopened memory-mapped, and finds what the exact scan finds', async () => {
    const { store, all } = await storeWith(3000);
    const set = await store.load();
    expect(store.graph(set)).toBeUndefined();
    const { result, steps } = await update(store, set);
    expect(result).toBe(true);
    expect(steps).toBeGreaterThan(0);
    const graph = store.graph(set)!;
    expect(graph.covered).toBe(3000);
    expect(graph.search(all[1234]!, 1).records).toEqual([1234]);

    const view = viewOf(all.map((_, i) => i));
    const ann = DocVectors.build(view, set, graph, 0);
    const exact = DocVectors.build(view, set, undefined, Number.MAX_SAFE_INTEGER);
    expect(ann.approximate).toBe(true);
    expect(exact.approximate).toBe(false);
    let found = 0;
    const queries = vectors(200, 99);
    for (const query of queries) {
      const truth = new Set(exact.nearestNow(query, 10).docs);
      const answer = ann.nearestNow(query, 10);
      expect(answer.docs).toHaveLength(10);
      found += answer.docs.filter((doc) => truth.has(doc)).length;
      // Similarities are exact (recomputed from the vectors), best first.
      answer.docs.forEach((doc, i) => expect(answer.sims[i]).toBeCloseTo(exact.similarity(doc, query), 5));
      expect([...answer.sims].sort((a, b) => b - a)).toEqual(answer.sims);
    }
    expect(found / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
  });

  it('stays usable while the log grows: records appended since are scanned, and the next update extends it', async () => {
    const { store, all } = await storeWith(2000);
    await update(store, await store.load());
    const extra = vectors(300, 23);
    await store.append(
      extra.map((_, i) => hashOf(2000 + i)),
      extra,
    );
    const set = await store.load();
    const graph = store.graph(set)!;
    expect(graph.covered).toBe(2000);
    const ann = DocVectors.build(viewOf([...all, ...extra].map((_, i) => i)), set, graph, 0);
    // A vector only the log's tail holds is its own nearest neighbour.
    expect(ann.nearestNow(extra[42]!, 3).docs[0]).toBe(2042);
    expect(ann.nearestNow(all[7]!, 3).docs[0]).toBe(7);

    expect((await update(store, set)).result).toBe(true);
    expect(store.graph(set)!.covered).toBe(2300);
  });

  it('skips the records of deleted chunks, and honours filters', async () => {
    const { store, all } = await storeWith(2000);
    const set = await store.load();
    await update(store, set);
    // Docs 0..999 are dead (their chunks were deleted); their records stay in the graph.
    const view = viewOf(all.map((_, i) => (i < 1000 ? null : i)));
    const ann = DocVectors.build(view, set, store.graph(set), 0);
    expect(ann.count).toBe(1000);
    const answer = ann.nearestNow(all[10]!, 10);
    expect(answer.docs).toHaveLength(10);
    expect(answer.docs.every((doc) => doc >= 1000)).toBe(true);
    // A filter that leaves a handful of docs still gets them all (by a scan when the graph runs dry).
    const few = new Set([1001, 1500, 1999]);
    expect(new Set(ann.nearestNow(all[10]!, 10, (doc) => few.has(doc)).docs)).toEqual(few);
  });

  it('is not used when it does not match the log, and a compaction drops it', async () => {
    const { store, dir } = await storeWith(1500);
    const set = await store.load();
    await update(store, set);
    const meta = join(dir, 'vectors', identityKey(identity), 'graph.json');
    const saved = readFileSync(meta, 'utf8');
    // A sidecar naming another last record (a log rewritten under it): ignored, then rebuilt.
    writeFileSync(meta, saved.replace(/"hashes_crc":\d+/, '"hashes_crc":12345'));
    expect(store.graph(set)).toBeUndefined();
    expect((await update(store, set)).result).toBe(true);
    expect(store.graph(set)!.covered).toBe(1500);
    // A damaged sidecar: ignored.
    writeFileSync(meta, '{"version":1');
    expect(store.graph(set)).toBeUndefined();
    await update(store, set);
    expect(store.graph(set)).toBeDefined();

    await store.compact((hash) => hash[0]! < 128);
    expect(existsSync(meta)).toBe(false);
    expect(existsSync(join(dir, 'vectors', identityKey(identity), 'graph.usearch'))).toBe(false);
    expect(store.graph(await store.load())).toBeUndefined();
  });

  it('answers k results for large k and starving filters, even where the graph returns fewer than asked', async () => {
    const { store, all } = await storeWith(2000);
    const set = await store.load();
    await update(store, set);
    const view = viewOf(all.map((_, i) => i));
    const ann = DocVectors.build(view, set, store.graph(set), 0);
    const exact = DocVectors.build(view, set, undefined, Number.MAX_SAFE_INTEGER);
    const query = vectors(1, 77)[0]!;
    const overlap = (a: number[], b: number[]): number => a.filter((doc) => new Set(b).has(doc)).length / b.length;
    const wide = ann.nearestNow(query, 1500);
    expect(wide.docs).toHaveLength(1500);
    expect(new Set(wide.docs).size).toBe(1500);
    expect(overlap(wide.docs, exact.nearestNow(query, 1500).docs)).toBeGreaterThanOrEqual(0.95);
    // A filter that leaves exactly k docs: the graph is asked for all it holds, returns a few
    // short, and only a scan finds the rest.
    const eighth = (doc: number): boolean => doc % 8 === 0;
    const filtered = ann.nearestNow(query, 250, eighth);
    expect(new Set(filtered.docs)).toEqual(new Set(all.map((_, i) => i).filter(eighth)));
  });

  it('is never opened damaged, and is rebuilt even with nothing new to add', async () => {
    const { store, dir } = await storeWith(1200);
    const set = await store.load();
    await update(store, set);
    const file = join(dir, 'vectors', identityKey(identity), 'graph.usearch');
    // usearch trusts its file (a damaged header crashes the process): it must never see one.
    const bytes = readFileSync(file);
    bytes.fill(0xee, 0, 64);
    writeFileSync(file, bytes);
    expect(store.graph(set)).toBeUndefined();
    // Damage (verify exits 1 on it), named with its fix; searches scan meanwhile.
    expect(store.check().problems.join('\n')).toMatch(/graph\.usearch is damaged: it does not match the size and checksum its sidecar records; searches scan every vector until `repodex sync` rebuilds it/);
    expect(store.graphDamage()).toMatch(/graph\.usearch is damaged/);
    expect((await update(store, set)).result).toBe(true);
    expect(store.graph(set)!.covered).toBe(1200);
    writeFileSync(file, 'not a graph');
    expect(store.graph(set)).toBeUndefined();
    expect((await update(store, set)).result).toBe(true);
    expect(store.graph(set)!.covered).toBe(1200);
  });

  it('sweeps what an interrupted save left', async () => {
    const { store, dir } = await storeWith(1100);
    const folder = join(dir, 'vectors', identityKey(identity));
    writeFileSync(join(folder, 'graph.usearch.tmp-4242'), 'half a graph');
    await update(store, await store.load());
    expect(existsSync(join(folder, 'graph.usearch.tmp-4242'))).toBe(false);
    expect(existsSync(join(folder, 'graph.usearch'))).toBe(true);
  });

  it('changes the store stamp when saved, so searches pick the new graph up', async () => {
    const { store } = await storeWith(1200);
    const before = store.stamp();
    await update(store, await store.load());
    expect(store.stamp()).not.toBe(before);
  });
});

describe('vector sets', () => {
  it('drops the other sets of one engine and keeps other engines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'repodex-vectors-'));
    dirs.push(dir);
    const sets = [
      { engine: 'builtin', model: 'repo-lsa-128@aaaaaaaaaaaa', dim: 128, metric: 'cosine' as const },
      { engine: 'builtin', model: 'repo-lsa-128@bbbbbbbbbbbb', dim: 128, metric: 'cosine' as const },
      { engine: 'onnx', model: 'bge-small@cccc', dim: 128, metric: 'cosine' as const },
    ];
    for (const set of sets) await new FsVectorStore(dir, set).append([hashOf(1)], [normalize(new Float32Array(128).fill(1))]);
    const forgotten: string[] = [];
    expect(dropVectorSets(dir, sets[1]!, (folder) => forgotten.push(folder))).toBe(1);
    expect(forgotten).toEqual([identityKey(sets[0]!)]);
    expect((await new FsVectorStore(dir, sets[0]!).load()).count).toBe(0);
    expect((await new FsVectorStore(dir, sets[1]!).load()).count).toBe(1);
    expect((await new FsVectorStore(dir, sets[2]!).load()).count).toBe(1);
  });
});

describe('the vector log', () => {
  const folderOf = (dir: string, id: typeof identity): string => join(dir, 'vectors', identityKey(id));

  it('reads back what was appended across read blocks, and stops at a damaged record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'repodex-vectors-'));
    dirs.push(dir);
    // 32 KB records: 300 of them span three 4 MB read blocks.
    const wide = { engine: 'test', model: 'wide', dim: 8192, metric: 'cosine' as const };
    const store = new FsVectorStore(dir, wide);
    const all = Array.from({ length: 300 }, (_, i) => normalize(Float32Array.from({ length: 8192 }, (_, d) => Math.sin(i * 31 + d))));
    await store.append(
      all.map((_, i) => hashOf(i)),
      all,
    );
    const set = await store.load();
    expect(set.count).toBe(300);
    for (const i of [0, 127, 128, 255, 299]) {
      expect(set.find(hashOf(i))).toBe(i);
      expect(Array.from(set.data.subarray(i * 8192, i * 8192 + 8))).toEqual(Array.from(all[i]!.subarray(0, 8)));
      expect(Buffer.from(set.hashRange(i, i + 1))).toEqual(Buffer.from(hashOf(i)));
    }
    // Flip a byte inside record 200's vector: the log ends before it, and check() says so.
    const log = join(folderOf(dir, wide), 'vectors.bin');
    const bytes = readFileSync(log);
    const recordBytes = 36 + 8192 * 4;
    bytes[16 + 200 * recordBytes + 100] = bytes[16 + 200 * recordBytes + 100]! ^ 0xff;
    writeFileSync(log, bytes);
    const reopened = new FsVectorStore(dir, wide);
    expect((await reopened.load()).count).toBe(200);
    expect(reopened.check().problems.join('\n')).toMatch(/record 201 fails its checksum/);
  });

  it('ignores a torn last record, and the next append cuts it off', async () => {
    const { store, dir } = await storeWith(10);
    const log = join(folderOf(dir, identity), 'vectors.bin');
    const recordBytes = 36 + DIM * 4;
    const bytes = readFileSync(log);
    writeFileSync(log, bytes.subarray(0, bytes.length - 20));
    expect((await store.load()).count).toBe(9);
    expect(store.check()).toMatchObject({ count: 9, problems: [] });
    expect(store.check().notes.join('\n')).toMatch(/interrupted run/);
    const extra = vectors(2, 5);
    await store.append([hashOf(100), hashOf(101)], extra);
    const set = await store.load();
    expect(set.count).toBe(11);
    expect(set.find(hashOf(9))).toBe(-1);
    expect(set.find(hashOf(101))).toBe(10);
    expect(readFileSync(log).length).toBe(16 + 11 * recordBytes);
  });
});
