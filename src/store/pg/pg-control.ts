import { type AuditEntry, decodeLine, encodeEntry, lineDamage } from '../audit-lines.js';
import type { AnalyticsCounts, AnalyticsDelta, AnalyticsStore, AuditStore, ControlPlane, DocumentName, PartCheck } from '../control.js';
import { type SqlPool, inTransaction } from './sql.js';

/** The repository's id, registering it the first time something is kept for it. */
type RepoIds = { readonly known: () => Promise<string | undefined>; readonly ensure: () => Promise<string> };

/** Build-log lines kept per repository: the newest, the rest go as new ones come. */
const BUILD_LOG_LINES = 5000;
/** Audit rows read at a time when every line is checked or redacted. */
const AUDIT_BATCH = 5000;

/**
 * The PostgreSQL store's control plane: the audit log, analytics, build log and documents are
 * rows keyed by `repo_id` (distributed with everything else on Citus), so every process and
 * every machine pointed at the database shares one of each.
 */
export class PgControlPlane implements ControlPlane {
  readonly audit: PgAuditLog;
  readonly analytics: PgAnalytics;

  constructor(
    private readonly pool: SqlPool,
    private readonly repo: RepoIds,
    private readonly where: string,
    private readonly removeLocalTable: () => boolean,
  ) {
    this.audit = new PgAuditLog(pool, repo, where);
    this.analytics = new PgAnalytics(pool, repo);
  }

  async appendBuildLog(line: string): Promise<void> {
    try {
      const id = await this.repo.ensure();
      await this.pool.query('INSERT INTO build_log (repo_id, line) VALUES ($1, $2)', [id, line.replace(/\n/g, ' ')]);
      await this.pool.query(
        `DELETE FROM build_log WHERE repo_id = $1 AND seq < (SELECT min(seq) FROM (SELECT seq FROM build_log WHERE repo_id = $1 ORDER BY seq DESC LIMIT ${BUILD_LOG_LINES}) AS newest)`,
        [id],
      );
    } catch {
      // The log is a convenience: a sync never fails over it.
    }
  }

  async readDocument(name: DocumentName): Promise<Buffer | undefined> {
    const id = await this.repo.known();
    if (!id) return undefined;
    const [row] = await this.pool.query<{ body: Buffer }>('SELECT body FROM repo_documents WHERE repo_id = $1 AND name = $2', [id, name]);
    return row?.body;
  }

  async writeDocument(name: DocumentName, data: string | Buffer): Promise<void> {
    const id = await this.repo.ensure();
    await this.pool.query(
      `INSERT INTO repo_documents (repo_id, name, body) VALUES ($1, $2, $3)
       ON CONFLICT (repo_id, name) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at`,
      [id, name, typeof data === 'string' ? Buffer.from(data, 'utf8') : data],
    );
  }

  async removeDocument(name: DocumentName): Promise<boolean> {
    const id = await this.repo.known();
    if (!id) return false;
    return (await this.pool.query('DELETE FROM repo_documents WHERE repo_id = $1 AND name = $2 RETURNING name', [id, name])).length > 0;
  }

  async removeEmbedderTable(): Promise<boolean> {
    return this.removeLocalTable();
  }

  describe(name: DocumentName): string {
    return `${name} (in ${this.where})`;
  }
}

/**
 * The audit log as rows: each entry the same checked JSON line the file store writes, appended in
 * the background in the order calls ended (a call never waits for its line), read newest first.
 * Nothing is rotated away: a team's trail is kept until someone deletes it.
 */
export class PgAuditLog implements AuditStore {
  readonly where: string;
  private writing: Promise<void> = Promise.resolve();
  /** Entries waiting for the write under way to finish: they go together in the next statement. */
  private waiting: AuditEntry[] = [];

  constructor(
    private readonly pool: SqlPool,
    private readonly repo: RepoIds,
    where: string,
  ) {
    this.where = `table audit_log in ${where}`;
  }

  /** Entries go in one statement per write; while one runs, the next batch gathers (a busy server writes a row set, not a round trip, per call). */
  append(...entries: AuditEntry[]): void {
    if (entries.length === 0) return;
    const first = this.waiting.length === 0;
    this.waiting.push(...entries);
    if (!first) return;
    this.writing = this.writing
      .then(async () => {
        const batch = this.waiting;
        this.waiting = [];
        const id = await this.repo.ensure();
        await this.pool.query('INSERT INTO audit_log (repo_id, time, line) SELECT $1, t, l FROM unnest($2::timestamptz[], $3::text[]) WITH ORDINALITY AS e(t, l, n) ORDER BY n', [
          id,
          batch.map((entry) => entry.time),
          batch.map(encodeEntry),
        ]);
      })
      .catch(() => undefined); // a call never fails because its line could not be kept
  }

  settled(): Promise<void> {
    return this.writing;
  }

  async read(from: number | undefined, limit: number): Promise<{ entries: AuditEntry[]; total: number; damaged: number }> {
    const id = await this.repo.known();
    if (!id) return { entries: [], total: 0, damaged: 0 };
    const since = from === undefined ? null : new Date(from).toISOString();
    const [count] = await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM audit_log WHERE repo_id = $1 AND ($2::timestamptz IS NULL OR time >= $2::timestamptz)', [id, since]);
    const rows = await this.pool.query<{ line: string }>(
      `SELECT line FROM (SELECT seq, line FROM audit_log WHERE repo_id = $1 AND ($2::timestamptz IS NULL OR time >= $2::timestamptz) ORDER BY seq DESC LIMIT $3) AS newest ORDER BY seq`,
      [id, since, limit],
    );
    const entries: AuditEntry[] = [];
    let damaged = 0;
    for (const row of rows) {
      const entry = decodeLine(Buffer.from(row.line, 'utf8'));
      if ('damage' in entry) damaged++;
      else entries.push(entry);
    }
    return { entries, total: Number(count!.n) - damaged, damaged };
  }

  /**
   * Every row's checksum when `deep` (`verify`); `status` asks on every call, and the database
   * keeps its own pages checked, so then nothing is read.
   */
  async check(deep: boolean): Promise<PartCheck> {
    const id = await this.repo.known();
    if (!deep || !id) return { checked: [], problems: [] };
    const damaged: string[] = [];
    await this.eachBatch(id, (rows) => {
      for (const row of rows) if (lineDamage(Buffer.from(row.line, 'utf8')) !== undefined) damaged.push(row.seq);
    });
    if (damaged.length === 0) return { checked: ['audit_log'], problems: [] };
    const which = `${damaged.length === 1 ? 'row' : `${damaged.length} rows`} with seq ${damaged.slice(0, 5).join(', ')}${damaged.length > 5 ? ', …' : ''}`;
    return {
      checked: ['audit_log'],
      problems: [`${this.where}: ${which} ${damaged.length === 1 ? 'is' : 'are'} damaged; an audit log cannot be rebuilt, so \`repodex audit\` leaves damaged rows out; to clear this, copy them if you need them and delete them (DELETE FROM audit_log WHERE seq IN (…))`],
    };
  }

  async redact(redact: (entry: AuditEntry) => AuditEntry): Promise<string[] | undefined> {
    const id = await this.repo.known();
    if (!id) return [];
    let changed = 0;
    await this.eachBatch(id, async (rows) => {
      const gone: string[] = [];
      const updated: { seq: string; line: string }[] = [];
      for (const row of rows) {
        const entry = decodeLine(Buffer.from(row.line, 'utf8'));
        // A row that is not an entry may hold part of a credential: it goes.
        if ('damage' in entry) gone.push(row.seq);
        else {
          const again = redact(entry);
          if (JSON.stringify(again) !== JSON.stringify(entry)) updated.push({ seq: row.seq, line: encodeEntry(again) });
        }
      }
      if (gone.length === 0 && updated.length === 0) return;
      await inTransaction(this.pool, async (tx) => {
        if (gone.length > 0) await tx.query('DELETE FROM audit_log WHERE repo_id = $1 AND seq = ANY($2::bigint[])', [id, gone]);
        if (updated.length > 0) {
          await tx.query(
            'UPDATE audit_log AS a SET line = u.line FROM unnest($2::bigint[], $3::text[]) AS u(seq, line) WHERE a.repo_id = $1 AND a.seq = u.seq',
            [id, updated.map((row) => row.seq), updated.map((row) => row.line)],
          );
        }
      });
      changed += gone.length + updated.length;
    });
    return changed > 0 ? [`audit_log: ${changed} row(s) redacted`] : [];
  }

  /** Every row of the repository's log, in batches, oldest first. */
  private async eachBatch(id: string, visit: (rows: { seq: string; line: string }[]) => void | Promise<void>): Promise<void> {
    for (let after = '0'; ; ) {
      const rows = await this.pool.query<{ seq: string; line: string }>('SELECT seq, line FROM audit_log WHERE repo_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [id, after, AUDIT_BATCH]);
      if (rows.length === 0) return;
      await visit(rows);
      after = rows.at(-1)!.seq;
    }
  }
}

/** Seed 003's counters as one row per repository, added to in place by every process. */
export class PgAnalytics implements AnalyticsStore {
  constructor(
    private readonly pool: SqlPool,
    private readonly repo: RepoIds,
  ) {}

  async add(delta: AnalyticsDelta): Promise<boolean> {
    try {
      const id = await this.repo.ensure();
      await this.pool.query(
        `INSERT INTO repo_analytics AS a (repo_id, queries, hits, misses, last_query_ts) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (repo_id) DO UPDATE SET queries = a.queries + EXCLUDED.queries, hits = a.hits + EXCLUDED.hits,
           misses = a.misses + EXCLUDED.misses, last_query_ts = coalesce(EXCLUDED.last_query_ts, a.last_query_ts)`,
        [id, delta.queries, delta.hits, delta.misses, delta.last],
      );
      return true;
    } catch {
      // Statistics only: lost with the connection or a full disk, as on the file store. (Kept for
      // another try they would be tried again before the process exits, and again: it never would.)
      return true;
    }
  }

  async read(): Promise<AnalyticsCounts> {
    const id = await this.repo.known();
    const [row] = id ? await this.pool.query<{ queries: string; hits: string; misses: string; last_query_ts: Date | null }>('SELECT queries, hits, misses, last_query_ts FROM repo_analytics WHERE repo_id = $1', [id]) : [];
    if (!row) return { queries: 0, hits: 0, misses: 0, last_query_ts: null };
    return { queries: Number(row.queries), hits: Number(row.hits), misses: Number(row.misses), last_query_ts: row.last_query_ts?.toISOString() ?? null };
  }

  /** Typed columns cannot hold a damaged count. */
  async check(): Promise<PartCheck> {
    return { checked: [], problems: [] };
  }

  async repair(): Promise<void> {}
}
