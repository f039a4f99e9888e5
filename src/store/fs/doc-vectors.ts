import { ANN_FROM } from '../../vector/embedder.js';
import { type ChunkVectors, DEAD_DOC, type IndexView, type Neighbours, type VectorDamage, type VectorFilter } from '../backend.js';

/** The vectors one embedder made, keyed by chunk hash: an immutable snapshot of the file store's log. */
export interface VectorSet {
  readonly dim: number;
  /** Why the log holds records this set leaves out because they are damaged (the set is what precedes the damage), or undefined. */
  readonly damage?: string | undefined;
  /** Vectors held. */
  readonly count: number;
  /** count × dim, row-major: row r is the vector of record r. */
  readonly data: Float32Array;
  /** The record of a chunk hash (32 raw bytes), or -1. */
  find(hash: Uint8Array): number;
  /** The chunk hashes of records `from`..`to`-1, 32 raw bytes each, back to back. */
  hashRange(from: number, to: number): Uint8Array;
}

/** Vectors held in memory, found by chunk hash: a snapshot of the file store's log, or of a database's rows. */
export class HeldVectors implements VectorSet {
  private readonly byHash: Map<string, number>;

  constructor(
    readonly dim: number,
    readonly count: number,
    readonly data: Float32Array,
    private readonly hashes: Uint8Array,
    readonly damage: string | undefined,
  ) {
    this.byHash = new Map();
    const view = Buffer.from(hashes.buffer, hashes.byteOffset, hashes.byteLength);
    // A later record of the same hash wins (it can only repeat after a compaction race; both are the same vector).
    for (let r = 0; r < count; r++) this.byHash.set(view.toString('latin1', r * 32, r * 32 + 32), r);
  }

  find(hash: Uint8Array): number {
    return this.byHash.get(Buffer.from(hash.buffer, hash.byteOffset, 32).toString('latin1')) ?? -1;
  }

  hashRange(from: number, to: number): Uint8Array {
    return this.hashes.subarray(from * 32, to * 32);
  }
}

/**
 * A nearest-neighbour index over the first `covered` records of a vector log. Records are only
 * appended, so it stays valid while the log grows; what it does not cover yet is scanned.
 */
export interface RecordIndex {
  readonly covered: number;
  /** The `k` records nearest to `query` (unit length), best first, with their cosine similarity. */
  search(query: Float32Array, k: number): { readonly records: number[]; readonly sims: number[] };
}

/**
 * The vectors of one index generation's live chunks (row r is doc `docs[r]`; its vector is the
 * set's record `records[r]`, read in place), with nearest-neighbour search: an exact scan below
 * ANN_FROM rows, the vector store's saved graph above it (plus a scan of the records appended
 * since the graph was saved). Built per (generation, vector set), reused by every query on them.
 */
export class DocVectors implements ChunkVectors {
  /** What is damaged in the files the vectors come from, and left out (set by the store). */
  readonly damage: VectorDamage[] = [];
  private rowOf: Map<number, number> | undefined;
  /** For the graph: the rows of each record it covers (CSR; identical chunks share a record), and the rows it does not cover. */
  private byRecord: { start: Uint32Array; rows: Uint32Array; tail: Uint32Array; liveRecords: number } | undefined;

  private constructor(
    readonly dim: number,
    /** The doc of each row. */
    readonly docs: Uint32Array,
    /** The vector set's data (record-major, `dim` numbers each): shared, never copied. */
    private readonly data: Float32Array,
    /** Live chunks of the generation (rows ≤ live: the rest have no vector yet). */
    readonly live: number,
    private readonly annFrom: number,
    /** The vector record of each row (equal records = identical chunk text). */
    private readonly records: Uint32Array,
    private readonly graph: RecordIndex | undefined,
    /** The file slot of each doc (what filters test), when built from a view. */
    private readonly docFile?: Uint32Array,
  ) {}

  /** Pack the vectors `set` holds for the live chunks of `view`. */
  static build(view: IndexView, set: VectorSet, graph?: RecordIndex, annFrom = ANN_FROM): DocVectors {
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
    return new DocVectors(dim, Uint32Array.from(docs), set.data, live, annFrom, Uint32Array.from(records), graph, view.docFile);
  }

  /** Vectors as rows of their own (doc = row = record): for measuring a graph against the scan on any data. */
  static fromRows(dim: number, matrix: Float32Array, graph?: RecordIndex, annFrom = ANN_FROM): DocVectors {
    const n = matrix.length / dim;
    const rows = Uint32Array.from({ length: n }, (_, i) => i);
    return new DocVectors(dim, rows, matrix, n, annFrom, rows, graph);
  }

  /** Rows held (live chunks with a vector). */
  get count(): number {
    return this.docs.length;
  }

  /** Cosine similarity of one doc to a query (0 when the doc has no vector). */
  similarity(doc: number, query: Float32Array): number {
    this.rowOf ??= new Map(Array.from(this.docs, (d, r) => [d, r]));
    const r = this.rowOf.get(doc);
    return r === undefined ? 0 : this.rowSimilarity(r, query);
  }

  private rowSimilarity(row: number, query: Float32Array): number {
    let sim = 0;
    const base = this.records[row]! * this.dim;
    for (let d = 0; d < this.dim; d++) sim += this.data[base + d]! * query[d]!;
    return sim;
  }

  /** Whether queries go through the HNSW graph. */
  get approximate(): boolean {
    return this.count >= this.annFrom && this.graph !== undefined;
  }

  async nearest(query: Float32Array, k: number, filter?: VectorFilter): Promise<Neighbours> {
    const files = filter?.files;
    const docFile = this.docFile;
    return this.nearestNow(query, k, files && docFile ? (doc) => files[docFile[doc]!] === 1 : undefined);
  }

  async similarities(query: Float32Array, docs: readonly number[]): Promise<number[]> {
    return docs.map((doc) => this.similarity(doc, query));
  }

  /** The `k` docs nearest to `query` (unit length) that `allow` accepts, in this thread. */
  nearestNow(query: Float32Array, k: number, allow?: (doc: number) => boolean): Neighbours {
    if (k <= 0 || this.count === 0) return { docs: [], sims: [] };
    if (this.approximate) {
      const found = this.nearestApproximate(query, k, allow);
      if (found) return found;
    }
    return this.nearestExact(query, k, allow);
  }

  /** Every row's similarity, then a bounded selection: the reference the graph is measured against. */
  nearestExact(query: Float32Array, k: number, allow?: (doc: number) => boolean): Neighbours {
    return this.scan(query, k, allow);
  }

  /** The best `k` of `rows` (all rows when omitted) by similarity to `query`. */
  private scan(query: Float32Array, k: number, allow?: (doc: number) => boolean, rows?: Uint32Array): Neighbours {
    const { dim, data, docs, records } = this;
    const heapDocs: number[] = [];
    const heapSims: number[] = [];
    // A worst-first heap of the best k so far.
    const swap = (a: number, b: number): void => {
      [heapDocs[a], heapDocs[b]] = [heapDocs[b]!, heapDocs[a]!];
      [heapSims[a], heapSims[b]] = [heapSims[b]!, heapSims[a]!];
    };
    const worse = (a: number, b: number): boolean => heapSims[a]! < heapSims[b]! || (heapSims[a] === heapSims[b] && heapDocs[a]! > heapDocs[b]!);
    const n = rows ? rows.length : docs.length;
    for (let i = 0; i < n; i++) {
      const r = rows ? rows[i]! : i;
      let sim = 0;
      const base = records[r]! * dim;
      for (let d = 0; d < dim; d++) sim += data[base + d]! * query[d]!;
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

  /**
   * Through the graph, merged with a scan of the rows it does not cover yet; undefined when a
   * filter or dead records left too few (the caller scans instead).
   */
  private nearestApproximate(query: Float32Array, k: number, allow?: (doc: number) => boolean): Neighbours | undefined {
    const graph = this.graph!;
    const { start, rows, tail, liveRecords } = this.recordRows(graph.covered);
    // Records of deleted or changed chunks stay in the graph until a compaction (up to half of it),
    // and a filter (glob, language) can reject most neighbours: ask for more than k, in proportion.
    const deadFactor = graph.covered / Math.max(1, liveRecords);
    const want = Math.min(graph.covered, Math.ceil((allow ? k * 8 : k) * deadFactor) + 8);
    const found = graph.search(query, want);
    const docs: number[] = [];
    const sims: number[] = [];
    for (let i = 0; i < found.records.length && docs.length < k; i++) {
      const record = found.records[i]!;
      for (let j = start[record]!; j < start[record + 1]! && docs.length < k; j++) {
        const row = rows[j]!;
        const doc = this.docs[row]!;
        if (allow && !allow(doc)) continue;
        docs.push(doc);
        // The exact similarity, whatever precision the graph keeps its copy in.
        sims.push(this.rowSimilarity(row, query));
      }
    }
    // Short, and the graph did not enumerate every record it holds (HNSW can return fewer than
    // asked even when asked for all): only the scan can say what is missing.
    if (docs.length < k && found.records.length < graph.covered) return undefined;
    const fresh = tail.length > 0 ? this.scan(query, k, allow, tail) : { docs: [], sims: [] };
    const merged = [...docs.keys()].map((i) => ({ doc: docs[i]!, sim: sims[i]! }));
    fresh.docs.forEach((doc, i) => merged.push({ doc, sim: fresh.sims[i]! }));
    merged.sort((a, b) => b.sim - a.sim || a.doc - b.doc);
    const best = merged.slice(0, k);
    return { docs: best.map((m) => m.doc), sims: best.map((m) => m.sim) };
  }

  /** Rows by record for the records below `covered`, the rows of records above it, and how many records below it some live row has. */
  private recordRows(covered: number): { start: Uint32Array; rows: Uint32Array; tail: Uint32Array; liveRecords: number } {
    if (this.byRecord) return this.byRecord;
    const start = new Uint32Array(covered + 1);
    const tail: number[] = [];
    for (const record of this.records) if (record < covered) start[record + 1]!++;
    for (let r = 0; r < covered; r++) start[r + 1]! += start[r]!;
    const fill = start.slice(0, covered);
    const rows = new Uint32Array(start[covered]!);
    this.records.forEach((record, row) => {
      if (record < covered) rows[fill[record]!++] = row;
      else tail.push(row);
    });
    let liveRecords = 0;
    for (let r = 0; r < covered; r++) if (start[r + 1]! > start[r]!) liveRecords++;
    return (this.byRecord = { start, rows, tail: Uint32Array.from(tail), liveRecords });
  }
}
