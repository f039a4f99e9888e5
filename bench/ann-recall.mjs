#!/usr/bin/env node
// Recall@10 of the HNSW path (usearch) against the exact scan, on a synced corpus's own vectors,
// and the time each takes per query. Queries are real query embeddings: the corpus's terms in
// one- to three-word combinations, embedded by the corpus's builtin embedder.
//
//   node --import tsx bench/ann-recall.mjs --root /work/scratch/sem/x8 [--queries 300] [--synthetic 100000]
//
// Runs from the sources (tsx), since it reaches below the engine to the vector index itself.
import path from 'node:path';
import { createStore } from '../src/compose.ts';
import { DocVectors } from '../src/vector/doc-vectors.ts';
import { BuiltinEmbedder } from '../src/vector/providers/builtin.ts';

const argv = process.argv.slice(2);
const root = argv[argv.indexOf('--root') + 1];
const count = argv.includes('--queries') ? Number(argv[argv.indexOf('--queries') + 1]) : 300;
if (!root || argv.indexOf('--root') < 0) throw new Error('--root DIR (a repository synced with the builtin embedder) is required');

const synthetic = argv.includes('--synthetic') ? Number(argv[argv.indexOf('--synthetic') + 1]) : 0;
const store = createStore(root);
const view = await store.open();
const embedder = new BuiltinEmbedder(path.join(root, '.repodex', 'vectors', 'builtin-table.bin'));
const set = await store.vectors(embedder).load();
const started = performance.now();
let ann;
let exact;
if (synthetic > 0) {
  // `--synthetic N`: N distinct pseudo-chunks of 40 terms from the corpus's dictionary (Zipf-like
  // draws), embedded by the corpus's table: a large graph of distinct vectors from a small corpus.
  const vocabulary = view.sampleTerms(20_000);
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  const texts = Array.from({ length: synthetic }, () => Array.from({ length: 40 }, () => vocabulary[Math.floor(vocabulary.length * random() ** 2)]).join(' '));
  const vectors = await embedder.embed(texts, 'document');
  const matrix = new Float32Array(synthetic * embedder.dim);
  vectors.forEach((v, i) => matrix.set(v, i * embedder.dim));
  ann = DocVectors.fromRows(embedder.dim, matrix, 0);
  exact = DocVectors.fromRows(embedder.dim, matrix, Number.MAX_SAFE_INTEGER);
} else {
  ann = DocVectors.build(view, set, 0);
  exact = DocVectors.build(view, set, Number.MAX_SAFE_INTEGER);
}
const terms = view.sampleTerms(600);
const texts = Array.from({ length: count }, (_, i) => [terms[i % terms.length], terms[(i * 7 + 3) % terms.length], terms[(i * 13 + 5) % terms.length]].slice(0, 1 + (i % 3)).join(' '));
const queries = await embedder.embed(texts, 'query');
const live = queries.filter((q) => q.some((x) => x !== 0));
// The graph is built on the first query: time it apart.
const buildStarted = performance.now();
ann.nearest(live[0], 10);
const buildMs = performance.now() - buildStarted;
let hits = 0;
let annMs = 0;
let exactMs = 0;
for (const q of live) {
  let t = performance.now();
  const approximate = ann.nearest(q, 10);
  annMs += performance.now() - t;
  t = performance.now();
  const truth = exact.nearest(q, 10);
  exactMs += performance.now() - t;
  // Ties: a doc whose similarity equals the 10th true one counts as found (duplicate chunks share vectors).
  const floor = truth.sims[truth.sims.length - 1] - 1e-6;
  const truthDocs = new Set(truth.docs);
  hits += approximate.docs.filter((doc, i) => truthDocs.has(doc) || approximate.sims[i] >= floor).length;
}
console.log(`corpus ${root}${synthetic ? ` (synthetic: ${synthetic} distinct pseudo-chunks)` : ''}: ${ann.count} vectors (${ann.dim}-D), ${live.length} queries, loaded in ${Math.round(buildStarted - started)} ms`);
console.log('| path | recall@10 | ms per query |');
console.log('| --- | --- | --- |');
console.log(`| exact scan | 1.000 | ${(exactMs / live.length).toFixed(2)} |`);
console.log(`| HNSW (usearch, M=16, ef=256) | ${(hits / (live.length * 10)).toFixed(3)} | ${(annMs / live.length).toFixed(2)} |`);
console.log(`graph built in ${Math.round(buildMs)} ms (on first use, once per loaded generation)`);
