#!/usr/bin/env node
// Recall@10 of the HNSW path against the exact scan, and the time each takes per query.
//
//   node --import tsx bench/ann-recall.mjs --root DIR [--queries 400] [--grid] [--synthetic N]
//
// DIR is a repository synced with the builtin embedder (`repodex sync`). By default it measures
// what searches use: the graph the embedding run saved next to the vector log (built in memory
// if there is none), through DocVectors, against a scan of the same rows. `--grid` instead builds
// throwaway graphs over the log's records for a grid of HNSW settings (how ANN_SETTINGS was
// chosen). `--synthetic N` replaces the corpus by N distinct pseudo-chunks of 40 terms drawn from
// its dictionary, embedded by its table: a large graph of distinct vectors from a small corpus.
// Queries are the corpus's terms in one- to three-word combinations, embedded as queries.
//
// Runs from the sources (tsx), since it reaches below the engine to the vector index itself.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createStore } from '../src/compose.ts';
import { identityKey } from '../src/store/fs/fs-vectors.ts';
import { ANN_SETTINGS, AnnGraph } from '../src/vector/ann-graph.ts';
import { DocVectors } from '../src/store/fs/doc-vectors.ts';
import { BuiltinEmbedder } from '../src/vector/providers/builtin.ts';

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const root = option('--root');
if (!root) throw new Error('--root DIR (a repository synced with the builtin embedder) is required');
const count = Number(option('--queries', '400'));
const synthetic = Number(option('--synthetic', '0'));

const store = createStore(root);
const view = await store.open();
const embedder = new BuiltinEmbedder(path.join(root, '.repodex', 'vectors', 'builtin-table.bin'));
const vectors = store.vectors(embedder);
const set = await vectors.load();
const scratch = mkdtempSync(path.join(tmpdir(), 'repodex-ann-'));

// The rows searched: the corpus's live chunks, or synthetic ones.
let matrix;
let rows;
if (synthetic > 0) {
  const vocabulary = await view.sampleTerms(20_000);
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296;
  const texts = Array.from({ length: synthetic }, () => Array.from({ length: 40 }, () => vocabulary[Math.floor(vocabulary.length * random() ** 2)]).join(' '));
  matrix = new Float32Array(synthetic * embedder.dim);
  (await embedder.embed(texts, 'document')).forEach((v, i) => matrix.set(v, i * embedder.dim));
  rows = synthetic;
} else {
  matrix = set.data;
  rows = set.count;
}

const terms = await view.sampleTerms(Math.max(600, count * 3));
const texts = Array.from({ length: count * 2 }, (_, i) => [terms[i % terms.length], terms[(i * 7 + 3) % terms.length], terms[(i * 13 + 5) % terms.length]].slice(0, 1 + (i % 3)).join(' '));
// Terms outside the table embed to zero and match nothing: not queries.
const queries = (await embedder.embed(texts, 'query')).filter((q) => q.some((x) => x !== 0)).slice(0, count);
const exact = synthetic > 0 ? DocVectors.fromRows(embedder.dim, matrix, undefined, Number.MAX_SAFE_INTEGER) : DocVectors.build(view, set, undefined, Number.MAX_SAFE_INTEGER);
let exactMs = 0;
const truth = queries.map((q) => {
  const t = performance.now();
  const found = exact.nearestNow(q, 10);
  exactMs += performance.now() - t;
  return found;
});

/** Recall@10 and ms per query of `search` against the truth. Ties at the 10th similarity count as found. */
function measure(search) {
  let hits = 0;
  const t = performance.now();
  const answers = queries.map((q) => search(q));
  const ms = (performance.now() - t) / queries.length;
  answers.forEach((answer, i) => {
    const floor = truth[i].sims[truth[i].sims.length - 1] - 1e-6;
    const expected = new Set(truth[i].docs);
    hits += answer.docs.filter((doc, j) => expected.has(doc) || answer.sims[j] >= floor).length;
  });
  return { recall: hits / (queries.length * 10), ms };
}

const describe = (s) => `M=${s.connectivity}, ef_add=${s.expansionAdd}, ef=${s.expansionSearch}, ${s.quantization}`;
console.log(`corpus ${root}${synthetic ? ` (synthetic: ${synthetic} distinct pseudo-chunks)` : ''}: ${exact.count} rows (${embedder.dim}-D), ${queries.length} queries`);
console.log('');
console.log('| path | recall@10 | ms per query | graph build | graph on disk |');
console.log('| --- | --- | --- | --- | --- |');
console.log(`| exact scan | 1.000 | ${(exactMs / queries.length).toFixed(2)} | | |`);

if (argv.includes('--grid')) {
  const grid = [
    { connectivity: 16, expansionAdd: 128 },
    { connectivity: 32, expansionAdd: 256 },
  ];
  for (const build of grid) {
    for (const quantization of ['f32', 'f16', 'i8']) {
      const graph = AnnGraph.create(embedder.dim, { ...build, expansionSearch: 64, quantization });
      const t = performance.now();
      graph.extend(matrix, rows);
      const buildS = (performance.now() - t) / 1000;
      const file = path.join(scratch, 'graph.usearch');
      graph.save(file);
      const size = statSync(file).size;
      for (const expansionSearch of [128, 256, 384, 512]) {
        const settings = { ...build, expansionSearch, quantization };
        const viewed = AnnGraph.open(file, embedder.dim, 'view', settings);
        const ann = synthetic > 0 ? DocVectors.fromRows(embedder.dim, matrix, viewed, 0) : DocVectors.build(view, set, viewed, 0);
        const { recall, ms } = measure((q) => ann.nearestNow(q, 10));
        console.log(`| HNSW ${describe(settings)} | ${recall.toFixed(3)} | ${ms.toFixed(2)} | ${buildS.toFixed(1)} s | ${(size / 1e6).toFixed(0)} MB |`);
      }
    }
  }
} else {
  let graph;
  let buildNote = 'saved by the embedding run';
  if (synthetic > 0) {
    graph = AnnGraph.create(embedder.dim);
    const t = performance.now();
    graph.extend(matrix, rows);
    buildNote = `${((performance.now() - t) / 1000).toFixed(1)} s`;
  } else {
    graph = vectors.graph(set);
    if (!graph) {
      // None saved (the corpus is below embeddings.ann_from): build one like the embedding run
      // would, in memory, leaving the corpus's folder as it is.
      graph = AnnGraph.create(embedder.dim);
      const t = performance.now();
      graph.extend(set.data, set.count);
      buildNote = `${((performance.now() - t) / 1000).toFixed(1)} s (built now: none was saved)`;
    }
  }
  const ann = synthetic > 0 ? DocVectors.fromRows(embedder.dim, matrix, graph, 0) : DocVectors.build(view, set, graph, 0);
  const { recall, ms } = measure((q) => ann.nearestNow(q, 10));
  const saved = statSync(path.join(root, '.repodex', 'vectors', identityKey(embedder), 'graph.usearch'), { throwIfNoEntry: false });
  const size = saved ? `${(saved.size / 1e6).toFixed(0)} MB` : '';
  console.log(`| HNSW ${describe(ANN_SETTINGS)} | ${recall.toFixed(3)} | ${ms.toFixed(2)} | ${buildNote} | ${size} |`);
}
rmSync(scratch, { recursive: true, force: true });
