import type { ChunkFallback } from '../../chunk/tree-sitter-chunker.js';
import { RepodexError } from '../../core/errors.js';
import { RecentMap } from '../../core/recent-map.js';
import type { Manifest, SegmentRef } from '../../index/manifest.js';
import type { ChunkRecord, CorpusStats, FileRecord, PostingList } from '../../index/model.js';
import { decodePostingsInto } from '../../index/postings-builder.js';
import { type Segment, forEachLiveFile } from '../../index/segment.js';
import type { OutlineSymbol } from '../../lang/types.js';
import type { Language } from '../../scan/language.js';
import { type Catalog, DEAD_DOC, type IndexMeta, type IndexView } from '../backend.js';

/** Per-doc columns and corpus numbers, built on first use (a catalog-only reader never pays for them). */
interface DocColumns {
  readonly docFile: Uint32Array;
  readonly docTokens: Uint32Array;
  readonly docOrder: Uint32Array;
  readonly docLive: Uint8Array;
  readonly stats: CorpusStats;
}

/**
 * Decoded posting lists a view keeps, by postings held (8 bytes each: 16 MB at most), and the shortest
 * list worth keeping: a long list costs more to decode than to look up, and the same common terms
 * come back query after query in a served index. Lists decoded and dropped again are memory outside
 * the heap that V8 answers with full collections: with 8 MB a served kafka index made one every 300
 * searches or so (pauses of 4–11 ms), with 16 MB one every 2,000.
 */
const KEPT_POSTINGS = 1 << 21;
const KEEP_FROM_DF = 256;

/**
 * A generation of the embedded store: segments stacked in manifest order with their tombstones
 * applied. Segment i's files take slots `fileBase[i] + local` and its chunks docs
 * `docBase[i] + local`; a file is live unless a tombstone names it, and a path is live in at most
 * one segment. Groups of sections load on first use.
 */
export class FsIndexView implements IndexView {
  readonly fileSlots: number;
  readonly docCount: number;
  private readonly fileBase: number[] = [];
  private readonly docBase: number[] = [];
  private readonly fileDead: Uint8Array;
  /** Live file slots in path order (the catalog). */
  private readonly liveOrder: Uint32Array;
  /** Paths looked up lately and their positions in liveOrder: a search presents the same few files again and again. */
  private readonly positions = new RecentMap<string, number>(4096);
  private columns: DocColumns | undefined;
  private idIndex: Map<number, number> | undefined;
  private hashes: Uint8Array | undefined;
  private readonly decoded = new RecentMap<string, PostingList>(KEPT_POSTINGS, (list) => list.docs.buffer.byteLength >>> 2);

  constructor(
    readonly meta: IndexMeta,
    private readonly manifest: Manifest,
    private readonly segments: readonly Segment[],
  ) {
    let files = 0;
    let docs = 0;
    for (const segment of segments) {
      this.fileBase.push(files);
      this.docBase.push(docs);
      files += segment.files.count;
      docs += segment.files.chunkStart[segment.files.count]!;
    }
    this.fileSlots = files;
    this.docCount = docs;
    this.fileDead = new Uint8Array(files);
    manifest.dead.forEach((list, s) => {
      const count = segments[s]!.files.count;
      for (const local of list) {
        if (local >= count) throw new RepodexError('INDEX_CORRUPT', `a tombstone names file ${local} of ${segments[s]!.name}, which has ${count}`);
        this.fileDead[this.fileBase[s]! + local] = 1;
      }
    });
    this.liveOrder = this.mergeLiveFiles();
  }

  /** The segments' live files in one path order (a path may be live only once). */
  private mergeLiveFiles(): Uint32Array {
    const out = new Uint32Array(this.fileSlots);
    let count = 0;
    forEachLiveFile(
      this.segments,
      (s, f) => this.fileDead[this.fileBase[s]! + f] === 1,
      (s, f) => {
        out[count++] = this.fileBase[s]! + f;
      },
    );
    return out.subarray(0, count);
  }

  /** The segments of this generation in manifest order, with the manifest entry and tombstones of each. */
  segmentList(): { ref: SegmentRef; segment: Segment; dead: readonly number[] }[] {
    return this.segments.map((segment, s) => ({ ref: this.manifest.segments[s]!, segment, dead: this.manifest.dead[s] ?? [] }));
  }

  /** Segment number of a file slot. */
  private segmentOfSlot(slot: number): number {
    return upperBound(this.fileBase, slot) - 1;
  }

  /** Segment number of a doc. */
  private segmentOfDoc(doc: number): number {
    return upperBound(this.docBase, doc) - 1;
  }

  private get cols(): DocColumns {
    this.columns ??= this.buildColumns();
    return this.columns;
  }

  private buildColumns(): DocColumns {
    const docFile = new Uint32Array(this.docCount);
    const docTokens = new Uint32Array(this.docCount);
    const docLive = new Uint8Array(this.docCount);
    const docOrder = new Uint32Array(this.docCount).fill(DEAD_DOC);
    this.segments.forEach((segment, s) => {
      const files = segment.files;
      const fileBase = this.fileBase[s]!;
      const docBase = this.docBase[s]!;
      docTokens.set(segment.chunks.tokens, docBase);
      // Per file, not per chunk: this runs once per process, in code V8 has not optimized yet.
      const chunkStart = files.chunkStart;
      for (let f = 0; f < files.count; f++) {
        const slot = fileBase + f;
        const from = docBase + chunkStart[f]!;
        const to = docBase + chunkStart[f + 1]!;
        docFile.fill(slot, from, to);
        if (this.fileDead[slot] !== 1) docLive.fill(1, from, to);
      }
    });
    let rank = 0;
    let liveTokens = 0;
    for (const slot of this.liveOrder) {
      const { from, to } = this.fileDocs(slot);
      for (let doc = from; doc < to; doc++) {
        docOrder[doc] = rank++;
        liveTokens += docTokens[doc]!;
      }
    }
    return {
      docFile,
      docTokens,
      docOrder,
      docLive,
      stats: { chunkCount: rank, fileCount: this.liveOrder.length, avgChunkTokens: rank === 0 ? 0 : liveTokens / rank },
    };
  }

  get stats(): CorpusStats {
    return this.cols.stats;
  }

  get docFile(): Uint32Array {
    return this.cols.docFile;
  }

  get docTokens(): Uint32Array {
    return this.cols.docTokens;
  }

  get docOrder(): Uint32Array {
    return this.cols.docOrder;
  }

  filePath(slot: number): string {
    const s = this.segmentOfSlot(slot);
    return this.segments[s]!.files.paths.get(slot - this.fileBase[s]!);
  }

  fileLanguage(slot: number): Language {
    const s = this.segmentOfSlot(slot);
    return this.segments[s]!.files.language(slot - this.fileBase[s]!);
  }

  fileRecord(slot: number): FileRecord {
    const s = this.segmentOfSlot(slot);
    return this.segments[s]!.files.record(slot - this.fileBase[s]!);
  }

  /** Position of a live path in path order, or -1. */
  private findPosition(path: string): number {
    const known = this.positions.get(path);
    if (known !== undefined) return known;
    const position = this.searchPosition(path);
    this.positions.set(path, position);
    return position;
  }

  private searchPosition(path: string): number {
    let lo = 0;
    let hi = this.liveOrder.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const probe = this.filePath(this.liveOrder[mid]!);
      if (probe === path) return mid;
      if (probe < path) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  findFile(path: string): number {
    const position = this.findPosition(path);
    return position < 0 ? -1 : this.liveOrder[position]!;
  }

  fileDocs(slot: number): { from: number; to: number } {
    const s = this.segmentOfSlot(slot);
    const files = this.segments[s]!.files;
    const local = slot - this.fileBase[s]!;
    const base = this.docBase[s]!;
    return { from: base + files.chunkStart[local]!, to: base + files.chunkStart[local + 1]! };
  }

  /** The file columns of a slot's segment and the slot's row in them. */
  private columnsOf(slot: number): { files: Segment['files']; row: number } {
    const s = this.segmentOfSlot(slot);
    return { files: this.segments[s]!.files, row: slot - this.fileBase[s]! };
  }

  catalog(): Catalog {
    const order = this.liveOrder;
    return {
      count: order.length,
      tree: this.manifest.tree,
      gitDirty: this.manifest.gitDirty,
      path: (i) => this.filePath(order[i]!),
      stamp: (i) => {
        const { files, row } = this.columnsOf(order[i]!);
        return { size: files.sizes[row]!, mtimeMs: files.mtimes[row]!, ctimeMs: files.ctimes[row]!, ino: files.inodes[row]! };
      },
      record: (i) => this.fileRecord(order[i]!),
      find: (path) => this.findPosition(path),
    };
  }

  async postings(terms: readonly string[]): Promise<(PostingList | undefined)[]> {
    return terms.map((term) => this.postingsOf(term));
  }

  async documentFrequencies(terms: readonly string[]): Promise<number[]> {
    return terms.map((term) => {
      let df = 0;
      for (const segment of this.segments) {
        const rank = segment.terms.terms.find(term);
        if (rank >= 0) df += segment.terms.df[rank]!;
      }
      return df;
    });
  }

  /** Postings of one term across segments, dead docs dropped; docs ascend because segments' bases do. */
  private postingsOf(term: string): PostingList | undefined {
    const kept = this.decoded.get(term);
    if (kept) return kept;
    const list = this.decodePostingsOf(term);
    if (list && list.df >= KEEP_FROM_DF) this.decoded.set(term, list);
    return list;
  }

  private decodePostingsOf(term: string): PostingList | undefined {
    const docLive = this.cols.docLive;
    let docs: Uint32Array | undefined;
    let tfs: Uint32Array | undefined;
    let count = 0;
    for (let s = 0; s < this.segments.length; s++) {
      const terms = this.segments[s]!.terms;
      const rank = terms.terms.find(term);
      if (rank < 0) continue;
      const df = terms.df[rank]!;
      if (!docs || !tfs || count + df > docs.length) {
        const grownDocs = new Uint32Array(Math.max(count + df, docs ? docs.length * 2 : df));
        const grownTfs = new Uint32Array(grownDocs.length);
        if (docs && tfs) {
          grownDocs.set(docs.subarray(0, count));
          grownTfs.set(tfs.subarray(0, count));
        }
        docs = grownDocs;
        tfs = grownTfs;
      }
      // Sections passed their checksums when the view loaded; postings that still overrun (`repodex verify` names them) are left out.
      const decoded = decodePostingsInto(terms.postings, terms.offsets, terms.df, rank, this.docBase[s]!, docLive, docs, tfs, count);
      if (decoded >= 0) count = decoded;
    }
    if (!docs || !tfs || count === 0) return undefined;
    return { term, df: count, docs: docs.subarray(0, count), tfs: tfs.subarray(0, count) };
  }

  async chunks(docs: readonly number[]): Promise<ChunkRecord[]> {
    return docs.map((doc) => this.chunkRecord(doc));
  }

  private chunkRecord(doc: number): ChunkRecord {
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.docCount) throw new RepodexError('INTERNAL', `no doc ${doc} in this index`);
    const s = this.segmentOfDoc(doc);
    const segment = this.segments[s]!;
    const local = doc - this.docBase[s]!;
    const file = upperBound(segment.files.chunkStart, local) - 1;
    const chunks = segment.chunks;
    return {
      id: chunks.ids[local]!,
      doc,
      path: segment.files.paths.get(file),
      chunkIndex: local - segment.files.chunkStart[file]!,
      startLine: chunks.lines[local * 2]!,
      endLine: chunks.lines[local * 2 + 1]!,
      hash: chunks.hash(local),
      snippet: chunks.snippets.get(local),
      symbol: chunks.symbolPaths.get(local) || null,
      language: segment.files.language(file),
    };
  }

  docOf(chunkId: number): number {
    if (!this.idIndex) {
      const index = new Map<number, number>();
      const docLive = this.cols.docLive;
      this.segments.forEach((segment, s) => {
        const ids = segment.chunks.ids;
        const base = this.docBase[s]!;
        for (let local = 0; local < ids.length; local++) if (docLive[base + local] === 1) index.set(ids[local]!, base + local);
      });
      this.idIndex = index;
    }
    return this.idIndex.get(chunkId) ?? -1;
  }

  async outline(slot: number): Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }> {
    const s = this.segmentOfSlot(slot);
    const segment = this.segments[s]!;
    const local = slot - this.fileBase[s]!;
    return { symbols: segment.symbols.forFile(local), fallback: segment.fallback(local) };
  }

  async symbolAt(slot: number, first: number, last: number): Promise<string | null> {
    const s = this.segmentOfSlot(slot);
    return this.segments[s]!.symbols.pathAt(slot - this.fileBase[s]!, first, last);
  }

  async sampleTerms(count: number): Promise<string[]> {
    let largest: Segment | undefined;
    for (const segment of this.segments) if (!largest || segment.files.count > largest.files.count) largest = segment;
    if (!largest) return [];
    const table = largest.terms.terms;
    const out: string[] = [];
    const step = Math.max(1, Math.floor(table.count / Math.max(1, count)));
    for (let rank = 0; rank < table.count && out.length < count; rank += step) {
      const term = table.get(rank);
      if (term.charCodeAt(0) >= 32) out.push(term); // field terms sort first, behind control characters
    }
    return out;
  }

  chunkHashes(): Uint8Array {
    if (!this.hashes) {
      const out = new Uint8Array(this.docCount * 32);
      const docLive = this.cols.docLive;
      this.segments.forEach((segment, s) => {
        const base = this.docBase[s]!;
        const count = segment.chunks.ids.length;
        out.set(segment.chunks.hashBlock, base * 32);
        for (let local = 0; local < count; local++) if (docLive[base + local] !== 1) out.fill(0, (base + local) * 32, (base + local + 1) * 32);
      });
      this.hashes = out;
    }
    return this.hashes;
  }

  /** The file store keeps no chunk text: it is in the working tree. */
  /** The engine's stamp check before each request reads meta.json's identity: nothing more to prove. */
  async ensureCurrent(): Promise<void> {}

  async storedTexts(): Promise<undefined> {
    return undefined;
  }
}

/** Index of the first element greater than `value` in an ascending array. */
function upperBound(sorted: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
