import type { ChunkFallback } from '../../chunk/tree-sitter-chunker.js';
import { RepodexError } from '../../core/errors.js';
import type { ChunkRecord, CorpusStats, FileRecord, FileState, PostingList, Tree } from '../../index/model.js';
import { declarationPathAt } from '../../index/symbols-codec.js';
import { Declarations } from './declarations.js';
import type { GenerationProof } from './generation-proof.js';
import type { OutlineSymbol } from '../../lang/types.js';
import type { Language } from '../../scan/language.js';
import type { Catalog, CatalogView, IndexMeta, IndexView } from '../backend.js';
import { SegmentDictionary, type SegmentRow, frameAt, framesDamaged } from './segment-dictionary.js';
import { type SqlPool, inTransaction } from './sql.js';

/** A file row as the view keeps it (its outline is read on demand). */
export interface FileRow {
  readonly path: string;
  readonly state: FileState;
  readonly language: Language;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  readonly contentHash: string;
  readonly chunkCount: number;
  /** Its `files.declarations` text (see declarations.ts), or null in a row written before that column (its outline is read instead). */
  readonly declarations: string | null;
}

/** A chunk row as the view keeps it (its text stays in the database). */
export interface ChunkRow {
  readonly id: number;
  readonly path: string;
  readonly chunkIndex: number;
  readonly startLine: number;
  readonly endLine: number;
  readonly hash: string;
  readonly tokens: number;
  readonly snippet: string;
  readonly symbol: string | null;
  /** The segment whose postings are this chunk's. */
  readonly segment: number;
}

/** Postings lists at least this long are put in doc order through a bitmap over the docs instead of a sort (measured on playwright: a third less decoding time). */
const BITMAP_ORDER_FROM = 64;

/**
 * A view that has sent this many postings statements serves many requests (a server; a one-shot
 * command sends one or a few): it then reads every segment row of its generation at once, and later
 * requests find their postings in memory, with only the generation to prove (a statement that
 * reads a row instead of one that finds and sends every segment row of the query's terms)…
 */
const LOAD_ALL_AFTER = 16;
/**
 * …when its generation holds at most this many postings. Playwright's 1.2 million take 9.7 MB with
 * their terms, and reading them about 85 MB more for a moment (the hex text the driver receives).
 */
const LOAD_ALL_POSTINGS = 2_000_000;

/** A repository id as the database writes one. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** How many postings lists, document frequencies and outlines a view keeps. */
const CACHED = 4096;

/** Keep `value` under `key`, starting over when the cache is full (a view's working set is small). */
function remember<K, V>(cache: Map<K, V>, key: K, value: V): V {
  if (cache.size >= CACHED) cache.clear();
  cache.set(key, value);
  return value;
}

/**
 * Docs by chunk id: an open-addressing hash table in typed arrays. Chunk ids are uint32s, which a
 * Map keeps as heap numbers beyond 2^30; looking up every posting of a search through one cost
 * more than the database's answer.
 */
class ChunkIdTable {
  private readonly ids: Uint32Array;
  /** doc + 1 in each used slot, 0 in a free one. */
  private readonly docs: Uint32Array;
  private readonly mask: number;

  constructor(size: number) {
    let slots = 16;
    while (slots < size * 2) slots *= 2;
    this.ids = new Uint32Array(slots);
    this.docs = new Uint32Array(slots);
    this.mask = slots - 1;
  }

  private slot(id: number): number {
    let at = Math.imul(id, 0x9e3779b1) & this.mask;
    while (this.docs[at] !== 0 && this.ids[at] !== id) at = (at + 1) & this.mask;
    return at;
  }

  set(id: number, doc: number): void {
    const at = this.slot(id);
    this.ids[at] = id;
    this.docs[at] = doc + 1;
  }

  /** The doc of a chunk id, or -1. */
  get(id: number): number {
    return this.docs[this.slot(id)]! - 1;
  }
}

/** Postings that do not decode to what their row records. */
function damaged(term: string, segment: number): RepodexError {
  return new RepodexError('INDEX_CORRUPT', `the postings of "${[...term].filter((c) => c >= ' ').join('')}" in segment ${segment} are damaged: run \`repodex sync --force\``);
}

/**
 * The segment rows of a postings statement, back to back in one bytea: per row, the 1-based
 * position of its term among those asked for (int4), then the row as frameAt reads it.
 */
function segmentRowFrames(found: Buffer, terms: number): { term: number; row: SegmentRow }[] {
  const rows: { term: number; row: SegmentRow }[] = [];
  for (let at = 0; at < found.length; ) {
    const term = at + 4 <= found.length ? found.readInt32BE(at) - 1 : -1;
    if (term < 0 || term >= terms) throw framesDamaged();
    const { row, end } = frameAt(found, at + 4);
    rows.push({ term, row });
    at = end;
  }
  return rows;
}

/** A generation's record and file catalog, read in one snapshot. */
export interface CatalogSnapshot {
  readonly meta: IndexMeta;
  readonly generation: number;
  readonly tree: Tree;
  readonly gitDirty: readonly string[] | null;
  /** Sorted by path (JavaScript string order, as the file store sorts). */
  readonly files: readonly FileRow[];
}

/** Everything a view holds in memory, read in one snapshot. */
export interface ViewSnapshot extends CatalogSnapshot {
  /** Sorted by (path, chunk index). */
  readonly chunks: readonly ChunkRow[];
  /** Postings in the generation's segments (as written: some may be of chunks replaced since). */
  readonly postings: number;
}

/**
 * A generation's record and file catalog alone: what a freshness check reads. Opening one reads
 * no chunk rows (on playwright, 12,500 of them take a connection's client 50–100 ms to receive).
 */
export class PgCatalogView implements CatalogView {
  readonly meta: IndexMeta;
  readonly fileSlots: number;
  protected readonly files: readonly FileRow[];
  private readonly slotOf = new Map<string, number>();

  constructor(
    protected readonly pool: SqlPool,
    protected readonly repoId: string,
    protected readonly snapshot: CatalogSnapshot,
    protected readonly proof: GenerationProof,
  ) {
    this.meta = snapshot.meta;
    this.files = snapshot.files;
    this.fileSlots = this.files.length;
    this.files.forEach((file, slot) => this.slotOf.set(file.path, slot));
  }

  get generation(): number {
    return this.snapshot.generation;
  }

  filePath(slot: number): string {
    return this.files[slot]!.path;
  }

  fileLanguage(slot: number): Language {
    return this.files[slot]!.language;
  }

  fileRecord(slot: number): FileRecord {
    const { path, state, language, size, mtimeMs, ctimeMs, ino, contentHash, chunkCount } = this.files[slot]!;
    return { path, state, language, size, mtimeMs, ctimeMs, ino, contentHash, chunkCount };
  }

  findFile(path: string): number {
    return this.slotOf.get(path) ?? -1;
  }

  catalog(): Catalog {
    const files = this.files;
    return {
      count: files.length,
      tree: this.snapshot.tree,
      gitDirty: this.snapshot.gitDirty,
      path: (i) => files[i]!.path,
      stamp: (i) => {
        const file = files[i]!;
        return { size: file.size, mtimeMs: file.mtimeMs, ctimeMs: file.ctimeMs, ino: file.ino };
      },
      record: (i) => this.fileRecord(i),
      find: (path) => this.findFile(path),
    };
  }

  /**
   * Prove this generation current for a read answered from memory alone (a read that runs a
   * statement proves it in that statement): see GenerationProof. A generation proven before this
   * view was opened (an earlier one) says nothing against it.
   */
  protected async settled(): Promise<void> {
    const generation = await this.proof.latest();
    // Undefined: the repository is gone; 0: its index was cleaned.
    if (generation === undefined || generation === 0 || generation > this.snapshot.generation) throw this.replaced(generation);
  }

  ensureCurrent(): Promise<void> {
    return this.settled();
  }

  protected replaced(generation: number | undefined): RepodexError {
    return new RepodexError('INDEX_CHANGED', `generation ${this.snapshot.generation} was replaced by ${generation ?? 'none'} while answering`);
  }
}

/**
 * A generation of the PostgreSQL store. Files and chunk metadata (not their text) are read once,
 * in one snapshot; docs are chunks in (path, chunk index) order, so every doc is live and
 * `docOrder` is the identity. Postings, outlines and terms are read per request, each in one
 * statement that also reads the repository's generation: an answer that would mix this
 * generation with a newer one throws INDEX_CHANGED instead, and the engine asks again.
 */
export class PgIndexView extends PgCatalogView implements IndexView {
  readonly stats: CorpusStats;
  readonly docCount: number;
  readonly docFile: Uint32Array;
  readonly docTokens: Uint32Array;
  readonly docOrder: Uint32Array;
  private readonly rows: readonly ChunkRow[];
  /** Postings in the generation's segments (see ViewSnapshot). */
  private readonly postingsWritten: number;
  private readonly firstDoc: Uint32Array;
  private readonly docById: ChunkIdTable;
  /** Term frequencies by doc while one term's postings are put in doc order (reused: decoding never awaits). */
  private tfScratch: Uint32Array | undefined;
  /** One bit per doc, all clear between uses: puts a long postings list in doc order (see inDocOrder). */
  private docBits: Uint32Array | undefined;
  /** The segment holding each doc's postings (postings of a chunk in any other segment are stale). */
  private readonly docSegment: Float64Array;
  private hashes: Uint8Array | undefined;
  /** Decoded postings and document frequencies by term, and outlines by file slot: a view's data never changes, so answers are kept (up to CACHED each). */
  private readonly postingCache = new Map<string, PostingList | undefined>();
  private readonly dfCache = new Map<string, number>();
  /** Every segment row of this generation, once read (see LOAD_ALL_AFTER), and the postings statements sent until then. */
  private dictionary: SegmentDictionary | undefined;
  private fetches = 0;
  private readonly outlineCache = new Map<number, Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }>>();
  /** Declarations decoded from the snapshot's text, by file slot. */
  private readonly declarationCache = new Map<number, Declarations>();
  /** Outlines asked for in this turn of the event loop, fetched together in one statement. */
  private outlineBatch: Map<number, { resolve(value: { symbols: OutlineSymbol[]; fallback: ChunkFallback }): void; reject(error: unknown): void }> | undefined;

  constructor(pool: SqlPool, repoId: string, snapshot: ViewSnapshot, proof: GenerationProof) {
    super(pool, repoId, snapshot, proof);
    this.rows = snapshot.chunks;
    this.postingsWritten = snapshot.postings;
    this.docCount = this.rows.length;
    this.docFile = new Uint32Array(this.docCount);
    this.docTokens = new Uint32Array(this.docCount);
    this.docOrder = Uint32Array.from({ length: this.docCount }, (_, doc) => doc);
    this.firstDoc = new Uint32Array(this.fileSlots + 1);
    this.docSegment = Float64Array.from(this.rows, (row) => row.segment);
    this.docById = new ChunkIdTable(this.docCount);
    let tokens = 0;
    let doc = 0;
    for (let slot = 0; slot < this.fileSlots; slot++) {
      this.firstDoc[slot] = doc;
      const path = this.files[slot]!.path;
      for (; doc < this.docCount && this.rows[doc]!.path === path; doc++) {
        const row = this.rows[doc]!;
        this.docFile[doc] = slot;
        this.docTokens[doc] = row.tokens;
        this.docById.set(row.id, doc);
        tokens += row.tokens;
      }
    }
    this.firstDoc[this.fileSlots] = doc;
    if (doc !== this.docCount) throw new RepodexError('INDEX_CORRUPT', `chunk ${this.rows[doc]!.path}#${this.rows[doc]!.chunkIndex} belongs to no catalogued file`);
    this.stats = { chunkCount: this.docCount, fileCount: this.fileSlots, avgChunkTokens: this.docCount === 0 ? 0 : tokens / this.docCount };
  }

  fileDocs(slot: number): { readonly from: number; readonly to: number } {
    return { from: this.firstDoc[slot]!, to: this.firstDoc[slot + 1]! };
  }

  /** Rows of one statement that also reads the generation (as `generation` on every row, and on a row of its own when nothing else matched). */
  private async current<Row extends { generation: string | number }>(text: string, params: readonly unknown[]): Promise<Row[]> {
    const epoch = this.proof.now();
    const rows = await this.pool.query<Row>(text, params);
    const generation = rows.length === 0 ? undefined : Number(rows[0]!.generation);
    this.proof.saw(epoch, generation);
    if (generation !== this.snapshot.generation) throw this.replaced(generation);
    return rows;
  }

  /** The segment rows of `terms` without their postings (document frequencies), in one statement that also reads the generation. */
  private async segmentRows(terms: readonly string[]): Promise<{ term: string; df: number }[]> {
    const rows = await this.current<{ generation: string; term: string | null; df: number | null }>(
      `SELECT r.generation, p.term, p.df
         FROM repos r LEFT JOIN segment_postings p ON p.repo_id = r.id AND p.term = ANY($2::text[])
        WHERE r.id = $1`,
      [this.repoId, terms],
    );
    return rows.filter((row) => row.term !== null).map((row) => ({ term: row.term!, df: Number(row.df) }));
  }

  /**
   * The segment rows of `terms` with their postings, in one statement that also reads the
   * generation: one row back, its rows framed in one bytea (see segmentRowFrames). The driver turns
   * every column of every row into a value of its own: a row per (term, segment) cost more of this
   * process's time than the database spent finding them.
   */
  private async postingRows(terms: readonly string[]): Promise<{ term: number; row: SegmentRow }[]> {
    const [row] = await this.current<{ generation: string; found: Buffer | null }>(
      `SELECT r.generation,
              string_agg(int4send(array_position($2::text[], p.term)) || int8send(p.segment) || int4send(p.df) || int4send(octet_length(p.postings)) || p.postings, ''::bytea) AS found
         FROM repos r LEFT JOIN segment_postings p ON p.repo_id = r.id AND p.repo_id = $1 AND p.term = ANY($2::text[])
        WHERE r.id = $1
        GROUP BY r.id, r.generation`,
      [this.repoId, terms],
    );
    return row?.found ? segmentRowFrames(row.found, terms.length) : [];
  }

  async postings(terms: readonly string[]): Promise<(PostingList | undefined)[]> {
    // Answered from `found`, not from the cache: keeping a list may empty the cache (see remember).
    const found = new Map<string, PostingList | undefined>();
    const missing: string[] = [];
    for (const term of new Set(terms)) {
      if (this.postingCache.has(term)) found.set(term, this.postingCache.get(term));
      else missing.push(term);
    }
    const dictionary = this.dictionary;
    if (missing.length > 0 && !dictionary) {
      const fetched = await this.fetchPostings(missing);
      missing.forEach((term, i) => found.set(term, remember(this.postingCache, term, fetched[i])));
      this.loadAllWhenLongLived();
    } else {
      // From memory (kept lists, or this generation's rows): the request's generation is proven all the same.
      await this.settled();
      for (const term of missing) {
        const rows = dictionary?.rows(term);
        found.set(term, remember(this.postingCache, term, rows && this.decodePostings(term, rows)));
      }
    }
    return terms.map((term) => found.get(term));
  }

  /**
   * Count a postings statement; the LOAD_ALL_AFTER-th starts reading every segment row of this
   * generation, if few enough, in the background: requests go on fetching their own postings until
   * the rows are here (on playwright the read takes about half a second, mostly waiting for the
   * database and the socket).
   */
  private loadAllWhenLongLived(): void {
    if (++this.fetches !== LOAD_ALL_AFTER || this.postingsWritten > LOAD_ALL_POSTINGS) return;
    this.loadAll().then(
      (dictionary) => {
        this.dictionary = dictionary;
      },
      () => {
        // Requests fetch their own postings, and say what went wrong if it was more than this read
        // (a newer generation: INDEX_CHANGED; the database: its error). Another LOAD_ALL_AFTER statements try again.
        this.fetches = 0;
      },
    );
  }

  /** Every segment row of this generation, copied out in a transaction that proves it. */
  private async loadAll(): Promise<SegmentDictionary> {
    // COPY takes no parameters: the id goes in the text, so it must be the uuid the database gave.
    if (!UUID.test(this.repoId)) throw new RepodexError('INTERNAL', `not a repository id: ${this.repoId}`);
    const copied = await inTransaction(
      this.pool,
      async (tx) => {
        const epoch = this.proof.now();
        const [repo] = await tx.query<{ generation: string }>('SELECT generation FROM repos WHERE id = $1', [this.repoId]);
        const generation = repo === undefined ? undefined : Number(repo.generation);
        this.proof.saw(epoch, generation);
        if (generation !== this.snapshot.generation) throw this.replaced(generation);
        return tx.copyOut(`COPY (SELECT term, segment, df, postings FROM segment_postings WHERE repo_id = '${this.repoId}') TO STDOUT (FORMAT binary)`);
      },
      'repeatable read',
    );
    return SegmentDictionary.build(copied);
  }

  private async fetchPostings(terms: readonly string[]): Promise<(PostingList | undefined)[]> {
    const byTerm: SegmentRow[][] = terms.map(() => []);
    for (const { term, row } of await this.postingRows(terms)) byTerm[term]!.push(row);
    return terms.map((term, i) => (byTerm[i]!.length === 0 ? undefined : this.decodePostings(term, byTerm[i]!)));
  }

  /**
   * One term's postings over this generation's docs, from its rows in every segment: a posting
   * counts only while its chunk's row names that segment. Docs come out in doc order (the docs
   * alone sorted, or through a bitmap when many: each doc holds a term once), their frequencies
   * found again by doc.
   */
  private decodePostings(term: string, rows: readonly SegmentRow[]): PostingList | undefined {
    const capacity = rows.reduce((sum, row) => sum + row.df, 0);
    const docs = new Uint32Array(capacity);
    const tfOf = (this.tfScratch ??= new Uint32Array(this.docCount));
    let count = 0;
    const docById = this.docById;
    const docSegment = this.docSegment;
    for (const row of rows) {
      const segment = row.segment;
      const blob = row.postings;
      // decodePostingBlob's format, decoded in line: this loop is most of a search's own time.
      let at = 0;
      let id = 0;
      while (at < blob.length) {
        let gap = 0;
        let tf = 0;
        for (let scale = 1; ; scale *= 128) {
          const byte = blob[at++];
          if (byte === undefined) throw damaged(term, segment);
          gap += (byte & 0x7f) * scale;
          if (byte < 0x80) break;
        }
        for (let scale = 1; ; scale *= 128) {
          const byte = blob[at++];
          if (byte === undefined) throw damaged(term, segment);
          tf += (byte & 0x7f) * scale;
          if (byte < 0x80) break;
        }
        id += gap;
        const doc = docById.get(id);
        // A chunk gone since, or one rewritten into a later segment: not a posting of this generation.
        if (doc < 0 || docSegment[doc] !== segment) continue;
        if (count === capacity) throw damaged(term, segment);
        docs[count++] = doc;
        tfOf[doc] = tf;
      }
    }
    if (count === 0) return undefined;
    const sorted = count < BITMAP_ORDER_FROM ? (count === capacity ? docs : docs.slice(0, count)).sort() : this.inDocOrder(docs, count);
    // A doc twice: a chunk id twice in one segment's blob.
    if (sorted === undefined) throw damaged(term, rows[0]!.segment);
    const tfs = new Uint32Array(count);
    for (let i = 0; i < count; i++) tfs[i] = tfOf[sorted[i]!]!;
    return { term, df: count, docs: sorted, tfs };
  }

  /**
   * The first `count` of `docs` in ascending order (undefined if a doc is there twice), through a
   * bitmap over all docs instead of a sort: linear in the docs of the view, which beats a
   * comparison sort for a list this long.
   */
  private inDocOrder(docs: Uint32Array, count: number): Uint32Array | undefined {
    const bits = (this.docBits ??= new Uint32Array((this.docCount + 31) >>> 5));
    for (let i = 0; i < count; i++) bits[docs[i]! >>> 5]! |= 1 << (docs[i]! & 31);
    const sorted = count === docs.length ? docs : new Uint32Array(count);
    let k = 0;
    for (let w = 0; w < bits.length; w++) {
      let word = bits[w]!;
      if (word === 0) continue;
      bits[w] = 0;
      while (word !== 0) {
        const lowest = word & -word;
        sorted[k++] = (w << 5) + 31 - Math.clz32(lowest);
        word ^= lowest;
      }
    }
    return k === count ? sorted : undefined;
  }

  async documentFrequencies(terms: readonly string[]): Promise<number[]> {
    const missing = [...new Set(terms.filter((term) => !this.dfCache.has(term)))];
    if (missing.length > 0) {
      // Summed over segments, as the embedded store does: may count chunks replaced since (postings(…).df is exact).
      const df = new Map<string, number>();
      for (const row of await this.segmentRows(missing)) df.set(row.term, (df.get(row.term) ?? 0) + row.df);
      for (const term of missing) remember(this.dfCache, term, df.get(term) ?? 0);
    } else {
      await this.settled();
    }
    return terms.map((term) => this.dfCache.get(term)!);
  }

  async chunks(docs: readonly number[]): Promise<ChunkRecord[]> {
    await this.settled();
    return docs.map((doc) => {
      const row = this.rows[doc];
      if (!row || !Number.isInteger(doc)) throw new RepodexError('INTERNAL', `no doc ${doc} in this index`);
      return {
        id: row.id,
        doc,
        path: row.path,
        chunkIndex: row.chunkIndex,
        startLine: row.startLine,
        endLine: row.endLine,
        hash: row.hash,
        snippet: row.snippet,
        symbol: row.symbol,
        language: this.files[this.docFile[doc]!]!.language,
      };
    });
  }

  docOf(chunkId: number): number {
    return this.docById.get(chunkId);
  }

  /** The outline of a file as stored: asked for together with the others of this turn (one statement, generation checked), then kept. */
  private storedOutline(slot: number): Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }> {
    const cached = this.outlineCache.get(slot);
    if (cached) return cached;
    const promise = new Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }>((resolve, reject) => {
      if (!this.outlineBatch) {
        const batch = (this.outlineBatch = new Map());
        queueMicrotask(() => {
          this.outlineBatch = undefined;
          this.fetchOutlines(batch).catch((error: unknown) => {
            for (const waiter of batch.values()) waiter.reject(error);
          });
        });
      }
      this.outlineBatch.set(slot, { resolve, reject });
    });
    // A failed read is not kept: the next request asks again.
    promise.catch(() => this.outlineCache.delete(slot));
    return remember(this.outlineCache, slot, promise);
  }

  private async fetchOutlines(batch: ReadonlyMap<number, { resolve(value: { symbols: OutlineSymbol[]; fallback: ChunkFallback }): void; reject(error: unknown): void }>): Promise<void> {
    const slots = [...batch.keys()];
    const rows = await this.current<{ generation: string; path: string | null; symbols: OutlineSymbol[] | null; fallback: string | null }>(
      `SELECT r.generation, f.path, f.symbols, f.fallback
         FROM repos r LEFT JOIN files f ON f.repo_id = r.id AND f.path = ANY($2::text[])
        WHERE r.id = $1`,
      [this.repoId, slots.map((slot) => this.filePath(slot))],
    );
    const byPath = new Map(rows.filter((row) => row.path !== null).map((row) => [row.path!, row]));
    for (const [slot, waiter] of batch) {
      const row = byPath.get(this.filePath(slot));
      if (!row) waiter.reject(new RepodexError('INDEX_CORRUPT', `${this.filePath(slot)} is catalogued but has no row`));
      else waiter.resolve({ symbols: row.symbols ?? [], fallback: row.fallback as ChunkFallback });
    }
  }

  async outline(slot: number): Promise<{ symbols: OutlineSymbol[]; fallback: ChunkFallback }> {
    // A kept outline is answered from memory: it needs the check too.
    if (this.outlineCache.has(slot)) await this.settled();
    return this.storedOutline(slot);
  }

  async symbolAt(slot: number, first: number, last: number): Promise<string | null> {
    const text = this.files[slot]!.declarations;
    if (text !== null) {
      // From the snapshot: no statement, so nothing of another generation can mix in (but the generation must still be current).
      await this.settled();
      const declarations = this.declarationCache.get(slot) ?? remember(this.declarationCache, slot, new Declarations(text));
      return declarations.pathAt(first, last);
    }
    const { symbols } = await this.storedOutline(slot);
    return declarationPathAt(
      symbols.length,
      {
        start: (i) => symbols[i]!.start_line,
        end: (i) => symbols[i]!.end_line,
        kind: (i) => symbols[i]!.kind,
        name: (i) => symbols[i]!.name,
        parent: (i) => symbols[i]!.parent_symbol,
      },
      first,
      last,
    );
  }

  async sampleTerms(count: number): Promise<string[]> {
    const rows = await this.pool.query<{ term: string }>(
      `SELECT term FROM (
         SELECT term, row_number() OVER (ORDER BY term COLLATE "C") AS rank, count(*) OVER () AS total
           FROM (SELECT DISTINCT term FROM segment_postings WHERE repo_id = $1 AND term >= ' ') d
       ) t
       WHERE (rank - 1) % greatest(1, total / $2) = 0
       ORDER BY term COLLATE "C" LIMIT $2`,
      [this.repoId, Math.max(1, count)],
    );
    return rows.map((row) => row.term);
  }

  async storedTexts(docs: readonly number[]): Promise<Map<number, string>> {
    const ids = docs.map((doc) => this.rows[doc]!.id);
    const rows = await this.current<{ generation: string; chunk_id: string | null; content: string | null }>(
      `SELECT r.generation, c.chunk_id, c.content
         FROM repos r LEFT JOIN chunks c ON c.repo_id = r.id AND c.chunk_id = ANY($2::bigint[])
        WHERE r.id = $1`,
      [this.repoId, ids],
    );
    const out = new Map<number, string>();
    for (const row of rows) if (row.chunk_id !== null) out.set(this.docById.get(Number(row.chunk_id)), row.content!);
    return out;
  }

  chunkHashes(): Uint8Array {
    if (!this.hashes) {
      const out = new Uint8Array(this.docCount * 32);
      this.rows.forEach((row, doc) => out.set(Buffer.from(row.hash, 'hex'), doc * 32));
      this.hashes = out;
    }
    return this.hashes;
  }
}
