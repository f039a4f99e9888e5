import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/core/errors.js';
import { committedRepo, runCli } from '../helpers.js';
import { startTeamServer } from '../team-server.js';

// Every failure a user fixes is answered by the team server with a 4xx status and the failure body
// {ok:false, code, error, request_id}, the status taken from the one error table: an invalid
// environment variable of the server (ENV_INVALID) once fell through a status switch to 500, as
// did NOT_INITIALIZED, LOCK_DENIED, EMBEDDER_FAILED and STORE_INCOMPATIBLE.

describe('user errors over HTTP', () => {
  it('an invalid environment variable is 409 with the failure body on every route that meets it, and the CLI exits 1 with the same code', async () => {
    const root = committedRepo({ 'a.ts': 'export const alpha = 1;\n' });
    const server = await startTeamServer([root], { env: { REPODEX_RANKING: 'not json' } });
    try {
      const repoId = (await server.request('/repos')).body.repos[0].repo_id as string;
      const answers = [await server.request('/search', { body: { repo_id: repoId, query: 'alpha' } }), await server.request(`/index/status/${repoId}`), await server.request(`/outline?repo_id=${repoId}&path=a.ts`)];
      for (const answer of answers) {
        expect(answer.status).toBe(409);
        expect(answer.status).toBe(ERRORS.ENV_INVALID.http);
        expect(Object.keys(answer.body as object).sort()).toEqual(['code', 'error', 'ok', 'request_id']);
        expect(answer.body).toMatchObject({ ok: false, code: 'ENV_INVALID', error: expect.stringContaining('REPODEX_RANKING is not JSON') as string });
        expect(answer.body.request_id).toBe(answer.headers.get('x-request-id'));
      }
      // A repository whose engine could not be opened leaves nothing running: the server stops when asked.
      expect(await server.stop()).toBe(0);
    } finally {
      await server.stop();
    }
    const local = runCli(['search', 'alpha', '--json', '--root', root], { env: { REPODEX_RANKING: 'not json', REPODEX_DAEMON: '0' } });
    expect(local.code).toBe(1);
    expect(local.json()).toMatchObject({ ok: false, code: 'ENV_INVALID' });
  });
});
