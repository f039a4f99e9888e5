import { describe, expect, it } from 'vitest';
import { testBackends } from '../conformance/backends.js';
import { makeRepo, runCli } from '../helpers.js';

const postgres = testBackends({ ...process.env, BACKENDS: 'postgres' })[0]!;

describe('M9: --store messages quote what was typed and say what is wrong with it', () => {
  const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export const a = 1;\n' });

  /** `status --store URL` fails in one line, exit 1: the line. */
  function refused(store: string, env: NodeJS.ProcessEnv = {}): string {
    const run = runCli(['status', '--root', root, '--store', store], { env, timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr.split('\n').filter(Boolean), run.stderr).toHaveLength(1);
    expect(run.stderr).not.toMatch(/^\s+at |SECURITY WARNING|Warning/m);
    return run.stderr.trim();
  }

  it('M9: a port out of range is named, with the URL as typed (its password masked)', () => {
    expect(refused('postgres://postgres@127.0.0.1:99999/x')).toBe('repodex: --store: the port in "postgres://postgres@127.0.0.1:99999/x" must be a number from 1 to 65535, not "99999"');
    expect(refused('postgres://alice:s3cret@db.example:0/x')).toBe('repodex: --store: the port in "postgres://alice:***@db.example:0/x" must be a number from 1 to 65535, not "0"');
    expect(refused('postgres://db.example:54x2/x')).toContain('not "54x2"');
  });

  it('M9: what is not a URL, or not a PostgreSQL one, is quoted, never a placeholder', () => {
    expect(refused('postgres//broken')).toBe('repodex: --store: "postgres//broken" is not a URL: write it as postgres://user@host:5432/database');
    expect(refused('mysql://root@db/x')).toBe('repodex: --store: "mysql://root@db/x" is neither fs nor a PostgreSQL URL such as postgres://user@localhost:5432/repodex');
    expect(refused('postgres:///db')).toBe('repodex: --store: "postgres:///db" names no host: write it as postgres://user@host:5432/database');
    expect(refused('postgres://h/x?sslmode=sometimes')).toContain('sslmode in "postgres://h/x?sslmode=sometimes" must be one of disable, allow, prefer, require, verify-ca, verify-full, no-verify');
    expect(refused('postgres://h/x?sslmode=verify-ca')).toContain('sslmode=verify-ca in "postgres://h/x?sslmode=verify-ca" needs sslrootcert=FILE');
    // The same checks for the variable, with its name.
    const viaEnv = runCli(['status', '--root', root], { env: { REPODEX_STORE: 'postgres//broken' } });
    expect(viaEnv.code).toBe(1);
    expect(viaEnv.stderr).toBe('repodex: REPODEX_STORE: "postgres//broken" is not a URL: write it as postgres://user@host:5432/database\n');
  });

  it.skipIf(postgres.missing !== undefined)('M9: sslmode=require prints no driver warning: one line with the real error (this server has no TLS)', () => {
    const url = postgres.spec.kind === 'postgres' ? postgres.spec.url : '';
    const line = refused(`${url}${url.includes('?') ? '&' : '?'}sslmode=require`);
    expect(line).toMatch(/^repodex: cannot connect to postgres:\/\/\S+sslmode=require: The server does not support SSL connections; /);
  });
});
