import { appendFileSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, runCli, tempDir } from '../helpers.js';
import { type OwnPostgres, ownPostgresMissing, startOwnPostgres } from './own-postgres.js';

const missing = ownPostgresMissing();
if (missing) console.warn(`M3: ${missing}`);

/** A user's failure is one line on stderr: no stack frame, no driver warning. */
function expectOneLine(stderr: string): void {
  expect(stderr.split('\n').filter(Boolean), stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at |Warning|SECURITY/m);
}

describe.skipIf(missing !== undefined)('M3: a store URL without a password, to a server that asks for one', () => {
  let pg: OwnPostgres;
  let root: string;
  let home: string;
  beforeAll(async () => {
    pg = await startOwnPostgres();
    // alice must give a password (SCRAM); she owns a database of her own, with pgvector in it.
    pg.psql("CREATE ROLE alice LOGIN PASSWORD 'right-pw'");
    pg.psql('CREATE DATABASE alicedb OWNER alice');
    pg.psql('CREATE EXTENSION vector', 'alicedb');
    // bob and carol log in with the older methods, where the server, not the client, refuses a missing password.
    pg.psql("SET password_encryption = 'md5'; CREATE ROLE bob LOGIN PASSWORD 'b'");
    pg.psql("CREATE ROLE carol LOGIN PASSWORD 'c'");
    const hba = join(pg.dataDir, 'pg_hba.conf');
    writeFileSync(hba, `host all alice 127.0.0.1/32 scram-sha-256\nhost all bob 127.0.0.1/32 md5\nhost all carol 127.0.0.1/32 password\n${readFileSync(hba, 'utf8')}`);
    pg.psql('SELECT pg_reload_conf()');
    root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'src/router.ts': 'export function route(path: string): string {\n  return path;\n}\n' });
    home = tempDir();
  });
  afterAll(() => pg?.stop());

  const url = (password?: string, database = 'alicedb'): string => `postgres://alice${password === undefined ? '' : `:${password}`}@127.0.0.1:${pg.port}/${database}`;
  // No PGPASSWORD from the environment the tests run in, and a home of the test's own (its .pgpass).
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ PGPASSWORD: '', HOME: home, PGPASSFILE: '', ...extra });

  it('M3: exits 1 at once with one line that says how to give the password (it used to hang for a minute)', () => {
    for (const command of ['status', 'search']) {
      // A hang would be killed at the timeout: exit code null, not 1.
      const run = runCli([command, ...(command === 'search' ? ['route'] : []), '--root', root, '--store', url()], { env: env(), timeoutMs: 30_000 });
      expect(run.code, run.stderr).toBe(1);
      expectOneLine(run.stderr);
      expect(run.stderr).toBe(`repodex: cannot connect to ${url()}: the server asks for a password and no password given: set PGPASSWORD or ~/.pgpass (or put it in the URL)\n`);
    }
  });

  it('M3: the same line for md5 and plain-password logins', () => {
    for (const user of ['bob', 'carol']) {
      const run = runCli(['status', '--root', root, '--store', `postgres://${user}@127.0.0.1:${pg.port}/postgres`], { env: env(), timeoutMs: 30_000 });
      expect(run.code, run.stderr).toBe(1);
      expectOneLine(run.stderr);
      expect(run.stderr).toContain('the server asks for a password and no password given: set PGPASSWORD or ~/.pgpass');
    }
  });

  it('M3: a wrong password is one line too, with the password masked', () => {
    const run = runCli(['status', '--root', root, '--store', url('wrong-pw')], { env: env(), timeoutMs: 30_000 });
    expect(run.code).toBe(1);
    expectOneLine(run.stderr);
    expect(run.stderr).toContain('alice:***@');
    expect(run.stderr).toContain('check the user and password in the URL');
  });

  it('M3: the password from PGPASSWORD or from ~/.pgpass works, without a driver warning on the terminal', () => {
    const viaEnv = runCli(['sync', '--root', root, '--store', url()], { env: env({ PGPASSWORD: 'right-pw' }) });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const pgpass = join(home, '.pgpass');
    writeFileSync(pgpass, `# host:port:database:user:password\n127.0.0.1:${pg.port}:otherdb:alice:nope\n`);
    appendFileSync(pgpass, `127.0.0.1:*:alicedb:alice:right-pw\n`);
    chmodSync(pgpass, 0o600);
    const viaFile = runCli(['search', 'route', '--root', root, '--store', url()], { env: env() });
    expect(viaFile.code, viaFile.stderr).toBe(0);
    expect(viaFile.stderr).toBe('');
    expect(viaFile.stdout).toContain('src/router.ts');
    // A password file others may read is ignored, as libpq ignores it.
    chmodSync(pgpass, 0o644);
    const ignored = runCli(['status', '--root', root, '--store', url()], { env: env(), timeoutMs: 30_000 });
    expect(ignored.code).toBe(1);
    expect(ignored.stderr).toContain('no password given');
    chmodSync(pgpass, 0o600);
  });

  it('M3: a user who may not create the tables gets one line naming the privilege, not an internal error', () => {
    const run = runCli(['status', '--root', root, '--store', url('right-pw', 'postgres')], { env: env(), timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(1);
    expectOneLine(run.stderr);
    expect(run.stderr).toMatch(/permission denied .*connect as a user who may create and change tables in that database/);
  });
});
