import { z } from 'zod';
import { LANGUAGES } from '../scan/language.js';
import { DEFAULT_TOP_K, MAX_TOP_K } from '../search/search.js';
import { MAX_FETCH_LINES } from '../engine/fetch.js';

/**
 * The one contract: every front end (CLI flags, JSONL lines, MCP calls, HTTP bodies) parses its
 * input with these schemas once, at the edge. Caps are applied here (`top_k` above 20 becomes 20,
 * seed 000), so the engine only ever sees valid, bounded requests.
 */

const requestId = z.union([z.string().max(256), z.number()]).optional();

/** `status`: no arguments. */
export const StatusRequest = z.object({ op: z.literal('status'), id: requestId }).strict();

/** `sync`: `force` rebuilds from scratch. */
export const SyncRequest = z.object({ op: z.literal('sync'), id: requestId, force: z.boolean().optional() }).strict();

/** `search`: English query text, optional caps and filters. */
export const SearchRequest = z
  .object({
    op: z.literal('search'),
    id: requestId,
    q: z.string().trim().min(1, 'q must not be empty').max(4096, 'q is limited to 4096 characters'),
    top_k: z
      .number()
      .int()
      .min(1, 'top_k must be at least 1')
      .transform((n) => Math.min(n, MAX_TOP_K))
      .optional(),
    mode: z.enum(['bm25', 'idf']).optional(),
    glob: z.string().min(1).max(1024).optional(),
    lang: z.enum(LANGUAGES).optional(),
  })
  .strict();

/** `fetch`: chunk ids from a search (only the first 5 are processed) and a line cap. */
export const FetchRequest = z
  .object({
    op: z.literal('fetch'),
    id: requestId,
    ids: z.array(z.number().int().min(0).max(0xffffffff)).min(1, 'ids must list at least one chunk id').max(1000),
    max_lines: z
      .number()
      .int()
      .min(1, 'max_lines must be at least 1')
      .transform((n) => Math.min(n, MAX_FETCH_LINES))
      .optional(),
  })
  .strict();

/** Every request the JSONL protocol accepts, told apart by `op`. */
export const Request = z.discriminatedUnion('op', [StatusRequest, SyncRequest, SearchRequest, FetchRequest]);

/** A parsed request. */
export type Request = z.infer<typeof Request>;
/** The names of the operations. */
export type Op = Request['op'];
/** The operations, for error messages and help. */
export const OPS: readonly Op[] = ['status', 'sync', 'search', 'fetch'];

export const DEFAULTS = { top_k: DEFAULT_TOP_K, max_lines: MAX_FETCH_LINES, mode: 'bm25' } as const;

/** One line of zod issues, readable by a person or an agent. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.join('.') : '';
      if (issue.code === 'unrecognized_keys') return `unknown field(s): ${issue.keys.join(', ')}`;
      return where ? `${where}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
