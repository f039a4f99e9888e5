import * as z from 'zod/mini';
import { toJSONSchema } from 'zod/v4/core';
import { TOOL_VERSION } from '../../core/version.js';
import { RESPONSES } from '../../protocol/responses.js';
import {
  AddRepoBody,
  AddRepoResponse,
  ErrorResponse,
  FetchRefusalResponse,
  HealthResponse,
  IndexStatusResponse,
  OP_ROUTES,
  PathRefusalResponse,
  PushBody,
  RemoveRepoResponse,
  RepoIdBody,
  ReposResponse,
} from './routes.js';

/** JSON Schema (2020-12, what OpenAPI 3.1 uses) of a zod schema. */
function schema(of: z.ZodMiniType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = toJSONSchema(of, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

type Schema = Record<string, unknown>;

const json = (of: Schema) => ({ content: { 'application/json': { schema: of } } });
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const oneOf = (...schemas: Schema[]): Schema => (schemas.length === 1 ? schemas[0]! : { oneOf: schemas });

/** What a failure of each status means; the codes it may carry are listed after it. */
const MEANING: Readonly<Record<number, string>> = {
  400: 'The request is malformed: not JSON, a wrong type, a missing or an unknown field (the message names it)',
  401: 'A bearer token is needed, or the one sent is wrong; without a token, the request named another Host than this server',
  403: 'The read is refused: a secret, or a path outside the repository (`blocked: true`; the hint says what to do)',
  404: 'No repository with that id; or the file, folder or chunk asked for is not there (a refusal with `blocked: false`)',
  409: 'The repository or the server stands in the way: another sync holds the lock; its config, environment or embedder is invalid; its index is missing, damaged or from another version; its files cannot be written (the message says what to do)',
  413: 'The body is larger than the server takes (--max-body-bytes on serve)',
  415: 'The body is not sent as JSON (Content-Type: application/json)',
  429: 'Too many requests from this client (Retry-After says when to ask again)',
  500: 'A bug in the server (it logs the details under the request id)',
  503: 'Nothing is wrong with the request: the store cannot be reached or was lost, the index changed while answering, the server was stopping, or the request took too long (the work it started goes on); ask again in a moment',
  507: "The server's disk is full",
};

/** How the server answers failures: every code it may send, and the status of each. */
export interface FailureTable<C extends string> {
  readonly codes: readonly C[];
  statusOf(code: C): number;
}

/** The error of a JSON-RPC 2.0 answer. */
const JSON_RPC_ERROR_OBJECT: Schema = { type: 'object', properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} }, required: ['code', 'message'], additionalProperties: false };

const JSON_RPC_ID: Schema = { type: ['string', 'number', 'null'] };

/** JSON-RPC 2.0 error answers of /mcp (the transport's and the server's own). */
const JSON_RPC_ERROR: Schema = {
  type: 'object',
  properties: { jsonrpc: { const: '2.0' }, id: JSON_RPC_ID, error: JSON_RPC_ERROR_OBJECT },
  required: ['jsonrpc', 'id', 'error'],
  additionalProperties: false,
};

/** Any JSON-RPC 2.0 message: a request, a notification or a response. */
const JSON_RPC_MESSAGE: Schema = {
  type: 'object',
  properties: { jsonrpc: { const: '2.0' }, id: JSON_RPC_ID, method: { type: 'string' }, params: { type: ['object', 'array'] }, result: {}, error: JSON_RPC_ERROR_OBJECT },
  required: ['jsonrpc'],
};

/**
 * The API as an OpenAPI 3.1 document, from the same schemas the server validates with and the
 * same table of failure codes it answers with. Every status a route may answer is declared with
 * the body it has; security follows the server's option: a bearer token when it has one.
 */
export function openApiDocument<C extends string>(options: { readonly token?: string | undefined }, failures: FailureTable<C>): Record<string, unknown> {
  const codesOf = new Map<number, C[]>();
  for (const code of failures.codes) {
    const status = failures.statusOf(code);
    codesOf.set(status, [...(codesOf.get(status) ?? []), code]);
  }
  const schemas: Record<string, Schema> = {};
  /** The failure schema of a status: its codes enumerated. */
  const failureOf = (status: number): Schema => {
    const name = `Failure${status}`;
    const codes = (codesOf.get(status) ?? []).filter((code) => code !== 'BLOCKED' && code !== 'REFUSED');
    schemas[name] ??= schema(z.extend(ErrorResponse, { code: z.enum(codes as [C, ...C[]]) }));
    return ref(name);
  };
  /** The refusal schema of a read (`path`: open, outline; `chunks`: fetch) answered with `status`, or none. */
  const refusalOf = (kind: 'path' | 'chunks', status: number): Schema | undefined => {
    const code = (['BLOCKED', 'REFUSED'] as const).find((refusal) => failures.statusOf(refusal as C) === status);
    if (!code) return undefined;
    const name = `${kind === 'path' ? 'Path' : 'Fetch'}Refusal${status}`;
    const base = kind === 'path' ? PathRefusalResponse : FetchRefusalResponse;
    schemas[name] ??= schema(z.extend(base, { code: z.literal(code), blocked: z.literal(code === 'BLOCKED') }));
    return ref(name);
  };
  const described = (status: number): string => {
    const codes = codesOf.get(status) ?? [];
    return `${MEANING[status] ?? `HTTP ${status}`}${codes.length ? `. Codes: ${codes.join(', ')}.` : '.'}`;
  };
  const headers = (status: number): Record<string, unknown> => ({
    'X-Request-Id': { $ref: '#/components/headers/RequestId' },
    ...(status === 429 ? { 'Retry-After': { description: 'Seconds until this client may ask again', schema: { type: 'integer', minimum: 1 } } } : {}),
    ...(status === 401 ? { 'WWW-Authenticate': { description: 'Bearer realm="repodex" when a token is needed', schema: { type: 'string' } } } : {}),
  });
  /** The failure answers of an operation: each status with the failure schema of its codes, or the bodies given for it. */
  const failing = (statuses: readonly number[], bodies: Readonly<Record<number, readonly Schema[]>> = {}): Record<string, unknown> =>
    Object.fromEntries(
      [...new Set([...statuses, ...Object.keys(bodies).map(Number)])]
        .sort((a, b) => a - b)
        .map((status) => [String(status), { description: described(status), headers: headers(status), ...json(oneOf(...(statuses.includes(status) ? [failureOf(status)] : []), ...(bodies[status] ?? []))) }]),
    );
  const answer = (description: string, body: Schema) => ({ description, headers: headers(200), ...json(body) });

  // Every API request: the token (or Host) check, the rate limit, a failure of the server itself.
  const always = [401, 429, 500];
  const body = [400, 413, 415];

  const paths: Record<string, Record<string, unknown>> = {};
  const add = (path: string, method: string, operation: Record<string, unknown>): void => {
    paths[path] = { ...(paths[path] ?? {}), [method]: operation };
  };
  for (const route of OP_ROUTES) {
    const refusals: Record<number, Schema[]> = {};
    for (const status of route.refuses ? [403, 404] : []) {
      const refusal = refusalOf(route.refuses!, status);
      if (refusal) refusals[status] = [refusal];
    }
    add(route.path, route.method.toLowerCase(), {
      operationId: route.op === 'sync' ? 'runIndex' : route.op,
      summary: route.summary,
      ...(route.method === 'GET' ? { parameters: parameters(route.input) } : { requestBody: { required: true, ...json(schema(route.input, 'input')) } }),
      responses: {
        '200': answer(`The answer, as \`repodex ${route.op} --json\` prints it`, schema(RESPONSES[route.op] as z.ZodMiniType)),
        ...failing([...always, 400, 404, 409, 503, 507, ...(route.method === 'POST' ? [413, 415] : [])], refusals),
      },
    });
  }
  const repoIdPath = [{ name: 'repo_id', in: 'path', required: true, schema: { type: 'string' } }];
  add('/repos', 'get', {
    operationId: 'listRepos',
    summary: 'The registered repositories, with their state at a glance.',
    responses: { '200': answer('Repositories', schema(ReposResponse)), ...failing([...always, 409, 503]) },
  });
  add('/repos', 'post', {
    operationId: 'addRepo',
    summary: 'Register a repository: the root of a git work tree (or a folder with .repodex/) the server may read. A root already registered keeps its id.',
    requestBody: { required: true, ...json(schema(AddRepoBody, 'input')) },
    responses: { '200': answer('Already registered', schema(AddRepoResponse)), '201': { ...answer('Registered', schema(AddRepoResponse)) }, ...failing([...always, ...body, 409, 503, 507]) },
  });
  add('/repos/{repo_id}', 'delete', {
    operationId: 'removeRepo',
    summary: 'Stop serving a repository (its index stays).',
    parameters: repoIdPath,
    responses: { '200': answer('Removed', schema(RemoveRepoResponse)), ...failing([...always, 404, 409, 413, 503, 507]) },
  });
  add('/index/status/{repo_id}', 'get', {
    operationId: 'indexStatus',
    summary: 'Index status: state, indexed commit against HEAD, counts, whether it is watched, and progress while indexing.',
    parameters: repoIdPath,
    responses: { '200': answer('Status', schema(IndexStatusResponse)), ...failing([...always, 404, 409, 503]) },
  });
  for (const [path, operationId, summary] of [
    ['/repo/watch', 'watchRepo', 'Re-index the repository as its files change (debounced; kept across restarts).'],
    ['/repo/unwatch', 'unwatchRepo', 'Stop re-indexing as files change.'],
  ] as const) {
    add(path, 'post', {
      operationId,
      summary,
      requestBody: { required: true, ...json(schema(RepoIdBody, 'input')) },
      responses: { '200': answer('Index status', schema(IndexStatusResponse)), ...failing([...always, ...body, 404, 409, 503, 507]) },
    });
  }
  add('/hooks/push', 'post', {
    operationId: 'pushHook',
    summary: 'Re-index now: what a git post-commit/post-merge hook or a CI step calls, naming the repository by id or root.',
    requestBody: { required: true, ...json(schema(PushBody, 'input')) },
    responses: { '200': answer('The sync counters', schema(RESPONSES.sync as z.ZodMiniType)), ...failing([...always, ...body, 404, 409, 503, 507]) },
  });
  add('/health', 'get', {
    operationId: 'health',
    summary: 'Liveness, whether the store answers, and repositories by state.',
    responses: { '200': answer('Healthy', schema(HealthResponse)), ...failing(always, { 503: [schema(HealthResponse)] }) },
  });
  add('/openapi.json', 'get', {
    operationId: 'openApi',
    summary: 'This document.',
    responses: { '200': answer('The OpenAPI 3.1 document of this server', { type: 'object' }), ...failing(always) },
  });

  // MCP's Streamable HTTP transport: JSON-RPC bodies, and the server's own failures before a request reaches it.
  const rpc = ref('JsonRpcError');
  const session = { name: 'Mcp-Session-Id', in: 'header', required: false, description: 'The session, as the answer to initialize named it', schema: { type: 'string' } };
  const version = { name: 'Mcp-Protocol-Version', in: 'header', required: false, description: 'The protocol version initialize settled on', schema: { type: 'string' } };
  const rpcFailures = (statuses: readonly number[]): Record<string, unknown> =>
    Object.fromEntries(statuses.map((status) => [String(status), { description: `A JSON-RPC error: ${MCP_MEANING[status]}`, headers: headers(status), ...json(rpc) }]));
  add('/mcp', 'post', {
    operationId: 'mcp',
    summary: 'MCP over Streamable HTTP: the eight repo.* tools for the repository named by ?repo_id= (an id or a name; optional with one repository).',
    parameters: [{ name: 'repo_id', in: 'query', required: false, description: 'The repository a new session serves (read on initialize)', schema: { type: 'string' } }, session, version],
    requestBody: { required: true, ...json({ anyOf: [ref('JsonRpcMessage'), { type: 'array', items: ref('JsonRpcMessage'), minItems: 1 }] }) },
    responses: {
      '200': {
        description: 'The JSON-RPC answer: JSON, or an event stream of messages',
        headers: { ...headers(200), 'Mcp-Session-Id': { description: 'The new session (the answer to initialize)', schema: { type: 'string' } } },
        content: {
          'application/json': { schema: { anyOf: [ref('JsonRpcMessage'), { type: 'array', items: ref('JsonRpcMessage') }] } },
          'text/event-stream': { schema: { type: 'string', description: 'Server-sent events; the data of each is one JSON-RPC message' } },
        },
      },
      '202': { description: 'A notification or a response was accepted (no body)', headers: headers(202) },
      ...rpcFailures([400, 404, 406, 415]),
      ...failing([...always, 413, 503], { 413: [rpc], 500: [rpc] }),
    },
  });
  add('/mcp', 'get', {
    operationId: 'mcpStream',
    summary: 'The event stream of an MCP session: messages the server sends on its own.',
    parameters: [session, version],
    responses: {
      '200': { description: 'Server-sent events', headers: headers(200), content: { 'text/event-stream': { schema: { type: 'string' } } } },
      ...rpcFailures([400, 404, 406, 409]),
      ...failing(always, { 500: [rpc] }),
    },
  });
  add('/mcp', 'delete', {
    operationId: 'mcpEnd',
    summary: 'End an MCP session.',
    parameters: [session, version],
    responses: { '200': { description: 'The session is ended (no body)', headers: headers(200) }, ...rpcFailures([400, 404]), ...failing([...always, 413], { 500: [rpc] }) },
  });

  const token = options.token !== undefined;
  return {
    openapi: '3.1.0',
    info: {
      title: 'repodex team server',
      version: TOOL_VERSION,
      description: 'Ranked, bounded, sandboxed answers about many repositories. Every answer is the object `repodex <command> --json` prints; every failure is `{ok:false, code, error, hint?, request_id}`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'The server that serves this document' }],
    // Without a token the API is open to this machine (a loopback address): no scheme to declare.
    security: token ? [{ bearer: [] }] : [],
    paths,
    components: {
      schemas: { ...sorted(schemas), JsonRpcMessage: JSON_RPC_MESSAGE, JsonRpcError: JSON_RPC_ERROR },
      headers: { RequestId: { description: 'The id of this request, as the audit log and the server log record it', schema: { type: 'string' } } },
      ...(token ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The token the server was started with (--token-file)' } } } : {}),
    },
  };
}

/** What each JSON-RPC failure status of /mcp means. */
const MCP_MEANING: Readonly<Record<number, string>> = {
  400: 'not JSON-RPC, a request without a session (start one with initialize), or an unsupported protocol version',
  404: 'no such session (the server restarted or it expired: initialize a new one), or no such repository',
  406: 'the client must accept application/json and text/event-stream',
  409: 'the session already has an event stream',
  415: 'the body must be sent as application/json',
};

function sorted(schemas: Record<string, Schema>): Record<string, Schema> {
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}

/** Query parameters of a GET route, from its input schema. */
function parameters(of: z.ZodMiniObject): Record<string, unknown>[] {
  const described = schema(of, 'input') as { properties: Record<string, unknown>; required?: string[] };
  return Object.entries(described.properties).map(([name, property]) => ({ name, in: 'query', required: (described.required ?? []).includes(name), schema: property }));
}
