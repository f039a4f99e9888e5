import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/mini';
import { toJSONSchema } from 'zod/v4/core';
import { TOOL_VERSION } from '../../core/version.js';
import { type CallResult, type Engine, type Op, RESPONSES, Request, call, describeIssues, recordRefused } from '../../protocol/index.js';

/**
 * The MCP server (seed 002 §11): eight `repo.*` tools over stdio, each answering the envelope
 * `{request_id, ok, result, warnings, blocked}` as structured content (with an output schema)
 * and as text. Every tool maps onto one op of the shared protocol and runs through `call`: the
 * same validation, freshness policy, safety, limits and audit log as the CLI and JSONL.
 */

/** How tool names are spelled: the seed's dotted names, or with underscores for clients that reject dots. */
export type ToolNaming = 'dotted' | 'underscore';

const line = z.int('must be a whole number').check(z.minimum(1, 'must be at least 1'));
const count = (max: number) => z.int('must be a whole number').check(z.minimum(1, 'must be at least 1'), z.maximum(max, `must be at most ${max}`));

interface ToolSpec {
  readonly name: string;
  readonly op: Op;
  readonly description: string;
  readonly input: z.ZodMiniObject;
  /** The op request for validated tool arguments. */
  toRequest(args: Record<string, unknown>): Record<string, unknown>;
  /** Tool argument names for the op's field names, so validation errors name what the client sent. */
  readonly fieldNames?: Record<string, string>;
}

const TOOLS: readonly ToolSpec[] = [
  {
    name: 'repo.status',
    op: 'status',
    description: 'The repository and its index: root, state (pending, indexing, ready, stale), last refresh, file and chunk counts, git commit indexed vs HEAD, outline adapters and the response limits.',
    input: z.strictObject({}),
    toRequest: () => ({ op: 'status' }),
  },
  {
    name: 'repo.list_files',
    op: 'files',
    description: 'Files of the repository the index knows, with size and mtime (path order). Filter with a glob such as "src/**/*.ts"; hidden files (a name starting with ".") only with include_hidden.',
    input: z.strictObject({ glob: z.optional(z.string().check(z.minLength(1), z.maxLength(1024))), max_results: z.optional(count(10_000)), include_hidden: z.optional(z.boolean()) }),
    toRequest: (args) => ({ op: 'files', glob: args.glob, limit: args.max_results, include_hidden: args.include_hidden }),
    fieldNames: { limit: 'max_results' },
  },
  {
    name: 'repo.open_file',
    op: 'open',
    description:
      'Numbered lines ("N| text") of one file, from start_line to end_line (at most max_open_lines, 120 by default). `truncated` says whether lines of the range were withheld; `next_start` where to continue. Paths are relative to the repository root (absolute paths inside it work too). Secrets and paths outside the repository are refused with blocked: true.',
    input: z.strictObject({ path: z.string().check(z.minLength(1), z.maxLength(4096)), start_line: z.optional(line), end_line: z.optional(line) }),
    toRequest: (args) => ({ op: 'open', path: args.path, start_line: args.start_line, end_line: args.end_line }),
  },
  {
    name: 'repo.outline',
    op: 'outline',
    description:
      'The declarations of one file (classes, functions, methods, types, …) with line ranges, signatures, doc lines, parent symbol, scope and whether they sit under control flow. Nothing is executed. Languages: see repo.status adapters.',
    input: z.strictObject({ path: z.string().check(z.minLength(1), z.maxLength(4096)) }),
    toRequest: (args) => ({ op: 'outline', path: args.path }),
  },
  {
    name: 'repo.search',
    op: 'search',
    description:
      'Ranked code chunks for a query in English words or identifiers ("where is the retry handled", "parseConfig"): path, line range, the lines that matched, the declaration they sit in, score, and why (matched terms, then signals such as path:T or history:T). Pasted bug reports and stack traces work as queries. At most 2 results per file. Read more with repo.open_file using the line range. file_glob narrows to paths such as "src/**/*.py". mode: bm25 (default, measured best), vector (nearest chunk embeddings: for questions that name no identifier) or hybrid (both fused; why then carries vector:SIM); vector and hybrid answer with bm25 and a warning until the chunks are embedded.',
    input: z.strictObject({
      query: z.string().check(z.minLength(1), z.maxLength(65_536)),
      mode: z.optional(z.enum(['bm25', 'idf', 'vector', 'hybrid'])),
      top_k: z.optional(count(100)),
      file_glob: z.optional(z.string().check(z.minLength(1), z.maxLength(1024))),
    }),
    toRequest: (args) => ({ op: 'search', q: args.query, mode: args.mode, top_k: args.top_k, glob: args.file_glob }),
    fieldNames: { q: 'query', glob: 'file_glob' },
  },
  {
    name: 'repo.refresh_index',
    op: 'sync',
    description: 'Bring the index up to date now (only changed files are read; force rebuilds everything). Answers added / updated / removed file counts, chunk counts, duration and the new timestamp. Other tools refresh a stale index by themselves.',
    input: z.strictObject({ force: z.optional(z.boolean()) }),
    toRequest: (args) => ({ op: 'sync', force: args.force }),
  },
  {
    name: 'repo.build_context_bundle',
    op: 'bundle',
    description:
      'The context a task needs, in one call: keywords from the prompt, several searches, excerpts widened to their enclosing declarations, each with a citation (path:start-end) and the reason it was chosen, within a strict budget of files and lines. Deterministic; also written to .repodex/last_bundle.md for people.',
    input: z.strictObject({
      prompt: z.string().check(z.minLength(1), z.maxLength(65_536)),
      budget: z.optional(z.strictObject({ max_files: z.optional(count(50)), max_total_lines: z.optional(count(4000)) })),
      include_tests: z.optional(z.boolean()),
      strategy: z.optional(z.enum(['hybrid', 'deterministic'])),
    }),
    toRequest: (args) => {
      const budget = (args.budget ?? {}) as { max_files?: number; max_total_lines?: number };
      return { op: 'bundle', prompt: args.prompt, max_files: budget.max_files, max_lines: budget.max_total_lines, include_tests: args.include_tests };
    },
    fieldNames: { max_files: 'budget.max_files', max_lines: 'budget.max_total_lines' },
  },
  {
    name: 'repo.audit_log',
    op: 'audit',
    description: 'Recent tool calls from .repodex/audit.jsonl (every front end): request id, tool, sanitized arguments, outcome, blocked, duration. since: an ISO time or a duration such as 15m, 2h, 7d.',
    input: z.strictObject({ since: z.optional(z.string().check(z.minLength(1), z.maxLength(64))), limit: z.optional(count(1000)) }),
    toRequest: (args) => ({ op: 'audit', since: args.since, limit: args.limit }),
  },
];

/** The names of the tools, as served with a naming. */
export function toolNames(naming: ToolNaming = 'dotted'): string[] {
  return TOOLS.map((tool) => spell(tool.name, naming));
}

function spell(name: string, naming: ToolNaming): string {
  return naming === 'underscore' ? name.replace(/\./g, '_') : name;
}

/** JSON Schema (draft-07, which every client validator reads) of a zod schema, without `$schema`. */
function jsonSchema(schema: z.ZodMiniType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = toJSONSchema(schema, { target: 'draft-7', io }) as Record<string, unknown>;
  return rest;
}

/** The envelope of one tool answer. */
export interface Envelope {
  readonly request_id: string;
  readonly ok: boolean;
  readonly result: unknown;
  readonly warnings: string[];
  readonly blocked: boolean;
  readonly error?: { readonly code: string; readonly message: string; readonly hint?: string };
}

/** The output schema of a tool: the envelope around its op's answer. */
function envelopeSchema(op: Op): Record<string, unknown> {
  return jsonSchema(
    z.object({
      request_id: z.string(),
      ok: z.boolean(),
      result: z.nullable(RESPONSES[op] as z.ZodMiniType),
      warnings: z.array(z.string()),
      blocked: z.boolean(),
      error: z.optional(z.object({ code: z.string(), message: z.string(), hint: z.optional(z.string()) })),
    }),
    'output',
  );
}

function envelopeOf(result: CallResult): Envelope {
  return {
    request_id: result.request_id,
    ok: result.ok,
    result: result.data ?? null,
    warnings: result.warnings,
    blocked: result.blocked,
    ...(result.error ? { error: { code: result.error.code, message: result.error.message, ...(result.error.hint !== undefined ? { hint: result.error.hint } : {}) } } : {}),
  };
}

/** A validation failure of tool arguments, in the tool's own field names. */
function badArguments(tool: ToolSpec, message: string): Envelope {
  return { request_id: randomUUID(), ok: false, result: null, warnings: [], blocked: false, error: { code: 'BAD_REQUEST', message: `${tool.name}: ${message}` } };
}

/** Options of `serve --mcp`. */
export interface McpOptions {
  readonly naming?: ToolNaming;
  /** Where internal errors are logged for people (stderr; never the protocol stream). */
  readonly log?: (message: string) => void;
}

/** Build the MCP server for an engine (not yet connected to a transport). `inFlight` collects the calls being answered. */
export function createMcpServer(engine: Engine, options: McpOptions = {}, inFlight: Set<Promise<unknown>> = new Set()): Server {
  const naming = options.naming ?? 'dotted';
  const server = new Server(
    { name: 'repodex', version: TOOL_VERSION },
    {
      capabilities: { tools: {} },
      instructions: [
        `repodex answers questions about the repository at ${engine.root} from a local index that it keeps fresh itself.`,
        'Start with repo.search (or repo.build_context_bundle for a whole task), then read exact lines with repo.open_file and declarations with repo.outline.',
        'Every answer is {request_id, ok, result, warnings, blocked}: blocked reads (secrets, paths outside the repository) say why in error.message and what to do in error.hint.',
      ].join(' '),
    },
  );
  const byName = new Map<string, ToolSpec>();
  for (const tool of TOOLS) {
    byName.set(tool.name, tool);
    byName.set(spell(tool.name, 'underscore'), tool); // both spellings are always answered
  }
  const listed = TOOLS.map((tool) => ({
    name: spell(tool.name, naming),
    description: tool.description,
    inputSchema: jsonSchema(tool.input, 'input') as { type: 'object' },
    outputSchema: envelopeSchema(tool.op) as { type: 'object' },
  }));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      const text = `unknown tool ${JSON.stringify(request.params.name)}: the tools are ${toolNames(naming).join(', ')}`;
      return { content: [{ type: 'text' as const, text }], isError: true };
    }
    const running = runTool(engine, tool, request.params.name, request.params.arguments ?? {}, options.log);
    inFlight.add(running);
    const envelope = await running.finally(() => inFlight.delete(running));
    return { content: [{ type: 'text' as const, text: JSON.stringify(envelope) }], structuredContent: envelope as unknown as Record<string, unknown>, isError: !envelope.ok };
  });
  return server;
}

async function runTool(engine: Engine, tool: ToolSpec, calledAs: string, args: Record<string, unknown>, log?: (message: string) => void): Promise<Envelope> {
  // Refused arguments are calls too: the log records them like any other.
  const refuse = (message: string): Envelope => ({ ...badArguments(tool, message), request_id: recordRefused(engine, { frontend: 'mcp', tool: calledAs }, tool.op, args) });
  const input = tool.input.safeParse(args, { reportInput: true });
  if (!input.success) return refuse(describeIssues(input.error));
  const parsed = Request.safeParse(tool.toRequest(input.data as Record<string, unknown>), { reportInput: true });
  if (!parsed.success) {
    const names = tool.fieldNames ?? {};
    const issues = { issues: parsed.error.issues.map((issue) => ({ ...issue, path: issue.path.map((part) => (typeof part === 'string' ? (names[part] ?? part) : part)) })) };
    return refuse(describeIssues(issues));
  }
  try {
    return envelopeOf(await call(engine, parsed.data, { frontend: 'mcp', tool: calledAs }));
  } catch (error) {
    log?.(`internal error in ${calledAs}: ${(error as Error).stack ?? String(error)}`);
    return { request_id: randomUUID(), ok: false, result: null, warnings: [], blocked: false, error: { code: 'INTERNAL', message: `internal error: ${(error as Error).message}` } };
  }
}

/** Serve MCP over stdio until the client closes the connection. */
export async function serveMcp(engine: Engine, input: Readable, output: Writable, options: McpOptions = {}): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  const server = createMcpServer(engine, options, inFlight);
  const transport = new StdioServerTransport(input, output);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    input.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  // End of input: every request already read is still answered before the server closes. The SDK
  // starts a handler some ticks after reading its request and writes the answer some ticks after
  // the handler returns: wait a turn of the event loop around every wait.
  const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
  await turn();
  while (inFlight.size > 0) {
    await Promise.allSettled([...inFlight]);
    await turn();
  }
  await server.close();
}
