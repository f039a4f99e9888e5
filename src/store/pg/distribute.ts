import { prepareDatabase } from './pg-store.js';
import type { SqlPool } from './sql.js';

/** The tables a repository's rows live in, distributed by `repo_id` and co-located: one repository's queries go to one shard. */
const DISTRIBUTED = ['chunks', 'files', 'segments', 'segment_postings', 'embeddings', 'repo_locks', 'audit_log', 'repo_analytics', 'build_log', 'repo_documents'] as const;
/** Tables without a `repo_id`: copied to every node. */
const REFERENCE = ['repos'] as const;

/** What `db distribute` did. */
export interface DistributeReport {
  /** False on plain PostgreSQL (nothing to do there). */
  readonly citus: boolean;
  /** Tables distributed (or made reference tables) by this call. */
  readonly changed: string[];
  /** Tables that already were. */
  readonly unchanged: string[];
  /** Worker nodes the coordinator knows. */
  readonly workers: number;
}

/**
 * Spread the schema over a Citus cluster: `repos` becomes a reference table, every table keyed by
 * `repo_id` is distributed by it, co-located with `chunks`. Idempotent (a table already done is
 * left alone), and fine before or after the first sync (Citus moves the rows there). On plain
 * PostgreSQL it changes nothing.
 */
export async function distribute(pool: SqlPool, where: string): Promise<DistributeReport> {
  const [citus] = await pool.query<{ extversion: string }>("SELECT extversion FROM pg_extension WHERE extname = 'citus'");
  if (!citus) return { citus: false, changed: [], unchanged: [], workers: 0 };
  await prepareDatabase(pool, where);
  const known = new Map(
    (await pool.query<{ name: string; method: string }>('SELECT logicalrelid::regclass::text AS name, partmethod AS method FROM pg_dist_partition')).map((row) => [row.name, row.method]),
  );
  const changed: string[] = [];
  const unchanged: string[] = [];
  for (const table of REFERENCE) {
    if (known.has(table)) unchanged.push(table);
    else {
      await pool.query('SELECT create_reference_table($1)', [table]);
      changed.push(table);
    }
  }
  for (const table of DISTRIBUTED) {
    if (known.has(table)) unchanged.push(table);
    else {
      await pool.query(`SELECT create_distributed_table($1, 'repo_id', colocate_with => $2)`, [table, table === 'chunks' ? 'default' : 'chunks']);
      changed.push(table);
    }
  }
  const [workers] = await pool.query<{ n: string }>("SELECT count(*) AS n FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0");
  return { citus: true, changed, unchanged, workers: Number(workers!.n) };
}
