import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { HeldSession, SqlPool } from './store/pg/sql.js';
import { unavailable } from './store/pg/pg-store.js';

/** Connection-level failures (not a statement's): what `--store` must fix. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', '28P01', '28000', '3D000', '53300', '57P03']);

/** Statements worth preparing: queries and row changes (not transaction control, settings or DDL). */
const PREPARABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;
const names = new Map<string, string>();

/** A stable name for a statement's text (the same text, the same prepared statement on a connection). */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) names.set(text, (name = `repodex_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`));
  return name;
}

/**
 * The `pg` driver behind the store's SqlPool: the one place that imports it. Connection failures
 * become one-line STORE_UNAVAILABLE errors naming the fix; statement errors pass through.
 */
export function pgPool(url: string, where: string): SqlPool {
  let pool: pg.Pool;
  try {
    // allowExitOnIdle: a one-shot command exits when done, not after its idle connections time out.
    pool = new pg.Pool({ connectionString: url, max: 8, idleTimeoutMillis: 10_000, connectionTimeoutMillis: 10_000, allowExitOnIdle: true });
  } catch (error) {
    throw unavailable(where, error);
  }
  // An idle connection the server closed must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  const translate = (error: unknown): unknown => {
    const code = (error as { code?: string }).code;
    return code !== undefined && CONNECTION_CODES.has(code) ? unavailable(where, error) : error;
  };
  const run = async <Row>(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[]): Promise<Row[]> => {
    try {
      // Data statements are prepared once per connection and reused by name: parsing and planning
      // them again on every request cost about as much as running them.
      const name = PREPARABLE.test(text) ? statementName(text) : undefined;
      return (await client.query({ text, values: params as unknown[] | undefined, ...(name ? { name } : {}) })).rows as Row[];
    } catch (error) {
      throw translate(error);
    }
  };
  return {
    query: (text, params) => run(pool, text, params),
    async connect(): Promise<HeldSession> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw translate(error);
      }
      return {
        query: (text, params) => run(client, text, params),
        async copyIn(statement, data) {
          try {
            // Rows batched into larger writes: one stream write per row would dominate the cost.
            const batches = function* (): Generator<string> {
              let batch = '';
              for (const row of data) {
                batch += row;
                if (batch.length >= 1 << 16) {
                  yield batch;
                  batch = '';
                }
              }
              if (batch !== '') yield batch;
            };
            await pipeline(Readable.from(batches()), client.query(copyFrom(statement)));
          } catch (error) {
            throw translate(error);
          }
        },
        async copyOut(statement) {
          try {
            const parts: Buffer[] = [];
            for await (const part of client.query(copyTo(statement))) parts.push(part as Buffer);
            return Buffer.concat(parts);
          } catch (error) {
            throw translate(error);
          }
        },
        release: (broken) => client.release(broken === true),
      };
    },
    end: () => pool.end(),
  };
}
