import { readFileSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { RepodexError, errorMessage } from './core/errors.js';
import type { HeldSession, SqlPool } from './store/pg/sql.js';
import { unavailable } from './store/pg/pg-store.js';

/** Connection-level failures (not a statement's): what `--store` must fix. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', '28P01', '28000', '3D000', '53300', '57P03']);

/**
 * A connection that was working and went away, by the server's code or the driver's words: why,
 * as a user reads it. (The driver reports a socket closed under it without a code.)
 */
function lostReason(error: unknown): string | undefined {
  const code = (error as { code?: string }).code;
  if (code === '57P01') return 'the server was shut down or restarted';
  if (code === '57P02') return 'the server crashed and restarted';
  if (code === '57P05' || code === '25P03') return 'the server closed the idle connection';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === '08006' || code === '08003') return 'the server closed it';
  const message = errorMessage(error);
  if (/^Connection terminated|not queryable|Client was closed and is not queryable/.test(message)) return 'the server closed it';
  return undefined;
}

/**
 * What a server refuses for reasons a user fixes (SQLSTATE → the fix): the user's privileges, a
 * standby, the server's memory. (A full disk, 53100, is DISK_FULL.) Anything else a statement
 * meets is a bug.
 */
const SERVER_REFUSALS: Record<string, string> = {
  '42501': 'connect as a user who may create and change tables in that database, or grant this one that right (GRANT CREATE ON SCHEMA public TO …)',
  '25006': 'the server is read-only (a standby?): use the primary',
  '53200': 'the database server is out of memory',
  '53400': "a limit in the server's configuration was reached",
};

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
 * pg's Client, closing its socket when connecting fails on this side: an authentication this
 * process cannot answer (a server asking for a password none was given for) otherwise leaves the
 * socket open, and the process alive, until the server gives up on it a minute later.
 */
class ClosingClient extends pg.Client {}
const connectClient = pg.Client.prototype.connect as (this: pg.Client, callback: (error: Error | null) => void) => void;
ClosingClient.prototype.connect = function connect(this: ClosingClient, callback?: (error: Error | null) => void): Promise<ClosingClient> | void {
  const closeOnFailure = (error: Error | null): void => {
    if (error) this.connection.stream.destroy();
  };
  if (callback) {
    connectClient.call(this, (error) => {
      closeOnFailure(error);
      callback(error);
    });
    return;
  }
  return new Promise((resolve, reject) =>
    connectClient.call(this, (error) => {
      closeOnFailure(error);
      if (error) reject(error);
      else resolve(this);
    }),
  );
} as typeof pg.Client.prototype.connect;

/**
 * The URL the driver is given: the one the user wrote, with `sslmode` meaning what PostgreSQL's
 * own clients (psql, libpq) take it to mean. Without `uselibpqcompat` the driver reads prefer,
 * require and verify-ca as verify-full, and says so in ten lines on the terminal; with it they
 * mean what libpq documents (require: encrypted, the certificate not checked).
 */
function driverUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // the driver reports what is wrong with it
  }
  const sslmode = parsed.searchParams.get('sslmode');
  if ((sslmode === 'prefer' || sslmode === 'require' || sslmode === 'verify-ca') && !parsed.searchParams.has('uselibpqcompat')) parsed.searchParams.set('uselibpqcompat', 'true');
  return parsed.toString();
}

/** What the driver asks a password for: the connection's parameters. */
interface PasswordFor {
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
}

/**
 * The password for a connection without one in its URL or in PGPASSWORD: from the password file
 * (PGPASSFILE, else ~/.pgpass), as libpq finds it: the first line whose host, port, database and
 * user match (`*` matches any), `\:` and `\\` escaped; a file others may read is ignored, as libpq
 * ignores it. Read here, not by the driver, whose reading prints a deprecation warning.
 */
function passwordFileEntry(wanted: PasswordFor, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = env.PGPASSFILE || join(env.HOME || homedir(), '.pgpass');
  let text: string;
  try {
    const stats = statSync(file);
    if (!stats.isFile() || (stats.mode & 0o077) !== 0) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const values = [wanted.host || 'localhost', String(wanted.port ?? 5432), wanted.database ?? '', wanted.user ?? ''];
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const fields: string[] = [];
    let field = '';
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (c === '\\' && i + 1 < line.length) field += line[++i]!;
      else if (c === ':' && fields.length < 4) {
        fields.push(field);
        field = '';
      } else field += c;
    }
    fields.push(field);
    if (fields.length === 5 && values.every((value, i) => fields[i] === '*' || fields[i] === value)) return fields[4];
  }
  return undefined;
}

/** The parameters a URL connects with, as the driver fills them in (for finding its password-file line). */
function parametersOf(url: string, env: NodeJS.ProcessEnv = process.env): PasswordFor {
  try {
    const parsed = new URL(url);
    let me = '';
    try {
      me = userInfo().username;
    } catch {
      // no name for this user: only lines for any user match
    }
    const user = decodeURIComponent(parsed.username) || env.PGUSER || me;
    return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port || env.PGPORT || 5432), database: decodeURIComponent(parsed.pathname.slice(1)) || env.PGDATABASE || user, user };
  } catch {
    return {};
  }
}

// The driver asks this for a password the URL and PGPASSWORD did not give (it reads the URL's and
// PGPASSWORD first); undefined is "none", and the server's demand for one is then reported.
pg.defaults.password = ((wanted: PasswordFor) => passwordFileEntry(wanted)) as unknown as typeof pg.defaults.password;

/**
 * The `pg` driver behind the store's SqlPool: the one place that imports it. Connection failures
 * become one-line STORE_UNAVAILABLE errors naming the fix, a connection lost while in use
 * STORE_LOST; statement errors pass through.
 */
export function pgPool(url: string, where: string, env: NodeJS.ProcessEnv = process.env): SqlPool {
  let pool: pg.Pool;
  let passwordGiven = Boolean(env.PGPASSWORD);
  try {
    passwordGiven ||= new URL(url).password !== '';
  } catch {
    passwordGiven = true; // the driver reports what is wrong with the URL, not a missing password
  }
  try {
    // allowExitOnIdle: a one-shot command exits when done, not after its idle connections time out.
    pool = new pg.Pool({ Client: ClosingClient, connectionString: driverUrl(url), max: 8, idleTimeoutMillis: 10_000, connectionTimeoutMillis: 10_000, allowExitOnIdle: true });
  } catch (error) {
    throw unavailable(where, error);
  }
  // An idle connection the server closed must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  /** A failure as the store reports it; `held`: on a connection that was working (a lost one is STORE_LOST, not "cannot connect"). */
  const translate = (error: unknown, held: boolean): unknown => {
    const lost = lostReason(error);
    if (lost !== undefined && (held || (error as { code?: string }).code !== 'ECONNRESET')) {
      return new RepodexError('STORE_LOST', `lost the connection to ${where} (${lost})`, { cause: error });
    }
    // The server asked for a password none was given for: the SCRAM exchange fails here, md5 and
    // plain passwords there (28P01, or "empty password returned by client").
    const asked = /password must be a string/i.test(errorMessage(error)) || (error as { code?: string }).code === '28P01';
    if (asked && !passwordGiven && passwordFileEntry(parametersOf(url)) === undefined) {
      return new RepodexError('STORE_UNAVAILABLE', `cannot connect to ${where}: the server asks for a password and no password given: set PGPASSWORD or ~/.pgpass (or put it in the URL)`, { selfContained: true, cause: error });
    }
    const code = (error as { code?: string }).code;
    if (code !== undefined && CONNECTION_CODES.has(code)) return unavailable(where, error);
    if (code === '53100') return new RepodexError('DISK_FULL', `the database server of ${where} has no space left on its disk (${errorMessage(error)})`, { cause: error });
    const fix = code === undefined ? undefined : SERVER_REFUSALS[code];
    return fix ? new RepodexError('STORE_UNAVAILABLE', `${where}: ${errorMessage(error)} (${fix})`, { selfContained: true, cause: error }) : error;
  };
  const run = async <Row>(client: pg.Pool | pg.PoolClient, text: string, params: readonly unknown[] | undefined, held: boolean): Promise<Row[]> => {
    try {
      // Data statements are prepared once per connection and reused by name: parsing and planning
      // them again on every request cost about as much as running them.
      const name = PREPARABLE.test(text) ? statementName(text) : undefined;
      return (await client.query({ text, values: params as unknown[] | undefined, ...(name ? { name } : {}) })).rows as Row[];
    } catch (error) {
      throw translate(error, held);
    }
  };
  return {
    query: (text, params) => run(pool, text, params, false),
    async connect(): Promise<HeldSession> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw translate(error, false);
      }
      // A held connection the server closes between statements (a restart while a sync holds its
      // lock) must not crash the process either: its next statement fails with STORE_LOST, and
      // releasing it closes it. The pool listens again once it is back.
      const onError = (): void => undefined;
      client.on('error', onError);
      return {
        query: (text, params) => run(client, text, params, true),
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
            throw translate(error, true);
          }
        },
        async copyOut(statement) {
          try {
            const parts: Buffer[] = [];
            for await (const part of client.query(copyTo(statement))) parts.push(part as Buffer);
            return Buffer.concat(parts);
          } catch (error) {
            throw translate(error, true);
          }
        },
        release: (broken) => {
          client.removeListener('error', onError);
          client.release(broken === true);
        },
      };
    },
    end: () => pool.end(),
  };
}
