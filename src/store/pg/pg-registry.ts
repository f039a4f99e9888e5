import type { RegisteredRepo, RepoRegistry } from '../registry.js';
import { PgAuditLog } from './pg-control.js';
import { prepareDatabase } from './pg-store.js';
import type { SqlPool } from './sql.js';

/** The root of the row the server's own audit log is kept under (no path starts like this). */
export const SERVER_ROW_ROOT = 'repodex-server:';

interface RepoRow {
  readonly id: string;
  readonly root: string;
  readonly name: string | null;
  readonly registered_at: string;
  readonly watch: boolean;
}

const COLUMNS = `id, root, name, to_char(registered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS registered_at, watch`;

/**
 * The registry of a server on PostgreSQL: the `repos` table, a repository registered while its
 * `registered_at` is set. A repository's id is the one its index is kept under, so every server
 * on the database (and the CLI with `--store`) names it alike.
 */
export class PgRegistry implements RepoRegistry {
  readonly where: string;
  readonly audit: PgAuditLog;
  private ready: Promise<void> | undefined;
  private serverRow: string | undefined;

  /** `database`: the database as messages name it (no password). */
  constructor(
    private readonly pool: SqlPool,
    private readonly database: string,
  ) {
    this.where = `table repos in ${database}`;
    this.audit = new PgAuditLog(pool, { known: () => this.serverId(), ensure: () => this.serverId() }, database);
  }

  private prepare(): Promise<void> {
    this.ready ??= prepareDatabase(this.pool, this.database);
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  async list(): Promise<RegisteredRepo[]> {
    await this.prepare();
    const rows = await this.pool.query<RepoRow>(`SELECT ${COLUMNS} FROM repos WHERE registered_at IS NOT NULL ORDER BY registered_at, id`);
    return rows.map(toRepo);
  }

  async add(root: string, name: string): Promise<{ repo: RegisteredRepo; created: boolean }> {
    await this.prepare();
    // A root indexed before (from the CLI with --store) keeps its id, and so its index.
    await this.pool.query('INSERT INTO repos (root) VALUES ($1) ON CONFLICT (root) DO NOTHING', [root]);
    // The time as a value and only columns returned: Citus allows no function that is not immutable in an update's values or RETURNING.
    const claimed = await this.pool.query('UPDATE repos SET registered_at = $3::timestamptz, name = $2 WHERE root = $1 AND registered_at IS NULL RETURNING id', [root, name, new Date().toISOString()]);
    const [row] = await this.pool.query<RepoRow>(`SELECT ${COLUMNS} FROM repos WHERE root = $1`, [root]);
    return { repo: toRepo(row!), created: claimed.length > 0 };
  }

  async remove(repoId: string): Promise<boolean> {
    if (!isUuid(repoId)) return false;
    await this.prepare();
    const rows = await this.pool.query('UPDATE repos SET registered_at = NULL, watch = false WHERE id = $1 AND registered_at IS NOT NULL RETURNING id', [repoId]);
    return rows.length > 0;
  }

  async setWatch(repoId: string, watch: boolean): Promise<void> {
    if (!isUuid(repoId)) return;
    await this.prepare();
    await this.pool.query('UPDATE repos SET watch = $2 WHERE id = $1', [repoId, watch]);
  }

  /** The id of the row the server's own log is kept under, made the first time. */
  private async serverId(): Promise<string> {
    if (this.serverRow) return this.serverRow;
    await this.prepare();
    await this.pool.query('INSERT INTO repos (root) VALUES ($1) ON CONFLICT (root) DO NOTHING', [SERVER_ROW_ROOT]);
    const [row] = await this.pool.query<{ id: string }>('SELECT id FROM repos WHERE root = $1', [SERVER_ROW_ROOT]);
    this.serverRow = row!.id;
    return this.serverRow;
  }
}

function toRepo(row: RepoRow): RegisteredRepo {
  const folder = row.root.split('/').filter(Boolean).at(-1) ?? row.root;
  return { repo_id: row.id, root: row.root, name: row.name ?? folder, added_at: row.registered_at, watch: row.watch };
}

/** Whether `text` can be a repository id at all (anything else is unknown without asking the database, which would refuse to cast it). */
export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
