import * as z from 'zod/mini';
import { LANGUAGES } from '../scan/language.js';

/**
 * The response half of the one contract: the `data` of every op, as a zod schema. The CLI's
 * `--json`, a JSONL `data`, an MCP `result` and an HTTP body are these objects. The engine's
 * report types are checked against them at compile time (protocol/dispatch.ts) and every op's
 * real output is parsed against them in the contract tests; the schemas also give MCP its
 * `outputSchema`. They are not applied at run time on the hot path.
 */

const nullableString = z.nullable(z.string());

const LimitsSchema = z.object({
  max_file_bytes: z.int(),
  max_open_lines: z.int(),
  max_total_bytes_per_response: z.int(),
  max_search_hits: z.int(),
  max_bundle_files: z.int(),
});

const SoftError = z.object({ path: z.string(), reason: z.string() });

/** Which generation an answer came from and whether the tree still matches it. */
export const FreshnessSchema = z.object({
  generation: z.nullable(z.int()),
  indexed_commit: nullableString,
  dirty: z.boolean(),
  partial: z.optional(z.object({ files: z.int(), of: z.int() })),
});

export const InitResponse = z.object({ root: z.string(), created: z.array(z.string()), existing: z.array(z.string()) });

export const SyncResponse = z.object({
  files_scanned: z.int(),
  chunks_created: z.int(),
  chunks_unchanged: z.int(),
  chunks_deleted: z.int(),
  duration_ms: z.number(),
  mode: z.enum(['none', 'incremental', 'full']),
  full_reason: nullableString,
  found_by: z.enum(['walk', 'stat', 'git']),
  files_unchanged: z.int(),
  files_removed: z.int(),
  files_added: z.int(),
  files_updated: z.int(),
  synced_at: z.string(),
  files_cached: z.int(),
  skipped_by_reason: z.record(z.string(), z.int()),
  text_fallbacks: z.record(z.string(), z.int()),
  files_indexed: z.int(),
  files_skipped: z.int(),
  chunks_total: z.int(),
  generation: z.int(),
  merged: z.boolean(),
  partial: z.optional(z.object({ files: z.int(), of: z.int() })),
  errors: z.array(SoftError),
  embeddings: z.optional(
    z.union([
      z.object({
        engine: z.string(),
        model: z.string(),
        dim: z.int(),
        embedded: z.int(),
        reused: z.int(),
        skipped: z.int(),
        chunks: z.int(),
        vectors: z.int(),
        trained: z.boolean(),
        reason: z.optional(z.string()),
        duration_ms: z.number(),
      }),
      z.object({ error: z.string() }),
    ]),
  ),
});

const LockOwnerSchema = z.object({ pid: z.int(), host: z.string(), started: z.string() });

export const StatusResponse = z.object({
  root: z.string(),
  indexed: z.boolean(),
  dirty: z.boolean(),
  state: z.enum(['pending', 'indexing', 'ready', 'stale']),
  reasons: z.array(z.string()),
  damage: z.array(z.string()),
  changes: z.nullable(
    z.object({
      added: z.int(),
      modified: z.int(),
      removed: z.int(),
      examples: z.array(z.object({ path: z.string(), change: z.enum(['added', 'modified', 'removed']) })),
    }),
  ),
  generation: z.nullable(z.int()),
  last_sync: nullableString,
  files: z.int(),
  files_indexed: z.int(),
  chunks: z.int(),
  segments: z.int(),
  source_bytes: z.number(),
  size_on_disk: z.number(),
  size_by_part: z.record(z.string(), z.number()),
  git: z.nullable(z.object({ indexed_commit: nullableString, head: nullableString, branch: nullableString })),
  sync_running: z.boolean(),
  sync_owner: z.nullable(LockOwnerSchema),
  tool_version: nullableString,
  auto_index: z.boolean(),
  freshness: FreshnessSchema,
  /** The same as `root`, under seed 002's name for it (`repo.status`). */
  repo_root: z.string(),
  /** Languages with an outline adapter (tree-sitter). */
  adapters: z.array(z.enum(LANGUAGES)),
  /** The limits answers obey (defaults < config < flags on serve). */
  limits: LimitsSchema,
  semantic: z.optional(
    z.object({
      state: z.enum(['ready', 'building', 'stale', 'missing', 'off']),
      engine: nullableString,
      model: nullableString,
      dim: z.nullable(z.int()),
      vectors: z.int(),
      chunks: z.int(),
      files: z.int(),
      last_indexed: nullableString,
      size_on_disk: z.int(),
      problem: nullableString,
      search: z.nullable(z.enum(['graph', 'exact'])),
      analytics: z.object({ queries: z.int(), hits: z.int(), misses: z.int(), hit_ratio: z.nullable(z.number()), last_query_ts: nullableString }),
    }),
  ),
});

const SearchHitSchema = z.object({
  chunk_id: z.int(),
  path: z.string(),
  start_line: z.int(),
  end_line: z.int(),
  score: z.number(),
  snippet: z.string(),
  symbol: nullableString,
  why: z.array(z.string()),
  stale: z.optional(z.literal(true)),
});

export const SearchResponse = z.object({
  query: z.string(),
  mode: z.enum(['bm25', 'idf', 'vector', 'hybrid']),
  terms: z.array(z.string()),
  top_k: z.int(),
  results: z.array(SearchHitSchema),
  matched: z.int(),
  generation: z.int(),
  freshness: FreshnessSchema,
  synced: z.optional(SyncResponse),
  warnings: z.array(z.string()),
});

const Refusal = { blocked: z.boolean(), error: z.string(), hint: z.string() };

export const FetchResponse = z.object({
  chunks: z.array(
    z.union([
      z.object({
        chunk_id: z.int(),
        path: z.string(),
        start_line: z.int(),
        end_line: z.int(),
        lines: z.array(z.string()),
        truncated: z.boolean(),
        long_lines_cut: z.boolean(),
        stale: z.boolean(),
      }),
      z.object({ chunk_id: z.int(), path: z.optional(z.string()), ...Refusal }),
    ]),
  ),
  ignored_ids: z.array(z.int()),
  max_lines: z.int(),
  generation: z.int(),
  freshness: FreshnessSchema,
  synced: z.optional(SyncResponse),
  warnings: z.array(z.string()),
});

export const OpenResponse = z.union([
  z.object({
    path: z.string(),
    start_line: z.int(),
    end_line: z.int(),
    total_lines: z.int(),
    lines: z.array(z.string()),
    truncated: z.boolean(),
    next_start: z.nullable(z.int()),
    long_lines_cut: z.boolean(),
    blocked: z.literal(false),
  }),
  z.object({ path: z.string(), ...Refusal }),
]);

const OutlineSymbolSchema = z.object({
  kind: z.string(),
  name: z.string(),
  signature: z.string(),
  start_line: z.int(),
  end_line: z.int(),
  doc: nullableString,
  parent_symbol: nullableString,
  scope_kind: z.enum(['module', 'class', 'function']),
  is_conditional: z.boolean(),
  decl_context: nullableString,
});

export const OutlineResponse = z.union([
  z.object({
    path: z.string(),
    language: z.enum(LANGUAGES),
    parsed: z.boolean(),
    source: z.enum(['index', 'parse']),
    symbols: z.array(OutlineSymbolSchema),
    /** Present and true when the response cap cut the symbol list. */
    truncated: z.optional(z.boolean()),
    blocked: z.literal(false),
  }),
  z.object({ path: z.string(), ...Refusal }),
]);

export const FilesResponse = z.object({
  files: z.array(
    z.object({
      path: z.string(),
      size: z.number(),
      mtime: z.string(),
      language: z.string(),
      state: z.string(),
      chunks: z.int(),
      // Only in a listing of what is withheld (`blocked`): why, and what matched.
      reason: z.optional(z.string()),
      rule: z.optional(z.string()),
      line: z.optional(z.int()),
      pattern: z.optional(z.string()),
    }),
  ),
  total: z.int(),
  truncated: z.boolean(),
  /** Present and true when the listing is of what is withheld as a secret. */
  blocked: z.optional(z.literal(true)),
  generation: z.int(),
  freshness: FreshnessSchema,
  synced: z.optional(SyncResponse),
  warnings: z.array(z.string()),
});

export const VerifyResponse = z.object({
  root: z.string(),
  ok: z.boolean(),
  indexed: z.boolean(),
  generation: z.nullable(z.int()),
  problems: z.array(z.string()),
  checked: z.array(z.string()),
  warnings: z.array(z.string()),
});

export const CleanResponse = z.object({ root: z.string(), removed: z.array(z.string()) });

const BundleExcerptSchema = z.object({
  path: z.string(),
  start_line: z.int(),
  end_line: z.int(),
  citation: z.string(),
  symbol: nullableString,
  rationale: z.string(),
  lines: z.array(z.string()),
  truncated: z.boolean(),
  score: z.number(),
});

export const BundleResponse = z.object({
  bundle_id: z.string(),
  prompt_fingerprint: z.string(),
  prompt: z.string(),
  strategy: z.string(),
  budget: z.object({ max_files: z.int(), max_lines: z.int(), include_tests: z.boolean() }),
  used: z.object({ files: z.int(), lines: z.int() }),
  keywords: z.array(z.string()),
  searches: z.array(z.object({ query: z.string(), hits: z.int() })),
  excerpts: z.array(BundleExcerptSchema),
  omitted: z.array(z.object({ path: z.string(), reason: z.string() })),
  generation: z.int(),
  freshness: FreshnessSchema,
  synced: z.optional(SyncResponse),
  warnings: z.array(z.string()),
});

const AuditEntrySchema = z.object({
  time: z.string(),
  request_id: z.string(),
  frontend: z.string(),
  client: z.optional(z.string()),
  op: z.string(),
  tool: z.optional(z.string()),
  args: z.record(z.string(), z.unknown()),
  outcome: z.string(),
  blocked: z.boolean(),
  duration_ms: z.number(),
});

export const AuditResponse = z.object({
  entries: z.array(AuditEntrySchema),
  total: z.int(),
  truncated: z.boolean(),
  path: z.string(),
  /** Present when damaged lines were left out. */
  warnings: z.optional(z.array(z.string())),
});

/** The response schema of every op, keyed by op. */
export const RESPONSES = {
  init: InitResponse,
  status: StatusResponse,
  sync: SyncResponse,
  search: SearchResponse,
  fetch: FetchResponse,
  open: OpenResponse,
  outline: OutlineResponse,
  files: FilesResponse,
  verify: VerifyResponse,
  clean: CleanResponse,
  bundle: BundleResponse,
  audit: AuditResponse,
} as const;

/** The `data` of an op. */
export type ResponseOf<O extends keyof typeof RESPONSES> = z.infer<(typeof RESPONSES)[O]>;
