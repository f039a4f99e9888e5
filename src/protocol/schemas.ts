import { EMBEDDING_PROVIDERS } from '../core/config.js';
import * as z from 'zod/mini';
import { LANGUAGES } from '../scan/language.js';
import { DEFAULT_TOP_K, MAX_QUERY_CHARS } from '../search/search.js';
import { DEFAULT_AUDIT_LIMIT, MAX_AUDIT_LIMIT } from '../engine/audit.js';
import { MAX_BUNDLE_LINES } from '../engine/engine.js';
import { MAX_FETCH_LINES } from '../engine/fetch.js';
import { DEFAULT_FILES_LIMIT, MAX_FILES_LIMIT } from '../engine/files.js';

export { describeIssues } from '../core/issues.js';

/**
 * The one contract: every front end (CLI flags, JSONL lines, MCP calls, HTTP bodies) parses its
 * input with these schemas once, at the edge. Fixed caps are applied here (`max_lines` above 120
 * becomes 120); the caps a server sets (`top_k`, `max_files`) are applied by the engine, and the
 * answer says so in `warnings` when one cut a request.
 */

const requestId = z.optional(
  z.union([z.string().check(z.maxLength(256, 'must be at most 256 characters')), z.number()], { error: 'must be a string or a number' }),
);

/**
 * A whole number of at least `min`, and at most `max` when given. A number too large to count
 * exactly (`1e308`) is still whole: it is "at most `max`" that it fails, or the cap that takes it,
 * never "must be a whole number". JSON Schema calls it an integer.
 */
export function wholeNumber(min: number, max?: number, description?: string): z.ZodMiniNumber<number> {
  const schema = z.number('must be a number').check(
    z.refine((n: number) => Number.isInteger(n), { error: (issue) => `must be a whole number, got ${String(issue.input)}`, abort: true }),
    z.minimum(min, `must be at least ${min}`),
    ...(max === undefined ? [] : [z.maximum(max, `must be at most ${max}`)]),
  );
  return schema.register(z.globalRegistry, { type: 'integer', ...(description !== undefined ? { description } : {}) } as never);
}

/**
 * Text that holds more than white space, at most `max` characters as sent, trimmed once valid:
 * checked in that order so that JSON Schema (`maxLength`, `pattern`) says exactly what is taken.
 */
const text = (max: number) => z.string().check(z.maxLength(max, `must be at most ${max} characters`), z.regex(/\S/, 'must not be empty'), z.trim());

/** A chunk id: what JSON Schema calls an integer from 0 to 2³²−1. */
const chunkId = z
  .number('must be a chunk id: a whole number from 0 to 4294967295')
  .check(z.refine((id) => Number.isInteger(id) && id >= 0 && id <= 0xffffffff, 'must be a chunk id: a whole number from 0 to 4294967295'))
  .register(z.globalRegistry, { type: 'integer', minimum: 0, maximum: 0xffffffff } as never);

/** The fixed cap of each capped count, for the front ends that advertise it (MCP: as the maximum). */
const CAP_OF = new WeakMap<object, number>();

/** A whole number at least 1, capped (not rejected) at `cap`. */
function cappedCount(cap: number) {
  const schema = z.pipe(
    wholeNumber(1),
    z.transform((n: number) => Math.min(n, cap)),
  );
  CAP_OF.set(schema, cap);
  return schema;
}

/** The fixed cap of a request field (`max_lines` of a fetch: 120), or undefined when it has none. */
export function capOf(field: z.ZodMiniType): number | undefined {
  const def = field._zod.def as { type: string; innerType?: z.ZodMiniType };
  return CAP_OF.get(def.type === 'optional' && def.innerType ? def.innerType : field);
}

/** `init`: no arguments (CLI only). */
export const InitRequest = z.strictObject({ op: z.literal('init'), id: requestId });

/** `status`: no arguments. */
export const StatusRequest = z.strictObject({ op: z.literal('status'), id: requestId });

/** `verify`: check every checksum and cross-reference of the index. */
export const VerifyRequest = z.strictObject({ op: z.literal('verify'), id: requestId });

/** `clean`: remove the index (CLI only). */
export const CleanRequest = z.strictObject({ op: z.literal('clean'), id: requestId });

/** `sync`: `force` rebuilds from scratch. */
export const SyncRequest = z.strictObject({
  op: z.literal('sync'),
  id: requestId,
  force: z.optional(z.boolean()),
  /** Switch the embedder (written to config.json's embeddings.provider) before syncing; `on`: the configured one, or builtin when embeddings are off. */
  embeddings: z.optional(z.enum([...EMBEDDING_PROVIDERS, 'on'])),
});

/** `search`: English query text, optional caps and filters. */
export const SearchRequest = z.strictObject({
  op: z.literal('search'),
  id: requestId,
  // Bug reports with stack traces and pasted diffs run long; the search weighs their terms (selectQueryTerms).
  q: text(MAX_QUERY_CHARS),
  // Capped by the engine at the max_search_hits limit (20 by default), with a warning when that cut the request.
  top_k: z.optional(wholeNumber(1)),
  mode: z.optional(z.enum(['bm25', 'idf', 'vector', 'hybrid'])),
  glob: z.optional(z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(1024, 'must be at most 1024 characters'))),
  lang: z.optional(z.enum(LANGUAGES)),
});

/** `fetch`: chunk ids from a search (only the first 5 are processed) and a line cap. */
export const FetchRequest = z.strictObject({
  op: z.literal('fetch'),
  id: requestId,
  ids: z.array(chunkId).check(z.minLength(1, 'must list at least one chunk id'), z.maxLength(1000, 'must list at most 1000 chunk ids')),
  max_lines: z.optional(cappedCount(MAX_FETCH_LINES)),
});

/** `open`: a bounded line range of any file under the root (sandboxed, denylisted). */
export const OpenRequest = z.strictObject({
  op: z.literal('open'),
  id: requestId,
  path: z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(4096, 'must be at most 4096 characters')),
  start_line: z.optional(wholeNumber(1, undefined, 'the first line (1 is the first); a line past the end of the file is refused, naming its length')),
  end_line: z.optional(wholeNumber(1, undefined, 'the last line; past the end of the file reads to the end')),
});

/** `outline`: the declarations of one file. */
export const OutlineRequest = z.strictObject({
  op: z.literal('outline'),
  id: requestId,
  path: z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(4096, 'must be at most 4096 characters')),
});

/** `files`: catalogued files, optionally filtered by glob; or what is withheld as a secret. */
export const FilesRequest = z.strictObject({
  op: z.literal('files'),
  id: requestId,
  glob: z.optional(z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(1024, 'must be at most 1024 characters'))),
  limit: z.optional(cappedCount(MAX_FILES_LIMIT)),
  /** List files and folders whose name starts with "." too (default false). */
  include_hidden: z.optional(z.boolean()),
  /** List instead what is withheld as a secret (hidden ones too), each with why: a credential in its text (rule, line), a secret file name, a name shaped like a credential. */
  blocked: z.optional(z.boolean()),
});

/** `bundle`: a context bundle for a task prompt (SPEC §5). */
export const BundleRequest = z.strictObject({
  op: z.literal('bundle'),
  id: requestId,
  prompt: text(65_536),
  // Capped by the engine at the max_bundle_files limit, with a warning when that cut the request.
  max_files: z.optional(wholeNumber(1)),
  max_lines: z.optional(cappedCount(MAX_BUNDLE_LINES)),
  include_tests: z.optional(z.boolean()),
  /** How the bundle is made: `deterministic`, the one strategy built (`hybrid` is taken, and answered deterministically with a warning). */
  strategy: z.optional(z.enum(['deterministic', 'hybrid'])),
});

/** `audit`: recent calls from `.repodex/audit.jsonl`. */
export const AuditRequest = z.strictObject({
  op: z.literal('audit'),
  id: requestId,
  since: z.optional(
    z.string().check(
      z.minLength(1, 'must not be empty'),
      z.maxLength(64, 'must be at most 64 characters'),
      // What the audit log reads (engine/audit.ts parseSince), as JSON Schema can say it: a duration, or a time from its date on.
      z.regex(/^\s*(?:\d+\s*[smhdw]\s*|\d{4}-\d{2}-\d{2}[\s\S]*)$/, { error: (issue) => `must be an ISO time (2026-11-24T10:00:00Z) or a duration such as 15m, 2h or 7d, got ${JSON.stringify(issue.input)}` }),
    ),
  ),
  limit: z.optional(cappedCount(MAX_AUDIT_LIMIT)),
});

/** Every request, told apart by `op`. */
export const Request = z.discriminatedUnion('op', [
  InitRequest,
  StatusRequest,
  SyncRequest,
  SearchRequest,
  FetchRequest,
  OpenRequest,
  OutlineRequest,
  FilesRequest,
  VerifyRequest,
  CleanRequest,
  BundleRequest,
  AuditRequest,
]);

/** A parsed request. */
export type Request = z.infer<typeof Request>;
/** The names of the operations. */
export type Op = Request['op'];
/** The request of one op. */
export type RequestOf<O extends Op> = Extract<Request, { op: O }>;
/** Defaults applied by the engine when a request leaves a field out. */
export const DEFAULTS = { top_k: DEFAULT_TOP_K, max_lines: MAX_FETCH_LINES, mode: 'bm25', files_limit: DEFAULT_FILES_LIMIT, audit_limit: DEFAULT_AUDIT_LIMIT } as const;
