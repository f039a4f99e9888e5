import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, runCli, runCliAsync, tempDir } from '../helpers.js';
import { startTeamServer } from '../team-server.js';
import { type OwnPostgres, ownPostgresMissing, startOwnPostgres } from './own-postgres.js';

const missing = ownPostgresMissing();
if (missing) console.warn(`M2: ${missing}`);

/** A repository of `count` small modules, committed (a team server serves git work trees). */
function corpus(count: number): string {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`src/module${i}.ts`] = `export function handler${i}(input: string): string {\n  return input.repeat(${i + 1});\n}\n`;
  const root = makeRepo(files);
  execFileSync('git', ['init', '-q'], { cwd: root });
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init', '--allow-empty'], { cwd: root });
  execFileSync('git', ['add', '-A'], { cwd: root });
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'files'], { cwd: root });
  return root;
}

/** Wait until `done` holds (checked every 20 ms), or fail after `ms`. */
async function until(done: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What a user must never see: a stack frame, or Node's report of an unhandled error. */
const STACK = /^\s+at |Unhandled 'error' event|node:events/m;

describe.skipIf(missing !== undefined)('M2: the PostgreSQL server restarted (or a connection cut) while a sync holds its connections', () => {
  let pg: OwnPostgres;
  beforeAll(async () => {
    pg = await startOwnPostgres();
  });
  afterAll(() => pg?.stop());

  /** The generation the database records for `root`. */
  const generationOf = (root: string): string => pg.psql(`SELECT generation FROM repos WHERE root = '${root}'`);

  /**
   * Start `repodex sync --force` on `root` held still just before it commits (its rows written in
   * an open transaction, its lock held on a connection of its own), run `meanwhile`, let it go on.
   */
  async function interruptedSync(root: string, meanwhile: () => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const pause = join(tempDir(), 'paused');
    const running = runCliAsync(['sync', '--force', '--root', root, '--store', pg.url], { env: { REPODEX_PAUSE_AT: 'before-commit', REPODEX_PAUSE_FILE: pause } });
    await until(() => existsSync(pause), 'the sync to reach its commit');
    meanwhile();
    rmSync(pause);
    return running;
  }

  it('M2: a restart mid-sync is one line and exit 1; nothing is committed, and the next sync recovers', async () => {
    const root = corpus(30);
    expect(runCli(['sync', '--root', root, '--store', pg.url]).code).toBe(0);
    const before = generationOf(root);
    for (let i = 0; i < 10; i++) appendFileSync(join(root, 'src', `module${i}.ts`), `export const edited${i} = ${i};\n`);

    const run = await interruptedSync(root, () => pg.restart());
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(STACK);
    expect(run.stderr).toMatch(/^repodex: lost the connection to postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(the server (was shut down or restarted|closed it)\) during the sync: nothing was committed; run `repodex sync` again\n$/);
    // The sync was indeed interrupted: the generation it was about to commit never was.
    expect(generationOf(root)).toBe(before);
    const status = runCli(['status', '--root', root, '--store', pg.url, '--json']);
    expect(status.json<{ state: string }>().state).toBe('stale');

    const again = runCli(['sync', '--root', root, '--store', pg.url]);
    expect(again.code, again.stderr).toBe(0);
    expect(Number(generationOf(root))).toBe(Number(before) + 1);
    expect(pg.psql(`SELECT count(*) - count(DISTINCT chunk_id) FROM chunks c JOIN repos r ON r.id = c.repo_id WHERE r.root = '${root}'`)).toBe('0');
    const found = runCli(['search', 'edited3', '--root', root, '--store', pg.url, '--json']);
    expect(found.json<{ results: { path: string }[] }>().results[0]?.path).toBe('src/module3.ts');
  });

  it("M2: a sync whose lock's connection alone was cut does not commit (another sync may hold the lock by then)", async () => {
    const root = corpus(12);
    expect(runCli(['sync', '--root', root, '--store', pg.url]).code).toBe(0);
    const before = generationOf(root);
    appendFileSync(join(root, 'src', 'module1.ts'), 'export const late = 1;\n');
    const run = await interruptedSync(root, () => {
      // The backend holding the advisory lock, and only it: the sync's own connection lives on.
      const killed = pg.psql(`SELECT pg_terminate_backend(l.backend_pid) FROM repo_locks l JOIN repos r ON r.id = l.repo_id WHERE r.root = '${root}' AND l.kind = 'writer'`);
      expect(killed).toBe('t');
    });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(STACK);
    expect(run.stderr).toMatch(/^repodex: lost the connection holding the sync's lock on postgres:\/\/\S+ during the sync: nothing was committed; run `repodex sync` again\n$/);
    expect(generationOf(root)).toBe(before);
    expect(runCli(['sync', '--root', root, '--store', pg.url]).code).toBe(0);
  });

  it('M2: a team server survives a restart under a running sync: that request fails in one line, the server reconnects and keeps serving', async () => {
    const root = corpus(20);
    // The server's sync runs in a worker thread of the same process: the first one pauses.
    const pause = join(tempDir(), 'paused');
    const server = await startTeamServer(['--store', pg.url, root], { env: { REPODEX_PAUSE_AT: 'before-commit', REPODEX_PAUSE_FILE: pause } });
    try {
      const repoId = (await server.request('/repos')).body.repos[0].repo_id as string;
      const running = server.request('/index/run', { body: { repo_id: repoId } });
      await until(() => existsSync(pause), "the server's sync to reach its commit");
      pg.restart();
      rmSync(pause);
      const failed = await running;
      expect(failed.status).toBe(503);
      expect(failed.body).toMatchObject({ ok: false, code: 'STORE_LOST' });
      expect(failed.body.error).toMatch(/^lost the connection to postgres:\/\/\S+ \(the server (was shut down or restarted|closed it)\) during the sync: nothing was committed; run `repodex sync` again$/);
      expect(generationOf(root)).toBe('0');

      // Still serving, on new connections: a search (which builds the index) and an explicit run.
      expect(server.child.exitCode).toBeNull();
      const search = await server.request('/search', { body: { repo_id: repoId, query: 'handler7' } });
      expect(search.status, JSON.stringify(search.body)).toBe(200);
      expect(search.body.results[0]).toMatchObject({ path: 'src/module7.ts' });
      expect((await server.request('/index/run', { body: { repo_id: repoId } })).status).toBe(200);
      expect(server.stderr()).not.toMatch(STACK);
    } finally {
      await server.stop();
    }
  });
});
