import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { get as httpGet, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_NICE } from '../../src/engine/give-way.js';
import { testBackends } from '../conformance/backends.js';
import { committedRepo, git, runCli, runCliAsync, tempDir, threadNices } from '../helpers.js';
import { type Json, type TeamServer, startTeamServer, withToken } from '../team-server.js';

// The team server (`repodex serve --http`) as a real process on loopback, on the embedded store
// and on PostgreSQL: every endpoint, every way a request can be wrong, the safety of the other
// front ends, MCP over HTTP with the SDK's own client, and seed 001's exit criteria over HTTP.

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
if (!HAS_GIT) console.warn('SKIPPED: git is not installed, so the team server tests cannot run (install git)');

/** A committed git repository of `files`. */
const FAKE_AWS_SECRET = ['wJalrXUtnFEMI', 'K7MDENG', 'bPxRfiCYEXAMPLEKEY'].join('/');

const BASE_FILES: Record<string, string> = {
  'src/config.ts': 'export function parseConfig(text: string): unknown {\n  return JSON.parse(text);\n}\n',
  'src/router.ts': 'export class Router {\n  match(path: string): boolean {\n    return path.startsWith("/");\n  }\n}\n',
  'src/retry.ts': 'export async function retryWithBackoff(attempts: number): Promise<void> {\n  for (let i = 0; i < attempts; i++) await new Promise((r) => setTimeout(r, 2 ** i));\n}\n',
  'README.md': '# service\n\nParses the config and routes requests.\n',
};

/** GET with a Host header of our choosing (fetch sends the URL's). */
function rawGet(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}

/** POST `body` in chunks of 512 bytes with no Content-Length (chunked transfer encoding). */
function chunkedPost(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    for (let at = 0; at < body.length; at += 512) request.write(body.slice(at, at + 512));
    request.end();
  });
}

/** Wait until `check` holds, asking again every 100 ms, for at most `ms`. */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const backends = testBackends();

/** An MCP client's transport options that send the server's token, as an agent configured with it does. */
/** A committed repository of `count` small modules, `src/<word>N.ts` each declaring `<word>NumberN`: big enough that its first build takes a while. */
function numberedRepo(word: string, count: number): string {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`src/${word}${i}.ts`] = `export function ${word}Number${i}(value: number): number {\n  return value * ${i} + ${i % 7};\n}\n`;
  return committedRepo(files);
}

describe.skipIf(!HAS_GIT).each(backends)('team server on $name', (backend) => {
  const storeArgs = backend.spec.kind === 'postgres' ? ['--store', backend.spec.url] : [];
  let server: TeamServer;
  let root: string;
  let repoId: string;
  const registered: string[] = [];

  beforeAll(async () => {
    if (backend.missing) return;
    root = committedRepo({ ...BASE_FILES, '.env': `AWS_SECRET_ACCESS_KEY=${FAKE_AWS_SECRET}\n` });
    server = await startTeamServer([...storeArgs, '--debounce-ms', '200']);
    const added = await server.request('/repos', { body: { root } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    repoId = added.body.repo_id;
    registered.push(repoId);
  });

  afterAll(async () => {
    if (backend.missing || !server) return;
    for (const id of registered) await server.request(`/repos/${id}`, { method: 'DELETE' });
    expect(await server.stop()).toBe(0);
  });

  it.skipIf(backend.missing !== undefined)('registers repositories by root, refusing roots it cannot serve', async () => {
    const again = await server.request('/repos', { body: { root } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ repo_id: repoId, created: false });
    const list = await server.request('/repos');
    const mine = (list.body.repos as Json[]).find((repo) => repo.repo_id === repoId);
    expect(mine).toMatchObject({ root, watch: false, problem: null });
    const notGit = tempDir();
    for (const [body, fragment] of [
      [{ root: notGit }, 'neither a git work tree'],
      [{ root: join(notGit, 'missing') }, 'does not exist'],
      [{ root: 'relative/path' }, 'absolute path'],
      [{ root: join(root, 'src', 'config.ts') }, 'not a directory'],
      [{ root: 5 }, 'root: expected string, got number'],
      [{ root, extra: 1 }, 'unknown field(s): extra'],
      [{}, 'root: required'],
    ] as const) {
      const refused = await server.request('/repos', { body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
      expect(refused.body.error).toContain(fragment);
      expect(refused.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it.skipIf(backend.missing !== undefined)('answers the first search by indexing, then answers like the CLI', async () => {
    const first = await server.request('/search', { body: { repo_id: repoId, query: 'parse config' } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.synced.chunks_created).toBeGreaterThan(0);
    expect(first.body.results[0]).toMatchObject({ path: 'src/config.ts', symbol: 'function parseConfig' });
    expect(first.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // Unchanged: a second run creates nothing.
    const rerun = await server.request('/index/run', { body: { repo_id: repoId } });
    expect(rerun.status).toBe(200);
    expect(rerun.body).toMatchObject({ chunks_created: 0, chunks_deleted: 0 });
    // The same object the CLI prints with --json (modulo timing fields).
    const viaHttp = await server.request(`/outline?repo_id=${repoId}&path=src/router.ts`);
    const viaCli = runCli(['outline', 'src/router.ts', '--json', '--root', root, ...storeArgs]);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(viaHttp.body).toEqual(viaCli.json());
    const hit = first.body.results[0];
    const fetched = await server.request('/fetch', { body: { repo_id: repoId, ids: [hit.chunk_id] } });
    expect(fetched.status).toBe(200);
    expect(fetched.body.chunks[0].lines[0]).toContain('parseConfig');
    const opened = await server.request(`/open?repo_id=${repoId}&path=src/router.ts&start=2&end=3`);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ path: 'src/router.ts', start_line: 2, end_line: 3 });
    const files = await server.request(`/files?repo_id=${repoId}&glob=src/**`);
    expect((files.body.files as Json[]).map((file) => file.path).sort()).toEqual(['src/config.ts', 'src/retry.ts', 'src/router.ts']);
    const bundle = await server.request('/bundle', { body: { repo_id: repoId, prompt: 'add retries with backoff to the router', max_files: 2 } });
    expect(bundle.status).toBe(200);
    expect(bundle.body.excerpts.length).toBeGreaterThan(0);
    const status = await server.request(`/status?repo_id=${repoId}`);
    expect(status.body).toMatchObject({ root, state: 'ready' });
    // A glob no file matches is said, not answered with silence.
    const noFile = await server.request('/search', { body: { repo_id: repoId, query: 'parse', glob: '[' } });
    expect(noFile.status).toBe(200);
    expect(noFile.body.results).toEqual([]);
    expect(noFile.body.warnings.join(' ')).toContain('no indexed file matches glob "["');
  });

  it.skipIf(backend.missing !== undefined)('reports index status with seed 001 fields, and health', async () => {
    await server.request('/index/run', { body: { repo_id: repoId } });
    const status = await server.request(`/index/status/${repoId}`);
    expect(status.status).toBe(200);
    const head = git(root, 'rev-parse', 'HEAD');
    expect(status.body).toMatchObject({
      repo_id: repoId,
      index_status: 'ready',
      last_indexed_commit: head,
      current_head: head,
      is_stale: false,
      files_indexed: 4,
      watcher_active: false,
    });
    // Vectors may still be made in the background: the lexical index is ready meanwhile.
    if (status.body.progress !== null) expect(['train', 'embed', 'graph']).toContain(status.body.progress.phase);
    expect(status.body.chunk_count).toBeGreaterThanOrEqual(4);
    expect(typeof status.body.chunks_with_embeddings).toBe('number');
    // Four files are too few for the builtin embedder to learn from: the status says so rather than showing 0 alone.
    const settled = await until('the vectors run to end', 30_000, async () => {
      const now = (await server.request(`/index/status/${repoId}`)).body;
      return now.progress === null ? now : undefined;
    });
    if (settled.chunks_with_embeddings < settled.chunk_count) expect(settled.vectors_note).toMatch(/\w/);
    expect(Date.parse(status.body.last_indexed_at)).not.toBeNaN();
    const health = await server.request('/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ ok: true, store: { kind: backend.spec.kind, reachable: true } });
    expect(health.body.repos.total).toBeGreaterThanOrEqual(1);
  });

  it.skipIf(backend.missing !== undefined)('refuses bad requests with the field named, unknown repositories with 404', async () => {
    const cases: [string, { body?: unknown; raw?: string; method?: string; headers?: Record<string, string> }, number, string][] = [
      ['/search', { raw: '{"repo_id": ' }, 400, 'not valid JSON'],
      ['/search', { raw: '[1,2]' }, 400, 'must be a JSON object'],
      ['/search', { body: { repo_id: repoId, query: 42 } }, 400, 'query: expected string'],
      ['/search', { body: { repo_id: repoId, query: 'x', top_k: 'ten' } }, 400, 'top_k'],
      ['/search', { body: { repo_id: repoId, query: 'x', mode: 'psychic' } }, 400, 'mode'],
      ['/search', { body: { repo_id: repoId } }, 400, 'query: required'],
      ['/fetch', { body: { repo_id: repoId, ids: [-1] } }, 400, 'ids'],
      [`/open?repo_id=${repoId}&path=src/router.ts&start=zero`, {}, 400, 'start'],
      ['/search', { body: { repo_id: 'no-such-repo', query: 'x' } }, 404, 'no repository'],
      ['/index/status/no-such-repo', {}, 404, 'no repository'],
      ['/repos/no-such-repo', { method: 'DELETE' }, 404, 'no repository'],
      ['/repo/watch', { body: { repo_id: '00000000-0000-4000-8000-000000000000' } }, 404, 'no repository'],
      ['/search', { raw: '{}', headers: { 'content-type': 'text/plain' } }, 415, 'Content-Type: application/json'],
      ['/no/such/route', {}, 404, 'no route'],
    ];
    for (const [path, init, status, fragment] of cases) {
      const answer = await server.request(path, init);
      expect(answer.status, `${path} ${JSON.stringify(init)}: ${JSON.stringify(answer.body)}`).toBe(status);
      expect(answer.body.ok).toBe(false);
      expect(answer.body.error).toContain(fragment);
    }
  });

  it.skipIf(backend.missing !== undefined)('keeps the sandbox and the secret rules of every other front end', async () => {
    const secret = await server.request(`/open?repo_id=${repoId}&path=.env`);
    expect(secret.status).toBe(403);
    // A failure like every other, with what the refusal says kept.
    expect(secret.body).toMatchObject({ ok: false, code: 'BLOCKED', request_id: secret.headers.get('x-request-id'), path: '.env', blocked: true });
    expect(secret.body.error).toContain('denylist');
    expect(secret.body.hint).toBeTruthy();
    expect(JSON.stringify(secret.body)).not.toContain(FAKE_AWS_SECRET);
    for (const path of ['../../../etc/passwd', '/etc/passwd', 'src/../../outside', '%2e%2e/etc/passwd']) {
      const escaped = await server.request(`/open?repo_id=${repoId}&path=${encodeURIComponent(path)}`);
      expect([403, 404], `${path}: ${JSON.stringify(escaped.body)}`).toContain(escaped.status);
      expect(escaped.body.error).toBeTruthy();
      expect(JSON.stringify(escaped.body)).not.toContain('root:x:0:0');
    }
    const outline = await server.request(`/outline?repo_id=${repoId}&path=../../etc/passwd`);
    expect(outline.body.blocked).toBe(true);
    const search = await server.request('/search', { body: { repo_id: repoId, query: 'AWS_SECRET_ACCESS_KEY' } });
    expect(JSON.stringify(search.body)).not.toContain(FAKE_AWS_SECRET);
    // Every request is in the audit log, with its request id, the client and the outcome.
    const audit = await server.request(`/audit?repo_id=${repoId}&limit=200`);
    const entry = (audit.body.entries as Json[]).find((line) => line.request_id === secret.headers.get('x-request-id'));
    expect(entry).toMatchObject({ frontend: 'http', client: '127.0.0.1', outcome: 'BLOCKED', blocked: true, tool: 'GET /open' });
    expect(server.stderr()).toContain(`"request_id":"${secret.headers.get('x-request-id')}"`);
  });

  it.skipIf(backend.missing !== undefined)('re-indexes a commit on /hooks/push, only its files, and drops a deleted file', async () => {
    const repo = committedRepo({ 'a.ts': 'export const alpha = 1;\n', 'b.ts': 'export const bravo = 2;\n', 'c.ts': 'export function charlieHandler() {}\n' });
    const added = await server.request('/repos', { body: { root: repo } });
    registered.push(added.body.repo_id);
    const first = await server.request('/hooks/push', { body: { root: repo } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.files_added).toBe(3);
    writeFileSync(join(repo, 'a.ts'), 'export const alpha = 1;\nexport const alphaTwo = 11;\n');
    rmSync(join(repo, 'c.ts'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'change a, delete c');
    const pushed = await server.request('/hooks/push', { body: { repo_id: added.body.repo_id } });
    expect(pushed.status).toBe(200);
    expect(pushed.body).toMatchObject({ files_updated: 1, files_removed: 1, files_added: 0, files_unchanged: 1 });
    const gone = await server.request('/search', { body: { repo_id: added.body.repo_id, query: 'charlieHandler' } });
    expect((gone.body.results as Json[]).filter((hit) => hit.path === 'c.ts')).toEqual([]);
    const status = await server.request(`/index/status/${added.body.repo_id}`);
    expect(status.body).toMatchObject({ files_indexed: 2, last_indexed_commit: git(repo, 'rev-parse', 'HEAD'), is_stale: false });
    // By a root inside the repository, as a hook run from a subfolder would send it.
    const none = await server.request('/hooks/push', { body: { root: join(repo, 'a.ts') } });
    expect(none.body.chunks_created).toBe(0);
    const unknown = await server.request('/hooks/push', { body: { root: tempDir() } });
    expect(unknown.status).toBe(404);
    const both = await server.request('/hooks/push', { body: {} });
    expect(both.status).toBe(400);
  });

  it.skipIf(backend.missing !== undefined)('runs concurrent index runs of one repository one at a time, with no duplicate chunks', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`m${i}.ts`] = `export function module${i}Handler(value: number): number {\n  return value + ${i};\n}\n`;
    const repo = committedRepo(files);
    const added = await server.request('/repos', { body: { root: repo } });
    registered.push(added.body.repo_id);
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => server.request('/index/run', { body: { repo_id: added.body.repo_id, force: i % 2 === 0 } })));
    for (const run of runs) expect(run.status, JSON.stringify(run.body)).toBe(200);
    const status = await server.request(`/index/status/${added.body.repo_id}`);
    expect(status.body).toMatchObject({ files_indexed: 60, chunk_count: 60 });
    const hits = await server.request('/search', { body: { repo_id: added.body.repo_id, query: 'module7Handler' } });
    const ids = (hits.body.results as Json[]).map((hit) => hit.chunk_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect((hits.body.results as Json[]).filter((hit) => hit.path === 'm7.ts')).toHaveLength(1);
  });

  it.skipIf(backend.missing !== undefined)('answers the searches that come while the first one builds the index, not only the first', async () => {
    const repo = numberedRepo('piece', 800);
    const id = (await server.request('/repos', { body: { root: repo } })).body.repo_id as string;
    registered.push(id);
    const first = server.request('/search', { body: { repo_id: id, query: 'pieceNumber1' } });
    // The later searches come while the first one's build holds the index lock (a page searching as you type).
    await until('the first build to start', 30_000, async () => ((await server.request(`/index/status/${id}`)).body.index_status === 'indexing' ? true : undefined));
    const later = await Promise.all(['pieceNumber2', 'pieceNumber3', 'value'].map((query) => server.request('/search', { body: { repo_id: id, query } })));
    for (const answer of [await first, ...later]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.results.length).toBeGreaterThan(0);
      expect(answer.body.freshness.dirty).toBe(false);
    }
    expect(later[0]!.body.results[0]).toMatchObject({ path: 'src/piece2.ts' });
    const status = await server.request(`/index/status/${id}`);
    expect(status.body).toMatchObject({ files_indexed: 800, chunk_count: 800 });
  });

  it.skipIf(backend.missing !== undefined)("answers one repository's searches while another rebuilds its index", async () => {
    const big = numberedRepo('part', 1500);
    const bigId = (await server.request('/repos', { body: { root: big } })).body.repo_id as string;
    registered.push(bigId);
    await server.request('/index/run', { body: { repo_id: repoId } });
    let rebuilt = false;
    const rebuild = server.request('/index/run', { body: { repo_id: bigId, force: true } }).then((answer) => {
      rebuilt = true;
      return answer;
    });
    await until('the rebuild to start', 30_000, async () => ((await server.request(`/index/status/${bigId}`)).body.index_status === 'indexing' ? true : undefined));
    // Searches of the other repository are answered while the rebuild runs (on the shared worker thread).
    let answeredDuring = 0;
    for (let i = 0; i < 5; i++) {
      const answer = await server.request('/search', { body: { repo_id: repoId, query: 'router match' } });
      expect(answer.status).toBe(200);
      if (!rebuilt) answeredDuring++;
    }
    expect(answeredDuring).toBeGreaterThan(0);
    const done = await rebuild;
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ mode: 'full', files_scanned: 1500 });
  });

  it.skipIf(backend.missing !== undefined)('watches a repository: stale at once, an edit searchable soon after, kept across restarts', async () => {
    const repo = committedRepo({ 'w.ts': 'export const watched = 1;\n' });
    const added = await server.request('/repos', { body: { root: repo } });
    const id = added.body.repo_id;
    registered.push(id);
    const watching = await server.request('/repo/watch', { body: { repo_id: id } });
    expect(watching.status, JSON.stringify(watching.body)).toBe(200);
    expect(watching.body).toMatchObject({ watcher_active: true, index_status: 'ready' });
    writeFileSync(join(repo, 'w.ts'), 'export const watched = 1;\nexport function zebraStripeRenderer() {}\n');
    const editedAt = Date.now();
    const found = await until('the edit to be searchable', 15_000, async () => {
      const answer = await server.request('/search', { body: { repo_id: id, query: 'zebraStripeRenderer' } });
      return (answer.body.results as Json[]).some((hit) => hit.path === 'w.ts') ? answer : undefined;
    });
    expect(found.body.synced).toBeUndefined(); // the watcher indexed it, not the search
    console.log(`team server on ${backend.name}: an edit was searchable ${Date.now() - editedAt} ms after it was written`);
    const list = await server.request('/repos');
    expect((list.body.repos as Json[]).find((repo) => repo.repo_id === id).watch).toBe(true);
    const stopped = await server.request('/repo/unwatch', { body: { repo_id: id } });
    expect(stopped.body.watcher_active).toBe(false);
  });

  it.skipIf(backend.missing !== undefined)('serves the eight repo.* tools over MCP Streamable HTTP, the repository named by the session or by each call', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?repo_id=${repoId}`), withToken(server)));
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name).sort()).toEqual(
        ['repo.audit_log', 'repo.build_context_bundle', 'repo.list_files', 'repo.open_file', 'repo.outline', 'repo.refresh_index', 'repo.search', 'repo.status'].sort(),
      );
      const found = await client.callTool({ name: 'repo.search', arguments: { query: 'Router match' } });
      const envelope = found.structuredContent as Json;
      expect(envelope.ok).toBe(true);
      expect(envelope.result.results[0].path).toBe('src/router.ts');
      const blocked = await client.callTool({ name: 'repo.open_file', arguments: { path: '.env' } });
      expect((blocked.structuredContent as Json).blocked).toBe(true);
      expect(JSON.stringify(blocked)).not.toContain(FAKE_AWS_SECRET);
    } finally {
      await client.close();
    }
    // Without a repository in the URL (and several registered), each call names one in `repo`.
    const other = committedRepo({ 'x.ts': 'export function xylophoneTuner() {}\n' });
    const otherId = (await server.request('/repos', { body: { root: other } })).body.repo_id as string;
    registered.push(otherId);
    const many = new Client({ name: 'test', version: '1.0.0' });
    await many.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), withToken(server)));
    try {
      const listed = await many.listTools();
      const search = listed.tools.find((tool) => tool.name === 'repo.search')!;
      expect(search.inputSchema.required).toContain('repo');
      const inOther = (await many.callTool({ name: 'repo.search', arguments: { repo: otherId, query: 'xylophone tuner' } })).structuredContent as Json;
      expect(inOther.ok, JSON.stringify(inOther)).toBe(true);
      expect(inOther.result.results[0].path).toBe('x.ts');
      const inFirst = (await many.callTool({ name: 'repo.outline', arguments: { repo: repoId, path: 'src/router.ts' } })).structuredContent as Json;
      expect(inFirst.result.symbols.map((symbol: Json) => symbol.name)).toContain('Router');
      const missing = (await many.callTool({ name: 'repo.search', arguments: { query: 'x' } })).structuredContent as Json;
      expect(missing).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
      expect(missing.error.message).toContain('repo: required');
      const unknown = (await many.callTool({ name: 'repo.search', arguments: { repo: 'no-such-repo', query: 'x' } })).structuredContent as Json;
      expect(unknown).toMatchObject({ ok: false, error: { code: 'REPO_UNKNOWN' } });
    } finally {
      await many.close();
    }
    const unknownSession = new Client({ name: 'test', version: '1.0.0' });
    await expect(unknownSession.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?repo_id=nope`), withToken(server)))).rejects.toThrow();
    // MCP calls are audited with the client's address, like every other request.
    const audit = await server.request(`/audit?repo_id=${otherId}&limit=50`);
    expect((audit.body.entries as Json[]).some((entry) => entry.frontend === 'mcp' && entry.tool === 'repo.search' && entry.client === '127.0.0.1')).toBe(true);
  });

  it.skipIf(backend.missing !== undefined)('describes itself in /openapi.json from the same schemas', async () => {
    const doc = await server.request('/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    for (const path of ['/repos', '/repos/{repo_id}', '/index/run', '/index/status/{repo_id}', '/search', '/fetch', '/outline', '/open', '/bundle', '/files', '/repo/watch', '/repo/unwatch', '/hooks/push', '/health', '/mcp']) {
      expect(doc.body.paths[path], path).toBeDefined();
    }
    const search = doc.body.paths['/search'].post;
    expect(search.requestBody.content['application/json'].schema.required).toEqual(['repo_id', 'query']);
    expect(search.responses['200'].content['application/json'].schema.properties.results).toBeDefined();
  });

  it.skipIf(backend.missing !== undefined)('drives the server from the CLI: repo add/list/watch/remove, search and sync with --repo', async () => {
    const env = { ...process.env, REPODEX_SERVER: server.url, REPODEX_TOKEN: server.token, NODE_EXTRA_CA_CERTS: '' };
    const repo = committedRepo({ 'cli.ts': 'export function remoteCommandRunner() {}\n' });
    const add = await runCliAsync(['repo', 'add', repo, '--name', `cli-${backend.name}`, '--json'], { env });
    expect(add.code, add.stderr).toBe(0);
    const id = JSON.parse(add.stdout).repo_id as string;
    registered.push(id);
    const list = await runCliAsync(['repo', 'list'], { env });
    expect(list.stdout).toContain(`cli-${backend.name}`);
    const search = await runCliAsync(['search', 'remoteCommandRunner', '--repo', `cli-${backend.name}`, '--json'], { env });
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout).results[0].path).toBe('cli.ts');
    const sync = await runCliAsync(['sync', '--repo', id, '--force', '--json'], { env });
    expect(JSON.parse(sync.stdout).mode).toBe('full');
    const blocked = await runCliAsync(['open', '.env', '--repo', repoId], { env });
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('denylist');
    // A refused read prints what the local command prints: the refusal, not the server's failure fields.
    const remoteJson = await runCliAsync(['open', '.env', '--repo', repoId, '--json'], { env });
    const localJson = runCli(['open', '.env', '--json', '--root', root, ...storeArgs]);
    expect(remoteJson.code).toBe(1);
    expect(JSON.parse(remoteJson.stdout)).toEqual(localJson.json());
    const goneRemote = await runCliAsync(['fetch', '4294967295', '--repo', repoId, '--json'], { env });
    expect(goneRemote.code).toBe(1);
    expect(JSON.parse(goneRemote.stdout).chunks).toEqual((runCli(['fetch', '4294967295', '--json', '--root', root, ...storeArgs]).json() as Json).chunks);
    expect(Object.keys(JSON.parse(goneRemote.stdout))).not.toContain('request_id');
    const remove = await runCliAsync(['repo', 'remove', id], { env });
    expect(remove.code, remove.stderr).toBe(0);
    expect(remove.stdout).toContain('its index stays');
    const gone = await runCliAsync(['search', 'x', '--repo', id], { env });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('no repository');
    const down = await runCliAsync(['repo', 'list'], { env: { ...env, REPODEX_SERVER: 'http://127.0.0.1:9' } });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('no repodex server answers at http://127.0.0.1:9');
  });
});

describe.skipIf(!HAS_GIT)('team server at the edge', () => {
  it('refuses to listen beyond loopback without a token', () => {
    const run = runCli(['serve', '--http', '--host', '0.0.0.0', '--port', '0', '--data-dir', tempDir()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--token-file');
  });

  it('answers 401 without the right token, and works with it', async () => {
    const tokenFile = join(tempDir(), 'token');
    const token = 'a3f1c9e27b5d4e8f9a0b1c2d3e4f5a6b';
    writeFileSync(tokenFile, `${token}\n`);
    const root = committedRepo(BASE_FILES);
    const server = await startTeamServer(['--token-file', tokenFile, root], { token });
    try {
      const ok = await server.request('/repos');
      expect(ok.status).toBe(200);
      const none = await fetch(`${server.url}/repos`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toContain('Bearer');
      expect(((await none.json()) as Json).error).toContain('bearer token');
      const wrong = await fetch(`${server.url}/repos`, { headers: { authorization: 'Bearer not-the-token-at-all-0000' } });
      expect(wrong.status).toBe(401);
      const mcp = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(mcp.status).toBe(401);
      // The page itself holds no data: it loads, and asks for the token.
      const page = await fetch(`${server.url}/`);
      expect(page.status).toBe(200);
      const viaCli = await runCliAsync(['repo', 'list', '--token-file', tokenFile], { env: { ...process.env, REPODEX_SERVER: server.url, NODE_EXTRA_CA_CERTS: '' } });
      expect(viaCli.code, viaCli.stderr).toBe(0);
    } finally {
      await server.stop();
    }
    const short = join(tempDir(), 'short');
    writeFileSync(short, 'abc\n');
    const refused = runCli(['serve', '--http', '--port', '0', '--token-file', short, '--data-dir', tempDir()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('at least 16');
  });

  it('limits body size, request rate and foreign Host headers', async () => {
    const root = committedRepo(BASE_FILES);
    const server = await startTeamServer(['--max-body-bytes', '2048', '--rate-limit', '60', root]);
    try {
      const repoId = (await server.request('/repos')).body.repos[0].repo_id;
      const big = await server.request('/search', { body: { repo_id: repoId, query: 'x'.repeat(4000) } });
      expect(big.status).toBe(413);
      expect(big.body.code).toBe('TOO_LARGE');
      // Without a declared length the body is counted as it arrives.
      const auth = { authorization: `Bearer ${server.token}` };
      const chunkedBig = await chunkedPost(`${server.url}/search`, JSON.stringify({ repo_id: repoId, query: 'x'.repeat(4000) }), auth);
      expect(chunkedBig.status).toBe(413);
      expect(JSON.parse(chunkedBig.body).code).toBe('TOO_LARGE');
      const chunkedSmall = await chunkedPost(`${server.url}/search`, JSON.stringify({ repo_id: repoId, query: `${'x'.repeat(600)} alpha` }), auth);
      expect(chunkedSmall.status, chunkedSmall.body).toBe(200);
      expect(JSON.parse(chunkedSmall.body).query).toContain('alpha');
      // 60 a minute, bursts of 10: a quick run of 30 is cut.
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await server.request('/repos')).status);
      expect(statuses).toContain(429);
      const limited = await server.request('/repos');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.body.error).toContain('--rate-limit');
    } finally {
      await server.stop();
    }
    // Without a token, a page of another site reaching the server through DNS rebinding is stopped by the Host it names.
    const open = await startTeamServer(['--no-token', root]);
    try {
      const rebound = await rawGet(`${open.url}/repos`, 'evil.example');
      expect(rebound.status).toBe(401);
      expect(rebound.body).toContain('Host');
      expect((await rawGet(`${open.url}/repos`, new URL(open.url).host)).status).toBe(200);
    } finally {
      await open.stop();
    }
  });

  it('keeps its repositories across restarts, and refuses a damaged registry rather than forgetting them', async () => {
    const dataDir = tempDir();
    const root = committedRepo(BASE_FILES);
    const first = await startTeamServer([root], { dataDir });
    const id = (await first.request('/repos')).body.repos[0].repo_id;
    await first.request('/repo/watch', { body: { repo_id: id } });
    expect(await first.stop()).toBe(0);
    const second = await startTeamServer([], { dataDir });
    try {
      const repos = (await second.request('/repos')).body.repos as Json[];
      expect(repos).toHaveLength(1);
      expect(repos[0]).toMatchObject({ repo_id: id, root, watch: true });
      expect((await second.request(`/index/status/${id}`)).body.watcher_active).toBe(true);
    } finally {
      await second.stop();
    }
    const registry = join(dataDir, 'repos.json');
    writeFileSync(registry, readFileSync(registry, 'utf8').replace('"watch": true', '"watch": false'));
    const damaged = runCli(['serve', '--http', '--port', '0', '--data-dir', dataDir]);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toContain('repos.json');
    expect(damaged.stderr).toContain('restore the file');
  });
});

describe.skipIf(!existsSync('/proc/self/task'))('team server threads', () => {
  it("runs V8's and libuv's helper threads at the syncs' lower priority, and its own thread at the server's", async () => {
    const server = await startTeamServer();
    try {
      const nices = threadNices(server.child.pid!);
      expect(nices.get(server.child.pid!)).toBe(getPriority());
      expect([...nices.values()].filter((nice) => nice === Math.max(getPriority(), BACKGROUND_NICE)).length).toBeGreaterThanOrEqual(1);
      expect((await server.request('/health')).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
