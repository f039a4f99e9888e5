import { RepodexError } from '../../core/errors.js';
import m001 from './migrations/001_repos.up.sql';
import m002 from './migrations/002_chunks.up.sql';
import m003 from './migrations/003_embeddings.up.sql';
import m004 from './migrations/004_control.up.sql';
import m005 from './migrations/005_declarations.up.sql';
import m006 from './migrations/006_registry.up.sql';
import { type SqlPool, inTransaction } from './sql.js';

/** The schema's migrations, in order: `NNN_name.up.sql` files, applied once each and recorded. */
export const MIGRATIONS: readonly { readonly version: number; readonly name: string; readonly sql: string }[] = [
  { version: 1, name: '001_repos', sql: m001 },
  { version: 2, name: '002_chunks', sql: m002 },
  { version: 3, name: '003_embeddings', sql: m003 },
  { version: 4, name: '004_control', sql: m004 },
  { version: 5, name: '005_declarations', sql: m005 },
  { version: 6, name: '006_registry', sql: m006 },
];

/** The schema version this build writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** Serializes migrations across every process pointed at the database (an arbitrary, fixed key). */
const MIGRATION_LOCK = 7_311_985_001;

/**
 * Bring the database's schema up to this build's: under an advisory lock, each missing migration
 * in its own transaction, recorded in `repodex_migrations`. A database migrated by a newer
 * repodex is refused (its tables may mean something this build does not know).
 */
export async function migrate(pool: SqlPool, where: string): Promise<void> {
  const session = await pool.connect();
  let broken = false;
  try {
    await session.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await session.query(`CREATE TABLE IF NOT EXISTS repodex_migrations (
        version INT PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
      const applied = new Set((await session.query<{ version: number }>('SELECT version FROM repodex_migrations')).map((row) => Number(row.version)));
      const newest = Math.max(0, ...applied);
      if (newest > SCHEMA_VERSION) {
        throw new RepodexError(
          'STORE_INCOMPATIBLE',
          `${where} holds repodex schema version ${newest}, newer than this repodex knows (${SCHEMA_VERSION}): upgrade repodex, or point --store at another database`,
          { selfContained: true },
        );
      }
      // Each in a transaction of its own (on another connection: the lock is this session's, whatever runs meanwhile).
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await inTransaction(pool, async (tx) => {
          await tx.query(migration.sql);
          await tx.query('INSERT INTO repodex_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        });
      }
    } finally {
      await session.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => (broken = true));
    }
  } finally {
    session.release(broken);
  }
}
