import { createRequire } from 'node:module';

/** HNSW parameters of the nearest-neighbour graph. */
export interface AnnSettings {
  /** Links per node (HNSW's M). */
  readonly connectivity: number;
  /** Candidates considered while inserting (efConstruction). */
  readonly expansionAdd: number;
  /** Candidates considered while searching (ef). */
  readonly expansionSearch: number;
  /** How the graph stores its copy of the vectors: 4, 2 or 1 byte per number. */
  readonly quantization: 'f32' | 'f16' | 'i8';
}

/**
 * Chosen by measurement on 118k distinct real chunk vectors (docs/benchmarks.md, "Semantic layer";
 * `bench/ann-recall.mjs --grid`): recall@10 0.988 against the exact scan at 0.5 ms a query. M=16
 * tops out near 0.97; f16 keeps f32's recall at two thirds of its size on disk; i8 stays below 0.94.
 */
export const ANN_SETTINGS: AnnSettings = { connectivity: 32, expansionAdd: 256, expansionSearch: 384, quantization: 'f16' };

/** The subset of usearch's Index this module uses. */
interface UsearchIndex {
  add(keys: BigUint64Array, vectors: Float32Array): void;
  search(vector: Float32Array, k: number): { keys: BigUint64Array; distances: Float32Array };
  size(): number;
  save(path: string): void;
  load(path: string): void;
  view(path: string): void;
  connectivity(): number;
}
type UsearchModule = { Index: new (options: Record<string, unknown>) => UsearchIndex };

/** Records nearest to a query, best first, with their cosine similarity. */
export interface GraphHits {
  readonly records: number[];
  readonly sims: number[];
}

/**
 * An HNSW graph over the records of one vector log (node key = record number), so it outlives
 * index generations: records only ever get appended, and a graph covering records 0..n-1 stays
 * valid while the log grows. Made and extended by the embedding run, saved next to the log, and
 * memory-mapped by readers. Needs `usearch` (an optional dependency with prebuilt binaries);
 * `available()` says whether it loads here.
 */
export class AnnGraph {
  private constructor(
    private readonly index: UsearchIndex,
    readonly dim: number,
  ) {}

  /** Whether usearch loads on this platform. */
  static available(): boolean {
    return loadUsearch() !== null;
  }

  /** An empty graph; null when usearch is unavailable. */
  static create(dim: number, settings: AnnSettings = ANN_SETTINGS): AnnGraph | null {
    const usearch = loadUsearch();
    if (!usearch) return null;
    return new AnnGraph(new usearch.Index({ metric: 'ip', dimensions: dim, quantization: settings.quantization, connectivity: settings.connectivity, expansion_add: settings.expansionAdd, expansion_search: settings.expansionSearch }), dim);
  }

  /**
   * A saved graph: read into memory to extend it (`mode: 'load'`), or memory-mapped read-only to
   * search it (`'view'`: opens at once, and its pages are shared with the page cache). Null when
   * usearch is unavailable; throws when the file is unreadable.
   */
  static open(path: string, dim: number, mode: 'load' | 'view', settings: AnnSettings = ANN_SETTINGS): AnnGraph | null {
    const graph = AnnGraph.create(dim, settings);
    if (!graph) return null;
    if (mode === 'view') graph.index.view(path);
    else graph.index.load(path);
    return graph;
  }

  /** Records in the graph: 0..covered-1. */
  get covered(): number {
    return this.index.size();
  }

  /** Add records `covered`..`count`-1 of `data` (count × dim, unit rows). */
  extend(data: Float32Array, count: number): void {
    const from = this.covered;
    if (count <= from) return;
    const keys = new BigUint64Array(count - from);
    for (let i = 0; i < keys.length; i++) keys[i] = BigInt(from + i);
    this.index.add(keys, data.subarray(from * this.dim, count * this.dim));
  }

  /** Write the graph to `path` (the caller makes it atomic). */
  save(path: string): void {
    this.index.save(path);
  }

  /** The `k` records nearest to `query` (unit length). */
  search(query: Float32Array, k: number): GraphHits {
    const want = Math.min(k, this.covered);
    if (want <= 0) return { records: [], sims: [] };
    const found = this.index.search(query, want);
    const records: number[] = [];
    const sims: number[] = [];
    for (let i = 0; i < found.keys.length; i++) {
      records.push(Number(found.keys[i]!));
      // Inner-product distance is 1 - dot; the rows are unit length, so dot is the cosine.
      sims.push(1 - found.distances[i]!);
    }
    return { records, sims };
  }
}

let usearchModule: UsearchModule | null | undefined;

/** usearch's module, or null when it is not installed or its binary does not load on this platform. */
function loadUsearch(): UsearchModule | null {
  if (usearchModule !== undefined) return usearchModule;
  try {
    usearchModule = createRequire(import.meta.url)('usearch') as UsearchModule;
  } catch {
    usearchModule = null;
  }
  return usearchModule;
}
