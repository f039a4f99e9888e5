/**
 * What the PostgreSQL store needs of a driver, and nothing more: the composition root adapts a
 * real driver (`pg`) to it, so nothing in the store imports one (Kysely's dialect lesson).
 */

/** One connection: statements run in order on it. */
export interface SqlSession {
  /** Run one statement with `$1…` parameters; the rows it returns, as objects keyed by column name. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A connection taken from the pool for a while (a transaction, a session lock); give it back with `release`. */
export interface HeldSession extends SqlSession {
  /**
   * Stream rows into a table with `COPY … FROM STDIN` (text format): `statement` is the COPY
   * statement, `data` the rows, each a line of tab-separated values escaped with `copyText`.
   */
  copyIn(statement: string, data: Iterable<string>): Promise<void>;
  /**
   * Everything a `COPY … TO STDOUT` statement sends, as one buffer (the binary format, as
   * SegmentDictionary reads it). Reading many rows this way costs the database and this process a fraction of
   * a statement's rows: no row is turned into a value of its own, and no bytea into hex.
   */
  copyOut(statement: string): Promise<Buffer>;
  /** Return the connection; `broken` closes it instead (after an error left it in an unknown state). */
  release(broken?: boolean): void;
}

/** A pool of connections to one database. */
export interface SqlPool extends SqlSession {
  /** A connection of its own, until released. */
  connect(): Promise<HeldSession>;
  /** Close every connection. */
  end(): Promise<void>;
}

/** Run `work` in a transaction on a connection of its own: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: SqlPool, work: (tx: Omit<HeldSession, 'release'>) => Promise<T>, isolation: 'read committed' | 'repeatable read' = 'read committed'): Promise<T> {
  const session = await pool.connect();
  let broken = false;
  try {
    await session.query(`BEGIN ISOLATION LEVEL ${isolation === 'repeatable read' ? 'REPEATABLE READ' : 'READ COMMITTED'}`);
    try {
      const result = await work(session);
      await session.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await session.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw error;
    }
  } finally {
    session.release(broken);
  }
}

/** A value as COPY's text format writes it: backslash, tab, newline and carriage return escaped. */
export function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}
