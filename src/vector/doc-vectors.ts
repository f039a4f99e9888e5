import { createRequire } from 'node:module';
import { DEAD_DOC, type IndexView, type VectorSet } from '../store/backend.js';

/**
 * From this many vectors on, nearest neighbours come from an HNSW graph (usearch) instead of a
 * scan of every vector. Measured (docs/benchmarks.md, "Semantic layer"): the scan of 128-D vectors
 * costs ~7 ms at 25k and ~28 ms at 100k, inside the query budget; the graph answers in well under a
 * millisecond at recall@10 ≥ 0.95 but is built when first used (~2 s per 25k vectors), so below
 * this size the scan is faster end to end.
 */
export const ANN_FROM = 150_000;

/** Nearest chunks to a query vector, best first. */
export interface Neighbours {
  readonly docs: number[];
  /** Cosine similarity of each. */
  readonly sims: number[];
}

/** The subset of usearch's Index this module uses. */
interface AnnIndex {
  add(keys: BigUint64Array, vectors: Float32Array): void;
  search(vector: Float32Array, k: number): { keys: BigUint64Array; distances: Float32Array };
}

/**
 * The vectors of one index generation's live chunks, packed as a matrix (row r is doc `docs[r]`),
 * with nearest-neighbour search: an exact scan below ANN_FROM rows, an HNSW graph built on first
 * use above it. Built per (generation, vector set) and reused by every query on them.
 */
export class DocVectors {
  private ann: AnnIndex | null | undefined;
  private rowOf: Map<number, number> | undefined;
  /** For the graph: the rows holding each distinct vector (identical chunks share one graph node). */
  private groups: { first: Uint32Array; rows: Uint32Array; start: Uint32Array } | undefined;

  private constructor(
    readonly dim: number,
    /** The doc of each row. */
    readonly docs: Uint32Array,
    readonly matrix: Float32Array,
    /** Live chunks of the generation (rows ≤ live: the rest have no vector yet). */
    readonly live: number,
    private readonly annFrom: number,
    /** The vector record of each row (equal records = identical chunk text). */
    private readonly records: Uint32Array,
  ) {}

  /** Pack the vectors `set` holds for the live chunks of `view`. */
  static build(view: IndexView, set: VectorSet, annFrom = ANN_FROM): DocVectors {
    const hashes = view.chunkHashes();
    const dim = set.dim;
    const docs: number[] = [];
    const records: number[] = [];
    let live = 0;
    for (let doc = 0; doc < view.docCount; doc++) {
      if (view.docOrder[doc] === DEAD_DOC) continue;
      live++;
      const record = set.find(hashes.subarray(doc * 32, doc * 32 + 32));
      if (record < 0) continue;
      docs.push(doc);
      records.push(record);
    }
    const matrix = new Float32Array(docs.length * dim);
    records.forEach((record, r) => matrix.set(set.data.subarray(record * dim, record * dim + dim), r * dim));
    return new DocVectors(dim, Uint32Array.from(docs), matrix, live, annFrom, Uint32Array.from(records));
  }

  /** Vectors as rows of their own (doc = row): for measuring the graph against the scan on any data. */
  static fromRows(dim: number, matrix: Float32Array, annFrom = ANN_FROM): DocVectors {
    const n = matrix.length / dim;
    const rows = Uint32Array.from({ length: n }, (_, i) => i);
    return new DocVectors(dim, rows, matrix, n, annFrom, rows);
  }

  /** Rows held (live chunks with a vector). */
  get count(): number {
    return this.docs.length;
  }

  /** Cosine similarity of one doc to a query (0 when the doc has no vector). */
  similarity(doc: number, query: Float32Array): number {
    this.rowOf ??= new Map(Array.from(this.docs, (d, r) => [d, r]));
    const r = this.rowOf.get(doc);
    if (r === undefined) return 0;
    let sim = 0;
    const base = r * this.dim;
    for (let d = 0; d < this.dim; d++) sim += this.matrix[base + d]! * query[d]!;
    return sim;
  }

  /** Whether queries go through the HNSW graph. */
  get approximate(): boolean {
    return this.count >= this.annFrom && this.annIndex() !== null;
  }

  /** The `k` docs nearest to `query` (unit length) that `allow` accepts. */
  nearest(query: Float32Array, k: number, allow?: (doc: number) => boolean): Neighbours {
    if (k <= 0 || this.count === 0) return { docs: [], sims: [] };
    if (this.count >= this.annFrom) {
      const found = this.nearestApproximate(query, k, allow);
      if (found) return found;
    }
    return this.nearestExact(query, k, allow);
  }

  /** Every row's similarity, then a bounded selection: the reference the graph is measured against. */
  nearestExact(query: Float32Array, k: number, allow?: (doc: number) => boolean): Neighbours {
    const { dim, matrix, docs } = this;
    const heapDocs: number[] = [];
    const heapSims: number[] = [];
    // A worst-first heap of the best k so far.
    const swap = (a: number, b: number): void => {
      [heapDocs[a], heapDocs[b]] = [heapDocs[b]!, heapDocs[a]!];
      [heapSims[a], heapSims[b]] = [heapSims[b]!, heapSims[a]!];
    };
    const worse = (a: number, b: number): boolean => heapSims[a]! < heapSims[b]! || (heapSims[a] === heapSims[b] && heapDocs[a]! > heapDocs[b]!);
    for (let r = 0; r < docs.length; r++) {
      let sim = 0;
      const base = r * dim;
      for (let d = 0; d < dim; d++) sim += matrix[base + d]! * query[d]!;
      if (heapDocs.length === k && sim <= heapSims[0]!) continue;
      const doc = docs[r]!;
      if (allow && !allow(doc)) continue;
      if (heapDocs.length < k) {
        heapDocs.push(doc);
        heapSims.push(sim);
        for (let i = heapDocs.length - 1; i > 0; ) {
          const parent = (i - 1) >> 1;
          if (!worse(i, parent)) break;
          swap(i, parent);
          i = parent;
        }
        continue;
      }
      heapDocs[0] = doc;
      heapSims[0] = sim;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const rr = l + 1;
        let m = i;
        if (l < k && worse(l, m)) m = l;
        if (rr < k && worse(rr, m)) m = rr;
        if (m === i) break;
        swap(i, m);
        i = m;
      }
    }
    const order = heapDocs.map((_, i) => i).sort((a, b) => heapSims[b]! - heapSims[a]! || heapDocs[a]! - heapDocs[b]!);
    return { docs: order.map((i) => heapDocs[i]!), sims: order.map((i) => heapSims[i]!) };
  }

  /** Through the graph; undefined when it is unavailable or a filter left too few (the caller scans instead). */
  private nearestApproximate(query: Float32Array, k: number, allow?: (doc: number) => boolean): Neighbours | undefined {
    const index = this.annIndex();
    if (!index) return undefined;
    // A filter (glob, language) can reject most neighbours: ask for more, and scan when that is not enough.
    const groups = this.groups!;
    const want = Math.min(groups.first.length, allow ? k * 8 : k);
    const found = index.search(query, want);
    const docs: number[] = [];
    const sims: number[] = [];
    for (let i = 0; i < found.keys.length && docs.length < k; i++) {
      const group = Number(found.keys[i]!);
      for (let j = groups.start[group]!; j < groups.start[group + 1]! && docs.length < k; j++) {
        const doc = this.docs[groups.rows[j]!]!;
        if (allow && !allow(doc)) continue;
        docs.push(doc);
        sims.push(1 - found.distances[i]!);
      }
    }
    return docs.length < k && found.keys.length < groups.first.length ? undefined : { docs, sims };
  }

  /**
   * The HNSW graph over every distinct vector, built on first use; null when usearch cannot load
   * here. Identical chunks (copied files, licence headers) share a node: a graph full of exact
   * duplicates loses recall, and a node per distinct vector is also a smaller graph.
   */
  private annIndex(): AnnIndex | null {
    if (this.ann !== undefined) return this.ann;
    const usearch = loadUsearch();
    if (!usearch) return (this.ann = null);
    const byRecord = new Map<number, number[]>();
    this.records.forEach((record, row) => {
      const rows = byRecord.get(record);
      if (rows) rows.push(row);
      else byRecord.set(record, [row]);
    });
    const first = new Uint32Array(byRecord.size);
    const start = new Uint32Array(byRecord.size + 1);
    const rows = new Uint32Array(this.count);
    let group = 0;
    let at = 0;
    for (const members of byRecord.values()) {
      first[group] = members[0]!;
      start[group] = at;
      for (const row of members) rows[at++] = row;
      group++;
    }
    start[group] = at;
    this.groups = { first, rows, start };
    const vectors = new Float32Array(first.length * this.dim);
    first.forEach((row, g) => vectors.set(this.matrix.subarray(row * this.dim, row * this.dim + this.dim), g * this.dim));
    const index = new usearch.Index({ metric: 'ip', dimensions: this.dim, connectivity: 16, expansion_add: 128, expansion_search: 256 });
    const keys = new BigUint64Array(first.length);
    for (let g = 0; g < first.length; g++) keys[g] = BigInt(g);
    index.add(keys, vectors);
    return (this.ann = index);
  }
}

/** usearch's module, or null when it is not installed or its binary does not load on this platform. */
function loadUsearch(): { Index: new (options: Record<string, unknown>) => AnnIndex } | null {
  try {
    return createRequire(import.meta.url)('usearch') as { Index: new (options: Record<string, unknown>) => AnnIndex };
  } catch {
    return null;
  }
}
