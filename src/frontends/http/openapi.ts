import type * as z from 'zod/mini';
import { toJSONSchema } from 'zod/v4/core';
import { TOOL_VERSION } from '../../core/version.js';
import { RESPONSES } from '../../protocol/responses.js';
import { AddRepoBody, AddRepoResponse, ErrorResponse, HealthResponse, IndexStatusResponse, OP_ROUTES, PushBody, RepoIdBody, RepoSchema, ReposResponse } from './routes.js';

/** JSON Schema (2020-12, what OpenAPI 3.1 uses) of a zod schema. */
function schema(of: z.ZodMiniType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = toJSONSchema(of, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

const json = (of: z.ZodMiniType, io: 'input' | 'output' = 'output') => ({ content: { 'application/json': { schema: schema(of, io) } } });

const errors = {
  '400': { description: 'Malformed JSON, a wrong type or a missing field (the message names it)', ...json(ErrorResponse) },
  '401': { description: 'A bearer token is needed, or the one given is wrong', ...json(ErrorResponse) },
  '404': { description: 'No repository with that id, or a file or chunk that is not there', ...json(ErrorResponse) },
  '413': { description: 'The body is larger than the server takes', ...json(ErrorResponse) },
  '429': { description: 'Too many requests from this client (Retry-After says when to ask again)', ...json(ErrorResponse) },
  '503': { description: 'The store cannot be reached, or the request took too long (it goes on in the background)', ...json(ErrorResponse) },
};

/** Query parameters of a GET route, from its input schema. */
function parameters(of: z.ZodMiniObject): Record<string, unknown>[] {
  const described = schema(of, 'input') as { properties: Record<string, unknown>; required?: string[] };
  return Object.entries(described.properties).map(([name, property]) => ({ name, in: 'query', required: (described.required ?? []).includes(name), schema: property }));
}

/** The API as an OpenAPI 3.1 document, from the same schemas the server validates with. */
export function openApiDocument(options: { readonly token?: string | undefined }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (path: string, method: string, operation: Record<string, unknown>): void => {
    paths[path] = { ...(paths[path] ?? {}), [method]: { ...operation, responses: { ...(operation.responses as object), ...errors } } };
  };
  for (const route of OP_ROUTES) {
    const operation: Record<string, unknown> = {
      operationId: route.op === 'sync' ? 'runIndex' : route.op,
      summary: route.summary,
      responses: { '200': { description: `The answer, as \`repodex ${route.op} --json\` prints it`, ...json(RESPONSES[route.op] as z.ZodMiniType) } },
    };
    if (route.method === 'GET') operation.parameters = parameters(route.input);
    else operation.requestBody = { required: true, ...json(route.input, 'input') };
    add(route.path, route.method.toLowerCase(), operation);
  }
  const repoIdPath = [{ name: 'repo_id', in: 'path', required: true, schema: { type: 'string' } }];
  add('/repos', 'get', { operationId: 'listRepos', summary: 'The registered repositories, with their state at a glance.', responses: { '200': { description: 'Repositories', ...json(ReposResponse) } } });
  add('/repos', 'post', {
    operationId: 'addRepo',
    summary: 'Register a repository: the root of a git work tree (or a folder with .repodex/) the server may read. A root already registered keeps its id.',
    requestBody: { required: true, ...json(AddRepoBody, 'input') },
    responses: { '201': { description: 'Registered', ...json(AddRepoResponse) }, '200': { description: 'Already registered', ...json(AddRepoResponse) } },
  });
  add('/repos/{repo_id}', 'delete', {
    operationId: 'removeRepo',
    summary: 'Stop serving a repository (its index stays).',
    parameters: repoIdPath,
    responses: { '200': { description: 'Removed', content: { 'application/json': { schema: { type: 'object', properties: { repo_id: { type: 'string' }, removed: { type: 'boolean' }, repo: schema(RepoSchema, 'output') } } } } } },
  });
  add('/index/status/{repo_id}', 'get', {
    operationId: 'indexStatus',
    summary: 'Index status: state, indexed commit against HEAD, counts, whether it is watched, and progress while indexing.',
    parameters: repoIdPath,
    responses: { '200': { description: 'Status', ...json(IndexStatusResponse) } },
  });
  for (const [path, summary] of [
    ['/repo/watch', 'Re-index the repository as its files change (debounced; kept across restarts).'],
    ['/repo/unwatch', 'Stop re-indexing as files change.'],
  ] as const) {
    add(path, 'post', { operationId: path === '/repo/watch' ? 'watchRepo' : 'unwatchRepo', summary, requestBody: { required: true, ...json(RepoIdBody, 'input') }, responses: { '200': { description: 'Index status', ...json(IndexStatusResponse) } } });
  }
  add('/hooks/push', 'post', {
    operationId: 'pushHook',
    summary: 'Re-index now: what a git post-commit/post-merge hook or a CI step calls, naming the repository by id or root.',
    requestBody: { required: true, ...json(PushBody, 'input') },
    responses: { '200': { description: 'The sync counters', ...json(RESPONSES.sync as z.ZodMiniType) } },
  });
  add('/health', 'get', { operationId: 'health', summary: 'Liveness, whether the store answers, and repositories by state.', security: [], responses: { '200': { description: 'Healthy', ...json(HealthResponse) } } });
  add('/mcp', 'post', {
    operationId: 'mcp',
    summary: 'MCP over Streamable HTTP: the eight repo.* tools for the repository named by ?repo_id= (an id or a name; optional with one repository).',
    parameters: [{ name: 'repo_id', in: 'query', required: false, schema: { type: 'string' } }],
    responses: { '200': { description: 'A JSON-RPC answer (JSON or an event stream)' } },
  });
  return {
    openapi: '3.1.0',
    info: { title: 'repodex team server', version: TOOL_VERSION, description: 'Ranked, bounded, sandboxed answers about many repositories. Every answer is the object `repodex <command> --json` prints.' },
    paths,
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    ...(options.token ? { security: [{ bearer: [] }] } : {}),
  };
}
