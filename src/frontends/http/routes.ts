import * as z from 'zod/mini';
import { RESPONSES } from '../../protocol/responses.js';
import { type CallResult, OPS, type Op, REPO_ID, inputSchema, opsOn } from '../../protocol/index.js';

/**
 * The HTTP API's requests: a route for each op the op table serves over HTTP (its method, path,
 * parameter names and summary are the table's; its input is the op's request under those names,
 * with `repo_id`), and the answers of the routes that are the server's own (repositories, index
 * status, health). The routes feed the router and `/openapi.json`, so the document cannot drift
 * from what is served, nor the API from the other front ends.
 */

const repoId = REPO_ID;

/** A route that runs one op for one repository. */
export interface OpRoute {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly op: Op;
  readonly summary: string;
  /** The request: a JSON body (POST) or query parameters (GET); always with `repo_id`. */
  readonly input: z.ZodMiniObject;
  /** Requests that may run a whole sync get longer than the request timeout. */
  readonly long: boolean;
  /** A read that may be refused (a secret, a path outside the repository, a chunk that is gone): 403 or 404 with what it can still say. */
  readonly refuses?: 'path' | 'chunks';
}

export const OP_ROUTES: readonly OpRoute[] = opsOn('http').map((op) => {
  const { http, refuses } = OPS[op];
  const refusal = refuses === undefined ? {} : { refuses: refuses === 'whole' ? ('path' as const) : ('chunks' as const) };
  return { method: http!.method, path: http!.path, op, summary: http!.summary, input: inputSchema('http', op), long: http!.long === true, ...refusal };
});

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
