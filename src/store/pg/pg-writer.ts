import { RepodexError, isRepodexError } from '../../core/errors.js';
import { FEATURE_VERSION, FORMAT_VERSION, TOOL_VERSION } from '../../core/version.js';
import { ChunkTermCounter } from '../../index/chunk-terms.js';
import type { NewFile, Tree } from '../../index/model.js';
import type { CommitResult, GenerationWriter, IndexMeta, IndexView, MetaDraft } from '../backend.js';
import { encodeDeclarations } from './declarations.js';
import { decodePostingBlob, encodePostingBlob } from './posting-blob.js';
import { type HeldSession, type SqlSession, copyText } from './sql.js';

/** Why a sync must not commit now (its writer lock was lost), asked on the sync's own connection inside its transaction; undefined when it may. */
export type LockCheck = (session: SqlSession) => Promise<RepodexError | undefined>;

/** PostgreSQL's text and jsonb hold no NUL character: it becomes U+FFFD (a file with one is rare: binary files are skipped). */
function pgText(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/** Chunk rows buffered before they are sent in one statement. */
const FLUSH_CHUNKS = 2_000;
/** Postings gathered into one segment before it is written and the next begins (bounds the writer's memory). */
const SEGMENT_POSTINGS = 500_000;
/** Postings written by one sync from which the tables' statistics may need refreshing at once (a small write leaves that to autovacuum)… */
const ANALYZE_AFTER = 50_000;
/** …when they are at least this share of every repository's postings. */
const ANALYZE_SHARE = 0.25;

/**
 * Whether a commit that wrote `postings` segment rows refreshes the planner's statistics itself:
 * when the write is large and a large part of the postings every repository's segments hold
 * now (`held`, this write's included). The first sync into an empty database needs them at
 * once: without them PostgreSQL reads every row of a repository to find a term (measured: 90 ms
 * instead of 0.1 ms per search on playwright). A rebuild of one repository among many changes
 * them little, and ANALYZE then costs a database shared by every request a second of a core (it
 * reads up to 30,000 pages of each table): autovacuum refreshes them in the background once a
 * tenth of a table changed. (Counted from `segments`, not from the table's own statistics: on
 * Citus those live on the workers, and a coordinator's count none.)
 */
export function analyzeAfterCommit(postings: number, held: number): boolean {
  return postings >= ANALYZE_AFTER && postings >= held * ANALYZE_SHARE;
}
/** More segments than this are folded into one (all but the first, oldest and largest)… */
const MAX_SEGMENTS = 8;
/** …and all of them when more than this share of the chunks they were written with is gone. */
const MAX_DEAD_SHARE = 0.25;

/** The postings of one segment being built, by term. */
class SegmentPostings {
  readonly byTerm = new Map<string, { ids: number[]; tfs: number[] }>();
  postings = 0;
  chunks = 0;

  add(term: string, id: number, tf: number): void {
    let list = this.byTerm.get(term);
    if (!list) this.byTerm.set(term, (list = { ids: [], tfs: [] }));
    list.ids.push(id);
    list.tfs.push(tf);
    this.postings++;
  }
}

/** Rows waiting to be inserted, column by column (what `unnest` takes). */
class PendingRows {
  chunkPaths: string[] = [];
  chunkIndexes: number[] = [];
  starts: number[] = [];
  ends: number[] = [];
  contents: string[] = [];
  hashes: string[] = [];
  languages: string[] = [];
  ids: number[] = [];
  tokens: number[] = [];
  snippets: string[] = [];
  symbols: (string | null)[] = [];
  segments: number[] = [];
  filePaths: string[] = [];
  fileStates: string[] = [];
  fileLanguages: string[] = [];
  fileSizes: number[] = [];
  fileMtimes: number[] = [];
  fileCtimes: number[] = [];
  fileInodes: number[] = [];
  fileHashes: string[] = [];
  fileChunkCounts: number[] = [];
  fileFallbacks: (string | null)[] = [];
  fileSymbols: string[] = [];
  fileDeclarations: string[] = [];

  get empty(): boolean {
    return this.filePaths.length === 0 && this.chunkPaths.length === 0;
  }
}

/**
 * One sync of a repository on PostgreSQL, as one transaction on a connection of its own: readers
 * see the previous generation until `commit`, and `abort` (or a dropped connection: a crash)
 * leaves no trace. A full rebuild starts by deleting the repository's rows (invisible to readers
 * until commit); an incremental one replaces the files it is given, seed 001 §2.5's way: chunks
 * with the same (path, chunk index, chunk hash) are kept and touched, the others deleted or
 * inserted. Rows stream to the server in batches as files come.
 */
export class PgGenerationWriter implements GenerationWriter {
  private pending = new PendingRows();
  private readonly counter = new ChunkTermCounter();
  /** The segment being built, and its number. */
  private segment = new SegmentPostings();
  private segmentId: number;
  /** Segments this generation wrote, with their sizes. */
  private readonly written: { id: number; chunks: number; postings: number }[] = [];
  /** Paths this generation (re)wrote: their chunks get the new HEAD as last_seen_commit. */
  private readonly touched: string[] = [];
  private tree: Tree = { dirs: [], controls: [] };
  private gitDirty: readonly string[] | null = null;
  private done = false;

  private constructor(
    private readonly session: HeldSession,
    private readonly repoId: string,
    private readonly base: IndexView | undefined,
    private readonly onEnd: () => Promise<void>,
    private readonly lockLost: LockCheck,
    firstSegment: number,
  ) {
    this.segmentId = firstSegment;
  }

  static async begin(session: HeldSession, repoId: string, base: IndexView | undefined, onEnd: () => Promise<void>, lockLost: LockCheck = async () => undefined): Promise<PgGenerationWriter> {
    let firstSegment: number;
    try {
      await session.query('BEGIN');
      if (!base) {
        // A full rebuild: what the repository held goes (readers keep seeing it until commit).
        for (const table of ['segment_postings', 'segments', 'chunks', 'files']) await session.query(`DELETE FROM ${table} WHERE repo_id = $1`, [repoId]);
      }
      const [last] = await session.query<{ last: string | null }>('SELECT max(segment) AS last FROM segments WHERE repo_id = $1', [repoId]);
      firstSegment = Number(last?.last ?? 0) + 1;
    } catch (error) {
      await session.query('ROLLBACK').catch(() => undefined);
      session.release(true);
      await onEnd();
      throw error;
    }
    return new PgGenerationWriter(session, repoId, base, onEnd, lockLost, firstSegment);
  }

  private live(): void {
    if (this.done) throw new RepodexError('INTERNAL', 'generation already committed or aborted');
  }

  /** Delete a path's rows (its chunks' postings, chunks whose identity is not in `keep`, the file). */
  private async dropPath(path: string, keep?: { indexes: number[]; hashes: string[] }): Promise<void> {
    // Its postings stay in their segment, no longer counted (its chunks go, or move to this generation's segment).
    await this.flush();
    if (keep && keep.indexes.length > 0) {
      await this.session.query(
        `DELETE FROM chunks c WHERE c.repo_id = $1 AND c.path = $2
            AND NOT EXISTS (SELECT 1 FROM unnest($3::int[], $4::text[]) AS k(chunk_index, chunk_hash)
                             WHERE k.chunk_index = c.chunk_index AND k.chunk_hash = c.chunk_hash)`,
        [this.repoId, path, keep.indexes, keep.hashes],
      );
    } else {
      await this.session.query('DELETE FROM chunks WHERE repo_id = $1 AND path = $2', [this.repoId, path]);
    }
    await this.session.query('DELETE FROM files WHERE repo_id = $1 AND path = $2', [this.repoId, path]);
  }

  async remove(path: string): Promise<void> {
    this.live();
    await this.dropPath(path);
  }

  async add(file: NewFile): Promise<void> {
    this.live();
    const { record } = file;
    const hashes = file.chunks.map((chunk) => Buffer.from(chunk.hash).toString('hex'));
    // A file the base holds is replaced: its unchanged chunks (same position and content) stay, touched below.
    if (this.base && this.base.findFile(record.path) >= 0) await this.dropPath(record.path, { indexes: file.chunks.map((_, i) => i), hashes });
    this.touched.push(record.path);
    const rows = this.pending;
    rows.filePaths.push(record.path);
    rows.fileStates.push(record.state);
    rows.fileLanguages.push(record.language);
    rows.fileSizes.push(record.size);
    rows.fileMtimes.push(record.mtimeMs);
    rows.fileCtimes.push(record.ctimeMs);
    rows.fileInodes.push(record.ino);
    rows.fileHashes.push(record.contentHash);
    rows.fileChunkCounts.push(file.chunks.length);
    rows.fileFallbacks.push(file.fallback);
    rows.fileSymbols.push(JSON.stringify(file.symbols, (_key, value: unknown) => (typeof value === 'string' ? pgText(value) : value)));
    rows.fileDeclarations.push(encodeDeclarations(file.symbols, pgText));
    file.chunks.forEach((chunk, chunkIndex) => {
      const counted = this.counter.count(chunk);
      rows.chunkPaths.push(record.path);
      rows.chunkIndexes.push(chunkIndex);
      rows.starts.push(chunk.startLine);
      rows.ends.push(chunk.endLine);
      rows.contents.push(pgText(chunk.text));
      rows.hashes.push(hashes[chunkIndex]!);
      rows.languages.push(record.language);
      rows.ids.push(chunk.id);
      rows.tokens.push(counted.tokens);
      rows.snippets.push(pgText(chunk.snippet));
      rows.symbols.push(chunk.symbol === null ? null : pgText(chunk.symbol));
      rows.segments.push(this.segmentId);
      for (let t = 0; t < counted.terms.length; t++) this.segment.add(counted.terms[t]!, chunk.id, counted.tfs[t]!);
      this.segment.chunks++;
    });
    if (rows.chunkPaths.length >= FLUSH_CHUNKS) await this.flush();
    if (this.segment.postings >= SEGMENT_POSTINGS) await this.writeSegment();
  }

  /** Send the buffered rows: files, and chunks (kept ones touched). */
  private async flush(): Promise<void> {
    const rows = this.pending;
    if (rows.empty) return;
    this.pending = new PendingRows();
    const session = this.session;
    await session.query(
      `INSERT INTO files (repo_id, path, state, language, size, mtime_ms, ctime_ms, ino, content_hash, chunk_count, fallback, symbols, declarations)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::float8[], $8::float8[], $9::text[], $10::int[], $11::text[], $12::jsonb[], $13::text[])`,
      [this.repoId, rows.filePaths, rows.fileStates, rows.fileLanguages, rows.fileSizes, rows.fileMtimes, rows.fileCtimes, rows.fileInodes, rows.fileHashes, rows.fileChunkCounts, rows.fileFallbacks, rows.fileSymbols, rows.fileDeclarations],
    );
    if (rows.chunkPaths.length > 0) {
      await session.query(
        // Values, not functions, in DO UPDATE: Citus requires them immutable there.
        `INSERT INTO chunks (repo_id, path, chunk_index, start_line, end_line, content, chunk_hash, last_seen_commit, language, chunk_id, tokens, snippet, symbol, updated_at, segment)
         SELECT $1, p, i, s, e, c, h, '', l, id, t, sn, sy, $13::timestamptz, sg
           FROM unnest($2::text[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::bigint[], $10::int[], $11::text[], $12::text[], $14::bigint[])
                AS u(p, i, s, e, c, h, l, id, t, sn, sy, sg)
         ON CONFLICT (repo_id, path, chunk_index, chunk_hash) DO UPDATE
           SET start_line = EXCLUDED.start_line, end_line = EXCLUDED.end_line, content = EXCLUDED.content,
               language = EXCLUDED.language, chunk_id = EXCLUDED.chunk_id, tokens = EXCLUDED.tokens,
               snippet = EXCLUDED.snippet, symbol = EXCLUDED.symbol, updated_at = EXCLUDED.updated_at, segment = EXCLUDED.segment`,
        [this.repoId, rows.chunkPaths, rows.chunkIndexes, rows.starts, rows.ends, rows.contents, rows.hashes, rows.languages, rows.ids, rows.tokens, rows.snippets, rows.symbols, new Date().toISOString(), rows.segments],
      );
    }
  }

  /** Write the segment built so far (one row per term, by COPY) and start the next. */
  private async writeSegment(): Promise<void> {
    const segment = this.segment;
    if (segment.chunks === 0) return;
    this.segment = new SegmentPostings();
    const id = this.segmentId++;
    await writeSegmentRows(this.session, this.repoId, id, segment.byTerm);
    this.written.push({ id, chunks: segment.chunks, postings: segment.postings });
  }

  async setTree(tree: Tree, gitDirty: readonly string[] | null): Promise<void> {
    this.live();
    this.tree = tree;
    this.gitDirty = gitDirty;
  }

  async commit(draft: MetaDraft): Promise<CommitResult> {
    this.live();
    this.done = true;
    const session = this.session;
    let broken = false;
    let committing = false;
    try {
      await this.flush();
      await this.writeSegment();
      if (this.written.length > 0) {
        await session.query('INSERT INTO segments (repo_id, segment, chunks, postings) SELECT $1, * FROM unnest($2::bigint[], $3::int[], $4::bigint[])', [
          this.repoId,
          this.written.map((w) => w.id),
          this.written.map((w) => w.chunks),
          this.written.map((w) => w.postings),
        ]);
      }
      const merged = await mergeSegments(session, this.repoId, this.segmentId);
      const head = draft.git?.commit ?? null;
      // Seed 001 §2.5: the chunks this sync wrote or kept were seen at this commit.
      if (this.touched.length > 0) {
        await session.query('UPDATE chunks SET last_seen_commit = $2, updated_at = now() WHERE repo_id = $1 AND path = ANY($3::text[])', [this.repoId, head ?? '', this.touched]);
      }
      // Seed 001's embedding column: chunks written now whose text the current embedder already embedded get that vector (keyed by hash, never embedded again).
      await session.query(
        `UPDATE chunks c SET embedding = e.embedding, embedding_model = e.model
           FROM embeddings e, repos r
          WHERE r.id = $1 AND c.repo_id = $1 AND e.repo_id = $1 AND c.embedding IS NULL AND e.chunk_hash = c.chunk_hash
            AND e.model = (r.vector_manifest->>'engine') || '/' || (r.vector_manifest->>'model') || '/' || (r.vector_manifest->>'dim')`,
        [this.repoId],
      );
      const [counts] = await session.query<{ files: string; indexed: string; chunks: string; segments: string; source_bytes: number | null; generation: string; shown: string | null }>(
        `SELECT (SELECT count(*) FROM files WHERE repo_id = $1) AS files,
                (SELECT count(*) FROM files WHERE repo_id = $1 AND state = 'indexed') AS indexed,
                (SELECT coalesce(sum(size), 0) FROM files WHERE repo_id = $1 AND state = 'indexed') AS source_bytes,
                (SELECT count(*) FROM chunks WHERE repo_id = $1) AS chunks,
                (SELECT count(*) FROM segments WHERE repo_id = $1) AS segments,
                (SELECT generation FROM repos WHERE id = $1 FOR UPDATE) AS generation,
                (SELECT meta->>'generation' FROM repos WHERE id = $1) AS shown`,
        [this.repoId],
      );
      const files = Number(counts!.files);
      const indexed = Number(counts!.indexed);
      const meta: IndexMeta = {
        format_version: FORMAT_VERSION,
        feature_version: FEATURE_VERSION,
        tool_version: TOOL_VERSION,
        // Counted from 1 again after `clean`, as on the file store (the row's own counter never
        // goes back, so no reader ever sees a stamp again).
        generation: Number(counts!.shown ?? 0) + 1,
        config_hash: draft.config_hash,
        ...(draft.index_config_key === undefined ? {} : { index_config_key: draft.index_config_key }),
        project_type: draft.project_type,
        chunker: draft.chunker,
        counts: { files, files_indexed: indexed, files_skipped: files - indexed, chunks: Number(counts!.chunks), segments: Number(counts!.segments) },
        source_bytes: Number(counts!.source_bytes ?? 0),
        git: draft.git,
        synced_at: draft.synced_at,
        duration_ms: draft.duration_ms,
        ...(draft.partial === undefined ? {} : { partial: draft.partial }),
        ...(draft.layout === undefined ? {} : { layout: draft.layout }),
      };
      await session.query(
        `UPDATE repos SET generation = $2, meta = $3, tree = $4, last_indexed_commit = $5, index_status = 'ready', last_indexed_at = now()
          WHERE id = $1`,
        [this.repoId, Number(counts!.generation) + 1, JSON.stringify(meta), JSON.stringify({ tree: this.tree, gitDirty: this.gitDirty }), head],
      );
      // The connection that held this sync's lock may have been lost meanwhile (a restart between
      // statements): another sync may be writing now, so this one must not commit.
      const lost = await this.lockLost(session);
      if (lost) throw lost;
      committing = true;
      await session.query('COMMIT');
      committing = false;
      const postings = this.written.reduce((sum, w) => sum + w.postings, 0);
      if (postings >= ANALYZE_AFTER) {
        try {
          const [all] = await session.query<{ held: string }>('SELECT coalesce(sum(postings), 0) AS held FROM segments');
          if (analyzeAfterCommit(postings, Number(all?.held ?? 0))) await session.query('ANALYZE files, chunks, segments, segment_postings');
        } catch {
          // Committed: statistics not refreshed now are refreshed by autovacuum.
          broken = true;
        }
      }
      return { meta, merged };
    } catch (error) {
      broken = true;
      await session.query('ROLLBACK').catch(() => undefined);
      if (committing && isRepodexError(error) && error.code === 'STORE_LOST') {
        // The answer to COMMIT never came: the server may have committed it or not.
        throw new RepodexError('STORE_LOST', `${error.detail ?? error.message} while the sync was committing: whether it was committed is not known (\`repodex status\` says; running \`repodex sync\` again is safe)`, {
          selfContained: true,
          cause: error,
        });
      }
      throw error;
    } finally {
      session.release(broken);
      await this.onEnd();
    }
  }

  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    let broken = false;
    try {
      await this.session.query('ROLLBACK');
    } catch {
      broken = true;
    } finally {
      this.session.release(broken);
      await this.onEnd();
    }
  }
}

/** Write one segment's postings: a row per term (its blob), by COPY. */
async function writeSegmentRows(session: HeldSession, repoId: string, segment: number, byTerm: ReadonlyMap<string, { ids: number[]; tfs: number[] }>): Promise<void> {
  const lines = function* (): Generator<string> {
    for (const [term, list] of byTerm) {
      // Chunks come in path order, not id order: sort each term's postings by id.
      const order = list.ids.map((_, i) => i).sort((a, b) => list.ids[a]! - list.ids[b]!);
      const blob = encodePostingBlob(
        order.map((i) => list.ids[i]!),
        order.map((i) => list.tfs[i]!),
      );
      yield `${repoId}\t${copyText(term)}\t${segment}\t${list.ids.length}\t\\\\x${Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString('hex')}\n`;
    }
  };
  await session.copyIn('COPY segment_postings (repo_id, term, segment, df, postings) FROM STDIN', lines());
}

/**
 * Fold segments, as the embedded store does: when more than a quarter of the chunks they were
 * written with are gone, all into one (`next`); when there are more than MAX_SEGMENTS, all but the
 * first. Only the postings of chunks whose row names the segment carry over. Returns whether it merged.
 */
async function mergeSegments(session: HeldSession, repoId: string, next: number): Promise<boolean> {
  const segments = await session.query<{ segment: string; chunks: number; live: string }>(
    `SELECT s.segment, s.chunks, (SELECT count(*) FROM chunks c WHERE c.repo_id = $1 AND c.segment = s.segment) AS live
       FROM segments s WHERE s.repo_id = $1 ORDER BY s.segment`,
    [repoId],
  );
  const total = segments.reduce((sum, s) => sum + s.chunks, 0);
  const dead = segments.reduce((sum, s) => sum + s.chunks - Number(s.live), 0);
  const mode = segments.length <= 1 ? 'none' : dead > MAX_DEAD_SHARE * total ? 'all' : segments.length > MAX_SEGMENTS ? 'deltas' : 'none';
  if (mode === 'none') return false;
  const folded = (mode === 'all' ? segments : segments.slice(1)).map((s) => Number(s.segment));
  const liveIn = new Map<number, number>();
  for (const row of await session.query<{ chunk_id: string; segment: string }>('SELECT chunk_id, segment FROM chunks WHERE repo_id = $1 AND segment = ANY($2::bigint[])', [repoId, folded])) {
    liveIn.set(Number(row.chunk_id), Number(row.segment));
  }
  const byTerm = new Map<string, { ids: number[]; tfs: number[] }>();
  let postings = 0;
  const rows = await session.query<{ term: string; segment: string; postings: Buffer }>('SELECT term, segment, postings FROM segment_postings WHERE repo_id = $1 AND segment = ANY($2::bigint[])', [repoId, folded]);
  for (const row of rows) {
    const segment = Number(row.segment);
    decodePostingBlob(row.postings, (id, tf) => {
      if (liveIn.get(id) !== segment) return;
      let list = byTerm.get(row.term);
      if (!list) byTerm.set(row.term, (list = { ids: [], tfs: [] }));
      list.ids.push(id);
      list.tfs.push(tf);
      postings++;
    });
  }
  await session.query('DELETE FROM segment_postings WHERE repo_id = $1 AND segment = ANY($2::bigint[])', [repoId, folded]);
  await session.query('DELETE FROM segments WHERE repo_id = $1 AND segment = ANY($2::bigint[])', [repoId, folded]);
  if (liveIn.size > 0) {
    await writeSegmentRows(session, repoId, next, byTerm);
    await session.query('UPDATE chunks SET segment = $2 WHERE repo_id = $1 AND segment = ANY($3::bigint[])', [repoId, next, folded]);
    await session.query('INSERT INTO segments (repo_id, segment, chunks, postings) VALUES ($1, $2, $3, $4)', [repoId, next, liveIn.size, postings]);
  }
  return true;
}
