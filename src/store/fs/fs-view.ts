import type { Artifact, StringTable } from '../../index/format.js';
import { FileTable } from '../../index/files-codec.js';
import { FALLBACK_CODES, SymbolTable } from '../../index/symbols-codec.js';
import type { ChunkFallback } from '../../chunk/tree-sitter-chunker.js';
import type { OutlineSymbol } from '../../lang/types.js';
import type { IndexMeta } from '../../index/meta.js';
import type { ChunkRecord, CorpusStats, FileRecord, PostingList } from '../../index/model.js';
import { type Language, languageFromCode } from '../../scan/language.js';
import type { IndexView } from '../backend.js';

/** An index generation loaded from `.bin` files into memory (columns are zero-copy views). */
export class FsIndexView implements IndexView {
  readonly stats: CorpusStats;
  readonly chunkFile: Uint32Array;
  readonly chunkTokens: Uint32Array;
  readonly fileCount: number;
  private readonly files: FileTable;
  private readonly chunkLines: Uint32Array;
  private readonly chunkHashes: Uint8Array;
  private readonly snippets: StringTable;
  private readonly terms: StringTable;
  private readonly df: Uint32Array;
  private readonly postingOffsets: Uint32Array;
  private readonly postingBytes: Uint8Array;
  private outlineTable: SymbolTable | undefined;
  private readonly symbolPaths: StringTable;

  constructor(
    readonly meta: IndexMeta,
    files: Artifact,
    chunks: Artifact,
    terms: Artifact,
    postings: Artifact,
    private readonly loadSymbols: () => Artifact,
  ) {
    this.symbolPaths = chunks.strings('SYMP');
    this.files = new FileTable(files);
    this.fileCount = this.files.count;
    this.chunkFile = chunks.u32('FILE');
    this.chunkLines = chunks.u32('LINE');
    this.chunkTokens = chunks.u32('TLEN');
    this.chunkHashes = chunks.bytes('HASH');
    this.snippets = chunks.strings('SNIP');
    this.terms = terms.strings('TERM');
    this.df = terms.u32('DF  ');
    this.postingOffsets = terms.u32('POFF');
    this.postingBytes = postings.bytes('POST');
    let totalTokens = 0;
    for (let i = 0; i < this.chunkTokens.length; i++) totalTokens += this.chunkTokens[i]!;
    const chunkCount = this.chunkFile.length;
    this.stats = {
      chunkCount,
      fileCount: this.fileCount,
      termCount: this.terms.count,
      avgChunkTokens: chunkCount === 0 ? 0 : totalTokens / chunkCount,
    };
  }

  filePath(fileId: number): string {
    return this.files.paths.get(fileId);
  }

  fileLanguage(fileId: number): Language {
    return languageFromCode(this.files.languages[fileId]!);
  }

  fileRecord(fileId: number): FileRecord {
    return this.files.record(fileId);
  }

  findFile(path: string): number {
    // Files are sorted by path, so binary search the string table.
    return this.files.paths.find(path);
  }

  async catalog(): Promise<FileTable> {
    return this.files;
  }

  async postings(terms: readonly string[]): Promise<(PostingList | undefined)[]> {
    return terms.map((term) => this.postingsOf(term));
  }

  /** Synchronous postings lookup for the embedded hot path. */
  postingsOf(term: string): PostingList | undefined {
    const rank = this.terms.find(term);
    if (rank < 0) return undefined;
    const df = this.df[rank]!;
    const chunkIds = new Uint32Array(df);
    const tfs = new Uint32Array(df);
    const bytes = this.postingBytes;
    let at = this.postingOffsets[rank]!;
    let previous = 0;
    for (let i = 0; i < df; i++) {
      let value = 0;
      let shift = 0;
      let byte: number;
      do {
        byte = bytes[at++]!;
        value |= (byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      previous += value >>> 0;
      chunkIds[i] = previous;
      let tf = 0;
      shift = 0;
      do {
        byte = bytes[at++]!;
        tf |= (byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      tfs[i] = tf >>> 0;
    }
    return { term, df, chunkIds, tfs };
  }

  /** symbols.bin is read on first use: searches never need it. */
  private get outlines(): SymbolTable {
    this.outlineTable ??= new SymbolTable(this.loadSymbols());
    return this.outlineTable;
  }

  async outline(fileId: number): Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }> {
    const code = this.outlines.fallbackCodes[fileId] ?? 1;
    // `null` (parsed) is a real value here: an unknown code from a newer writer reads as no-adapter.
    const fallback = code < FALLBACK_CODES.length ? FALLBACK_CODES[code]! : 'no-adapter';
    return { symbols: this.outlines.forFile(fileId), fallback };
  }

  async chunks(ids: readonly number[]): Promise<(ChunkRecord | undefined)[]> {
    return ids.map((id) => this.chunkRecord(id));
  }

  /** Synchronous chunk lookup for the embedded hot path. */
  chunkRecord(id: number): ChunkRecord | undefined {
    if (!Number.isInteger(id) || id < 0 || id >= this.chunkFile.length) return undefined;
    const fileId = this.chunkFile[id]!;
    return {
      id,
      fileId,
      path: this.files.paths.get(fileId),
      chunkIndex: id - this.files.chunkStart[fileId]!,
      startLine: this.chunkLines[id * 2]!,
      endLine: this.chunkLines[id * 2 + 1]!,
      hash: Buffer.from(this.chunkHashes.buffer, this.chunkHashes.byteOffset + id * 32, 32).toString('hex'),
      snippet: this.snippets.get(id),
      symbol: this.symbolPaths.get(id) || null,
      language: languageFromCode(this.files.languages[fileId]!),
    };
  }

  sampleTerms(count: number): string[] {
    const out: string[] = [];
    const step = Math.max(1, Math.floor(this.terms.count / Math.max(1, count)));
    for (let rank = 0; rank < this.terms.count && out.length < count; rank += step) {
      const term = this.terms.get(rank);
      if (term.charCodeAt(0) >= 32) out.push(term); // field terms sort first, behind control characters
    }
    return out;
  }
}
