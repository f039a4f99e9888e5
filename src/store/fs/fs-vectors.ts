import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { checkedJsonText, readCheckedJson } from '../../core/checked-json.js';
import { crc32 } from '../../core/crc32.js';
import { RepodexError, errorMessage, isErrnoException, isRepodexError } from '../../core/errors.js';
import { fsyncDir, writeFileAtomic } from '../../core/fs-atomic.js';
import { listDirOrEmpty } from '../../core/stat.js';
import { ANN_SETTINGS, AnnGraph } from '../../vector/ann-graph.js';
import type { EmbedderIdentity } from '../../vector/embedder.js';
import type { ChunkVectors, IndexView, IntegrityReport, VectorHoldings, VectorIndexOutcome, VectorManifest, VectorStore } from '../backend.js';
import { DocVectors, HeldVectors, type RecordIndex, type VectorSet } from './doc-vectors.js';

/** Folder of the semantic index inside `.repodex/`. */
export const VECTORS_DIR = 'vectors';
/** The seed 003 manifest, inside VECTORS_DIR. */
export const VECTOR_MANIFEST_FILE = 'manifest.json';
const LOG_FILE = 'vectors.bin';
const MAGIC = 'RPDXVEC\0';
/**
 * Layout of vectors.bin (little-endian): a 16-byte header (magic, u16 version, u16 reserved = 0,
 * u32 dim: every byte of it is checked), then records of [32-byte chunk hash][dim × f32][u32 CRC-32
 * of the two]. Append-only: a record torn by a crash fails its checksum and ends the log; the next
 * append cuts it off.
 * Log:
 *   1 — first layout.
 */
const LOG_VERSION = 1;
const HEADER_BYTES = 16;
/** The HNSW graph over the log's records (usearch's own format), and what it covers. */
const GRAPH_FILE = 'graph.usearch';
const GRAPH_META_FILE = 'graph.json';
/** Bytes of the log read at a time when loading it. */
const READ_BLOCK_BYTES = 4 << 20;
/** Records added to the graph between progress reports. */
const GRAPH_BATCH = 8192;

/**
 * graph.json: the graph covers records 0..records-1 of the log, whose chunk hashes, back to back,
 * have CRC-32 `hashes_crc` (a compaction renumbers records; a graph that does not match the log
 * is rebuilt, never used). A checked JSON file (core/checked-json.ts).
 * Versions:
 *   1 — first sidecar (no checksum of its own).
 *   2 — checksummed: a damaged sidecar is told from an older one.
 */
const GRAPH_META_VERSION = 2;
const GraphMetaSchema = z.object({
  version: z.literal(GRAPH_META_VERSION),
  dim: z.int(),
  records: z.int(),
  hashes_crc: z.int(),
  /** Size and CRC-32 of graph.usearch: usearch trusts its file, and a damaged one crashes the process. */
  file_bytes: z.int(),
  file_crc: z.int(),
  connectivity: z.int(),
  expansion_add: z.int(),
  expansion_search: z.int(),
  quantization: z.enum(['f32', 'f16', 'i8']),
});
type GraphMeta = z.infer<typeof GraphMetaSchema>;

/**
 * The manifest version written (seed 003 §4 starts at 1).
 * Versions:
 *   1 — seed 003's fields; `counts.vectors` counts chunks with a vector.
 *   2 — a checked JSON file (core/checked-json.ts), with `records`: the vector log's records when
 *       it was written (one per distinct chunk text, so fewer than `counts.vectors` when chunks
 *       repeat), and `records_crc`: the CRC-32 of the log up to them (a check is one pass).
 */
export const VECTOR_MANIFEST_VERSION = 2;

const VectorManifestSchema = z.object({
  version: z.number(),
  engine: z.string(),
  model: z.string(),
  dim: z.int().check(z.positive()),
  metric: z.string(),
  chunk: z.object({ mode: z.literal('auto'), target_lines: z.number(), max_lines: z.number(), overlap_lines: z.number() }),
  repo: z.object({ root: z.literal('.'), git_sha: z.nullable(z.string()) }),
  counts: z.object({ files: z.number(), chunks: z.number(), vectors: z.number() }),
  generation: z.number(),
  records: z.optional(z.int().check(z.minimum(0))),
  records_crc: z.optional(z.int().check(z.minimum(0))),
  vectors_stamp: z.optional(z.string()),
  created_at: z.string(),
  last_refresh: z.string(),
});

/** The manifest's name inside `.repodex/`, as damage reports name it. */
const MANIFEST_NAME = `${VECTORS_DIR}/${VECTOR_MANIFEST_FILE}`;
/** What repairs the semantic index: the embedding run of the next sync. */
const EMBED_FIX = '`repodex sync` embeds again what is missing and rewrites it';

/** The folder name of one embedder's vectors: readable, and distinct for every identity. */
export function identityKey(identity: EmbedderIdentity): string {
  const slug = identity.model.replace(/[^A-Za-z0-9._@-]+/g, '_').slice(0, 80);
  return `${identity.engine}-${slug}-${identity.dim}`;
}

/** The path of the semantic manifest under a data dir. */
export function vectorManifestPath(dataDir: string): string {
  return join(dataDir, VECTORS_DIR, VECTOR_MANIFEST_FILE);
}

/**
 * Read the semantic manifest; undefined when absent, INDEX_CORRUPT when damaged. A version-1
 * manifest (no checksum) is read as it is: its `version` tells the caller it was not checked.
 */
export function readVectorManifestFile(dataDir: string): VectorManifest | undefined {
  const path = vectorManifestPath(dataDir);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw new RepodexError('INDEX_CORRUPT', `cannot read ${MANIFEST_NAME}: ${errorMessage(error)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch {
    raw = undefined;
  }
  const legacy = (raw as { version?: unknown; checksum?: unknown } | null | undefined)?.version === 1 && (raw as { checksum?: unknown }).checksum === undefined;
  const body = legacy ? (raw as Record<string, unknown>) : readCheckedJson(bytes, MANIFEST_NAME);
  const parsed = VectorManifestSchema.safeParse(body);
  if (!parsed.success) throw new RepodexError('INDEX_CORRUPT', `${MANIFEST_NAME} is damaged: ${parsed.error.issues[0]?.message ?? 'unexpected fields'}`);
  return parsed.data as VectorManifest;
}

/**
 * Write the semantic manifest atomically, as the current version, with the CRC-32 of the log's
 * `records` records as they are now (`open` gives the log): a check then proves them in one pass.
 */
export function writeVectorManifestFile(dataDir: string, manifest: Omit<VectorManifest, 'version'>, open: (identity: EmbedderIdentity) => FsVectorStore): void {
  const dir = join(dataDir, VECTORS_DIR);
  mkdirSync(dir, { recursive: true });
  const { version: _older, records_crc: _stale, ...fields } = manifest as Partial<VectorManifest>;
  const identity: EmbedderIdentity = { engine: manifest.engine, model: manifest.model, dim: manifest.dim, metric: 'cosine' };
  const crc = manifest.records === undefined ? undefined : open(identity).prefixCrc(manifest.records);
  writeFileAtomic(join(dir, VECTOR_MANIFEST_FILE), checkedJsonText({ version: VECTOR_MANIFEST_VERSION, ...fields, ...(crc === undefined ? {} : { records_crc: crc }) }), dir);
}

/**
 * Remove the vector folders of `keep`'s engine other than `keep`'s own; `forget` is told each
 * folder name removed. Folder names start with the engine and a dash (identityKey).
 */
export function dropVectorSets(dataDir: string, keep: EmbedderIdentity, forget: (folder: string) => void): number {
  const dir = join(dataDir, VECTORS_DIR);
  const own = identityKey(keep);
  let removed = 0;
  for (const name of listDirOrEmpty(dir, 'any')) {
    if (name === own || !name.startsWith(`${keep.engine}-`)) continue;
    if (!statSync(join(dir, name), { throwIfNoEntry: false })?.isDirectory()) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    forget(name);
    removed++;
  }
  return removed;
}

/** Bytes of everything under the semantic folder. */
export function vectorsDirSize(dataDir: string): number {
  let total = 0;
  const visit = (dir: string): void => {
    for (const name of listDirOrEmpty(dir, 'any')) {
      const stat = statSync(join(dir, name), { throwIfNoEntry: false });
      if (!stat) continue;
      if (stat.isDirectory()) visit(join(dir, name));
      else total += stat.size;
    }
  };
  visit(join(dataDir, VECTORS_DIR));
  return total;
}

/** What a log file holds: its valid records, and where the valid part ends. */
interface LogContents {
  /** Why the header cannot be read as this log's (then nothing of the file is valid). */
  readonly headerDamage?: string;
  /** Record size in bytes. */
  readonly recordBytes: number;
  readonly count: number;
  readonly hashes: Uint8Array;
  readonly data: Float32Array;
  /** Byte length of the valid prefix (header + whole records). */
  readonly validBytes: number;
  /** Bytes after the valid prefix (a torn or damaged tail). */
  readonly tailBytes: number;
}

/** One embedder's vectors under `.repodex/vectors/<identity>/vectors.bin`. */
export class FsVectorStore implements VectorStore {
  private readonly dir: string;
  private readonly path: string;
  /** The folder and the log as damage reports name them (inside `.repodex/`). */
  private readonly folderName: string;
  private readonly logName: string;
  private cached: { stamp: string; set: HeldVectors } | undefined;

  constructor(
    dataDir: string,
    readonly identity: EmbedderIdentity,
  ) {
    this.dir = join(dataDir, VECTORS_DIR, identityKey(identity));
    this.path = join(this.dir, LOG_FILE);
    this.folderName = `${VECTORS_DIR}/${identityKey(identity)}`;
    this.logName = `${this.folderName}/${LOG_FILE}`;
  }

  private get recordBytes(): number {
    return 32 + this.identity.dim * 4 + 4;
  }

  async stamp(): Promise<string> {
    return this.stampNow();
  }

  /** `stamp()`, in this thread. */
  stampNow(): string {
    // The graph is saved after the appends it covers: its sidecar's change is a change too.
    const graph = statSync(join(this.dir, GRAPH_META_FILE), { throwIfNoEntry: false });
    return `${this.logStamp()}/${graph ? `${graph.mtimeMs}:${graph.ino}` : 'none'}`;
  }

  private logStamp(): string {
    const stat = statSync(this.path, { throwIfNoEntry: false });
    return stat ? `${stat.size}:${stat.mtimeMs}:${stat.ino}` : 'none';
  }

  /**
   * Parse the log, stopping at the first record that fails its checksum. `keep: false` only checks
   * (what `status` and `verify` do): nothing is copied out, the records come back empty.
   */
  private read(keep = true): LogContents {
    const dim = this.identity.dim;
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return { recordBytes: this.recordBytes, count: 0, hashes: new Uint8Array(), data: new Float32Array(), validBytes: 0, tailBytes: 0 };
      throw new RepodexError('INDEX_CORRUPT', `cannot read ${this.logName}: ${errorMessage(error)}`);
    }
    try {
      const length = fstatSync(fd).size;
      const header = Buffer.alloc(HEADER_BYTES);
      // Every header byte is checked (the writer puts 0 in the reserved ones). A log with a
      // damaged header holds nothing usable: no records, and the next append starts it over.
      const headerDamage =
        length < HEADER_BYTES || readSync(fd, header, 0, HEADER_BYTES, 0) < HEADER_BYTES || header.toString('latin1', 0, 8) !== MAGIC
          ? 'it is not a vector log'
          : header.readUInt16LE(8) !== LOG_VERSION || header.readUInt16LE(10) !== 0
            ? `its header is damaged (layout ${header.readUInt16LE(8)}.${header.readUInt16LE(10)}, this version writes ${LOG_VERSION}.0)`
            : header.readUInt32LE(12) !== dim
              ? `its header says ${header.readUInt32LE(12)}-dimensional vectors, its folder ${dim}`
              : undefined;
      if (headerDamage) return { recordBytes: this.recordBytes, count: 0, hashes: new Uint8Array(), data: new Float32Array(), validBytes: 0, tailBytes: length, headerDamage };
      const size = this.recordBytes;
      const whole = Math.floor((length - HEADER_BYTES) / size);
      const hashes = new Uint8Array(keep ? whole * 32 : 0);
      const data = new Float32Array(keep ? whole * dim : 0);
      // Records are read a block at a time into one buffer, so loading never holds the file twice.
      // A record's size (36 + 4·dim) is a multiple of 4, so each vector sits 4-byte aligned in it.
      const perBlock = Math.max(1, Math.floor(READ_BLOCK_BYTES / size));
      const block = Buffer.allocUnsafe(perBlock * size); // only what readSync filled is ever read
      const floats = new Float32Array(block.buffer, block.byteOffset, block.length / 4);
      let count = 0;
      read: for (let first = 0; first < whole; first += perBlock) {
        const n = Math.min(perBlock, whole - first);
        let got = 0;
        while (got < n * size) {
          const read = readSync(fd, block, got, n * size - got, HEADER_BYTES + first * size + got);
          if (read === 0) break read;
          got += read;
        }
        for (let i = 0; i < n; i++) {
          const at = i * size;
          if (crc32(block.subarray(at, at + size - 4)) !== block.readUInt32LE(at + size - 4)) break read;
          if (keep) {
            hashes.set(block.subarray(at, at + 32), count * 32);
            data.set(floats.subarray((at + 32) / 4, (at + 32) / 4 + dim), count * dim);
          }
          count++;
        }
      }
      const validBytes = HEADER_BYTES + count * size;
      return { recordBytes: size, count, hashes: hashes.subarray(0, keep ? count * 32 : 0), data: data.subarray(0, keep ? count * dim : 0), validBytes, tailBytes: length - validBytes };
    } catch (error) {
      if (error instanceof RepodexError) throw error;
      throw new RepodexError('INDEX_CORRUPT', `cannot read ${this.logName}: ${errorMessage(error)}`);
    } finally {
      closeSync(fd);
    }
  }


  async holdings(): Promise<VectorHoldings> {
    const set = await this.load();
    return { count: set.count, damage: set.damage, has: (hash) => set.find(hash) >= 0 };
  }

  async searcher(view: IndexView, options: { readonly annFrom: number }): Promise<ChunkVectors> {
    const set = await this.load();
    // The saved graph is opened (memory-mapped) only where it is used; below the threshold search scans.
    const graph = set.count >= options.annFrom ? this.graph(set) : undefined;
    const vectors = DocVectors.build(view, set, graph, options.annFrom);
    if (set.damage) vectors.damage.push({ what: set.damage, effect: 'partial' });
    const graphDamage = set.count >= options.annFrom && !graph ? this.graphDamage() : undefined;
    if (graphDamage) vectors.damage.push({ what: graphDamage, effect: 'scan' });
    return vectors;
  }

  async *updateIndex(options: { readonly annFrom: number }): AsyncGenerator<{ done: number; total: number }, VectorIndexOutcome, undefined> {
    const set = await this.load();
    if (set.count < options.annFrom) return { kind: 'none' };
    const built = yield* this.updateGraph(set);
    return built ? { kind: 'current', vectors: set.count } : { kind: 'unavailable' };
  }

  /** The log's records now, loaded once per change of the log. */
  async load(): Promise<VectorSet> {
    const stamp = this.logStamp();
    if (this.cached?.stamp === stamp) return this.cached.set;
    const contents = this.read();
    const set = new HeldVectors(this.identity.dim, contents.count, contents.data, contents.hashes, this.tailDamage(contents));
    this.cached = { stamp, set };
    return set;
  }

  /**
   * Why the log holds records past its valid part, when that is damage: a whole record (or more)
   * after the last good one fails its checksum. Less than a record is what an interrupted append
   * leaves, not damage.
   */
  private tailDamage(contents: LogContents): string | undefined {
    if (contents.headerDamage) return `${this.logName} is damaged: ${contents.headerDamage}`;
    const whole = Math.floor(contents.tailBytes / contents.recordBytes);
    if (whole === 0) return undefined;
    return `${this.logName} is damaged: record ${contents.count + 1} fails its checksum (${whole} record(s) from there on unreadable)`;
  }

  async append(hashes: readonly Uint8Array[], vectors: readonly Float32Array[]): Promise<void> {
    if (hashes.length !== vectors.length) throw new RepodexError('INTERNAL', 'append: hashes and vectors differ in number');
    if (hashes.length === 0) return;
    mkdirSync(this.dir, { recursive: true });
    const dim = this.identity.dim;
    const size = this.recordBytes;
    const fd = openSync(this.path, 'a+');
    try {
      let length = fstatSync(fd).size;
      if (length > 0) {
        // Cut off a torn or damaged tail first, so new records follow the last whole one (a log
        // whose header is damaged is started over: it is derived data, embedded again).
        const { validBytes } = this.read(false);
        if (validBytes < length) {
          ftruncateSync(fd, validBytes);
          length = validBytes;
        }
      }
      if (length === 0) {
        const header = Buffer.alloc(HEADER_BYTES);
        header.write(MAGIC, 0, 'latin1');
        header.writeUInt16LE(LOG_VERSION, 8);
        header.writeUInt32LE(dim, 12);
        writeSync(fd, header, 0, HEADER_BYTES, 0);
        length = HEADER_BYTES;
      }
      const out = Buffer.alloc(hashes.length * size);
      for (let i = 0; i < hashes.length; i++) {
        const vector = vectors[i]!;
        if (vector.length !== dim || hashes[i]!.length !== 32) throw new RepodexError('INTERNAL', `append: a vector of ${vector.length} numbers, expected ${dim}`);
        const at = i * size;
        out.set(hashes[i]!, at);
        out.set(new Uint8Array(vector.buffer, vector.byteOffset, dim * 4), at + 32);
        out.writeUInt32LE(crc32(out.subarray(at, at + size - 4)), at + size - 4);
      }
      // Appending mode ignores the position on Linux; write at the known end explicitly after a truncate.
      let written = 0;
      while (written < out.length) written += writeSync(fd, out, written, out.length - written, length + written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    fsyncDir(this.dir);
  }

  async compact(keep: (hash: Uint8Array) => boolean): Promise<void> {
    this.sweepTemps();
    const contents = this.read();
    const dim = this.identity.dim;
    const size = this.recordBytes;
    const kept: number[] = [];
    const seen = new Set<string>();
    const view = Buffer.from(contents.hashes.buffer, contents.hashes.byteOffset, contents.hashes.byteLength);
    for (let r = contents.count - 1; r >= 0; r--) {
      const key = view.toString('latin1', r * 32, r * 32 + 32);
      if (seen.has(key) || !keep(contents.hashes.subarray(r * 32, r * 32 + 32))) continue;
      seen.add(key);
      kept.push(r);
    }
    kept.reverse();
    const out = Buffer.alloc(HEADER_BYTES + kept.length * size);
    out.write(MAGIC, 0, 'latin1');
    out.writeUInt16LE(LOG_VERSION, 8);
    out.writeUInt32LE(dim, 12);
    kept.forEach((r, i) => {
      const at = HEADER_BYTES + i * size;
      out.set(contents.hashes.subarray(r * 32, r * 32 + 32), at);
      const vector = contents.data.subarray(r * dim, r * dim + dim);
      out.set(new Uint8Array(vector.buffer, vector.byteOffset, dim * 4), at + 32);
      out.writeUInt32LE(crc32(out.subarray(at, at + size - 4)), at + size - 4);
    });
    // Records are renumbered: the graph's keys would mean other records. Drop it first, so no
    // crash or reader ever sees it beside the new log.
    this.removeGraph();
    writeFileAtomic(this.path, out, this.dir);
    this.cached = undefined;
  }

  /**
   * The graph's sidecar: its content, `none` when there is no graph, `older` when an older version
   * wrote it (searches scan until the next embedding run rebuilds the graph), or why it is damaged.
   */
  private readSidecar(): GraphMeta | 'none' | 'older' | { readonly damage: string } {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(this.dir, GRAPH_META_FILE));
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return 'none';
      return { damage: `cannot read ${this.folderName}/${GRAPH_META_FILE}: ${errorMessage(error)}` };
    }
    let body: Record<string, unknown>;
    try {
      body = readCheckedJson(bytes, `${this.folderName}/${GRAPH_META_FILE}`, 'compact');
    } catch (error) {
      if (/^\{"version":1,/.test(bytes.toString('latin1', 0, 12)) && !bytes.includes('"checksum"')) return 'older';
      return { damage: errorMessage(error) };
    }
    const parsed = GraphMetaSchema.safeParse(body);
    return parsed.success ? parsed.data : { damage: `${this.folderName}/${GRAPH_META_FILE} is damaged: unexpected fields` };
  }

  /** The graph's sidecar when it is sound and describes a prefix of `set` (same records, same hashes). */
  private graphMeta(set: VectorSet): GraphMeta | undefined {
    const meta = this.readSidecar();
    if (typeof meta === 'string' || 'damage' in meta) return undefined;
    if (meta.dim !== set.dim || meta.records < 1 || meta.records > set.count) return undefined;
    return crc32(set.hashRange(0, meta.records)) === meta.hashes_crc ? meta : undefined;
  }

  /**
   * Why the saved graph cannot be used because it is damaged (its sidecar, or the graph file
   * against the size and checksum the sidecar records), or undefined: no graph, an older one, or a
   * sound one are not damage. Searches then scan every vector, with a warning.
   */
  graphDamage(): string | undefined {
    const meta = this.readSidecar();
    if (typeof meta === 'string') return undefined;
    if ('damage' in meta) return meta.damage;
    return this.graphFileIntact(meta) ? undefined : `${this.folderName}/${GRAPH_FILE} is damaged: it does not match the size and checksum its sidecar records`;
  }

  graph(set: VectorSet): RecordIndex | undefined {
    const sidecar = (): string => {
      const stat = statSync(join(this.dir, GRAPH_META_FILE), { throwIfNoEntry: false });
      return stat ? `${stat.ino}:${stat.mtimeMs}:${stat.size}` : '';
    };
    const before = sidecar();
    const meta = this.graphMeta(set);
    if (!meta || !this.graphFileIntact(meta)) return undefined;
    const settings = { connectivity: meta.connectivity, expansionAdd: meta.expansion_add, expansionSearch: ANN_SETTINGS.expansionSearch, quantization: meta.quantization };
    try {
      const graph = AnnGraph.open(join(this.dir, GRAPH_FILE), set.dim, 'view', settings);
      // A graph saved without its sidecar being updated (a crash between the two) is not used, nor
      // one an embedding run replaced while this was reading (the sidecar changed meanwhile).
      return graph && graph.covered === meta.records && sidecar() === before ? graph : undefined;
    } catch {
      return undefined; // unreadable: scanned instead, and rebuilt by the next embedding run
    }
  }

  /** The graph file verified in this process (size, mtime, inode): checked once per file, not per open. */
  private verifiedGraph = '';

  /**
   * Whether graph.usearch has the size and CRC-32 its sidecar records. usearch reads its file
   * without checks (a damaged one crashes the process), so nothing reaches it unverified.
   */
  private graphFileIntact(meta: GraphMeta): boolean {
    const path = join(this.dir, GRAPH_FILE);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat || stat.size !== meta.file_bytes) return false;
    const stamp = `${stat.ino}:${stat.mtimeMs}:${stat.size}:${meta.file_crc}`;
    if (stamp === this.verifiedGraph) return true;
    let crc: number;
    try {
      crc = fileCrc(path);
    } catch {
      return false;
    }
    if (crc !== meta.file_crc) return false;
    this.verifiedGraph = stamp;
    return true;
  }

  async *updateGraph(set: VectorSet): AsyncGenerator<{ done: number; total: number }, boolean, undefined> {
    this.sweepTemps();
    if (!AnnGraph.available()) return false;
    if (set.count === 0) return true;
    const meta = this.graphMeta(set);
    const path = join(this.dir, GRAPH_FILE);
    const same = meta && meta.connectivity === ANN_SETTINGS.connectivity && meta.expansion_add === ANN_SETTINGS.expansionAdd && meta.quantization === ANN_SETTINGS.quantization && existsSync(path);
    // A damaged file is rebuilt below, even when the graph is up to date.
    const intact = same && this.graphFileIntact(meta);
    if (intact && meta.records === set.count) return true;
    let graph: AnnGraph | null = null;
    if (intact) {
      try {
        graph = AnnGraph.open(path, set.dim, 'load');
        if (graph && graph.covered !== meta.records) graph = null;
      } catch {
        graph = null;
      }
    }
    graph ??= AnnGraph.create(set.dim);
    if (!graph) return false;
    const from = graph.covered;
    for (let done = from; done < set.count; ) {
      done = Math.min(set.count, done + GRAPH_BATCH);
      graph.extend(set.data, done);
      yield { done: done - from, total: set.count - from };
    }
    mkdirSync(this.dir, { recursive: true });
    const temp = `${path}.tmp-${process.pid}`;
    let file: { bytes: number; crc: number };
    try {
      graph.save(temp);
      const fd = openSync(temp, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      file = { bytes: statSync(temp).size, crc: fileCrc(temp) };
      renameSync(temp, path);
    } finally {
      rmSync(temp, { force: true });
    }
    const written: GraphMeta = {
      version: GRAPH_META_VERSION,
      dim: set.dim,
      records: set.count,
      hashes_crc: crc32(set.hashRange(0, set.count)),
      file_bytes: file.bytes,
      file_crc: file.crc,
      connectivity: ANN_SETTINGS.connectivity,
      expansion_add: ANN_SETTINGS.expansionAdd,
      expansion_search: ANN_SETTINGS.expansionSearch,
      quantization: ANN_SETTINGS.quantization,
    };
    writeFileAtomic(join(this.dir, GRAPH_META_FILE), checkedJsonText(written, 'compact'), this.dir);
    return true;
  }

  /**
   * Remove temp files an interrupted writer left (a graph or log being replaced). Every writer
   * here holds the vectors lock, as the caller does, so any temp file is a dead writer's.
   */
  private sweepTemps(): void {
    for (const name of listDirOrEmpty(this.dir, 'any')) if (/\.tmp-\d+$/.test(name)) rmSync(join(this.dir, name), { force: true });
  }

  /** Drop the graph (derived data: the next embedding run that needs one builds it). */
  removeGraph(): void {
    rmSync(join(this.dir, GRAPH_META_FILE), { force: true });
    rmSync(join(this.dir, GRAPH_FILE), { force: true });
  }

  /** Records, checksums, and the torn tail if any; the graph and its sidecar. */
  check(known?: { readonly records: number; readonly crc: number }): { count: number; problems: string[]; notes: string[] } {
    const notes: string[] = [];
    const problems: string[] = [];
    let count = 0;
    try {
      // The log exactly as the manifest recorded it (what it almost always is): one CRC over it
      // proves every record at once. Otherwise, record by record, to find where it breaks.
      const whole = known && this.prefixCrc(known.records, true) === known.crc;
      const contents = whole ? { recordBytes: this.recordBytes, count: known.records, hashes: new Uint8Array(), data: new Float32Array(), validBytes: 0, tailBytes: 0 } : this.read(false);
      count = contents.count;
      const damage = this.tailDamage(contents);
      if (damage) problems.push(`${damage}; ${EMBED_FIX}`);
      else if (contents.tailBytes > 0) notes.push(`${this.logName}: ${contents.tailBytes} bytes of a record an interrupted run left; the next embedding run cuts them off`);
    } catch (error) {
      problems.push(`${detailOf(error)}; ${EMBED_FIX}`);
    }
    const graph = this.graphDamage();
    if (graph) problems.push(`${graph}; searches scan every vector until \`repodex sync\` rebuilds it`);
    else if (this.readSidecar() === 'older') notes.push(`${this.folderName}/${GRAPH_META_FILE} was written by an older repodex: searches scan every vector until the next \`repodex sync\` rebuilds the graph`);
    return { count, problems, notes };
  }

  /**
   * CRC-32 of the log's header and first `records` records (what the manifest records, so a check
   * is one pass), or undefined when the log holds fewer bytes (or, with `exact`, any other number).
   */
  prefixCrc(records: number, exact = false): number | undefined {
    const bytes = HEADER_BYTES + records * this.recordBytes;
    const size = statSync(this.path, { throwIfNoEntry: false })?.size;
    if (size === undefined || size < bytes || (exact && size !== bytes)) return undefined;
    return fileCrc(this.path, bytes);
  }

  /** Remove this embedder's vectors. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
    this.cached = undefined;
  }
}

/** What an error says, without the standard advice a RepodexError appends (reports add their own fix). */
function detailOf(error: unknown): string {
  return isRepodexError(error) ? (error.detail ?? error.message) : errorMessage(error);
}

/** CRC-32 of a file (of its first `length` bytes), read a block at a time. */
function fileCrc(path: string, length = Number.POSITIVE_INFINITY): number {
  const fd = openSync(path, 'r');
  try {
    const block = Buffer.allocUnsafe(Math.min(READ_BLOCK_BYTES, Math.max(1, length)));
    let crc = 0;
    let at = 0;
    while (at < length) {
      const n = readSync(fd, block, 0, Math.min(block.length, length - at), at);
      if (n === 0) return crc;
      crc = crc32(block.subarray(0, n), crc);
      at += n;
    }
    return crc;
  } finally {
    closeSync(fd);
  }
}

/** The integrity report of the vectors the manifest names: the manifest, the log, the graph. */
export async function checkVectorFiles(dataDir: string, open: (identity: EmbedderIdentity) => FsVectorStore): Promise<IntegrityReport> {
  let manifest: VectorManifest | undefined;
  try {
    manifest = readVectorManifestFile(dataDir);
  } catch (error) {
    return { problems: [`${detailOf(error)}; ${EMBED_FIX}`], checked: [MANIFEST_NAME], notes: [] };
  }
  if (!manifest) return { problems: [], checked: [], notes: [] };
  const identity: EmbedderIdentity = { engine: manifest.engine, model: manifest.model, dim: manifest.dim, metric: 'cosine' };
  const store = open(identity);
  const result = store.check(manifest.records !== undefined && manifest.records_crc !== undefined ? { records: manifest.records, crc: manifest.records_crc } : undefined);
  const folder = `${VECTORS_DIR}/${identityKey(identity)}`;
  const checked = [MANIFEST_NAME, `${folder}/${LOG_FILE}`];
  if (existsSync(join(dataDir, folder, GRAPH_META_FILE))) checked.push(`${folder}/${GRAPH_META_FILE}`, `${folder}/${GRAPH_FILE}`);
  const problems = [...result.problems];
  const notes = [...result.notes];
  // The log holds one record per distinct chunk text; the manifest says how many it held when written.
  if (manifest.records !== undefined && result.count < manifest.records) problems.push(`${MANIFEST_NAME} counts ${manifest.records} vector records, ${folder}/${LOG_FILE} holds ${result.count}; ${EMBED_FIX}`);
  if (manifest.version < VECTOR_MANIFEST_VERSION) notes.push(`${MANIFEST_NAME} was written by an older repodex, without a checksum: the next \`repodex sync\` rewrites it`);
  return { problems, checked, notes };
}
