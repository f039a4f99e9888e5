import * as z from 'zod/mini';
import { RESPONSES } from '../../protocol/responses.js';
import { AuditRequest, BundleRequest, type CallResult, FetchRequest, FilesRequest, type Op, OpenRequest, OutlineRequest, SearchRequest, SyncRequest } from '../../protocol/index.js';

/**
 * The HTTP API's requests, each mapped onto one op of the shared protocol (the same validation,
 * freshness policy, safety, limits and audit log as every other front end), and the answers of
 * the routes that are the server's own (repositories, index status, health). One table feeds the
 * router and `/openapi.json`, so the document cannot drift from what is served.
 */

const repoId = z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(100, 'must be at most 100 characters'));

/** A route that runs one op for one repository. */
export interface OpRoute {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly op: Op;
  readonly summary: string;
  /** The request: a JSON body (POST) or query parameters (GET); always with `repo_id`. */
  readonly input: z.ZodMiniObject;
  /** Query parameters read as numbers or booleans (a query string holds only text). */
  readonly numbers?: readonly string[];
  readonly booleans?: readonly string[];
  /** The op request for validated input. */
  toRequest(input: Record<string, unknown>): Record<string, unknown>;
  /** The HTTP field names of op fields, so errors name what the client sent. */
  readonly fieldNames?: Readonly<Record<string, string>>;
  /** Requests that may run a whole sync get longer than the request timeout. */
  readonly long?: boolean;
  /** A read that may be refused (a secret, a path outside the repository, a chunk that is gone): 403 or 404 with what it can still say. */
  readonly refuses?: 'path' | 'chunks';
}

export const OP_ROUTES: readonly OpRoute[] = [
  {
    method: 'POST',
    path: '/search',
    op: 'search',
    summary: 'Ranked code chunks for a query (indexes first when the index is missing or stale).',
    input: z.strictObject({ repo_id: repoId, query: SearchRequest.shape.q, mode: SearchRequest.shape.mode, top_k: SearchRequest.shape.top_k, glob: SearchRequest.shape.glob, lang: SearchRequest.shape.lang }),
    toRequest: (input) => ({ op: 'search', q: input.query, mode: input.mode, top_k: input.top_k, glob: input.glob, lang: input.lang }),
    fieldNames: { q: 'query' },
    long: true,
  },
  {
    method: 'POST',
    path: '/fetch',
    op: 'fetch',
    summary: 'Line-numbered text of chunks by id (at most 5 ids, 120 lines each).',
    input: z.strictObject({ repo_id: repoId, ids: FetchRequest.shape.ids, max_lines: FetchRequest.shape.max_lines }),
    toRequest: (input) => ({ op: 'fetch', ids: input.ids, max_lines: input.max_lines }),
    long: true,
    refuses: 'chunks',
  },
  {
    method: 'GET',
    path: '/outline',
    op: 'outline',
    summary: 'The declarations of one file.',
    input: z.strictObject({ repo_id: repoId, path: OutlineRequest.shape.path }),
    toRequest: (input) => ({ op: 'outline', path: input.path }),
    refuses: 'path',
  },
  {
    method: 'GET',
    path: '/open',
    op: 'open',
    summary: 'A bounded, line-numbered range of a file (sandboxed, secrets refused).',
    input: z.strictObject({ repo_id: repoId, path: OpenRequest.shape.path, start: OpenRequest.shape.start_line, end: OpenRequest.shape.end_line }),
    numbers: ['start', 'end'],
    toRequest: (input) => ({ op: 'open', path: input.path, start_line: input.start, end_line: input.end }),
    fieldNames: { start_line: 'start', end_line: 'end' },
    refuses: 'path',
  },
  {
    method: 'POST',
    path: '/bundle',
    op: 'bundle',
    summary: 'The context a task needs: cited excerpts with reasons, within a budget.',
    input: z.strictObject({ repo_id: repoId, prompt: BundleRequest.shape.prompt, max_files: BundleRequest.shape.max_files, max_lines: BundleRequest.shape.max_lines, include_tests: BundleRequest.shape.include_tests }),
    toRequest: (input) => ({ op: 'bundle', prompt: input.prompt, max_files: input.max_files, max_lines: input.max_lines, include_tests: input.include_tests }),
    long: true,
  },
  {
    method: 'GET',
    path: '/files',
    op: 'files',
    summary: 'The catalogued files, with size, mtime and language; with blocked=true, what is withheld as a secret, each with a reason.',
    input: z.strictObject({ repo_id: repoId, glob: FilesRequest.shape.glob, limit: FilesRequest.shape.limit, include_hidden: FilesRequest.shape.include_hidden, blocked: FilesRequest.shape.blocked }),
    numbers: ['limit'],
    booleans: ['include_hidden', 'blocked'],
    toRequest: (input) => ({ op: 'files', glob: input.glob, limit: input.limit, include_hidden: input.include_hidden, blocked: input.blocked }),
    long: true,
  },
  {
    method: 'GET',
    path: '/status',
    op: 'status',
    summary: 'The whole status of one repository, as `repodex status --json` prints it.',
    input: z.strictObject({ repo_id: repoId }),
    toRequest: () => ({ op: 'status' }),
  },
  {
    method: 'GET',
    path: '/audit',
    op: 'audit',
    summary: 'Recent calls from the repository’s audit log.',
    input: z.strictObject({ repo_id: repoId, since: AuditRequest.shape.since, limit: AuditRequest.shape.limit }),
    numbers: ['limit'],
    toRequest: (input) => ({ op: 'audit', since: input.since, limit: input.limit }),
  },
  {
    method: 'POST',
    path: '/index/run',
    op: 'sync',
    summary: 'Re-index now (only changed files are read; force rebuilds everything). Answers the sync counters.',
    input: z.strictObject({ repo_id: repoId, force: SyncRequest.shape.force }),
    toRequest: (input) => ({ op: 'sync', force: input.force }),
    long: true,
  },
];

// The server's own routes.

export const AddRepoBody = z.strictObject({
  root: z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(4096, 'must be at most 4096 characters')),
  name: z.optional(z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(100, 'must be at most 100 characters'))),
});

export const RepoIdBody = z.strictObject({ repo_id: repoId });

/** `/hooks/push`: the repository by id, or by its root (what a git hook knows). */
export const PushBody = z.strictObject({ repo_id: z.optional(repoId), root: z.optional(AddRepoBody.shape.root), force: z.optional(z.boolean()) });

const nullableString = z.nullable(z.string());

const Progress = z.nullable(
  z.object({
    phase: z.enum(['scan', 'index', 'write', 'train', 'embed', 'graph']),
    done: z.nullable(z.int()),
    total: z.nullable(z.int()),
    started_at: z.string(),
  }),
);

const State = z.enum(['pending', 'indexing', 'ready', 'stale']);

export const RepoSchema = z.object({ repo_id: z.string(), root: z.string(), name: z.string(), added_at: z.string(), watch: z.boolean() });

export const RepoListing = z.object({ ...RepoSchema.shape, index_status: State, progress: Progress, problem: nullableString });

export const ReposResponse = z.object({ repos: z.array(RepoListing) });

/** `DELETE /repos/{repo_id}`: the repository no longer served (its index stays). */
export const RemoveRepoResponse = z.object({ repo_id: z.string(), removed: z.literal(true), repo: RepoSchema });

export const AddRepoResponse = z.object({ repo_id: z.string(), created: z.boolean(), repo: RepoSchema });

export const IndexStatusResponse = z.object({
  repo_id: z.string(),
  name: z.string(),
  root: z.string(),
  index_status: State,
  last_indexed_commit: nullableString,
  last_indexed_at: nullableString,
  current_head: nullableString,
  is_stale: z.boolean(),
  chunk_count: z.int(),
  files_indexed: z.int(),
  chunks_with_embeddings: z.int(),
  vectors_note: nullableString,
  watcher_active: z.boolean(),
  progress: Progress,
  reasons: z.array(z.string()),
  damage: z.array(z.string()),
});

export const HealthResponse = z.object({
  ok: z.boolean(),
  version: z.string(),
  uptime_s: z.number(),
  store: z.object({ kind: z.enum(['fs', 'postgres']), where: z.string(), reachable: z.boolean(), problem: nullableString }),
  repos: z.object({ total: z.int(), ready: z.int(), indexing: z.int(), stale: z.int(), pending: z.int(), unavailable: z.int() }),
});

/** What every failure answer holds. */
const failure = { ok: z.literal(false), code: z.string(), error: z.string(), hint: z.optional(z.string()), request_id: z.string() };

/** A failure: `{ok:false, code, error, hint?, request_id}`. */
export const ErrorResponse = z.object(failure);

/** A refused `open` or `outline`: the failure, with the path and whether it was blocked (a secret, outside the repository) or is not there. */
export const PathRefusalResponse = z.object({ ...failure, hint: z.string(), path: z.string(), blocked: z.boolean() });

/** A fetch that served none of its chunks: the failure (its first refused chunk's), with the whole answer and each chunk's reason. */
export const FetchRefusalResponse = z.extend(RESPONSES.fetch, { ...failure, hint: z.string(), blocked: z.boolean() });

/**
 * The body of a refused read: a failure like any other (`ok:false`, the code, the message, the
 * hint, the request id), followed by what the answer still says (`path` and `blocked`; a fetch's
 * chunks, each with its reason).
 */
export function refusalBody(result: CallResult, requestId: string): Record<string, unknown> {
  const error = result.error!;
  return { ok: false, code: error.code, error: error.message, ...(error.hint !== undefined ? { hint: error.hint } : {}), request_id: requestId, blocked: result.blocked, ...(result.data as object) };
}
