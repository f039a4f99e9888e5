import { spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiDocument } from '../api-document.js';
import { committedRepo, tempDir } from '../helpers.js';
import { type Json, type TeamServer, startTeamServer } from '../team-server.js';

// Every operation of a real team server, driven with valid and invalid requests (missing fields,
// wrong types, unknown fields, bodies that are not JSON, blocked paths, unknown repositories,
// chunk ids that are gone, bodies too large, no token, a foreign Host, too many requests), each
// answer checked against the /openapi.json the same server serves: its status must be declared
// for the operation, its content type too, and its body must match the declared schema (Ajv,
// JSON Schema 2020-12). Whether each request is valid by the document is checked as well, so a
// request the document allows is answered as a success and one it forbids as a 4xx.

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
if (!HAS_GIT) console.warn('SKIPPED: the OpenAPI conformance test needs git to make its repositories (install git)');

const FAKE_SECRET = ['wJalrXUtnFEMI', 'K7MDENG', 'bPxRfiCYEXAMPLEKEY'].join('/');
const TOKEN = 'conformance-token-0123456789abcdef';
/** The body limit of the server under test: a query of the longest length fits, a body past it does not. */
const BODY_LIMIT = 300_000;
const MCP_ACCEPT = 'application/json, text/event-stream';

/** How a request stands by the document: valid, invalid, or not judged (query parameters OpenAPI cannot forbid). */
type ByDocument = 'valid' | 'invalid' | 'unjudged';

interface Sent {
  readonly method: string;
  readonly path: string;
  readonly json?: unknown;
  readonly raw?: string;
  readonly type?: string;
  readonly headers?: Record<string, string>;
}

interface Got {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  readonly headers: Headers;
  body(): Json;
}

describe.skipIf(!HAS_GIT)('the API answers as /openapi.json says', () => {
  let server: TeamServer;
  let guarded: TeamServer;
  /** A server started with --no-token: the only kind that judges requests by their Host header. */
  let open: TeamServer;
  let doc: ApiDocument;
  let root: string;
  let repoId: string;
  /** Every answer that broke the document: one line each. */
  const broken: string[] = [];
  /** The statuses each operation answered. */
  const seen = new Map<string, Set<number>>();

  beforeAll(async () => {
    root = committedRepo({
      'src/config.ts': 'export function parseConfig(text: string): unknown {\n  return JSON.parse(text);\n}\n',
      'src/router.ts': 'export class Router {\n  match(path: string): boolean {\n    return path.startsWith("/");\n  }\n}\n',
      'README.md': '# service\n\nParses the config.\n',
      '.env': `AWS_SECRET_ACCESS_KEY=${FAKE_SECRET}\n`,
    });
    const tokenFile = join(tempDir(), 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    [server, guarded, open] = await Promise.all([
      startTeamServer(['--max-body-bytes', String(BODY_LIMIT), root]),
      startTeamServer(['--token-file', tokenFile, root], { token: TOKEN }),
      startTeamServer(['--no-token', root]),
    ]);
    doc = new ApiDocument((await server.request('/openapi.json')).body);
    repoId = (await server.request('/repos')).body.repos[0].repo_id;
  });

  afterAll(async () => {
    await Promise.all([server?.stop(), guarded?.stop(), open?.stop()]);
  });

  /** Send a request to `target` and check its answer against the document. */
  async function send(sent: Sent, target: TeamServer = server, auth: string | undefined = target.token): Promise<Got> {
    const headers: Record<string, string> = { ...(auth ? { authorization: `Bearer ${auth}` } : {}), ...sent.headers };
    const body = sent.raw ?? (sent.json !== undefined ? JSON.stringify(sent.json) : undefined);
    if (body !== undefined) headers['content-type'] ??= sent.type ?? 'application/json';
    const response = await fetch(`${target.url}${sent.path}`, { method: sent.method, headers, body });
    const text = await response.text();
    const got: Got = {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      text,
      headers: response.headers,
      body: () => JSON.parse(text),
    };
    judge(sent, got);
    return got;
  }

  function judge(sent: Sent, got: { status: number; contentType: string; text: string }): void {
    const operation = doc.operation(sent.method, sent.path);
    if (operation) {
      const statuses = seen.get(operation.id) ?? new Set<number>();
      statuses.add(got.status);
      seen.set(operation.id, statuses);
    }
    for (const problem of doc.answerProblems(sent.method, sent.path, got)) broken.push(`${sent.method} ${sent.path.slice(0, 120)} → ${problem}`);
  }

  /** Send each request, expecting its status, and that the document judges it as said. */
  async function expectAll(cases: readonly (readonly [Sent, number, ByDocument])[]): Promise<void> {
    for (const [sent, status, byDocument] of cases) {
      const what = `${sent.method} ${sent.path.slice(0, 100)} ${(sent.raw ?? JSON.stringify(sent.json) ?? '').slice(0, 100)}`;
      if (byDocument !== 'unjudged') {
        const problems = doc.requestProblems(sent.method, sent.path, { json: sent.raw === undefined ? sent.json : undefined, contentType: sent.raw !== undefined && sent.type === undefined ? 'application/json' : (sent.type ?? (sent.json !== undefined ? 'application/json' : undefined)) });
        if (sent.raw !== undefined && sent.type === undefined) problems.push('not JSON'); // a body that does not parse is never valid
        if (byDocument === 'valid') expect(problems, `${what}: valid by the document`).toEqual([]);
        else expect(problems.length, `${what}: invalid by the document`).toBeGreaterThan(0);
      }
      const got = await send(sent);
      expect(got.status, `${what}: ${got.text.slice(0, 300)}`).toBe(status);
    }
  }

  const get = (path: string): Sent => ({ method: 'GET', path });
  const post = (path: string, json: unknown): Sent => ({ method: 'POST', path, json });
  const raw = (path: string, text: string, type?: string): Sent => ({ method: 'POST', path, raw: text, ...(type ? { type } : {}) });

  it('serves a document whose every schema compiles', () => {
    expect(doc.compileAll()).toBeGreaterThan(100);
  });

  it('answers the JSON API as declared: successes, bad requests, refusals, unknown repositories', async () => {
    const search = await send(post('/search', { repo_id: repoId, query: 'parse config' }));
    expect(search.status, search.text).toBe(200);
    const chunk = search.body().results[0].chunk_id as number;
    const unknown = '00000000-0000-4000-8000-000000000000';
    const q = (path: string, params: Record<string, string>): string => `${path}?${new URLSearchParams(params).toString()}`;
    await expectAll([
      [get('/health'), 200, 'valid'],
      [get('/openapi.json'), 200, 'valid'],
      [get('/repos'), 200, 'valid'],
      // POST /repos
      [post('/repos', { root }), 200, 'valid'],
      [post('/repos', {}), 400, 'invalid'],
      [post('/repos', { root: 5 }), 400, 'invalid'],
      [post('/repos', { root, extra: 1 }), 400, 'invalid'],
      [post('/repos', { root: join(root, 'src', 'config.ts') }), 400, 'valid'],
      [post('/repos', { root: 'relative/path' }), 400, 'valid'],
      [raw('/repos', `{"root": ${JSON.stringify(root)}}`, 'text/plain'), 415, 'invalid'],
      [raw('/repos', '{"root": '), 400, 'invalid'],
      [raw('/repos', '[1, 2]'), 400, 'invalid'],
      // POST /search
      [post('/search', { repo_id: repoId, query: 'router match', mode: 'bm25', top_k: 50, glob: 'src/**', lang: 'typescript' }), 200, 'valid'],
      [post('/search', { repo_id: repoId, query: 'x'.repeat(65_536) }), 200, 'valid'],
      [post('/search', { repo_id: repoId, query: 'x'.repeat(65_537) }), 400, 'invalid'],
      [post('/search', { repo_id: repoId, query: '   ' }), 400, 'invalid'],
      [post('/search', { repo_id: repoId }), 400, 'invalid'],
      [post('/search', { repo_id: repoId, query: 42 }), 400, 'invalid'],
      [post('/search', { repo_id: repoId, query: 'x', top_k: 'ten' }), 400, 'invalid'],
      [post('/search', { repo_id: repoId, query: 'x', top_k: 0 }), 400, 'invalid'],
      [post('/search', { repo_id: repoId, query: 'x', mode: 'psychic' }), 400, 'invalid'],
      [post('/search', { repo_id: repoId, query: 'x', colour: 'blue' }), 400, 'invalid'],
      [post('/search', { repo_id: 'no-such-repo', query: 'x' }), 404, 'valid'],
      [raw('/search', '{}', 'text/plain'), 415, 'invalid'],
      [raw('/search', '{"repo_id": '), 400, 'invalid'],
      [post('/search', { repo_id: repoId, query: 'x'.repeat(BODY_LIMIT) }), 413, 'invalid'],
      // POST /fetch
      [post('/fetch', { repo_id: repoId, ids: [chunk], max_lines: 500 }), 200, 'valid'],
      [post('/fetch', { repo_id: repoId, ids: [chunk, 4_294_967_295] }), 200, 'valid'],
      [post('/fetch', { repo_id: repoId, ids: [4_294_967_295] }), 404, 'valid'],
      [post('/fetch', { repo_id: repoId, ids: [-1] }), 400, 'invalid'],
      [post('/fetch', { repo_id: repoId, ids: [1.5] }), 400, 'invalid'],
      [post('/fetch', { repo_id: repoId, ids: [] }), 400, 'invalid'],
      [post('/fetch', { repo_id: repoId, ids: 'one' }), 400, 'invalid'],
      [post('/fetch', { repo_id: repoId }), 400, 'invalid'],
      [post('/fetch', { repo_id: unknown, ids: [1] }), 404, 'valid'],
      [raw('/fetch', '{}', 'text/plain'), 415, 'invalid'],
      // GET /outline, /open
      [get(q('/outline', { repo_id: repoId, path: 'src/router.ts' })), 200, 'valid'],
      [get(q('/outline', { repo_id: repoId, path: '../../etc/passwd' })), 403, 'valid'],
      [get(q('/outline', { repo_id: repoId, path: 'no/such.ts' })), 404, 'valid'],
      [get(q('/outline', { repo_id: repoId })), 400, 'invalid'],
      [get(q('/outline', { repo_id: repoId, path: 'src/router.ts', depth: '2' })), 400, 'unjudged'],
      [get(q('/outline', { repo_id: unknown, path: 'src/router.ts' })), 404, 'valid'],
      [get(q('/open', { repo_id: repoId, path: 'src/router.ts', start: '2', end: '3' })), 200, 'valid'],
      [get(q('/open', { repo_id: repoId, path: '.env' })), 403, 'valid'],
      [get(q('/open', { repo_id: repoId, path: '/etc/passwd' })), 403, 'valid'],
      [get(q('/open', { repo_id: repoId, path: 'no/such.ts' })), 404, 'valid'],
      [get(q('/open', { repo_id: repoId, path: 'src' })), 404, 'valid'],
      [get(q('/open', { repo_id: repoId, path: 'src/router.ts', start: 'zero' })), 400, 'invalid'],
      [get(q('/open', { repo_id: repoId, path: 'src/router.ts', start: '0' })), 400, 'invalid'],
      [get(q('/open', { repo_id: repoId, path: 'x'.repeat(4097) })), 400, 'invalid'],
      [get(q('/open', { path: 'src/router.ts' })), 400, 'invalid'],
      // POST /bundle
      [post('/bundle', { repo_id: repoId, prompt: 'add retries to the router', max_files: 99, max_lines: 10_000, include_tests: false }), 200, 'valid'],
      [post('/bundle', { repo_id: repoId }), 400, 'invalid'],
      [post('/bundle', { repo_id: repoId, prompt: 'x', include_tests: 'yes' }), 400, 'invalid'],
      [raw('/bundle', '{}', 'text/plain'), 415, 'invalid'],
      // GET /files, /status, /audit
      [get(q('/files', { repo_id: repoId, glob: 'src/**', limit: '2', include_hidden: 'true' })), 200, 'valid'],
      [get(q('/files', { repo_id: repoId, limit: 'many' })), 400, 'invalid'],
      [get(q('/files', { repo_id: repoId, glob: '' })), 400, 'invalid'],
      [get(q('/status', { repo_id: repoId })), 200, 'valid'],
      [get('/status'), 400, 'invalid'],
      [get(q('/status', { repo_id: 'no-such-repo' })), 404, 'valid'],
      [get(q('/audit', { repo_id: repoId, since: '1h', limit: '5' })), 200, 'valid'],
      [get(q('/audit', { repo_id: repoId, limit: '0' })), 400, 'invalid'],
      // POST /index/run, GET /index/status/{repo_id}
      [post('/index/run', { repo_id: repoId }), 200, 'valid'],
      [post('/index/run', { repo_id: repoId, force: 'yes' }), 400, 'invalid'],
      [post('/index/run', { repo_id: unknown }), 404, 'valid'],
      [raw('/index/run', '{}', 'text/plain'), 415, 'invalid'],
      [get(`/index/status/${repoId}`), 200, 'valid'],
      [get('/index/status/no-such-repo'), 404, 'valid'],
      // POST /repo/watch, /repo/unwatch
      [post('/repo/watch', { repo_id: repoId }), 200, 'valid'],
      [post('/repo/unwatch', { repo_id: repoId }), 200, 'valid'],
      [post('/repo/watch', { repo_id: unknown }), 404, 'valid'],
      [post('/repo/watch', {}), 400, 'invalid'],
      [post('/repo/unwatch', { repo_id: 7 }), 400, 'invalid'],
      [post('/repo/unwatch', { repo_id: repoId, now: true }), 400, 'invalid'],
      [raw('/repo/watch', '{}', 'text/plain'), 415, 'invalid'],
      [raw('/repo/unwatch', 'repo_id=1', 'application/x-www-form-urlencoded'), 415, 'invalid'],
      // POST /hooks/push
      [post('/hooks/push', { root }), 200, 'valid'],
      [post('/hooks/push', { repo_id: repoId, force: false }), 200, 'valid'],
      [post('/hooks/push', {}), 400, 'valid'],
      [post('/hooks/push', { repo_id: repoId, root }), 400, 'valid'],
      [post('/hooks/push', { repo_id: unknown }), 404, 'valid'],
      [post('/hooks/push', { repo_id: repoId, branch: 'main' }), 400, 'invalid'],
      [raw('/hooks/push', '{}', 'text/plain'), 415, 'invalid'],
    ]);
    // The refusals are failures like any other, with what a client reads of them kept.
    const blocked = await send(get(q('/open', { repo_id: repoId, path: '.env' })));
    expect(blocked.body()).toMatchObject({ ok: false, code: 'BLOCKED', blocked: true, path: '.env', request_id: blocked.headers.get('x-request-id') });
    expect(blocked.text).not.toContain(FAKE_SECRET);
    const gone = await send(post('/fetch', { repo_id: repoId, ids: [4_294_967_295] }));
    expect(gone.body()).toMatchObject({ ok: false, code: 'REFUSED', blocked: false, chunks: [{ chunk_id: 4_294_967_295, blocked: false }] });
    expect(broken).toEqual([]);
  });

  it('registers and removes repositories as declared', async () => {
    const other = committedRepo({ 'b.ts': 'export const bravo = 2;\n' });
    const added = await send(post('/repos', { root: other, name: 'other' }));
    expect(added.status, added.text).toBe(201);
    const id = added.body().repo_id as string;
    await expectAll([
      [{ method: 'DELETE', path: `/repos/${id}` }, 200, 'valid'],
      [{ method: 'DELETE', path: `/repos/${id}` }, 404, 'valid'],
      [{ method: 'DELETE', path: '/repos/no-such-repo' }, 404, 'valid'],
      [{ method: 'DELETE', path: '/repos/no-such-repo', raw: 'x'.repeat(BODY_LIMIT + 1), type: 'text/plain' }, 413, 'unjudged'],
    ]);
    expect(broken).toEqual([]);
  });

  it('answers a repository whose config is invalid with a declared 409', async () => {
    const damaged = committedRepo({ 'c.ts': 'export const charlie = 3;\n' });
    mkdirSync(join(damaged, '.repodex'), { recursive: true });
    writeFileSync(join(damaged, '.repodex', 'config.json'), '{ "limits": ');
    const added = await send(post('/repos', { root: damaged }));
    expect(added.status, added.text).toBe(201);
    const id = added.body().repo_id as string;
    const refused = await send(post('/search', { repo_id: id, query: 'charlie' }));
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body()).toMatchObject({ ok: false, code: 'CONFIG_INVALID' });
    await send({ method: 'DELETE', path: `/repos/${id}` });
    expect(broken).toEqual([]);
  });

  it('answers MCP over Streamable HTTP as declared: JSON-RPC successes and errors', async () => {
    const rpc = (id: number | undefined, method: string, params: object = {}): object => ({ jsonrpc: '2.0', ...(id !== undefined ? { id } : {}), method, params });
    const initialize = rpc(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'conformance', version: '1' } });
    const mcp = (path: string, body: unknown, headers: Record<string, string> = {}): Sent => ({ method: 'POST', path, json: body, headers: { accept: MCP_ACCEPT, ...headers } });
    const started = await send(mcp(`/mcp?repo_id=${repoId}`, initialize));
    expect(started.status, started.text).toBe(200);
    const session = started.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    const inSession = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    await expectAll([
      [mcp('/mcp', rpc(undefined, 'notifications/initialized'), inSession), 202, 'valid'],
      [mcp('/mcp', rpc(1, 'tools/list'), inSession), 200, 'valid'],
      [mcp('/mcp', rpc(2, 'tools/call', { name: 'repo.search', arguments: { query: 'router match', top_k: 50 } }), inSession), 200, 'valid'],
      [mcp('/mcp', rpc(3, 'tools/call', { name: 'repo.open_file', arguments: { path: '.env' } }), inSession), 200, 'valid'],
      [mcp('/mcp', rpc(4, 'tools/list')), 400, 'valid'],
      [mcp('/mcp', rpc(5, 'tools/list'), { 'mcp-session-id': 'no-such-session' }), 404, 'valid'],
      [mcp('/mcp?repo_id=no-such-repo', initialize), 404, 'valid'],
      [{ method: 'POST', path: '/mcp', raw: '{"jsonrpc": ', headers: { accept: MCP_ACCEPT } }, 400, 'invalid'],
      [{ method: 'POST', path: '/mcp', raw: JSON.stringify(initialize), type: 'text/plain', headers: { accept: MCP_ACCEPT } }, 415, 'invalid'],
      [{ method: 'POST', path: '/mcp', json: initialize, headers: { accept: 'text/html' } }, 406, 'valid'],
      [mcp('/mcp', rpc(6, 'tools/call', { name: 'repo.search', arguments: { query: 'x'.repeat(BODY_LIMIT) } }), inSession), 413, 'valid'],
      [{ method: 'GET', path: '/mcp', headers: { ...inSession, accept: 'application/json' } }, 406, 'valid'],
      [{ method: 'GET', path: '/mcp', headers: { accept: 'text/event-stream' } }, 400, 'valid'],
      [{ method: 'GET', path: '/mcp', headers: { 'mcp-session-id': 'no-such-session', accept: 'text/event-stream' } }, 404, 'valid'],
      [{ method: 'DELETE', path: '/mcp' }, 400, 'valid'],
      [{ method: 'DELETE', path: '/mcp', headers: { 'mcp-session-id': 'no-such-session' } }, 404, 'valid'],
    ]);
    // The session's own event stream: its status and type (it stays open, so it is not read to its end).
    const controller = new AbortController();
    const stream = await fetch(`${server.url}/mcp`, { headers: { ...inSession, authorization: `Bearer ${server.token}`, accept: 'text/event-stream' }, signal: controller.signal });
    judge({ method: 'GET', path: '/mcp' }, { status: stream.status, contentType: stream.headers.get('content-type') ?? '', text: '' });
    expect(stream.status).toBe(200);
    controller.abort();
    await expectAll([[{ method: 'DELETE', path: '/mcp', headers: inSession }, 200, 'valid']]);
    expect(broken).toEqual([]);
  });

  it('answers a missing token, a wrong token and a foreign Host with a declared 401', async () => {
    let client = 10;
    for (const operation of doc.operations()) {
      const path = operation.template.replace('{repo_id}', repoId);
      const sent: Sent = operation.method === 'GET' || operation.method === 'DELETE' ? { method: operation.method, path } : { method: operation.method, path, json: {} };
      // Each operation from its own loopback address: ten failures from one address lock it out (429), by design.
      const from = `127.0.0.${client++}`;
      for (const auth of [undefined, 'not-the-token-at-all-0000']) {
        const got = await rawRequest(guarded.url, sent.method, path, { auth, localAddress: from, json: sent.json });
        judge(sent, got);
        expect(got.status, `${operation.id} on a server with a token (${auth ? 'wrong token' : 'none'})`).toBe(401);
      }
      const foreign = await rawRequest(open.url, sent.method, path, { host: 'evil.example', json: sent.json });
      judge(sent, foreign);
      expect(foreign.status, `${operation.id} with a foreign Host`).toBe(401);
    }
    // The right token works: the document it serves says it is needed.
    const guardedRepo = (await send(get('/repos'), guarded, TOKEN)).body().repos[0].repo_id as string;
    const withToken = await send(get(`/status?repo_id=${guardedRepo}`), guarded, TOKEN);
    expect(withToken.status, withToken.text).toBe(200);
    expect(broken).toEqual([]);
  });

  it('answers too many requests with a declared 429 and Retry-After', async () => {
    const limited = await startTeamServer(['--rate-limit', '60', root]);
    try {
      const id = (await limited.request('/repos')).body.repos[0].repo_id as string;
      const sent: Sent[] = [get('/repos'), post('/search', { repo_id: id, query: 'router' }), get(`/open?repo_id=${id}&path=src/router.ts`), get('/health')];
      const statuses: number[] = [];
      for (let i = 0; i < 24; i++) {
        const got = await send(sent[i % sent.length]!, limited);
        statuses.push(got.status);
        if (got.status === 429) expect(Number(got.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect(statuses).toContain(429);
    } finally {
      await limited.stop();
    }
    expect(broken).toEqual([]);
  });

  it('exercised every operation of the document, each with a success and a failure', () => {
    const missing: string[] = [];
    for (const operation of doc.operations()) {
      const statuses = [...(seen.get(operation.id) ?? [])];
      if (!statuses.some((status) => status < 300)) missing.push(`${operation.id}: no success`);
      if (!statuses.some((status) => status >= 400)) missing.push(`${operation.id}: no failure`);
    }
    expect(missing).toEqual([]);
    console.log(`openapi conformance: ${[...seen.values()].reduce((sum, statuses) => sum + statuses.size, 0)} distinct statuses over ${seen.size} operations`);
  });
});

/** A request with a Host header, token and source address of our choosing (fetch sets the first and cannot set the last). */
function rawRequest(url: string, method: string, path: string, options: { host?: string; auth?: string | undefined; localAddress?: string; json?: unknown }): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const body = options.json === undefined ? undefined : JSON.stringify(options.json);
    const headers = { ...(options.host ? { host: options.host } : {}), ...(options.auth ? { authorization: `Bearer ${options.auth}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) };
    const request = httpRequest(`${url}${path}`, { method, headers, agent: false, ...(options.localAddress ? { localAddress: options.localAddress } : {}) }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type'] ?? ''), text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}
