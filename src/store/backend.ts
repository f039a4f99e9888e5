import type { RepoLayout } from '../scan/layout.js';
import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import type { FileStamp } from '../core/stat.js';
import type { ChunkRecord, CorpusStats, FileRecord, NewFile, PostingList, Tree } from '../index/model.js';
import type { PackedParse, ParseResult } from '../index/parse-record.js';
import type { OutlineSymbol } from '../lang/types.js';
import type { Language } from '../scan/language.js';
import type { EmbedderIdentity } from '../vector/embedder.js';
import type { ControlPlane } from './control.js';

/**
 * Where an index lives, as plain data: what a worker thread is handed to open the same store as
 * its parent. `fs`: the embedded store under the repository's `.repodex/`; `postgres`: the
 * database at `url` (the repository is found there by its root).
 */
export type StoreSpec = { readonly kind: 'fs' } | { readonly kind: 'postgres'; readonly url: string };

/** `docOrder` of a dead doc (a chunk of a file removed or replaced since its segment was written). */
export const DEAD_DOC = 0xffffffff;

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
  /**
   * Hash of the settings that shape what the index holds (indexConfigKey): when only the others
   * changed (embeddings, watch, auto_index, formatting), a sync records the new config_hash
   * without a rebuild. Absent in indexes written before it existed.
   */
  readonly index_config_key?: string;
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
  /**
   * A first sync that stopped at its time budget (a first search on a large repository answers
   * from it): it indexed `files` of the `of` files it found. The next sync walks the whole tree and
   * adds the rest. Absent from complete generations.
   */
  readonly partial?: { readonly files: number; readonly of: number };
  /**
   * What the repository declares about its folders (workspaces, `.gitattributes`): docs sites,
   * benchmarks, templates, examples. Ranking weighs their files' roles by it. Absent in indexes
   * written before it was learned (the next sync learns it).
   */
  readonly layout?: RepoLayout;
}

/** What the writer of a generation supplies; the store fills in versions, the generation number and counts. */
export type MetaDraft = Omit<IndexMeta, 'format_version' | 'feature_version' | 'tool_version' | 'generation' | 'counts' | 'source_bytes'>;

/** The file catalog of a generation: every candidate file with the stat freshness checks compare, sorted by path. */
export interface Catalog {
  readonly count: number;
  readonly tree: Tree;
  path(i: number): string;
  /** The stat entry `i` was indexed with (what change detection compares). */
  stamp(i: number): FileStamp;
  /** The whole record of entry `i`. */
  record(i: number): FileRecord;
  /** Entry index of a path, or -1. */
  find(path: string): number;
  /** Paths whose working-tree content differed from the indexed commit when it was synced (null: not recorded). */
  readonly gitDirty: readonly string[] | null;
}

/**
 * What a freshness check reads of a generation: its record and its file catalog, without its
 * chunks. A store that keeps chunk metadata apart (a database) opens this without reading them, so
 * a server's request thread, which only checks freshness before an answer thread answers, never
 * loads a generation's chunks.
 */
export interface CatalogView {
  readonly meta: IndexMeta;
  /** Number of file slots (live and dead). */
  readonly fileSlots: number;
  filePath(slot: number): string;
  fileLanguage(slot: number): Language;
  fileRecord(slot: number): FileRecord;
  /** Slot of the live file at a path, or -1. */
  findFile(path: string): number;
  /** The file catalog of this generation (what freshness checks and syncs compare). */
  catalog(): Catalog;
  /**
   * Throw INDEX_CHANGED unless this view's generation is still the repository's current one. For a
   * read answered from what the view holds in memory (a file listing): a store whose stamp can
   * answer without asking (the database's) asks here; the file store's stamp always looks.
   */
  ensureCurrent(): Promise<void>;
}

/**
 * A loaded, immutable index generation: what search, fetch and sync read. Each chunk has a stable
 * `id` (what clients hold) and a dense `doc` number (what scoring indexes arrays with; per view).
 * Files have slot numbers (per view). Postings and chunk records are asked for by the few terms
 * and docs a request needs; bulk per-doc columns are in memory for scoring.
 */
export interface IndexView extends CatalogView {
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
  /** The docs of a live file's chunks, in chunk order. */
  fileDocs(slot: number): { readonly from: number; readonly to: number };
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
  sampleTerms(count: number): Promise<string[]>;
  /** Every doc's chunk hash, 32 bytes each, back to back (dead docs: zeros): what vectors are keyed by. */
  chunkHashes(): Uint8Array;
  /**
   * The text of chunks by doc, as the store keeps it (a database stores it: a server needs no
   * checkout to embed), or undefined when the store keeps none (the file store: the caller reads
   * the working tree and keeps a text only while it still hashes to the chunk).
   */
  storedTexts(docs: readonly number[]): Promise<Map<number, string> | undefined>;
}

/** Whether a catalog view is a whole view (a store that opens both the same way answers one). */
export function isIndexView(view: CatalogView): view is IndexView {
  return 'postings' in view;
}

/** Which chunk texts one embedder's vectors cover: what an embedding run asks before embedding. */
export interface VectorHoldings {
  /** Vectors held (one per distinct chunk text). */
  readonly count: number;
  /**
   * Why the store holds vectors it leaves out because they are damaged (what precedes the damage
   * is held), or undefined. The next embedding run repairs it.
   */
  readonly damage?: string | undefined;
  /** Whether a vector is held for a chunk hash (32 raw bytes). */
  has(hash: Uint8Array): boolean;
}

/** Nearest chunks to a query vector, best first. */
export interface Neighbours {
  readonly docs: number[];
  /** Cosine similarity of each. */
  readonly sims: number[];
}

/** Which chunks a vector search may return: those of the file slots marked 1 (`files[slot]`). */
export interface VectorFilter {
  readonly files: Uint8Array;
}

/** Damage a vector search works around: vectors left out (`partial`), or an approximate index not used (`scan`). */
export interface VectorDamage {
  /** What is damaged, as a sentence naming it. */
  readonly what: string;
  readonly effect: 'partial' | 'scan';
}

/**
 * Nearest-neighbour search over the vectors of one index generation's live chunks, answered by the
 * store: the file store scans (or searches its saved graph), a database asks its vector index.
 */
export interface ChunkVectors {
  /** Live chunks of the generation that have a vector. */
  readonly count: number;
  /** Live chunks of the generation. */
  readonly live: number;
  /** Whether searches go through an approximate index rather than comparing every vector. */
  readonly approximate: boolean;
  /** What is damaged in what the vectors come from, and left out (searches say so in a warning); empty when sound. */
  readonly damage: readonly VectorDamage[];
  /** The `k` docs nearest to `query` (unit length) among those `filter` allows, best first. */
  nearest(query: Float32Array, k: number, filter?: VectorFilter): Promise<Neighbours>;
  /** The cosine similarity of each doc to `query` (0 for a doc without a vector). */
  similarities(query: Float32Array, docs: readonly number[]): Promise<number[]>;
}

/** What bringing a store's vector index up to its vectors did. */
export type VectorIndexOutcome =
  /** Too few vectors to be worth an approximate index: searches compare every vector. */
  | { readonly kind: 'none' }
  /** The index covers every vector held. */
  | { readonly kind: 'current'; readonly vectors: number }
  /** No approximate index can be had here (its library does not load): searches compare every vector. */
  | { readonly kind: 'unavailable' };

/**
 * The seed 003 manifest of the semantic index: what made the vectors, what they cover, and when.
 * One is current (the embedder in use); switching models and back finds the old vectors again.
 */
export interface VectorManifest {
  readonly version: number;
  readonly engine: string;
  readonly model: string;
  readonly dim: number;
  readonly metric: string;
  readonly chunk: { readonly mode: 'auto'; readonly target_lines: number; readonly max_lines: number; readonly overlap_lines: number };
  readonly repo: { readonly root: '.'; readonly git_sha: string | null };
  /** `vectors`: live chunks with a vector (identical chunks share one, so each counts). */
  readonly counts: { readonly files: number; readonly chunks: number; readonly vectors: number };
  /** The index generation whose chunks the vectors were last brought up to. */
  readonly generation: number;
  /**
   * Records the vector store held when this manifest was written: one per distinct chunk text, so
   * fewer than `counts.vectors` when chunks repeat (absent from older manifests).
   */
  readonly records?: number | undefined;
  /** The store's checksum of those records (set by the store when it writes the manifest), so a check of them is one pass. */
  readonly records_crc?: number | undefined;
  /**
   * The vector store's stamp when this manifest was written: while it holds, `counts` still
   * describes the vectors, so status need not load them (absent from older manifests).
   */
  readonly vectors_stamp?: string | undefined;
  readonly created_at: string;
  readonly last_refresh: string;
}

/** Where the vectors of one embedder identity live, keyed by chunk hash. Writes need the vectors lock. */
export interface VectorStore {
  readonly identity: EmbedderIdentity;
  /** Which chunk hashes have a vector now; a record torn by an interrupted append is not held. */
  holdings(): Promise<VectorHoldings>;
  /** Add vectors (each `dim` long, unit length) under their chunk hashes, durably. */
  append(hashes: readonly Uint8Array[], vectors: readonly Float32Array[]): Promise<void>;
  /** Keep only the vectors whose hash `keep` accepts (called when most are of no live chunk). */
  compact(keep: (hash: Uint8Array) => boolean): Promise<void>;
  /** A cheap value that changes whenever vectors are added or removed, or their index changes. */
  stamp(): Promise<string>;
  /**
   * Search over the vectors of `view`'s live chunks. From `annFrom` vectors on, a store with an
   * approximate index uses it (below, every vector is compared: exact).
   */
  searcher(view: IndexView, options: { readonly annFrom: number }): Promise<ChunkVectors>;
  /**
   * Bring the approximate index up to every vector held, once there are `annFrom` or more (extend
   * the one there, or build one afresh). Needs the vectors lock. Yields progress between batches.
   */
  updateIndex(options: { readonly annFrom: number }): AsyncGenerator<{ done: number; total: number }, VectorIndexOutcome, undefined>;
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
  remove(path: string): Promise<void>;
  /**
   * Add a file (its chunks' text is indexed here); files come in increasing path order. A store
   * may write as files come (a database streams rows) or buffer until `commit`.
   */
  add(file: NewFile): Promise<void>;
  /** The walk behind this generation, and (when known) the paths git saw dirty. */
  setTree(tree: Tree, gitDirty: readonly string[] | null): Promise<void>;
  commit(draft: MetaDraft): Promise<CommitResult>;
  abort(): Promise<void>;
}

/** Who holds the writer lock. */
export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly started: string;
}

/** Bytes on disk, as `status` shows them. */
export interface DiskUsage {
  /** The current generation (and, on the embedded store, the parse cache). */
  readonly index: number;
  /**
   * Everything kept for the repository, by part (`index`, `parse cache`, `vectors`, `history`,
   * `audit log`, …; only parts that take space), so a user sees where the space goes.
   */
  readonly parts: Record<string, number>;
}

/** A held writer lock; release it in a `finally`. */
export interface HeldLock {
  release(): Promise<void>;
}

/** A parse result kept by content: a file whose content was chunked before is never parsed again. */
export type ParsedContent = ParseResult & {
  /**
   * The result as the cache stores it (packParse), made where the parse ran; a result read from
   * the cache carries it too. Its outline text is what a segment stores for the file.
   */
  readonly packed?: PackedParse;
};

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

/**
 * A machine's parse cache with its upkeep: what a store is handed (it lives beside the checkout,
 * `.repodex/parse-cache.rpdx`, whichever store holds the index).
 */
export interface LocalParseCache {
  open(): Promise<ParseCache>;
  /** Its checksums (see `IndexStore.checkCache`). */
  check(): Promise<IntegrityReport>;
  /** Drop a damaged tail or a cache made under other rules. */
  tidy(): Promise<void>;
  /** Remove it; returns what was removed. */
  clean(): Promise<string[]>;
  /** Bytes on disk. */
  size(): number;
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
  /** What the repository keeps beside its index: audit log, analytics, build log, documents. */
  readonly control: ControlPlane;
  /** Current commit record, or undefined when no index was ever committed. Throws INDEX_CORRUPT/INCOMPATIBLE when unreadable. */
  readMeta(): Promise<IndexMeta | undefined>;
  /** A cheap value that changes whenever a generation is committed or the index is removed. */
  stamp(): Promise<string>;
  /**
   * The next stamp reads the store again: a generation was just committed by a writer this store
   * object did not see (a sync in a worker thread). A store whose stamps always read is unaffected.
   */
  forgetStamp(): void;
  /** Open the current generation; what is read is loaded on demand (a catalog does not load postings). */
  open(): Promise<IndexView>;
  /**
   * Open the current generation's record and file catalog: all a freshness check reads. A store
   * whose views hold little else answers with `open()`'s view (see `isIndexView`).
   */
  openCatalog(): Promise<CatalogView>;
  /** Start a new generation: on top of `base` (incremental) or from nothing (`undefined`: full rebuild). */
  beginGeneration(base: IndexView | undefined): Promise<GenerationWriter>;
  /** Take the single-writer lock; waits up to `waitMs` for a running sync, then throws LOCKED. */
  lock(options?: { readonly waitMs?: number }): Promise<HeldLock>;
  /** The live holder of the writer lock (a sync is running), or undefined. */
  syncRunning(): Promise<LockOwner | undefined>;
  /** Checksums and sizes of the current generation; `deep` adds every cross-reference. */
  check(options?: { readonly deep?: boolean }): Promise<IntegrityReport>;
  /**
   * The parse cache's checksums. Damage there is never used (loading stops at it) and the next
   * sync drops it, also a sync with nothing to index (`tidy`); a cache made under other rules is
   * a note, discarded by the next sync.
   */
  checkCache(): Promise<IntegrityReport>;
  /** The parse cache (loaded on first use). */
  parseCache(): Promise<ParseCache>;
  /**
   * Remove what interrupted writers left behind and what cannot be used (a damaged parse-cache
   * tail; the caller holds the lock); cheap when there is nothing.
   */
  tidy(): Promise<void>;
  /** Remove the index (keeps config and ignore rules); returns what was removed. */
  clean(): Promise<string[]>;
  /** What the index takes on disk, and what this store keeps for the repository by part (one look). */
  diskUsage(): Promise<DiskUsage>;
  /** The vectors of one embedder (created empty on first append). */
  vectors(identity: EmbedderIdentity): VectorStore;
  /**
   * Remove every other vector set of `keep`'s engine (needs the vectors lock): the builtin
   * embedder's vectors made with a table it has since relearned can never be used again.
   * Returns how many sets were removed.
   */
  dropOtherVectors(keep: EmbedderIdentity): Promise<number>;
  /** Take the lock that serializes embedding runs (separate from the writer lock: lexical syncs go on meanwhile). */
  vectorLock(options?: { readonly waitMs?: number }): Promise<HeldLock>;
  /** The live holder of the vectors lock (embedding is running), or undefined. */
  embeddingRunning(): Promise<LockOwner | undefined>;
  /** The current semantic manifest, or undefined when nothing was ever embedded. */
  readVectorManifest(): Promise<VectorManifest | undefined>;
  /** Replace the semantic manifest atomically (the store records the manifest version it writes). */
  writeVectorManifest(manifest: Omit<VectorManifest, 'version'>): Promise<void>;
  /** Integrity of the vectors the manifest names: records, checksums, and the count it states. */
  checkVectors(): Promise<IntegrityReport>;
  /** Bytes on disk of the semantic index (all embedders' vectors and tables). */
  vectorsSizeOnDisk(): Promise<number>;
}
