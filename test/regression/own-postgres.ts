import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PROJECT_ROOT, tempDir } from '../helpers.js';

/** The script that starts throwaway PostgreSQL servers (see .ci/run): beside the checkout, in ../shared/pg. */
const CLUSTER_SCRIPT = join(PROJECT_ROOT, '..', 'shared', 'pg', 'cluster.sh');

/** The newest installed PostgreSQL's programs, or undefined. */
function serverBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(a) - Number(b)).pop();
  const bin = version === undefined ? undefined : join(root, version, 'bin');
  return bin !== undefined && existsSync(join(bin, 'pg_ctl')) ? bin : undefined;
}

/**
 * Why a test cannot have a PostgreSQL server of its own here (one it may restart, reconfigure and
 * fill without disturbing the servers other tests share), or undefined when it can: it needs root
 * (the server runs as user postgres), the cluster script and an installed server.
 */
export function ownPostgresMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'SKIPPED: a PostgreSQL server of its own needs root (it runs as user postgres; bash .ci/run runs as root)';
  if (!existsSync(CLUSTER_SCRIPT)) return `SKIPPED: a PostgreSQL server of its own needs ${CLUSTER_SCRIPT}`;
  if (serverBin() === undefined) return 'SKIPPED: PostgreSQL is not installed (../shared/pg/install.sh installs it)';
  return undefined;
}

/** A PostgreSQL server started for one test file, on a free loopback port. */
export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trusted, no password). */
  readonly url: string;
  readonly port: number;
  /** Its data folder (`DIR/node0`). */
  readonly dataDir: string;
  /** `pg_ctl restart -m fast`: every connection is cut (57P01), and the server is back when this returns. */
  restart(): void;
  /** Run SQL as postgres (in `database`, default postgres); the rows as psql -At prints them. */
  psql(sql: string, database?: string): string;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Start a server of its own (see `ownPostgresMissing` for when it can). */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = serverBin()!;
  const port = await freePort();
  const dir = tempDir('repodex-own-pg-');
  execFileSync('bash', [CLUSTER_SCRIPT, 'start', dir, '--port', String(port)], { stdio: 'pipe' });
  const dataDir = join(dir, 'node0');
  const asPostgres = (program: string, args: readonly string[]): string => execFileSync('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    restart: () => void asPostgres('pg_ctl', ['-D', dataDir, '-l', join(dir, 'node0.log'), '-m', 'fast', '-w', '-t', '60', 'restart']),
    psql: (sql, database = 'postgres') => asPostgres('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-qAt', '-c', sql]).trim(),
    stop: () => void execFileSync('bash', [CLUSTER_SCRIPT, 'stop', dir], { stdio: 'pipe' }),
  };
}
