import type { CorpusStats, ChunkRecord, FileRecord, PostingList } from '../index/model.js';
import type { IndexMeta } from '../index/meta.js';
import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import type { OutlineSymbol } from '../lang/types.js';
import type { Language } from '../scan/language.js';
import type { ControlFile, WalkedDir } from '../scan/walker.js';

/**
 * A loaded, immutable index generation: what search and fetch read. Bulk per-chunk columns are
 * in memory for scoring; postings and chunk records are asked for by the few terms and ids a
 * request needs, asynchronously, so a database backend can serve them too.
 */
export interface IndexView {
  readonly meta: IndexMeta;
  readonly stats: CorpusStats;
  /** File id of every chunk. */
  readonly chunkFile: Uint32Array;
  /** Token count of every chunk (BM25 document length). */
  readonly chunkTokens: Uint32Array;
  /** Number of catalogued files (indexed and skipped). */
  readonly fileCount: number;
  filePath(fileId: number): string;
  fileLanguage(fileId: number): Language;
  fileRecord(fileId: number): FileRecord;
  /** The file catalog of this generation (what freshness checks compare). */
  catalog(): Promise<Catalog>;
  /** Find a file id by path, or -1. */
  findFile(path: string): number;
  /** Postings for each term, undefined where the term is not in the index. */
  postings(terms: readonly string[]): Promise<(PostingList | undefined)[]>;
  /** A file's stored outline and how it was chunked (`fallback` null = parsed, outline complete). */
  outline(fileId: number): Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }>;
  /** Up to `count` content terms spread evenly over the dictionary (deterministic): warm-up queries. */
  sampleTerms(count: number): string[];
  /** Chunk records by id; undefined for ids out of range. */
  chunks(ids: readonly number[]): Promise<(ChunkRecord | undefined)[]>;
}

/** The file catalog of a generation: every candidate file with the stat dirty checks compare, sorted by path. */
export interface Catalog {
  readonly count: number;
  /** Folders the walk listed and their mtimes. */
  readonly dirs: readonly WalkedDir[];
  /** Ignore files that shaped the walk and their stats. */
  readonly controls: readonly ControlFile[];
  path(i: number): string;
  size(i: number): number;
  mtimeMs(i: number): number;
}

/** Everything one sync produced, ready to be committed as a generation. */
export interface GenerationData {
  readonly files: Uint8Array;
  readonly chunks: Uint8Array;
  readonly terms: Uint8Array;
  readonly postings: Uint8Array;
  readonly symbols: Uint8Array;
}

/** The metadata a writer supplies; the store fills in generation and artifact checksums. */
export type MetaDraft = Omit<IndexMeta, 'generation' | 'generation_dir' | 'artifacts'>;

/**
 * Where an index lives. The embedded store keeps generations of files under `.repodex/`; other
 * backends (PostgreSQL) implement the same contract. The engine and search never see a driver.
 */
export interface IndexStore {
  /** Current meta, or undefined when no index was ever committed. */
  readMeta(): IndexMeta | undefined;
  /** Names of artifacts of the current generation that are missing on disk. */
  missingArtifacts(meta: IndexMeta): string[];
  /** Load only the file catalog of a generation (what `status` needs). */
  openCatalog(meta: IndexMeta): Promise<Catalog>;
  /** Load the current generation. */
  open(options?: { verify?: boolean }): Promise<IndexView>;
  /** Atomically commit a new generation: readers see the old one or the new one, never a mix. */
  commit(data: GenerationData, draft: MetaDraft): Promise<IndexMeta>;
  /** Hold the single-writer lock. */
  lock(): { release(): void };
  /** Remove index artifacts, keeping config and ignore. Returns the names removed. */
  clean(): string[];
  /** Bytes on disk of the current generation. */
  sizeOnDisk(meta: IndexMeta): number;
}
