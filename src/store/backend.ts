import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import type { ChunkRecord, CorpusStats, FileRecord, NewFile, PostingList, Tree } from '../index/model.js';
import type { OutlineSymbol } from '../lang/types.js';
import type { Language } from '../scan/language.js';

/** The commit record of a generation, whatever the backend keeps it in. */
export interface IndexMeta {
  readonly format_version: number;
  /** The rules the index was built with (tokenizer, chunkers, fields): see core/version.ts. */
  readonly feature_version: number;
  readonly tool_version: string;
  /** Increases by one with every commit. */
  readonly generation: number;
  /** sha256 of the raw bytes of config.json at sync time. */
  readonly config_hash: string;
  readonly project_type: string;
  readonly chunker: { readonly name: string; readonly version: number; readonly params_key: string };
  readonly counts: {
    readonly files: number;
    readonly files_indexed: number;
    readonly files_skipped: number;
    readonly chunks: number;
    readonly segments: number;
  };
  /** Bytes of the indexed files. */
  readonly source_bytes: number;
  /** HEAD when the generation was committed (null outside git). */
  readonly git: { readonly commit: string | null; readonly branch: string | null } | null;
  readonly synced_at: string;
  readonly duration_ms: number;
}

/** What the writer of a generation supplies; the store fills in versions, the generation number and counts. */
export type MetaDraft = Omit<IndexMeta, 'format_version' | 'feature_version' | 'tool_version' | 'generation' | 'counts' | 'source_bytes'>;

/** The file catalog of a generation: every candidate file with the stat freshness checks compare, sorted by path. */
export interface Catalog {
  readonly count: number;
  readonly tree: Tree;
  path(i: number): string;
  size(i: number): number;
  mtimeMs(i: number): number;
  /** The whole record of entry `i`. */
  record(i: number): FileRecord;
  /** Entry index of a path, or -1. */
  find(path: string): number;
  /** Paths whose working-tree content differed from the indexed commit when it was synced (null: not recorded). */
  readonly gitDirty: readonly string[] | null;
}

/**
 * A loaded, immutable index generation: what search, fetch and sync read. Each chunk has a stable
 * `id` (what clients hold) and a dense `doc` number (what scoring indexes arrays with; per view).
 * Files have slot numbers (per view). Postings and chunk records are asked for by the few terms
 * and docs a request needs; bulk per-doc columns are in memory for scoring.
 */
export interface IndexView {
  readonly meta: IndexMeta;
  /** Over live chunks and files only. */
  readonly stats: CorpusStats;
  /** Size of the doc number space (live and dead docs): what per-doc arrays are sized to. */
  readonly docCount: number;
  /** File slot of every doc. */
  readonly docFile: Uint32Array;
  /** Token count of every doc (BM25 document length). */
  readonly docTokens: Uint32Array;
  /** Rank of every live doc in (path, start line) order: the tie-break of equal scores. */
  readonly docOrder: Uint32Array;
  /** Number of file slots (live and dead). */
  readonly fileSlots: number;
  filePath(slot: number): string;
  fileLanguage(slot: number): Language;
  fileRecord(slot: number): FileRecord;
  /** Slot of the live file at a path, or -1. */
  findFile(path: string): number;
  /** The docs of a live file's chunks, in chunk order. */
  fileDocs(slot: number): { readonly from: number; readonly to: number };
  /** The file catalog of this generation (what freshness checks and syncs compare). */
  catalog(): Catalog;
  /** Postings over live docs for each term, undefined where no live chunk has the term. */
  postings(terms: readonly string[]): Promise<(PostingList | undefined)[]>;
  /**
   * How many chunks hold each term, without decoding any postings: cheap enough to weigh
   * thousands of query terms. May count chunks replaced since their segment was written (a
   * store that cannot tell cheaply may); exact is `postings(…).df`.
   */
  documentFrequencies(terms: readonly string[]): Promise<number[]>;
  /** Chunk records by doc. */
  chunks(docs: readonly number[]): Promise<ChunkRecord[]>;
  /** The doc of a live chunk id, or -1 (gone or never existed). */
  docOf(chunkId: number): number;
  /** A live file's stored outline and how it was chunked (`fallback` null = parsed, outline complete). */
  outline(slot: number): Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }>;
  /**
   * The display path (`class Router › match`) of the declaration lines `first..last` of a live file
   * sit in: the innermost enclosing `first`, else the first starting within the lines; or null.
   */
  symbolAt(slot: number, first: number, last: number): Promise<string | null>;
  /** Up to `count` content terms spread evenly over the dictionary (deterministic): warm-up queries. */
  sampleTerms(count: number): string[];
}

/** What a commit did. */
export interface CommitResult {
  readonly meta: IndexMeta;
  /** True when the commit also merged segments into one (compaction). */
  readonly merged: boolean;
}

/**
 * Writes one new generation. Incremental: on top of the base view, dropping files (`remove`) and
 * adding new versions (`add`); full: from nothing. The caller holds the writer lock. Nothing is
 * visible to readers until `commit`, which is atomic; `abort` leaves no trace.
 */
export interface GenerationWriter {
  /** Drop a file the base generation holds (deleted, or about to be replaced by `add`). */
  remove(path: string): void;
  /** Add a file (its chunks' text is indexed here); files come in increasing path order. */
  add(file: NewFile): void;
  /** The walk behind this generation, and (when known) the paths git saw dirty. */
  setTree(tree: Tree, gitDirty: readonly string[] | null): void;
  commit(draft: MetaDraft): Promise<CommitResult>;
  abort(): Promise<void>;
}

/** Who holds the writer lock. */
export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly started: string;
}

/** A held writer lock; release it in a `finally`. */
export interface HeldLock {
  release(): Promise<void>;
}

/** A parse result kept by content: a file whose content was chunked before is never parsed again. */
export interface ParsedContent {
  readonly spans: readonly { readonly startLine: number; readonly endLine: number }[];
  readonly symbols: readonly OutlineSymbol[];
  readonly fallback: ChunkFallback;
}

/** Parse results keyed by (content, language, chunking rules); survives `sync --force` and branch switches. */
export interface ParseCache {
  get(key: string): ParsedContent | undefined;
  put(key: string, value: ParsedContent): void;
  /**
   * Persist what was put (called after a successful commit). `live` gives the keys the index uses
   * now, asked for only when the cache has grown enough to be worth trimming to them.
   */
  flush(live: () => Promise<ReadonlySet<string>>): Promise<void>;
}

/** The outcome of an integrity check. */
export interface IntegrityReport {
  /** What is damaged, one line each (empty when sound). */
  readonly problems: string[];
  /** What was checked, one line each. */
  readonly checked: string[];
  /** Not damage, but worth saying (what an interrupted sync left for the next one to drop). */
  readonly notes: string[];
}

/**
 * Where an index lives. The embedded store keeps generations of segment files under `.repodex/`;
 * other backends (PostgreSQL) implement the same contract. The engine and search never see a
 * driver, a file name or an encoding: only logical records go in, views come out.
 */
export interface IndexStore {
  /** Current commit record, or undefined when no index was ever committed. Throws INDEX_CORRUPT/INCOMPATIBLE when unreadable. */
  readMeta(): Promise<IndexMeta | undefined>;
  /** A cheap value that changes whenever a generation is committed or the index is removed. */
  stamp(): Promise<string>;
  /** Open the current generation; what is read is loaded on demand (a catalog does not load postings). */
  open(): Promise<IndexView>;
  /** Start a new generation: on top of `base` (incremental) or from nothing (`undefined`: full rebuild). */
  beginGeneration(base: IndexView | undefined): Promise<GenerationWriter>;
  /** Take the single-writer lock; waits up to `waitMs` for a running sync, then throws LOCKED. */
  lock(options?: { readonly waitMs?: number }): Promise<HeldLock>;
  /** The live holder of the writer lock (a sync is running), or undefined. */
  syncRunning(): Promise<LockOwner | undefined>;
  /** Checksums and sizes of the current generation; `deep` adds every cross-reference and the parse cache. */
  check(options?: { readonly deep?: boolean }): Promise<IntegrityReport>;
  /** The parse cache (loaded on first use). */
  parseCache(): Promise<ParseCache>;
  /** Remove what interrupted writers left behind (the caller holds the lock); cheap when there is nothing. */
  tidy(): Promise<void>;
  /** Remove the index (keeps config and ignore rules); returns what was removed. */
  clean(): Promise<string[]>;
  /** Bytes on disk of the current generation. */
  sizeOnDisk(): Promise<number>;
}
