import { FALLBACK_CODES, type StoredOutline, SymbolColumns, SymbolTable } from './symbols-codec.js';
import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import { RepodexError } from '../core/errors.js';
import { type Language, languageCode, languageFromCode } from '../scan/language.js';
import { HISTORY_FIELD, NAME_FIELD, PATH_FIELD } from './fields.js';
import { type Artifact, ArtifactBuffer, ArtifactFile, type ArtifactSource, type ArtifactWriter, type CodedStrings, CodedStringsBuilder, StringTable, leBytes } from './format.js';
import { GrowableU32 } from './growable.js';
import { FILE_STATES, type FileRecord, type FileState, type NewFile } from './model.js';
import { PostingsBuilder, decodePostings } from './postings-builder.js';

/**
 * A segment: an immutable set of files with their chunks, term dictionary, postings and outlines,
 * in one artifact (kind `SEGM`). Files are sorted by path; a file's chunks are contiguous and in
 * line order; chunk numbers are local to the segment. Sections come in groups, in file order, so a
 * reader loads only the groups it uses:
 *
 *   files    PATH paths, SIZE/MTIM/CTIM/INOD stat, STAT state, LANG language, CHNK first chunk per file
 *            (count + 1), HASH content sha256
 *   chunks   CIDS stable chunk ids, LINE start/end, TLEN token count, CHSH chunk sha256,
 *            SNIP snippet, SYMP symbol path (both stored once per distinct value: CodedStrings)
 *   terms    TERM sorted terms, DF   postings per term, POFF offsets into POST, POST
 *            (chunk delta, tf) varint pairs; path and declared-name field terms share the
 *            dictionary behind a control-character prefix (index/fields.ts)
 *   symbols  SFIL first symbol per file, SFBK how each file was chunked, SLIN, SFLG, KIND, NAME,
 *            PRNT, CTXT, SOTX (see symbols-codec.ts)
 */
export const SEGMENT_KIND = 'SEGM';

const FILE_SECTIONS = ['PATH', 'SIZE', 'MTIM', 'CTIM', 'INOD', 'STAT', 'LANG', 'CHNK', 'HASH'] as const;
const CHUNK_SECTIONS = ['CIDS', 'LINE', 'TLEN', 'CHSH', 'SNIP', 'SYMP'] as const;
const TERM_SECTIONS = ['TERM', 'DF  ', 'POFF', 'POST'] as const;
const SYMBOL_SECTIONS = ['SFIL', 'SFBK', 'SLIN', 'SFLG', 'KIND', 'NAME', 'PRNT', 'CTXT', 'SOTX'] as const;

/** What a written segment holds. */
export interface SegmentSummary {
  readonly files: number;
  readonly chunks: number;
  readonly terms: number;
  readonly postings: number;
  readonly bytes: number;
}

/** One chunk as a segment stores it (what a merge copies). */
export interface StoredChunk {
  readonly id: number;
  readonly startLine: number;
  readonly endLine: number;
  readonly tokens: number;
  readonly hash: Uint8Array;
  readonly snippet: string;
  readonly symbol: string;
}

/**
 * Builds a segment from files added in increasing path order: from a sync (`addFile`, chunk text
 * tokenized here) or from a merge of other segments (`addStoredFile` plus `postings.addPosting`).
 */
export class SegmentBuilder {
  private readonly paths: string[] = [];
  private readonly sizes: number[] = [];
  private readonly mtimes: number[] = [];
  private readonly ctimes: number[] = [];
  private readonly inodes: number[] = [];
  private readonly states: number[] = [];
  private readonly languages: number[] = [];
  private readonly contentHashes: string[] = [];
  private readonly chunkStart = new GrowableU32();
  private readonly ids = new GrowableU32();
  private readonly lines = new GrowableU32();
  private readonly tokens = new GrowableU32();
  /** Chunk hashes, 32 bytes each, back to back (one block, not one object per chunk). */
  private hashes = new Uint8Array(32 * 1024);
  private readonly snippets = new CodedStringsBuilder();
  private readonly symbolPaths = new CodedStringsBuilder();
  private readonly outlines = new SymbolColumns();
  /** The segment's inverted index; merges add stored postings here directly. */
  readonly postings = new PostingsBuilder();

  constructor() {
    this.chunkStart.push(0);
  }

  get fileCount(): number {
    return this.paths.length;
  }

  get chunkCount(): number {
    return this.ids.length;
  }

  /** Files, indexed files, chunks and indexed source bytes added so far. */
  stats(): { files: number; indexed: number; chunks: number; sourceBytes: number } {
    let indexed = 0;
    let sourceBytes = 0;
    const indexedState = FILE_STATES.indexOf('indexed');
    this.states.forEach((state, i) => {
      if (state !== indexedState) return;
      indexed++;
      sourceBytes += this.sizes[i]!;
    });
    return { files: this.paths.length, indexed, chunks: this.ids.length, sourceBytes };
  }

  private addRecord(record: Omit<FileRecord, 'chunkCount'>): void {
    const previous = this.paths[this.paths.length - 1];
    if (previous !== undefined && !(previous < record.path)) {
      throw new RepodexError('INTERNAL', `segment files must be added in path order: ${record.path} after ${previous}`);
    }
    this.paths.push(record.path);
    this.sizes.push(record.size);
    this.mtimes.push(record.mtimeMs);
    this.ctimes.push(record.ctimeMs);
    this.inodes.push(record.ino);
    this.states.push(FILE_STATES.indexOf(record.state));
    this.languages.push(languageCode(record.language));
    this.contentHashes.push(record.contentHash);
  }

  private addChunkMeta(chunk: Omit<StoredChunk, 'tokens' | 'symbol'> & { symbol: string | null }, tokens: number): void {
    this.ids.push(chunk.id);
    this.lines.push(chunk.startLine);
    this.lines.push(chunk.endLine);
    this.tokens.push(tokens);
    const at = (this.ids.length - 1) * 32;
    if (at + 32 > this.hashes.length) {
      const grown = new Uint8Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes.set(chunk.hash, at);
    this.snippets.push(chunk.snippet);
    this.symbolPaths.push(chunk.symbol ?? '');
  }

  /** Add a file from a sync: its chunks' text and field terms are indexed now. */
  addFile(file: NewFile): void {
    this.addRecord(file.record);
    this.outlines.add(file.symbols, FALLBACK_CODES.indexOf(file.fallback), file.outlineText);
    for (const chunk of file.chunks) {
      const local = this.ids.length;
      const tokens = this.postings.addText(local, chunk.text);
      for (const term of chunk.fields.path) this.postings.addPresence(local, PATH_FIELD + term);
      for (const term of chunk.fields.names) this.postings.addPresence(local, NAME_FIELD + term);
      for (const term of chunk.fields.history ?? []) this.postings.addPresence(local, HISTORY_FIELD + term);
      this.addChunkMeta(chunk, tokens);
    }
    this.chunkStart.push(this.ids.length);
  }

  /**
   * Add a file copied from another segment (merging). Returns the local number of its first
   * chunk; the caller then adds the chunks' postings with `postings.addPosting`.
   */
  addStoredFile(record: Omit<FileRecord, 'chunkCount'>, chunks: readonly StoredChunk[], outline: StoredOutline, fallback: ChunkFallback): number {
    this.addRecord(record);
    this.outlines.addStored(outline, FALLBACK_CODES.indexOf(fallback));
    const first = this.ids.length;
    for (const chunk of chunks) this.addChunkMeta(chunk, chunk.tokens);
    this.chunkStart.push(this.ids.length);
    return first;
  }

  /** Write every section in group order; deterministic for the same input. */
  write(writer: ArtifactWriter): Omit<SegmentSummary, 'bytes'> {
    const n = this.paths.length;
    writer.add('PATH', StringTable.encode(this.paths));
    writer.add('SIZE', leBytes(Float64Array.from(this.sizes)));
    writer.add('MTIM', leBytes(Float64Array.from(this.mtimes)));
    writer.add('CTIM', leBytes(Float64Array.from(this.ctimes)));
    writer.add('INOD', leBytes(Float64Array.from(this.inodes)));
    writer.add('STAT', Uint8Array.from(this.states));
    writer.add('LANG', Uint8Array.from(this.languages));
    writer.add('CHNK', leBytes(this.chunkStart.view()));
    const contentHashes = new Uint8Array(n * 32);
    this.contentHashes.forEach((hex, i) => contentHashes.set(Buffer.from(hex, 'hex'), i * 32));
    writer.add('HASH', contentHashes);

    writer.add('CIDS', leBytes(this.ids.view()));
    writer.add('LINE', leBytes(this.lines.view()));
    writer.add('TLEN', leBytes(this.tokens.view()));
    writer.add('CHSH', this.hashes.subarray(0, this.ids.length * 32));
    writer.add('SNIP', this.snippets.encode());
    writer.add('SYMP', this.symbolPaths.encode());

    const built = this.postings.finish();
    for (const section of built.terms) writer.add(section.tag, section.bytes);
    writer.add(built.postings.tag, built.postings.bytes);

    for (const section of this.outlines.sections()) writer.add(section.tag, section.bytes);
    return { files: n, chunks: this.ids.length, terms: built.termCount, postings: built.postingCount };
  }
}

/** The file columns of a segment. */
export class SegmentFiles {
  readonly count: number;
  readonly paths: StringTable;
  readonly sizes: Float64Array;
  readonly mtimes: Float64Array;
  readonly ctimes: Float64Array;
  readonly inodes: Float64Array;
  readonly states: Uint8Array;
  readonly languages: Uint8Array;
  /** First local chunk of each file (count + 1 entries). */
  readonly chunkStart: Uint32Array;
  private readonly hashes: Uint8Array;

  constructor(artifact: Artifact) {
    this.paths = artifact.strings('PATH');
    this.count = this.paths.count;
    this.sizes = artifact.f64('SIZE');
    this.mtimes = artifact.f64('MTIM');
    this.ctimes = artifact.f64('CTIM');
    this.inodes = artifact.f64('INOD');
    this.states = artifact.bytes('STAT');
    this.languages = artifact.bytes('LANG');
    this.chunkStart = artifact.u32('CHNK');
    this.hashes = artifact.bytes('HASH');
    const name = artifact.name;
    const columns = [this.sizes, this.mtimes, this.ctimes, this.inodes, this.states, this.languages];
    if (columns.some((column) => column.length !== this.count)) {
      throw new RepodexError('INDEX_CORRUPT', `${name}: file columns disagree on the file count`);
    }
    if (this.chunkStart.length !== this.count + 1 || this.hashes.length !== this.count * 32) throw new RepodexError('INDEX_CORRUPT', `${name}: file chunk table is damaged`);
  }

  state(i: number): FileState {
    return FILE_STATES[this.states[i]!] ?? 'unreadable';
  }

  language(i: number): Language {
    return languageFromCode(this.languages[i]!);
  }

  /** Content sha256 of file `i`, hex (NO_CONTENT_HASH when it was not read). */
  contentHash(i: number): string {
    return Buffer.from(this.hashes.buffer, this.hashes.byteOffset + i * 32, 32).toString('hex');
  }

  record(i: number): FileRecord {
    return {
      path: this.paths.get(i),
      size: this.sizes[i]!,
      mtimeMs: this.mtimes[i]!,
      ctimeMs: this.ctimes[i]!,
      ino: this.inodes[i]!,
      state: this.state(i),
      language: this.language(i),
      contentHash: this.contentHash(i),
      chunkCount: this.chunkStart[i + 1]! - this.chunkStart[i]!,
    };
  }
}

/** The chunk columns of a segment. */
export class SegmentChunks {
  readonly count: number;
  readonly ids: Uint32Array;
  readonly lines: Uint32Array;
  readonly tokens: Uint32Array;
  private readonly hashes: Uint8Array;
  readonly snippets: CodedStrings;
  readonly symbolPaths: CodedStrings;

  constructor(artifact: Artifact) {
    this.ids = artifact.u32('CIDS');
    this.count = this.ids.length;
    this.lines = artifact.u32('LINE');
    this.tokens = artifact.u32('TLEN');
    this.hashes = artifact.bytes('CHSH');
    this.snippets = artifact.coded('SNIP');
    this.symbolPaths = artifact.coded('SYMP');
    if (this.lines.length !== this.count * 2 || this.tokens.length !== this.count || this.hashes.length !== this.count * 32 || this.snippets.count !== this.count || this.symbolPaths.count !== this.count) {
      throw new RepodexError('INDEX_CORRUPT', `${artifact.name}: chunk columns disagree on the chunk count`);
    }
  }

  /** Chunk sha256 of local chunk `i`, as bytes (a view). */
  /** Every chunk's hash, 32 bytes each, in chunk order. */
  get hashBlock(): Uint8Array {
    return this.hashes;
  }

  hashBytes(i: number): Uint8Array {
    return this.hashes.subarray(i * 32, i * 32 + 32);
  }

  hash(i: number): string {
    return Buffer.from(this.hashes.buffer, this.hashes.byteOffset + i * 32, 32).toString('hex');
  }

  stored(i: number): StoredChunk {
    return {
      id: this.ids[i]!,
      startLine: this.lines[i * 2]!,
      endLine: this.lines[i * 2 + 1]!,
      tokens: this.tokens[i]!,
      hash: this.hashBytes(i),
      snippet: this.snippets.get(i),
      symbol: this.symbolPaths.get(i),
    };
  }
}

/** The term dictionary and postings of a segment. */
export class SegmentTerms {
  readonly terms: StringTable;
  readonly df: Uint32Array;
  readonly offsets: Uint32Array;
  readonly postings: Uint8Array;

  constructor(artifact: Artifact) {
    this.terms = artifact.strings('TERM');
    this.df = artifact.u32('DF  ');
    this.offsets = artifact.u32('POFF');
    this.postings = artifact.bytes('POST');
    if (this.df.length !== this.terms.count || this.offsets.length !== this.terms.count + 1 || this.offsets[this.terms.count]! > this.postings.length) {
      throw new RepodexError('INDEX_CORRUPT', `${artifact.name}: term dictionary and postings disagree`);
    }
  }
}

/**
 * A segment file opened for reading. Its groups of sections load on first use and are kept; the
 * file stays open, so a segment that a newer generation dropped (and garbage collection deleted)
 * stays readable for as long as an older view uses it.
 */
export class Segment {
  private filesGroup: SegmentFiles | undefined;
  private chunksGroup: SegmentChunks | undefined;
  private termsGroup: SegmentTerms | undefined;
  private symbolsGroup: SymbolTable | undefined;
  private checked = false;

  private constructor(
    readonly name: string,
    private readonly file: ArtifactSource,
  ) {
    CLOSER.register(this, file);
  }

  /** Open a segment file (header and TOC are checked now). */
  static open(path: string, name: string): Segment {
    return new Segment(name, ArtifactFile.open(path, name, SEGMENT_KIND));
  }

  /** A segment held in memory (what a merge reads a not-yet-written delta as). */
  static fromBuffer(name: string, bytes: Uint8Array): Segment {
    return new Segment(name, new ArtifactBuffer(name, SEGMENT_KIND, bytes));
  }

  /** Bytes of the artifact. */
  get bytes(): number {
    return this.file.layout.length;
  }

  /** Checksum of the artifact's header (what a manifest binds itself to). */
  get headerCrc(): number {
    return this.file.layout.headerCrc;
  }

  /**
   * Read and check every byte (checksums, padding): undefined when sound, else what is wrong. The
   * groups are decoded from that one read, so a reader that checks first does not read twice.
   */
  checkBytes(): string | undefined {
    if (this.checked) return undefined; // immutable: once sound, what this process serves stays sound
    try {
      const all = this.file.readAll();
      this.filesGroup ??= new SegmentFiles(all);
      this.chunksGroup ??= new SegmentChunks(all);
      this.termsGroup ??= new SegmentTerms(all);
      this.symbolsGroup ??= new SymbolTable(all);
      this.checked = true;
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  get files(): SegmentFiles {
    this.filesGroup ??= new SegmentFiles(this.file.read(FILE_SECTIONS));
    return this.filesGroup;
  }

  get chunks(): SegmentChunks {
    this.chunksGroup ??= new SegmentChunks(this.file.read(CHUNK_SECTIONS));
    return this.chunksGroup;
  }

  get terms(): SegmentTerms {
    this.termsGroup ??= new SegmentTerms(this.file.read(TERM_SECTIONS));
    return this.termsGroup;
  }

  get symbols(): SymbolTable {
    this.symbolsGroup ??= new SymbolTable(this.file.read(SYMBOL_SECTIONS));
    return this.symbolsGroup;
  }

  /** How file `i` was chunked (null = declarations, outline complete). */
  fallback(i: number): ChunkFallback {
    const code = this.symbols.fallbackCodes[i] ?? 1;
    // `null` (parsed) is a real value here: an unknown code from a newer writer reads as no-adapter.
    return code < FALLBACK_CODES.length ? FALLBACK_CODES[code]! : 'no-adapter';
  }

  /**
   * Check every byte and every cross-reference (what `verify` runs): checksums and padding,
   * column lengths, chunk ranges, postings that decode exactly into range with the stored df,
   * a sorted dictionary, sorted paths. Returns the problems found (empty when sound).
   */
  verify(): string[] {
    const problems: string[] = [];
    const fail = (why: string): void => {
      problems.push(`${this.name}: ${why}`);
    };
    let artifact: Artifact;
    try {
      artifact = this.file.readAll();
    } catch (error) {
      return [error instanceof Error ? error.message : String(error)];
    }
    let files: SegmentFiles;
    let chunks: SegmentChunks;
    let terms: SegmentTerms;
    let symbols: SymbolTable;
    try {
      files = new SegmentFiles(artifact);
      chunks = new SegmentChunks(artifact);
      terms = new SegmentTerms(artifact);
      symbols = new SymbolTable(artifact);
    } catch (error) {
      return [error instanceof Error ? error.message : String(error)];
    }
    if (!files.paths.wellFormed() || !chunks.snippets.wellFormed() || !chunks.symbolPaths.wellFormed() || !terms.terms.wellFormed()) fail('a string table is damaged');
    for (let i = 1; i < files.count && problems.length === 0; i++) if (!(files.paths.get(i - 1) < files.paths.get(i))) fail(`paths out of order at file ${i}`);
    if (files.chunkStart[0] !== 0 || files.chunkStart[files.count] !== chunks.count) fail('file chunk ranges do not cover the chunks');
    for (let i = 0; i < files.count; i++) {
      if (files.chunkStart[i + 1]! < files.chunkStart[i]!) fail(`file ${i} has a negative chunk range`);
      if (files.states[i]! >= FILE_STATES.length) fail(`file ${i} has an unknown state`);
      if (files.state(i) !== 'indexed' && files.chunkStart[i + 1] !== files.chunkStart[i]) fail(`skipped file ${i} has chunks`);
    }
    for (let c = 0; c < chunks.count; c++) {
      const start = chunks.lines[c * 2]!;
      const end = chunks.lines[c * 2 + 1]!;
      if (start < 1 || end < start) fail(`chunk ${c} has lines ${start}-${end}`);
    }
    for (let r = 0; r < terms.terms.count && problems.length < 20; r++) {
      if (r > 0 && !(terms.terms.get(r - 1) < terms.terms.get(r))) fail(`terms out of order at ${r}`);
      if (terms.offsets[r + 1]! < terms.offsets[r]!) fail(`postings of term ${r} run backwards`);
      let count = 0;
      let inRange = true;
      const ok = decodePostings(terms.postings, terms.offsets, terms.df, r, (chunk) => {
        count++;
        if (chunk >= chunks.count) inRange = false;
      });
      if (!ok || count !== terms.df[r] || !inRange) fail(`postings of term ${JSON.stringify(terms.terms.get(r))} are damaged`);
    }
    for (const problem of symbols.check(files.count)) fail(problem);
    return problems;
  }
}

const CLOSER = new FinalizationRegistry<ArtifactSource>((file) => {
  try {
    file.close();
  } catch {
    // Already closed: nothing to release.
  }
});

/**
 * Visit the live files of several segments in path order: a k-way merge of their path-sorted file
 * lists (segments are few, so each step scans the heads). `isDead(s, f)` says whether file `f` of
 * segment `s` is tombstoned. A path live in two segments is damage (INDEX_CORRUPT).
 */
export function forEachLiveFile(segments: readonly Segment[], isDead: (s: number, f: number) => boolean, visit: (s: number, f: number, path: string) => void): void {
  const heads = segments.map(() => 0);
  const skipDead = (s: number): void => {
    const count = segments[s]!.files.count;
    while (heads[s]! < count && isDead(s, heads[s]!)) heads[s]!++;
  };
  segments.forEach((_, s) => skipDead(s));
  let previous: string | undefined;
  for (;;) {
    let best = -1;
    let bestPath = '';
    for (let s = 0; s < segments.length; s++) {
      const files = segments[s]!.files;
      if (heads[s]! >= files.count) continue;
      const path = files.paths.get(heads[s]!);
      if (best < 0 || path < bestPath) {
        best = s;
        bestPath = path;
      }
    }
    if (best < 0) return;
    if (previous === bestPath) throw new RepodexError('INDEX_CORRUPT', `${bestPath} is live in two segments`);
    previous = bestPath;
    visit(best, heads[best]!, bestPath);
    heads[best]!++;
    skipDead(best);
  }
}
