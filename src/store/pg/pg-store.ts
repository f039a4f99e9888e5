import { hostname } from 'node:os';
import { RepodexError, errorMessage, isRepodexError } from '../../core/errors.js';
import { FEATURE_VERSION, FORMAT_VERSION } from '../../core/version.js';
import type { FileState, Tree } from '../../index/model.js';
import type { Language } from '../../scan/language.js';
import type { EmbedderIdentity } from '../../vector/embedder.js';
import type { CatalogView, DiskUsage, GenerationWriter, HeldLock, IndexMeta, IndexStore, IndexView, IntegrityReport, LocalParseCache, LockOwner, ParseCache, VectorManifest } from '../backend.js';
import { migrate } from './migrations.js';
import { PgGenerationWriter } from './pg-writer.js';
import { PgControlPlane } from './pg-control.js';
import { GenerationProof } from './generation-proof.js';
import { PgCatalogView, PgIndexView, type CatalogSnapshot, type ChunkRow, type FileRow, type ViewSnapshot } from './pg-view.js';
import { PgVectorStore, modelKey } from './pg-vectors.js';
import { decodePostingBlob } from './posting-blob.js';
import { type HeldSession, type SqlPool, type SqlSession, inTransaction } from './sql.js';

/** The oldest server the schema and queries are written for. */
const MIN_SERVER_VERSION = 140000;
/** pgvector from which HNSW searches can be filtered with iterative scans. */
const MIN_VECTOR_VERSION = [0, 8, 0];
/** The first key of every advisory lock repodex takes (the second is the repository's). */
const LOCK_SPACE = { writer: 7_311_985, vectors: 7_311_986 } as const;

/** What `--store` names, for messages (never its password). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the database URL';
  }
}

/**
 * The PostgreSQL store: one database holds the indexes of many repositories, each found by the
 * root it indexes. Every table is keyed by `repo_id` first, so the schema distributes on Citus.
 * A sync is one transaction (readers see the old or the new index, never half); the writer lock
 * is a session advisory lock per repository.
 */
export class PgStore implements IndexStore {
  private ready: Promise<void> | undefined;
  private repo: string | undefined;
  private readonly vectorStores = new Map<string, PgVectorStore>();
  readonly control: PgControlPlane;
  /** What proves the repository's generation current to this process's views and stamps. */
  private proof: GenerationProof | undefined;
  /** The stamp last answered, and the generation of the view last opened with the stamp answered before it. */
  private answered = '';
  private opened: { readonly generation: number; readonly stamp: string } | undefined;
  /** The catalog last read: a view of the same generation opened next reads only its chunks. */
  private keptCatalog: { readonly repoId: string; readonly snapshot: CatalogSnapshot } | undefined;

  constructor(
    private readonly pool: SqlPool,
    /** The repository's root, as this machine sees it: what names the repository in the database. */
    private readonly root: string,
    private readonly where: string,
    private readonly cache: LocalParseCache,
    /** Remove the builtin embedder's table, which is kept beside the checkout (see ControlPlane). */
    removeEmbedderTable: () => boolean,
  ) {
    this.control = new PgControlPlane(pool, { known: () => this.repoId(), ensure: () => this.ensureRepo() }, where, removeEmbedderTable);
  }

  /** Check the server once and bring its schema up to date; every failure names its fix. */
  private prepare(): Promise<void> {
    this.ready ??= prepareDatabase(this.pool, this.where);
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  /** The repository's id, or undefined when the database has never held it. */
  async repoId(): Promise<string | undefined> {
    if (this.repo) return this.repo;
    await this.prepare();
    const [row] = await this.pool.query<{ id: string }>('SELECT id FROM repos WHERE root = $1', [this.root]);
    this.repo = row?.id;
    return this.repo;
  }

  /** The repository's id, registering it (`pending`) the first time. */
  private async ensureRepo(): Promise<string> {
    const known = await this.repoId();
    if (known) return known;
    await this.pool.query('INSERT INTO repos (root) VALUES ($1) ON CONFLICT (root) DO NOTHING', [this.root]);
    const id = await this.repoId();
    if (!id) throw new RepodexError('INTERNAL', `could not register ${this.root} in ${this.where}`);
    return id;
  }

  async readMeta(): Promise<IndexMeta | undefined> {
    const id = await this.repoId();
    if (!id) return undefined;
    const [row] = await this.pool.query<{ meta: IndexMeta | null }>('SELECT meta FROM repos WHERE id = $1', [id]);
    const meta = row?.meta ?? undefined;
    if (meta && meta.format_version !== FORMAT_VERSION) throw new RepodexError('INDEX_INCOMPATIBLE', `the index in ${this.where} has format version ${meta.format_version}, this repodex reads ${FORMAT_VERSION}`);
    return meta;
  }

  /**
   * See GenerationProof: a stamp needs no round trip while every request's reads prove their
   * generation. A stamp named without asking may be older than the view opened after it (a sync
   * by this server's worker committed in between): it keeps naming that view while its generation
   * is current, so the engine does not load the same generation twice.
   */
  async stamp(): Promise<string> {
    const id = await this.repoId();
    if (!id) return '';
    const { generation, asked } = await this.proofOf(id).generation();
    const stamp = generation === undefined || generation === 0 ? '' : !asked && this.opened?.generation === generation ? this.opened.stamp : `${id}:${generation}`;
    this.answered = stamp;
    return stamp;
  }

  forgetStamp(): void {
    this.proof?.forget();
  }

  private proofOf(id: string): GenerationProof {
    if (this.proof?.repoId !== id) this.proof = new GenerationProof(this.pool, id);
    return this.proof;
  }

  async openCatalog(): Promise<CatalogView> {
    const { id, epoch, snapshot } = await this.read(false);
    return new PgCatalogView(this.pool, id, this.opening(id, epoch, snapshot), this.proofOf(id));
  }

  async open(): Promise<IndexView> {
    const { id, epoch, snapshot } = await this.read(true);
    return new PgIndexView(this.pool, id, this.opening(id, epoch, snapshot), this.proofOf(id));
  }

  /**
   * The current generation's record and catalog, and its chunk rows when `chunks`, in one snapshot.
   * A catalog read before of the same generation is not read again.
   */
  private async read<Chunks extends boolean>(chunks: Chunks): Promise<{ id: string; epoch: number; snapshot: Chunks extends true ? ViewSnapshot : CatalogSnapshot }>;
  private async read(chunks: boolean): Promise<{ id: string; epoch: number; snapshot: CatalogSnapshot | ViewSnapshot }> {
    const id = await this.repoId();
    if (!id) throw new RepodexError('INDEX_MISSING');
    const epoch = this.proofOf(id).now();
    const kept = this.keptCatalog?.repoId === id ? this.keptCatalog.snapshot : undefined;
    // One snapshot for everything the view keeps: the commit record, the catalog and the chunks.
    const read = await inTransaction(
      this.pool,
      async (tx) => {
        const [repo] = await tx.query<{ generation: string; meta: IndexMeta | null; tree: { tree: Tree; gitDirty: string[] | null } | null }>(
          'SELECT generation, meta, tree FROM repos WHERE id = $1',
          [id],
        );
        if (!repo?.meta || Number(repo.generation) === 0) throw new RepodexError('INDEX_MISSING');
        if (repo.meta.format_version !== FORMAT_VERSION) throw new RepodexError('INDEX_INCOMPATIBLE', `the index in ${this.where} has format version ${repo.meta.format_version}`);
        const generation = Number(repo.generation);
        const files =
          kept?.generation === generation
            ? undefined
            : await tx.query<{ path: string; state: FileState; language: Language; size: number; mtime_ms: number; ctime_ms: number; ino: number; content_hash: string; chunk_count: number; declarations: string | null }>(
                'SELECT path, state, language, size, mtime_ms, ctime_ms, ino, content_hash, chunk_count, declarations FROM files WHERE repo_id = $1',
                [id],
              );
        if (!chunks) return { repo, generation, files, chunks: undefined, postings: 0 };
        const rows = await tx.query<{ chunk_id: string; path: string; chunk_index: number; start_line: number; end_line: number; chunk_hash: string; tokens: number; snippet: string; symbol: string | null; segment: string }>(
          'SELECT chunk_id, path, chunk_index, start_line, end_line, chunk_hash, tokens, snippet, symbol, segment FROM chunks WHERE repo_id = $1',
          [id],
        );
        const [segments] = await tx.query<{ postings: string }>('SELECT coalesce(sum(postings), 0) AS postings FROM segments WHERE repo_id = $1', [id]);
        return { repo, generation, files, chunks: rows, postings: Number(segments?.postings ?? 0) };
      },
      'repeatable read',
    );
    const byPath = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    const files: readonly FileRow[] = read.files
      ? read.files
          .map((f) => ({ path: f.path, state: f.state, language: f.language, size: f.size, mtimeMs: f.mtime_ms, ctimeMs: f.ctime_ms, ino: f.ino, contentHash: f.content_hash, chunkCount: f.chunk_count, declarations: f.declarations }))
          .sort((a, b) => byPath(a.path, b.path))
      : kept!.files;
    const stored = read.repo.tree ?? { tree: { dirs: [], controls: [] }, gitDirty: null };
    const catalog: CatalogSnapshot = { meta: read.repo.meta!, generation: read.generation, tree: stored.tree, gitDirty: stored.gitDirty, files };
    this.keptCatalog = { repoId: id, snapshot: catalog };
    if (!read.chunks) return { id, epoch, snapshot: catalog };
    const rows: ChunkRow[] = read.chunks
      .map((c) => ({ id: Number(c.chunk_id), path: c.path, chunkIndex: c.chunk_index, startLine: c.start_line, endLine: c.end_line, hash: c.chunk_hash, tokens: c.tokens, snippet: c.snippet, symbol: c.symbol, segment: Number(c.segment) }))
      .sort((a, b) => byPath(a.path, b.path) || a.chunkIndex - b.chunkIndex);
    return { id, epoch, snapshot: { ...catalog, chunks: rows, postings: read.postings } };
  }

  /** Record what was opened (see `stamp`), and that `epoch`'s read saw its generation. */
  private opening<Snapshot extends CatalogSnapshot>(id: string, epoch: number, snapshot: Snapshot): Snapshot {
    this.proofOf(id).saw(epoch, snapshot.generation);
    this.opened = { generation: snapshot.generation, stamp: this.answered === '' ? `${id}:${snapshot.generation}` : this.answered };
    return snapshot;
  }

  async beginGeneration(base: IndexView | undefined): Promise<GenerationWriter> {
    const id = await this.ensureRepo();
    this.proof?.forget();
    await this.pool.query("UPDATE repos SET index_status = 'indexing' WHERE id = $1", [id]);
    const settle = async (): Promise<void> => {
      // Back to what the committed index is (a commit already said `ready`); done before the writer's end returns.
      await this.pool.query("UPDATE repos SET index_status = CASE WHEN meta IS NOT NULL THEN 'ready' ELSE 'pending' END WHERE id = $1 AND index_status = 'indexing'", [id]).catch(() => undefined);
    };
    return PgGenerationWriter.begin(await this.pool.connect(), id, base, settle, (session) => this.lockLost(session, id));
  }

  /**
   * Why a sync of this process must not commit: the connection holding its writer lock was lost
   * (a restart, a killed session), or another process took the lock meanwhile; undefined while
   * this process holds it, or took none.
   */
  private async lockLost(session: SqlSession, id: string): Promise<RepodexError | undefined> {
    const [row] = await session.query<{ pid: number; host: string; started: string; backend_pid: number }>('SELECT pid, host, started::text AS started, backend_pid FROM repo_locks WHERE repo_id = $1 AND kind = $2', [
      id,
      'writer',
    ]);
    if (!row) return undefined;
    const mine = row.pid === process.pid && row.host === hostname();
    const held = await advisoryHeld(session, 'writer', id, row.backend_pid);
    if (mine && !held) return new RepodexError('STORE_LOST', `lost the connection holding the sync's lock on ${this.where}`);
    if (!mine && held) return new RepodexError('LOCKED', `another sync (process ${row.pid} on ${row.host} since ${new Date(row.started).toISOString()}) took the writer lock while this one had lost it: nothing was committed`, { selfContained: true });
    return undefined;
  }

  /** Take a session advisory lock of `kind` on the repository, waiting up to `waitMs`. */
  private async acquire(kind: keyof typeof LOCK_SPACE, waitMs: number): Promise<HeldLock> {
    const id = await this.ensureRepo();
    const session = await this.pool.connect();
    const deadline = Date.now() + waitMs;
    try {
      for (;;) {
        const [row] = await session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [LOCK_SPACE[kind], id]);
        if (row!.locked) break;
        if (Date.now() >= deadline) {
          const owner = await this.holder(kind);
          const who = owner ? ` (process ${owner.pid} on ${owner.host} since ${owner.started})` : '';
          throw new RepodexError('LOCKED', kind === 'writer' ? `another sync is running${who}` : `embedding is running${who}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await session.query(
        // Values, not functions, in DO UPDATE: Citus requires them immutable there.
        `INSERT INTO repo_locks (repo_id, kind, pid, host, started, backend_pid) VALUES ($1, $2, $3, $4, $5, pg_backend_pid())
         ON CONFLICT (repo_id, kind) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, started = EXCLUDED.started, backend_pid = EXCLUDED.backend_pid`,
        [id, kind, process.pid, hostname(), new Date().toISOString()],
      );
    } catch (error) {
      session.release(true);
      throw error;
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        await releaseLock(session, LOCK_SPACE[kind], id);
      },
    };
  }

  /** Who holds a lock of `kind` on the repository now, or undefined (a holder that died released it with its connection). */
  private async holder(kind: keyof typeof LOCK_SPACE): Promise<LockOwner | undefined> {
    const id = await this.repoId();
    if (!id) return undefined;
    // Two statements, not a join: on Citus repo_locks is distributed and pg_locks is the coordinator's own.
    const [row] = await this.pool.query<{ pid: number; host: string; started: string; backend_pid: number }>(
      'SELECT pid, host, started::text AS started, backend_pid FROM repo_locks WHERE repo_id = $1 AND kind = $2',
      [id, kind],
    );
    if (!row) return undefined;
    if (!(await advisoryHeld(this.pool, kind, id, row.backend_pid))) return undefined;
    return { pid: row.pid, host: row.host, started: new Date(row.started).toISOString() };
  }

  lock(options: { readonly waitMs?: number } = {}): Promise<HeldLock> {
    return this.acquire('writer', options.waitMs ?? 0);
  }

  syncRunning(): Promise<LockOwner | undefined> {
    return this.holder('writer');
  }

  vectorLock(options: { readonly waitMs?: number } = {}): Promise<HeldLock> {
    return this.acquire('vectors', options.waitMs ?? 0);
  }

  embeddingRunning(): Promise<LockOwner | undefined> {
    return this.holder('vectors');
  }

  async check(options: { readonly deep?: boolean } = {}): Promise<IntegrityReport> {
    const id = await this.repoId();
    if (!id) return { problems: [], checked: [], notes: [] };
    const problems: string[] = [];
    const meta = await this.readMeta();
    if (!meta) return { problems: [], checked: [], notes: [] };
    // Set-based (one pass over each table, joined by hash): right after a bulk load the planner has
    // no statistics yet, and correlated subqueries then cost a scan per file.
    const [counts] = await this.pool.query<{ files: string; chunks: string; mismatched: string; orphans: string }>(
      `SELECT count(f.path) AS files,
              coalesce(sum(c.n), 0) AS chunks,
              count(*) FILTER (WHERE f.path IS NOT NULL AND f.chunk_count <> coalesce(c.n, 0)) AS mismatched,
              coalesce(sum(c.n) FILTER (WHERE f.path IS NULL), 0) AS orphans
         FROM (SELECT path, chunk_count FROM files WHERE repo_id = $1) f
         FULL JOIN (SELECT path, count(*) AS n FROM chunks WHERE repo_id = $1 GROUP BY path) c ON c.path = f.path`,
      [id],
    );
    const [unposted] = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM (SELECT segment, count(*) AS n FROM chunks WHERE repo_id = $1 GROUP BY segment) c
        WHERE NOT EXISTS (SELECT 1 FROM segments s WHERE s.repo_id = $1 AND s.segment = c.segment)`,
      [id],
    );
    if (Number(counts!.files) !== meta.counts.files) problems.push(`the index records ${meta.counts.files} files, the database holds ${counts!.files}`);
    if (Number(counts!.chunks) !== meta.counts.chunks) problems.push(`the index records ${meta.counts.chunks} chunks, the database holds ${counts!.chunks}`);
    if (Number(counts!.mismatched) > 0) problems.push(`${counts!.mismatched} file(s) hold another number of chunks than they record`);
    if (Number(counts!.orphans) > 0) problems.push(`${counts!.orphans} chunk(s) belong to no catalogued file`);
    if (Number(unposted!.n) > 0) problems.push(`chunks name ${unposted!.n} segment(s) of postings the index does not hold`);
    if (meta.feature_version !== FEATURE_VERSION) problems.push(`built with other rules (feature version ${meta.feature_version}, this repodex ${FEATURE_VERSION})`);
    if (options.deep) problems.push(...(await this.checkPostings(id)));
    return { problems, checked: [`${this.where}: generation ${meta.generation} (files, chunks, segments${options.deep ? ', every posting' : ''})`], notes: [] };
  }

  /** Every posting blob decodes, in ascending id order, to the number of postings its row records. */
  private async checkPostings(id: string): Promise<string[]> {
    const problems: string[] = [];
    const rows = await this.pool.query<{ term: string; segment: string; df: number; postings: Buffer }>('SELECT term, segment, df, postings FROM segment_postings WHERE repo_id = $1', [id]);
    for (const row of rows) {
      let count = 0;
      let previous = -1;
      let ordered = true;
      try {
        decodePostingBlob(row.postings, (chunk) => {
          if (chunk <= previous) ordered = false;
          previous = chunk;
          count++;
        });
      } catch {
        ordered = false;
      }
      if (!ordered || count !== row.df) problems.push(`the postings of "${[...row.term].filter((c) => c >= ' ').join('')}" in segment ${row.segment} are damaged`);
      if (problems.length >= 10) break;
    }
    return problems;
  }

  checkCache(): Promise<IntegrityReport> {
    return this.cache.check();
  }

  parseCache(): Promise<ParseCache> {
    return this.cache.open();
  }

  async tidy(): Promise<void> {
    await this.cache.tidy();
  }

  async clean(): Promise<string[]> {
    const id = await this.repoId();
    const removed = await this.cache.clean();
    if (!id) return removed;
    // The index goes; the repository's row stays with what is kept beside the index (the audit
    // log, analytics, documents), as `.repodex/` keeps them on the file store. Its generation
    // counter moves on (never back): a view opened before is told its generation was replaced,
    // and no stamp taken before is ever seen again.
    await inTransaction(this.pool, async (tx) => {
      for (const table of ['segment_postings', 'segments', 'chunks', 'files', 'embeddings']) await tx.query(`DELETE FROM ${table} WHERE repo_id = $1`, [id]);
      await tx.query(
        `UPDATE repos SET generation = generation + 1, meta = NULL, tree = NULL, vector_manifest = NULL, last_indexed_commit = NULL, last_indexed_at = NULL, index_status = 'pending' WHERE id = $1`,
        [id],
      );
    });
    this.proof = undefined;
    this.opened = undefined;
    this.answered = '';
    this.vectorStores.clear();
    return [...removed, `the index of ${this.root} in ${this.where}`];
  }

  async diskUsage(): Promise<DiskUsage> {
    const id = await this.repoId();
    if (!id) return { index: 0, parts: {} };
    const [row] = await this.pool.query<{ chunks: string; files: string; postings: string }>(
      `SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM chunks c WHERE c.repo_id = $1) AS chunks,
              (SELECT coalesce(sum(pg_column_size(f.*)), 0) FROM files f WHERE f.repo_id = $1) AS files,
              (SELECT coalesce(sum(pg_column_size(p.*)), 0) FROM segment_postings p WHERE p.repo_id = $1) AS postings`,
      [id],
    );
    const parts: Record<string, number> = {};
    for (const [part, bytes] of Object.entries(row ?? {})) if (Number(bytes) > 0) parts[part] = Number(bytes);
    const index = (parts['chunks'] ?? 0) + (parts['files'] ?? 0) + (parts['postings'] ?? 0);
    // The parse cache is this machine's, beside the working tree.
    if (this.cache.size() > 0) parts['parse cache'] = this.cache.size();
    return { index, parts };
  }

  vectors(identity: EmbedderIdentity): PgVectorStore {
    const key = modelKey(identity);
    let store = this.vectorStores.get(key);
    if (!store) {
      store = new PgVectorStore(this.pool, () => this.repoId(), identity);
      this.vectorStores.set(key, store);
    }
    return store;
  }

  async dropOtherVectors(keep: EmbedderIdentity): Promise<number> {
    const id = await this.repoId();
    if (!id) return 0;
    const [row] = await this.pool.query<{ n: string }>(
      "WITH dropped AS (DELETE FROM embeddings WHERE repo_id = $1 AND model LIKE $2 || '/%' AND model <> $3 RETURNING model) SELECT count(DISTINCT model) AS n FROM dropped",
      [id, keep.engine, modelKey(keep)],
    );
    return Number(row!.n);
  }

  async readVectorManifest(): Promise<VectorManifest | undefined> {
    const id = await this.repoId();
    if (!id) return undefined;
    const [row] = await this.pool.query<{ vector_manifest: VectorManifest | null }>('SELECT vector_manifest FROM repos WHERE id = $1', [id]);
    return row?.vector_manifest ?? undefined;
  }

  async writeVectorManifest(manifest: Omit<VectorManifest, 'version'>): Promise<void> {
    const id = await this.ensureRepo();
    await this.pool.query('UPDATE repos SET vector_manifest = $2 WHERE id = $1', [id, JSON.stringify({ version: 2, ...manifest })]);
  }

  async checkVectors(): Promise<IntegrityReport> {
    const manifest = await this.readVectorManifest();
    if (!manifest) return { problems: [], checked: [], notes: [] };
    const id = (await this.repoId())!;
    const [row] = await this.pool.query<{ n: string; wrong: string }>(
      'SELECT count(*) AS n, count(*) FILTER (WHERE vector_dims(embedding) <> dim) AS wrong FROM embeddings WHERE repo_id = $1 AND model = $2',
      [id, modelKey({ engine: manifest.engine, model: manifest.model, dim: manifest.dim, metric: 'cosine' })],
    );
    const problems: string[] = [];
    if (Number(row!.wrong) > 0) problems.push(`${row!.wrong} vector(s) of ${manifest.model} have another dimension than ${manifest.dim}`);
    if (manifest.records !== undefined && Number(row!.n) < manifest.records) problems.push(`the manifest counts ${manifest.records} vectors, the database holds ${row!.n}`);
    return { problems, checked: [`${this.where}: vectors of ${manifest.engine} ${manifest.model}`], notes: [] };
  }

  async vectorsSizeOnDisk(): Promise<number> {
    const id = await this.repoId();
    if (!id) return 0;
    const [row] = await this.pool.query<{ bytes: string | null }>('SELECT coalesce(sum(pg_column_size(e.*)), 0) AS bytes FROM embeddings e WHERE e.repo_id = $1', [id]);
    return Number(row?.bytes ?? 0);
  }
}

/**
 * Check that the server can hold repodex's indexes (PostgreSQL 14+, pgvector 0.8+, added if this
 * user may) and bring the schema up to this build's. Every failure is one line naming its fix.
 */
export async function prepareDatabase(pool: SqlPool, where: string): Promise<void> {
  let version: number;
  try {
    const [row] = await pool.query<{ server_version_num: string }>('SHOW server_version_num');
    version = Number(row!.server_version_num);
  } catch (error) {
    throw unavailable(where, error);
  }
  if (version < MIN_SERVER_VERSION) {
    throw new RepodexError('STORE_UNAVAILABLE', `${where} runs PostgreSQL ${Math.floor(version / 10000)}; repodex needs 14 or newer`, { selfContained: true });
  }
  const [vector] = await pool.query<{ extversion: string }>("SELECT extversion FROM pg_extension WHERE extname = 'vector'");
  if (!vector) {
    try {
      await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
    } catch (error) {
      throw new RepodexError(
        'STORE_UNAVAILABLE',
        `${where} lacks the pgvector extension and this user may not add it (${errorMessage(error)}): run \`CREATE EXTENSION vector;\` in that database as its owner (pgvector 0.8 or newer)`,
        { selfContained: true },
      );
    }
  } else if (compareVersions(vector.extversion, MIN_VECTOR_VERSION) < 0) {
    throw new RepodexError('STORE_UNAVAILABLE', `${where} has pgvector ${vector.extversion}; repodex needs 0.8 or newer: run \`ALTER EXTENSION vector UPDATE;\``, { selfContained: true });
  }
  await migrate(pool, where);
}

/** Whether the database backend `backendPid` holds the advisory lock of `kind` on a repository (two statements, not a join: on Citus repo_locks is distributed and pg_locks is the coordinator's own). */
async function advisoryHeld(session: SqlSession, kind: keyof typeof LOCK_SPACE, repoId: string, backendPid: number): Promise<boolean> {
  const [held] = await session.query<{ held: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND pid = $3
                      AND classid = $2::bigint::oid AND objid = (hashtext($1::text)::bigint & 4294967295)::oid) AS held`,
    [repoId, LOCK_SPACE[kind], backendPid],
  );
  return held!.held;
}

/** Unlock and give the connection back (closed instead when unlocking failed: that releases the lock too). */
async function releaseLock(session: HeldSession, space: number, repoId: string): Promise<void> {
  try {
    await session.query('DELETE FROM repo_locks WHERE repo_id = $1 AND backend_pid = pg_backend_pid()', [repoId]);
    await session.query('SELECT pg_advisory_unlock($1, hashtext($2))', [space, repoId]);
    session.release();
  } catch {
    session.release(true);
  }
}

/** A connection failure, as one line that says what to check. */
export function unavailable(where: string, error: unknown): RepodexError {
  if (isRepodexError(error)) return error;
  const code = (error as { code?: string }).code;
  const message = errorMessage(error);
  const fix =
    code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ETIMEDOUT'
      ? 'is the server running, and are the host and port right?'
      : code === '28P01' || code === '28000'
        ? 'check the user and password in the URL'
        : code === '3D000'
          ? 'create the database first (createdb), or name an existing one in the URL'
          : 'check the URL and that the server accepts connections';
  return new RepodexError('STORE_UNAVAILABLE', `cannot connect to ${where}: ${message}; ${fix}`, { selfContained: true, cause: error });
}

function compareVersions(version: string, minimum: readonly number[]): number {
  const parts = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < minimum.length; i++) {
    const diff = (parts[i] ?? 0) - minimum[i]!;
    if (diff !== 0) return diff;
  }
  return 0;
}
