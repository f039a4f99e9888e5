import { RepodexError } from '../../core/errors.js';
import type { EmbedderIdentity } from '../../vector/embedder.js';
import type { ChunkVectors, IndexView, Neighbours, VectorFilter, VectorHoldings, VectorIndexOutcome, VectorStore } from '../backend.js';
import { DocVectors, HeldVectors } from '../fs/doc-vectors.js';
import { type SqlPool, inTransaction } from './sql.js';

/** How an embedder's vectors are told apart in the `embeddings` table. */
export function modelKey(identity: EmbedderIdentity): string {
  return `${identity.engine}/${identity.model}/${identity.dim}`;
}

/** pgvector's text form of a vector. */
function vectorText(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

/** Parse pgvector's text form into float32 (its output round-trips float4 exactly). */
function parseVector(text: string, dim: number): Float32Array {
  const out = new Float32Array(dim);
  let at = 1;
  for (let d = 0; d < dim; d++) {
    let end = text.indexOf(',', at);
    if (end < 0) end = text.length - 1;
    out[d] = Number(text.slice(at, end));
    at = end + 1;
  }
  return out;
}

/**
 * One embedder's vectors in PostgreSQL (`embeddings`, keyed by repository, embedder and chunk
 * hash). Below `annFrom` vectors a search compares every vector, in this process, exactly as the
 * file store does (the same answers); from there on pgvector's HNSW index answers, filtered by
 * repository with iterative scans so a small repository in a large table still gets k results.
 */
export class PgVectorStore implements VectorStore {
  private readonly model: string;
  private held: { stamp: string; set: HeldVectors } | undefined;

  constructor(
    private readonly pool: SqlPool,
    private readonly repoId: () => Promise<string | undefined>,
    readonly identity: EmbedderIdentity,
  ) {
    this.model = modelKey(identity);
  }

  async stamp(): Promise<string> {
    const repo = await this.repoId();
    if (!repo) return 'none';
    const [row] = await this.pool.query<{ n: string; last: string | null }>(
      'SELECT count(*) AS n, max(created_at)::text AS last FROM embeddings WHERE repo_id = $1 AND model = $2',
      [repo, this.model],
    );
    return `${row!.n}:${row!.last ?? ''}`;
  }

  /** Every vector held, loaded once per change. */
  private async load(): Promise<HeldVectors> {
    const stamp = await this.stamp();
    if (this.held?.stamp === stamp) return this.held.set;
    const repo = await this.repoId();
    const rows = repo
      ? await this.pool.query<{ chunk_hash: string; embedding: string }>(
          'SELECT chunk_hash, embedding::text AS embedding FROM embeddings WHERE repo_id = $1 AND model = $2 ORDER BY created_at, chunk_hash',
          [repo, this.model],
        )
      : [];
    const dim = this.identity.dim;
    const data = new Float32Array(rows.length * dim);
    rows.forEach((row, r) => data.set(parseVector(row.embedding, dim), r * dim));
    const set = new HeldVectors(dim, rows.length, data, Buffer.from(rows.map((row) => row.chunk_hash).join(''), 'hex'), undefined);
    this.held = { stamp, set };
    return set;
  }

  async holdings(): Promise<VectorHoldings> {
    const set = await this.load();
    return { count: set.count, has: (hash) => set.find(hash) >= 0 };
  }

  private async requireRepo(): Promise<string> {
    const repo = await this.repoId();
    if (!repo) throw new RepodexError('INDEX_MISSING', 'this repository has no index in the database yet');
    return repo;
  }

  async append(hashes: readonly Uint8Array[], vectors: readonly Float32Array[]): Promise<void> {
    if (hashes.length !== vectors.length) throw new RepodexError('INTERNAL', 'append: hashes and vectors differ in number');
    if (hashes.length === 0) return;
    const repo = await this.requireRepo();
    const hex = hashes.map((hash) => Buffer.from(hash).toString('hex'));
    await this.pool.query(
      `INSERT INTO embeddings (repo_id, model, chunk_hash, dim, embedding)
       SELECT $1, $2, h, $3, v::vector FROM unnest($4::text[], $5::text[]) AS u(h, v)
       ON CONFLICT (repo_id, model, chunk_hash) DO NOTHING`,
      [repo, this.model, this.identity.dim, hex, vectors.map(vectorText)],
    );
    // Seed 001's column: the chunks with these texts now have their vector.
    await this.pool.query(
      `UPDATE chunks c SET embedding = e.embedding, embedding_model = e.model
         FROM embeddings e
        WHERE c.repo_id = $1 AND e.repo_id = $1 AND e.model = $2 AND e.chunk_hash = c.chunk_hash AND c.chunk_hash = ANY($3::text[])`,
      [repo, this.model, hex],
    );
  }

  async compact(keep: (hash: Uint8Array) => boolean): Promise<void> {
    const repo = await this.requireRepo();
    const rows = await this.pool.query<{ chunk_hash: string }>('SELECT chunk_hash FROM embeddings WHERE repo_id = $1 AND model = $2', [repo, this.model]);
    const drop = rows.map((row) => row.chunk_hash).filter((hash) => !keep(Buffer.from(hash, 'hex')));
    if (drop.length > 0) await this.pool.query('DELETE FROM embeddings WHERE repo_id = $1 AND model = $2 AND chunk_hash = ANY($3::text[])', [repo, this.model, drop]);
  }

  async searcher(view: IndexView, options: { readonly annFrom: number }): Promise<ChunkVectors> {
    const repo = await this.repoId();
    const [row] = repo ? await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM embeddings WHERE repo_id = $1 AND model = $2', [repo, this.model]) : [{ n: '0' }];
    if (!repo || Number(row!.n) < options.annFrom) return DocVectors.build(view, await this.load(), undefined, Number.POSITIVE_INFINITY);
    const held = new Set((await this.pool.query<{ chunk_hash: string }>('SELECT chunk_hash FROM embeddings WHERE repo_id = $1 AND model = $2', [repo, this.model])).map((r) => r.chunk_hash));
    return new IndexedVectors(this.pool, repo, this.model, this.identity.dim, view, held);
  }

  async *updateIndex(options: { readonly annFrom: number }): AsyncGenerator<{ done: number; total: number }, VectorIndexOutcome, undefined> {
    const set = await this.load();
    if (set.count < options.annFrom) return { kind: 'none' };
    const dim = this.identity.dim;
    // One HNSW index per dimension (pgvector indexes vectors of one dimension): made once, then kept up by PostgreSQL itself.
    yield { done: 0, total: 1 };
    await this.pool.query(`CREATE INDEX IF NOT EXISTS embeddings_hnsw_${dim} ON embeddings USING hnsw ((embedding::vector(${dim})) vector_cosine_ops) WHERE dim = ${dim}`);
    yield { done: 1, total: 1 };
    return { kind: 'current', vectors: set.count };
  }
}

/** Nearest neighbours from pgvector's HNSW index, mapped back to the view's docs; vectors stay in the database. */
class IndexedVectors implements ChunkVectors {
  readonly approximate = true;
  readonly damage = [];
  readonly count: number;
  readonly live: number;
  /** The docs of each chunk hash (identical chunks share a vector). */
  private readonly docsByHash = new Map<string, number[]>();
  private readonly hashOfDoc: string[];

  constructor(
    private readonly pool: SqlPool,
    private readonly repoId: string,
    private readonly model: string,
    private readonly dim: number,
    private readonly view: IndexView,
    held: ReadonlySet<string>,
  ) {
    const hashes = view.chunkHashes();
    this.hashOfDoc = Array.from({ length: view.docCount }, (_, doc) => Buffer.from(hashes.buffer, hashes.byteOffset + doc * 32, 32).toString('hex'));
    let count = 0;
    this.hashOfDoc.forEach((hash, doc) => {
      if (!held.has(hash)) return;
      count++;
      const docs = this.docsByHash.get(hash);
      if (docs) docs.push(doc);
      else this.docsByHash.set(hash, [doc]);
    });
    this.count = count;
    this.live = view.docCount;
  }

  /** Run `text` with pgvector's search settings for this query, in a transaction of its own. */
  private withSearchSettings<Row>(efSearch: number, text: string, params: readonly unknown[]): Promise<Row[]> {
    return inTransaction(this.pool, async (tx) => {
      await tx.query("SET LOCAL hnsw.iterative_scan = 'relaxed_order'");
      await tx.query(`SET LOCAL hnsw.ef_search = ${Math.max(40, Math.min(1000, efSearch))}`);
      return tx.query<Row>(text, params);
    });
  }

  async nearest(query: Float32Array, k: number, filter?: VectorFilter): Promise<Neighbours> {
    if (k <= 0 || this.count === 0) return { docs: [], sims: [] };
    // A filter (glob, language) can reject most neighbours: ask for more, and let iterative scans go on past the first ones.
    const want = Math.min(this.count, (filter ? k * 8 : k) + 8);
    const rows = await this.withSearchSettings<{ chunk_hash: string; sim: number }>(
      want,
      `SELECT chunk_hash, 1 - (embedding::vector(${this.dim}) <=> $3::vector(${this.dim})) AS sim FROM embeddings
        WHERE repo_id = $1 AND model = $2 AND dim = ${this.dim}
        ORDER BY embedding::vector(${this.dim}) <=> $3::vector(${this.dim}) LIMIT $4`,
      [this.repoId, this.model, vectorText(query), want],
    );
    const found: { doc: number; sim: number }[] = [];
    for (const row of rows) {
      for (const doc of this.docsByHash.get(row.chunk_hash) ?? []) if (!filter || filter.files[this.view.docFile[doc]!] === 1) found.push({ doc, sim: Number(row.sim) });
    }
    found.sort((a, b) => b.sim - a.sim || a.doc - b.doc);
    const best = found.slice(0, k);
    return { docs: best.map((f) => f.doc), sims: best.map((f) => f.sim) };
  }

  async similarities(query: Float32Array, docs: readonly number[]): Promise<number[]> {
    if (docs.length === 0) return [];
    const hashes = [...new Set(docs.map((doc) => this.hashOfDoc[doc]!))];
    const rows = await this.pool.query<{ chunk_hash: string; sim: number }>(
      `SELECT chunk_hash, 1 - (embedding::vector(${this.dim}) <=> $3::vector(${this.dim})) AS sim FROM embeddings
        WHERE repo_id = $1 AND model = $2 AND chunk_hash = ANY($4::text[])`,
      [this.repoId, this.model, vectorText(query), hashes],
    );
    const sim = new Map(rows.map((row) => [row.chunk_hash, Number(row.sim)]));
    return docs.map((doc) => sim.get(this.hashOfDoc[doc]!) ?? 0);
  }
}
