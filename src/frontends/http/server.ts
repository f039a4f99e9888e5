import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type * as z from 'zod/mini';
import { ERRORS, type ErrorCode, RepodexError, errorMessage, isRepodexError } from '../../core/errors.js';
import { shownFailure } from '../../core/error-log.js';
import { TOOL_VERSION } from '../../core/version.js';
import { within } from '../../core/within.js';
import { CallLog } from '../../engine/audit.js';
import { type CallError, type Op, type RequestOf, accept, call, describeIssues, kindOf, nameOn, recordRequest, requestFields } from '../../protocol/index.js';
import type { RepoHost } from '../../repo-host.js';
import { type McpOptions, type McpRepos, createMcpServer } from '../mcp/server.js';
import type { Engine } from '../../engine/engine.js';
import { isLoopback } from './access-token.js';
import { AuthThrottle, type Lockout } from './auth-throttle.js';
import { openApiDocument } from './openapi.js';
import { type PageAssets, loadPage } from './page.js';
import { AddRepoBody, type OpRoute, OP_ROUTES, PushBody, RepoIdBody, refusalBody } from './routes.js';

/** How `serve --http` is set up. */
export interface HttpOptions {
  readonly host: string;
  readonly port: number;
  /**
   * The bearer token every request but the page's own files must carry (from --token-file, or the
   * one the server made in its folder); required on any address but loopback. Absent: the server
   * asks for none (`--no-token` on loopback).
   */
  readonly token?: string | undefined;
  /** Largest request body, in bytes (413 beyond). */
  readonly bodyLimitBytes?: number;
  /** Requests per minute one client may send (429 beyond); 0 turns the limit off. */
  readonly ratePerMinute?: number;
  /** How long a request may run before it is answered 503 (a sync it started goes on). */
  readonly timeoutMs?: number;
  /** The same for requests that may run a whole sync (index runs, a first search). */
  readonly longTimeoutMs?: number;
  /** An origin whose pages may call the API (CORS); none by default. */
  readonly corsOrigin?: string | undefined;
  /** MCP tool names. */
  readonly naming?: McpOptions['naming'];
  /** Where structured request logs (one JSON line each) and problems go. */
  readonly log: (line: string) => void;
}

export const DEFAULT_PORT = 7800;
export const DEFAULT_BODY_LIMIT = 1 << 20;
export const DEFAULT_RATE_PER_MINUTE = 6000;
export const DEFAULT_TIMEOUT_MS = 30_000;
const LONG_TIMEOUT_MS = 600_000;
/** MCP sessions one server keeps, and how long an idle one lives. */
const MAX_MCP_SESSIONS = 256;
const MCP_IDLE_MS = 30 * 60_000;

/** What each request carries through the middleware. */
interface RequestState {
  request_id: string;
  client: string;
  started: number;
  repo_id?: string;
  /** What the audit log records of a request that runs no op: its name and arguments. */
  op?: string;
  args?: Record<string, unknown>;
  /** Set when the request was recorded in an audit log already (an op's call). */
  recorded?: boolean;
  /** Set for a request refused during a lockout: not logged or audited one by one (the lockout's one line counts it). */
  uncounted?: boolean;
  /** The code of the failure it was answered with, for its audit line. */
  outcome?: ErrorCode;
}

type Env = { Variables: { state: RequestState } };

/** Every code a failure answer may carry, for the API document: the error table's, less the CLI's own (no server answers that it cannot be reached). */
const FAILURE_CODES: readonly ErrorCode[] = (Object.keys(ERRORS) as ErrorCode[]).filter((code) => code !== 'SERVER_UNAVAILABLE');

/** HTTP status of a failure's code: the error table's (core/errors.ts says the rule). */
function statusOf(code: ErrorCode): ContentfulStatusCode {
  return ERRORS[code].http as ContentfulStatusCode;
}

/** A failure answer: `{ok:false, code, error, hint?, request_id}`. */
function failure(c: Context<Env>, code: ErrorCode, message: string, hint?: string): Response {
  const state = c.get('state');
  state.outcome = code;
  return c.json({ ok: false, code, error: message, ...(hint !== undefined ? { hint } : {}), request_id: state.request_id }, statusOf(code));
}

function thrownFailure(c: Context<Env>, error: unknown, log: (line: string) => void): Response {
  const shown = shownFailure(error, `serve --http: ${c.req.method} ${c.req.path}`);
  // A bug: one line in the server's log naming the error log, which holds the stack.
  if (shown.internal) log(JSON.stringify({ time: new Date().toISOString(), level: 'error', request_id: c.get('state').request_id, error: shown.message }));
  return failure(c, shown.code, shown.message);
}

/** A per-client token bucket: `perMinute` requests a minute, bursts up to a tenth of that (at least 10). */
class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly burst: number;

  constructor(private readonly perMinute: number) {
    this.burst = Math.max(10, Math.ceil(perMinute / 10));
  }

  /** Seconds until `client` may ask again, or 0 when it may now (and this request is counted). */
  take(client: string): number {
    if (this.perMinute <= 0) return 0;
    const now = Date.now();
    const bucket = this.buckets.get(client) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 60_000) * this.perMinute);
    bucket.at = now;
    this.buckets.set(client, bucket);
    if (this.buckets.size > 10_000) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) / this.perMinute) * 60);
  }
}

/** Whether `given` is the token, compared in constant time (digests, so lengths do not leak either). */
function sameToken(given: string, token: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** Query parameters as an object, the op's numeric and boolean fields converted (text that is not one is left for the schema to refuse). */
function queryInput(c: Context<Env>, route: OpRoute): Record<string, unknown> {
  const input: Record<string, unknown> = { ...c.req.query() };
  for (const field of requestFields(route.op)) {
    const name = nameOn('http', route.op, field);
    const value = input[name];
    if (typeof value !== 'string') continue;
    const kind = kindOf(route.op, field);
    if (kind === 'integer' && /^-?\d+(\.\d+)?$/.test(value.trim())) input[name] = Number(value);
    else if (kind === 'boolean' && (value === 'true' || value === '1' || value === '')) input[name] = true;
    else if (kind === 'boolean' && (value === 'false' || value === '0')) input[name] = false;
  }
  return input;
}

/** The JSON object a POST carries, or a failure naming what is wrong with it. */
async function jsonBody(c: Context<Env>): Promise<Record<string, unknown> | Response> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/json\b/i.test(type)) {
    return failure(c, 'UNSUPPORTED_MEDIA_TYPE', `the body must be JSON sent with Content-Type: application/json${type ? `, got ${type.split(';')[0]}` : ''}`);
  }
  const text = await c.req.text();
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return failure(c, 'BAD_REQUEST', `the body is not valid JSON: ${errorMessage(error).replace(/, ".*$/, '')}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return failure(c, 'BAD_REQUEST', 'the body must be a JSON object');
  return value as Record<string, unknown>;
}

/** The body of a POST to one of the server's own routes, validated by `schema` and noted for the audit log as `op`; or the failure to answer. */
async function bodyOf<T>(c: Context<Env>, schema: z.ZodMiniType<T>, op: string): Promise<T | Response> {
  const body = await jsonBody(c);
  if (body instanceof Response) return body;
  noted(c, op, body);
  const parsed = schema.safeParse(body, { reportInput: true });
  return parsed.success ? parsed.data : failure(c, 'BAD_REQUEST', describeIssues(parsed.error));
}

/**
 * Refuse a body larger than `maxBytes`. A body with a declared length is judged by its header (the
 * HTTP parser never reads past it), so it is left unread for the handler to read straight from
 * the socket; only a chunked one is read here, counting, and handed on as a buffer.
 */
function limitBody(maxBytes: number, tooLarge: (c: Context<Env>) => Response): MiddlewareHandler<Env> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'OPTIONS') return next();
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined) return Number(length) > maxBytes ? tooLarge(c) : next();
    const body = c.req.raw.body;
    if (!body) return next();
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > maxBytes) {
        await reader.cancel();
        return tooLarge(c);
      }
      chunks.push(value);
    }
    c.req.raw = new globalThis.Request(c.req.raw, { body: Buffer.concat(chunks) });
    return next();
  };
}

/** Run `work`, or answer 503 TIMEOUT when it takes longer than `ms` (it is not stopped: a sync it started finishes). */
async function withTimeout(c: Context<Env>, ms: number, work: () => Promise<Response>): Promise<Response> {
  return (await within(work(), ms)) ?? failure(c, 'TIMEOUT', `the request took longer than ${Math.round(ms / 1000)} s: it goes on in the background (an index build finishes), ask again in a moment`);
}

/** The HTTP application of a team server: the API, MCP at /mcp, the web page at /. */
export function createHttpApp(host: RepoHost, options: HttpOptions): { readonly app: Hono<Env>; close(): Promise<void> } {
  const app = new Hono<Env>();
  const log = options.log;
  const serverLog = new CallLog(host.registry.audit);
  const limiter = new RateLimiter(options.ratePerMinute ?? DEFAULT_RATE_PER_MINUTE);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const longTimeoutMs = Math.max(timeoutMs, options.longTimeoutMs ?? LONG_TIMEOUT_MS);
  const started = Date.now();
  const token = options.token;
  const page: PageAssets = loadPage();
  const mcp = new McpSessions(host, options, serverLog);
  const authThrottle = new AuthThrottle((lockout) => log(lockoutLine(lockout)));

  /** Record a request that ran no op (or was refused before one) in the server's log or its repository's. */
  const record = async (c: Context<Env>, status: number, args: Record<string, unknown>): Promise<void> => {
    const state = c.get('state');
    if (state.recorded) return;
    state.recorded = true;
    let target = serverLog;
    if (state.repo_id) {
      try {
        target = (await host.engine(state.repo_id)).engine.auditLog;
      } catch {
        target = serverLog; // an unknown repository: the server's own log
      }
    }
    recordRequest(
      target,
      { frontend: 'http', tool: `${c.req.method} ${c.req.routePath === '/*' ? c.req.path : c.req.routePath}`, client: state.client },
      { time: new Date(state.started).toISOString(), request_id: state.request_id, op: state.op ?? '', args: state.args ?? args, outcome: status < 400 ? 'ok' : (state.outcome ?? `HTTP_${status}`), blocked: status === 403, duration_ms: Date.now() - state.started },
    );
  };

  // Every request: an id, a structured log line on stderr, and a line in an audit log.
  app.use('*', async (c, next) => {
    let client = 'unknown';
    try {
      client = getConnInfo(c).remote.address ?? 'unknown';
    } catch {
      // not a socket (an in-process request from a test): unknown
    }
    const startedAt = Date.now();
    const state: RequestState = { request_id: randomUUID(), client, started: startedAt };
    c.set('state', state);
    // Set before the answer exists, it is part of the answer as it is made (set after, the answer would be rebuilt).
    c.header('X-Request-Id', state.request_id);
    try {
      await next();
    } finally {
      if (c.res.headers.get('X-Request-Id') === null) c.header('X-Request-Id', state.request_id); // an answer made elsewhere (MCP)
      const status = c.res.status;
      const duration = Date.now() - startedAt;
      if (!state.uncounted) {
        log(JSON.stringify({ time: new Date(startedAt).toISOString(), level: status >= 500 ? 'error' : 'info', request_id: state.request_id, client, method: c.req.method, path: c.req.path, ...(state.repo_id ? { repo_id: state.repo_id } : {}), status, duration_ms: duration }));
        if (!state.recorded && !isQuiet(c.req.path)) void record(c, status, { path: c.req.path });
      }
    }
  });

  // A page of another site may not use this server through the visitor's browser: its Host must be this server's.
  if (!token) {
    app.use('*', async (c, next) => {
      const hostHeader = (c.req.header('host') ?? '').replace(/:\d+$/, '');
      if (!isLoopback(hostHeader) && hostHeader !== options.host) return failure(c, 'UNAUTHORIZED', `requests must name this server as their Host (localhost or ${options.host}), got ${JSON.stringify(hostHeader)}`);
      return next();
    });
  }

  if (options.corsOrigin) app.use('*', cors({ origin: options.corsOrigin, allowHeaders: ['Authorization', 'Content-Type', 'Mcp-Session-Id', 'Mcp-Protocol-Version'], exposeHeaders: ['X-Request-Id', 'Mcp-Session-Id'] }));

  // The page and its assets are public (they hold no data); everything else needs the token when there is one.
  // Past a few failures an address is locked out for a while, its tokens not even checked (auth-throttle.ts).
  app.use('*', async (c, next) => {
    if (!token || isPagePath(c.req.path) || c.req.method === 'OPTIONS') return next();
    const state = c.get('state');
    const lockedOut = (seconds: number): Response => {
      state.uncounted = true;
      c.header('Retry-After', String(seconds));
      return failure(c, 'RATE_LIMITED', `too many requests with a missing or wrong bearer token from ${state.client}: every request from this address is refused for ${seconds} s`);
    };
    const locked = authThrottle.lockedFor(state.client);
    if (locked > 0) return lockedOut(locked);
    const header = c.req.header('authorization') ?? '';
    const given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
    if (!given || !sameToken(given, token)) {
      const lockout = authThrottle.failed(state.client);
      if (lockout > 0) return lockedOut(lockout);
      c.header('WWW-Authenticate', 'Bearer realm="repodex"');
      return failure(
        c,
        'UNAUTHORIZED',
        given
          ? 'the bearer token is wrong'
          : "this server needs a bearer token: send Authorization: Bearer <token> (the file given to serve --token-file, else the file `token` in the server's --data-dir)",
      );
    }
    return next();
  });

  app.use('*', async (c, next) => {
    if (isPagePath(c.req.path)) return next();
    const wait = limiter.take(c.get('state').client);
    if (wait > 0) {
      c.header('Retry-After', String(wait));
      return failure(c, 'RATE_LIMITED', `too many requests from ${c.get('state').client}: wait ${wait} s (--rate-limit on serve)`);
    }
    return next();
  });

  app.use('*', limitBody(options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT, (c) => failure(c, 'TOO_LARGE', `the body is larger than ${options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT} bytes (--max-body-bytes on serve)`)));

  // The web page.
  app.get('/', (c) => page.serve(c, 'index.html'));
  app.get('/assets/:name', (c) => page.serve(c, c.req.param('name')));

  app.get('/health', async (c) => {
    const health = await host.health();
    return c.json({ ok: health.ok, version: TOOL_VERSION, uptime_s: Math.round((Date.now() - started) / 1000), store: health.store, repos: health.repos }, health.ok ? 200 : 503);
  });

  const document = openApiDocument(options, { codes: FAILURE_CODES, statusOf });
  app.get('/openapi.json', (c) => c.json(document));

  app.get('/repos', async (c) => {
    noted(c, 'repo.list', {});
    return withTimeout(c, timeoutMs, async () => c.json({ repos: await host.list() }));
  });

  app.post('/repos', async (c) => {
    const parsed = await bodyOf(c, AddRepoBody, 'repo.add');
    if (parsed instanceof Response) return parsed;
    try {
      const { repo, created } = await host.add(parsed.root, parsed.name);
      c.get('state').repo_id = repo.repo_id;
      return c.json({ repo_id: repo.repo_id, created, repo }, created ? 201 : 200);
    } catch (error) {
      return thrownFailure(c, error, log);
    }
  });

  app.delete('/repos/:repo_id', async (c) => {
    noted(c, 'repo.remove', { repo_id: c.req.param('repo_id') });
    try {
      const repo = await host.remove(c.req.param('repo_id'));
      return c.json({ repo_id: repo.repo_id, removed: true, repo });
    } catch (error) {
      return thrownFailure(c, error, log);
    }
  });

  app.get('/index/status/:repo_id', async (c) => {
    const repoId = c.req.param('repo_id');
    noted(c, 'index.status', { repo_id: repoId });
    try {
      await host.get(repoId);
      c.get('state').repo_id = repoId;
      return await withTimeout(c, timeoutMs, async () => c.json(await host.status(repoId)));
    } catch (error) {
      return thrownFailure(c, error, log);
    }
  });

  const repoAction = (path: string, action: (repoId: string) => Promise<unknown>): void => {
    app.post(path, async (c) => {
      const parsed = await bodyOf(c, RepoIdBody, path === '/repo/watch' ? 'repo.watch' : 'repo.unwatch');
      if (parsed instanceof Response) return parsed;
      try {
        await host.get(parsed.repo_id);
        c.get('state').repo_id = parsed.repo_id;
        return await withTimeout(c, longTimeoutMs, async () => c.json(await action(parsed.repo_id)));
      } catch (error) {
        return thrownFailure(c, error, log);
      }
    });
  };
  repoAction('/repo/watch', (repoId) => host.watch(repoId));
  repoAction('/repo/unwatch', (repoId) => host.unwatch(repoId));

  // What a git hook or a CI step calls after a commit, merge or push: re-index that repository now.
  app.post('/hooks/push', async (c) => {
    const parsed = await bodyOf(c, PushBody, 'sync');
    if (parsed instanceof Response) return parsed;
    if ((parsed.repo_id === undefined) === (parsed.root === undefined)) return failure(c, 'BAD_REQUEST', 'name the repository by repo_id or by root (one of them)');
    try {
      const repo = parsed.repo_id !== undefined ? await host.get(parsed.repo_id) : await host.byRoot(parsed.root!);
      c.get('state').repo_id = repo.repo_id;
      const request: RequestOf<'sync'> = { op: 'sync', ...(parsed.force !== undefined ? { force: parsed.force } : {}) };
      return await runOp(c, OP_ROUTES.find((route) => route.op === 'sync')!, repo.repo_id, request, 'POST /hooks/push');
    } catch (error) {
      return thrownFailure(c, error, log);
    }
  });

  /** Run one validated request for a repository through `call` (freshness, safety, limits, audit), and answer what it says. */
  const runOp = async (c: Context<Env>, route: OpRoute, repoId: string, request: RequestOf<Op>, calledAs = `${route.method} ${route.path}`): Promise<Response> => {
    const server = await host.engine(repoId);
    const state = c.get('state');
    state.recorded = true;
    return withTimeout(c, route.long ? longTimeoutMs : timeoutMs, async () => {
      const result = await call(server.engine, request, { frontend: 'http', tool: calledAs, requestId: state.request_id, client: state.client });
      if (result.data === undefined) return callFailure(c, result.error!);
      // The answer's JSON was made when it was measured against the response cap: sent as it is.
      if (!result.error) return result.json !== undefined ? c.body(result.json, 200, { 'Content-Type': 'application/json' }) : c.json(result.data as object, 200);
      // A partial answer (a fetch with some chunks gone) is a success, each refused item with its reason; a whole refusal is a failure with what it can still say.
      return result.served !== undefined ? c.json(result.data as object, 200) : c.json(refusalBody(result, state.request_id), statusOf(result.error.code));
    });
  };

  const callFailure = (c: Context<Env>, error: CallError): Response => failure(c, error.code, error.message, error.hint);

  for (const route of OP_ROUTES) {
    const name = `${route.method} ${route.path}`;
    const handler = async (c: Context<Env>): Promise<Response> => {
      let input: Record<string, unknown>;
      if (route.method === 'GET') input = queryInput(c, route);
      else {
        const body = await jsonBody(c);
        if (body instanceof Response) return body;
        input = body;
      }
      const state = c.get('state');
      // A refused request is recorded in the server's log (its repository is not known yet), under this request's id.
      const taken = accept('http', { auditLog: serverLog }, { frontend: 'http', tool: name, client: state.client, requestId: state.request_id }, name, input);
      if (!taken.ok) {
        state.recorded = true;
        return failure(c, 'BAD_REQUEST', taken.message);
      }
      const repoId = taken.own.repo_id as string;
      try {
        await host.get(repoId);
        state.repo_id = repoId;
        return await runOp(c, route, repoId, taken.request);
      } catch (error) {
        return thrownFailure(c, error, log);
      }
    };
    if (route.method === 'GET') app.get(route.path, handler);
    else app.post(route.path, handler);
  }

  // MCP over Streamable HTTP: the eight repo.* tools, one repository per session.
  app.all('/mcp', (c) => mcp.handle(c));

  app.notFound((c) => failure(c, 'NOT_FOUND', `no route ${c.req.method} ${c.req.path}: GET /openapi.json lists them`));
  app.onError((error, c) => thrownFailure(c, error, log));

  return {
    app,
    close: async () => {
      authThrottle.close();
      await mcp.close();
    },
  };
}

/** The one log line of a lockout. */
function lockoutLine(lockout: Lockout): string {
  return JSON.stringify({
    time: new Date(lockout.started).toISOString(),
    level: 'warn',
    client: lockout.client,
    status: 429,
    failed_auth: lockout.failed,
    lockout_s: lockout.seconds,
    refused: lockout.refused,
    message: `${lockout.client} sent ${lockout.failed} requests with a missing or wrong bearer token: every request from it was refused unchecked for ${lockout.seconds} s (${lockout.refused} requests)`,
  });
}

/** What the audit log is to record of a request that runs no op. */
function noted(c: Context<Env>, op: string, args: Record<string, unknown>): void {
  const state = c.get('state');
  state.op = op;
  state.args = args;
}

/** Requests not worth an audit line: the page, its assets, health checks (a monitor polls them). */
function isQuiet(path: string): boolean {
  return isPagePath(path) || path === '/health' || path === '/favicon.ico';
}

function isPagePath(path: string): boolean {
  return path === '/' || path.startsWith('/assets/') || path === '/favicon.ico';
}

/** MCP sessions over Streamable HTTP: each bound to the repository its first request named. */
class McpSessions {
  private readonly sessions = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; repoId: string | undefined; used: number }>();

  constructor(
    private readonly host: RepoHost,
    private readonly options: HttpOptions,
    private readonly serverLog: CallLog,
  ) {}

  async handle(c: Context<Env>): Promise<Response> {
    this.sweep();
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (!session) return c.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found: the server restarted or the session expired; initialize a new one' } }, 404);
      session.used = Date.now();
      if (session.repoId !== undefined) c.get('state').repo_id = session.repoId;
      c.get('state').recorded = true; // each tool call is recorded by the call it runs
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST') {
      c.get('state').outcome = 'BAD_REQUEST';
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: start a session with an initialize request (POST)' } }, 400);
    }
    let repoId: string | undefined;
    try {
      repoId = await this.repoOf(c.req.query('repo_id') ?? c.req.query('repo'));
    } catch (error) {
      const code: ErrorCode = isRepodexError(error) && error.code === 'REPO_UNKNOWN' ? 'REPO_UNKNOWN' : 'BAD_REQUEST';
      c.get('state').outcome = code;
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32602, message: errorMessage(error) } }, code === 'REPO_UNKNOWN' ? 404 : 400);
    }
    if (this.sessions.size >= MAX_MCP_SESSIONS) this.evictOldest();
    const state = c.get('state');
    const options = { naming: this.options.naming, log: this.options.log, client: state.client };
    // A session names its repository in the URL, or each call names one in its `repo` argument.
    const target: Engine | McpRepos =
      repoId !== undefined
        ? (await this.host.engine(repoId)).engine
        : { description: 'the repositories registered on this team server', engine: async (repo) => (await this.host.engine(await this.host.resolve(repo))).engine, auditLog: this.serverLog };
    const mcpServer = createMcpServer(target, options);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, repoId, used: Date.now() });
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await mcpServer.connect(transport);
    if (repoId !== undefined) state.repo_id = repoId;
    state.recorded = true;
    return transport.handleRequest(c.req.raw);
  }

  /** The repository a session serves: `?repo_id=` (an id or a name), else the only one registered, else none (each call names one). */
  private async repoOf(asked: string | undefined): Promise<string | undefined> {
    if (asked !== undefined && asked !== '') return this.host.resolve(asked);
    const repos = await this.host.registry.list();
    return repos.length === 1 ? repos[0]!.repo_id : undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) {
      if (now - session.used > MCP_IDLE_MS) {
        this.sessions.delete(id);
        void session.transport.close();
      }
    }
  }

  private evictOldest(): void {
    let oldest: [string, { used: number; transport: WebStandardStreamableHTTPServerTransport }] | undefined;
    for (const entry of this.sessions) if (!oldest || entry[1].used < oldest[1].used) oldest = entry;
    if (oldest) {
      this.sessions.delete(oldest[0]);
      void oldest[1].transport.close();
    }
  }

  async close(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((session) => session.transport.close().catch(() => undefined)));
  }
}

/** A running server: its URL, and `close` (stops taking requests, ends MCP sessions; the host is the caller's). */
export interface RunningHttpServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serve the API on `options.host:port`. Refuses any address but loopback without a token: a
 * team server on the network answers only requests that carry it.
 */
export async function startHttpServer(host: RepoHost, options: HttpOptions): Promise<RunningHttpServer> {
  if (!isLoopback(options.host) && !options.token) {
    throw new RepodexError(
      'BAD_REQUEST',
      `serving on ${options.host} opens the server to the network: give it a bearer token first (--token-file FILE, a file holding a long random token, e.g. \`openssl rand -hex 32 > token\`), or bind 127.0.0.1`,
      { selfContained: true },
    );
  }
  const { app, close } = createHttpApp(host, options);
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const listening = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, () => resolve(listening));
    listening.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new RepodexError('BAD_REQUEST', `port ${options.port} on ${options.host} is in use: stop what holds it, or pass --port`, { selfContained: true })
          : new RepodexError('BAD_REQUEST', `cannot listen on ${options.host}:${options.port}: ${error.message}`, { selfContained: true }),
      ),
    );
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    async close() {
      await close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

