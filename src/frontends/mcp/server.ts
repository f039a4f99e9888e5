import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, type JSONRPCMessage, ListToolsRequestSchema, type MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/mini';
import { toJSONSchema } from 'zod/v4/core';
import { errorMessage, isRepodexError } from '../../core/errors.js';
import { shownFailure } from '../../core/error-log.js';
import type { CallLog } from '../../engine/audit.js';
import { TOOL_VERSION } from '../../core/version.js';
import { DEFAULT_LIMITS, type LimitName, type Limits } from '../../core/limits.js';
import {
  AuditRequest,
  BundleRequest,
  CAPS,
  type CallResult,
  type Engine,
  FilesRequest,
  type Op,
  OpenRequest,
  OutlineRequest,
  Request,
  SearchRequest,
  SyncRequest,
  call,
  describeIssues,
  recordRefused,
  recordUnreadable,
  wholeNumber,
} from '../../protocol/index.js';
import { RESPONSES } from '../../protocol/responses.js';

/**
 * The MCP server (seed 002 §11): eight `repo.*` tools over stdio, each answering the envelope
 * `{request_id, ok, result, warnings, blocked}` as structured content (with an output schema)
 * and as text. Every tool maps onto one op of the shared protocol and runs through `call`: the
 * same validation, freshness policy, safety, limits and audit log as the CLI and JSONL.
 */

/** How tool names are spelled: the seed's dotted names, or with underscores for clients that reject dots. */
export type ToolNaming = 'dotted' | 'underscore';

/** A count with a fixed cap, advertised as the schema's maximum and enforced (`1e308` is "at most N"). */
const count = (max: number) => wholeNumber(1, max);
interface ToolSpec {
  readonly name: string;
  readonly op: Op;
  readonly description: string;
  readonly input: z.ZodMiniObject;
  /** The op request for validated tool arguments. */
  toRequest(args: Record<string, unknown>): Record<string, unknown>;
  /** Tool argument names for the op's field names, so validation errors name what the client sent. */
  readonly fieldNames?: Record<string, string>;
  /**
   * Arguments capped by a server limit (`top_k` by max_search_hits): a larger value is answered
   * with that many and a warning, so the schema sets no maximum; its description names the limit
   * in force.
   */
  readonly limited?: Readonly<Record<string, LimitName>>;
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
    description:
      'Files of the repository the index knows, with size and mtime (path order). Filter with a glob such as "src/**/*.ts"; hidden files (a name starting with ".") only with include_hidden. With blocked, what is withheld as a secret instead, each with a reason (a credential in its text with rule and line, a secret file name, a name shaped like a credential).',
    input: z.strictObject({ glob: FilesRequest.shape.glob, max_results: z.optional(count(CAPS.files_limit)), include_hidden: FilesRequest.shape.include_hidden, blocked: FilesRequest.shape.blocked }),
    toRequest: (args) => ({ op: 'files', glob: args.glob, limit: args.max_results, include_hidden: args.include_hidden, blocked: args.blocked }),
    fieldNames: { limit: 'max_results' },
  },
  {
    name: 'repo.open_file',
    op: 'open',
    description:
      'Numbered lines ("N| text") of one file, from start_line to end_line (at most max_open_lines, 120 by default). `truncated` says whether lines of the range were withheld; `next_start` where to continue. Paths are relative to the repository root (absolute paths inside it work too). Secrets and paths outside the repository are refused with blocked: true.',
    input: z.strictObject({ path: OpenRequest.shape.path, start_line: OpenRequest.shape.start_line, end_line: OpenRequest.shape.end_line }),
    toRequest: (args) => ({ op: 'open', path: args.path, start_line: args.start_line, end_line: args.end_line }),
  },
  {
    name: 'repo.outline',
    op: 'outline',
    description:
      'The declarations of one file (classes, functions, methods, types, …) with line ranges, signatures, doc lines, parent symbol, scope and whether they sit under control flow. Nothing is executed. Languages: see repo.status adapters.',
    input: z.strictObject({ path: OutlineRequest.shape.path }),
    toRequest: (args) => ({ op: 'outline', path: args.path }),
  },
  {
    name: 'repo.search',
    op: 'search',
    description:
      'Ranked code chunks for a query in English words or identifiers ("where is the retry handled", "parseConfig"): path, line range, the lines that matched, the declaration they sit in, score, and why (matched terms, then signals such as path:T or history:T). Pasted bug reports and stack traces work as queries. At most 2 results per file. Read more with repo.open_file using the line range. file_glob narrows to paths such as "src/**/*.py". mode: bm25 (default, measured best), vector (nearest chunk embeddings: for questions that name no identifier) or hybrid (both fused; why then carries vector:SIM); vector and hybrid answer with bm25 and a warning until the chunks are embedded.',
    input: z.strictObject({ query: SearchRequest.shape.q, mode: SearchRequest.shape.mode, top_k: SearchRequest.shape.top_k, file_glob: SearchRequest.shape.glob }),
    toRequest: (args) => ({ op: 'search', q: args.query, mode: args.mode, top_k: args.top_k, glob: args.file_glob }),
    fieldNames: { q: 'query', glob: 'file_glob' },
    limited: { top_k: 'max_search_hits' },
  },
  {
    name: 'repo.refresh_index',
    op: 'sync',
    description: 'Bring the index up to date now (only changed files are read; force rebuilds everything). Answers added / updated / removed file counts, chunk counts, duration and the new timestamp. Other tools refresh a stale index by themselves.',
    input: z.strictObject({ force: SyncRequest.shape.force }),
    toRequest: (args) => ({ op: 'sync', force: args.force }),
  },
  {
    name: 'repo.build_context_bundle',
    op: 'bundle',
    description:
      'The context a task needs, in one call: keywords from the prompt, several searches, excerpts widened to their enclosing declarations, each with a citation (path:start-end) and the reason it was chosen, within a strict budget of files and lines. Deterministic; also written to .repodex/last_bundle.md for people.',
    input: z.strictObject({
      prompt: BundleRequest.shape.prompt,
      budget: z.optional(z.strictObject({ max_files: BundleRequest.shape.max_files, max_total_lines: z.optional(count(CAPS.bundle_lines)) })),
      include_tests: BundleRequest.shape.include_tests,
      strategy: z.optional(z.enum(['hybrid', 'deterministic'])),
    }),
    toRequest: (args) => {
      const budget = (args.budget ?? {}) as { max_files?: number; max_total_lines?: number };
      return { op: 'bundle', prompt: args.prompt, max_files: budget.max_files, max_lines: budget.max_total_lines, include_tests: args.include_tests };
    },
    fieldNames: { max_files: 'budget.max_files', max_lines: 'budget.max_total_lines' },
    limited: { 'budget.max_files': 'max_bundle_files' },
  },
  {
    name: 'repo.audit_log',
    op: 'audit',
    description: 'Recent tool calls from the audit log (.repodex/audit.jsonl, or the audit_log table on a PostgreSQL store; every front end): request id, tool, sanitized arguments, outcome, blocked, duration. since: an ISO time or a duration such as 15m, 2h, 7d.',
    input: z.strictObject({ since: AuditRequest.shape.since, limit: z.optional(count(CAPS.audit_limit)) }),
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
  /** Who the client is, where the transport can tell (HTTP: its address): recorded with each call. */
  readonly client?: string;
}

/**
 * The repositories of a team server, for a session that did not name one: every tool then takes a
 * `repo` argument (an id or a name) and answers for that repository.
 */
export interface McpRepos {
  /** What the server answers about, for the instructions. */
  readonly description: string;
  /** The engine of the repository a call names; throws REPO_UNKNOWN for one that is not registered. */
  engine(repo: string): Promise<Engine>;
  /** Where calls that reach no repository are recorded. */
  readonly auditLog: CallLog;
}

/** The `repo` argument every tool takes in a session over many repositories. */
const REPO_ARGUMENT = z.string().check(z.minLength(1, 'must name a repository: its id or its name'), z.maxLength(100, 'must be at most 100 characters'));

/**
 * Build the MCP server for an engine, or for a team server's repositories (each call names one in
 * `repo`), not yet connected to a transport. `inFlight` collects the calls being answered.
 */
export function createMcpServer(target: Engine | McpRepos, options: McpOptions = {}, inFlight: Set<Promise<unknown>> = new Set()): Server {
  const naming = options.naming ?? 'dotted';
  const one = isEngine(target) ? target : undefined;
  const many = isEngine(target) ? undefined : target;
  const log = one ? one.auditLog : many!.auditLog;
  const who = { frontend: 'mcp', ...(options.client !== undefined ? { client: options.client } : {}) };
  const server = new Server(
    { name: 'repodex', version: TOOL_VERSION },
    {
      capabilities: { tools: {} },
      instructions: [
        one
          ? `repodex answers questions about the repository at ${one.root} from a local index that it keeps fresh itself.`
          : `repodex answers questions about ${many!.description} from indexes that it keeps fresh itself: name the repository of each call in its repo argument.`,
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
  const inputOf = (tool: ToolSpec): z.ZodMiniObject => (many ? z.extend(tool.input, { repo: REPO_ARGUMENT }) : tool.input);
  const listed = TOOLS.map((tool) => ({
    name: spell(tool.name, naming),
    description: many ? `${tool.description} repo: the repository (its id or name).` : tool.description,
    inputSchema: jsonSchema(inputOf(tool), 'input'),
    outputSchema: envelopeSchema(tool.op) as { type: 'object' },
  }));

  // Listed anew each time: the limits a schema advertises follow config.json as it is now.
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const limits = one ? currentLimits(one) : DEFAULT_LIMITS;
    return { tools: listed.map((entry, i) => ({ ...entry, inputSchema: withLimits(entry.inputSchema, TOOLS[i]!.limited, limits) as { type: 'object' } })) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      recordRefused({ auditLog: log }, { ...who, tool: request.params.name }, '', request.params.arguments ?? {});
      const text = `unknown tool ${JSON.stringify(request.params.name)}: the tools are ${toolNames(naming).join(', ')}`;
      return { content: [{ type: 'text' as const, text }], isError: true };
    }
    const args = request.params.arguments ?? {};
    const running = one ? runTool(one, tool, request.params.name, args, who, options.log) : runRepoTool(many!, log, tool, request.params.name, args, who, options.log);
    inFlight.add(running);
    const envelope = await running.finally(() => inFlight.delete(running));
    return { content: [{ type: 'text' as const, text: JSON.stringify(envelope) }], structuredContent: envelope as unknown as Record<string, unknown>, isError: !envelope.ok };
  });
  return server;
}

function isEngine(target: Engine | McpRepos): target is Engine {
  return !('description' in target && 'engine' in target && typeof (target as McpRepos).engine === 'function');
}

/** A call in a session over many repositories: the repository its `repo` argument names answers it. */
async function runRepoTool(repos: McpRepos, log: CallLog, tool: ToolSpec, calledAs: string, args: Record<string, unknown>, who: CallWho, onError?: (message: string) => void): Promise<Envelope> {
  const { repo, ...rest } = args;
  const named = REPO_ARGUMENT.safeParse(repo, { reportInput: true });
  if (!named.success) {
    const message = repo === undefined ? 'repo: required (the repository to ask: its id or its name)' : `repo: ${describeIssues(named.error)}`;
    return { ...badArguments(tool, message), request_id: recordRefused({ auditLog: log }, { ...who, tool: calledAs }, tool.op, args) };
  }
  let engine: Engine;
  try {
    engine = await repos.engine(named.data);
  } catch (error) {
    const shown = shownFailure(error, `MCP ${calledAs} (opening its repository)`);
    if (shown.internal) onError?.(`repodex: ${calledAs} failed: ${shown.message}`);
    return { request_id: recordRefused({ auditLog: log }, { ...who, tool: calledAs }, tool.op, args), ok: false, result: null, warnings: [], blocked: false, error: { code: shown.code, message: shown.message } };
  }
  return runTool(engine, tool, calledAs, rest, who, onError);
}

/** Who calls, as the audit log records it. */
type CallWho = { readonly frontend: string; readonly client?: string };

async function runTool(engine: Engine, tool: ToolSpec, calledAs: string, args: Record<string, unknown>, who: CallWho, log?: (message: string) => void): Promise<Envelope> {
  // Refused arguments are calls too: the log records them like any other.
  const refuse = (message: string): Envelope => ({ ...badArguments(tool, message), request_id: recordRefused(engine, { ...who, tool: calledAs }, tool.op, args) });
  const input = tool.input.safeParse(args, { reportInput: true });
  if (!input.success) return refuse(describeIssues(input.error));
  const parsed = Request.safeParse(tool.toRequest(input.data as Record<string, unknown>), { reportInput: true });
  if (!parsed.success) {
    const names = tool.fieldNames ?? {};
    const issues = { issues: parsed.error.issues.map((issue) => ({ ...issue, path: issue.path.map((part) => (typeof part === 'string' ? (names[part] ?? part) : part)) })) };
    return refuse(describeIssues(issues));
  }
  try {
    return envelopeOf(await call(engine, parsed.data, { ...who, tool: calledAs }));
  } catch (error) {
    // A bug: one line for the people watching the server, the stack in the error log.
    const shown = shownFailure(error, `MCP ${calledAs} in ${engine.root}`);
    log?.(`repodex: ${calledAs} failed: ${shown.message}`);
    return { request_id: randomUUID(), ok: false, result: null, warnings: [], blocked: false, error: { code: shown.code, message: shown.message } };
  }
}

/** The limits in force, or the defaults while config.json is invalid (each call then reports that itself). */
function currentLimits(engine: Engine): Limits {
  try {
    return engine.limits();
  } catch (error) {
    if (isRepodexError(error)) return DEFAULT_LIMITS;
    throw error;
  }
}

/** An input JSON Schema whose limited arguments (`budget.max_files`: a nested one) say the limit in force and what happens past it. */
function withLimits(schema: Record<string, unknown>, limited: Readonly<Record<string, LimitName>> | undefined, limits: Limits): Record<string, unknown> {
  if (!limited) return schema;
  const copy = structuredClone(schema);
  for (const [path, limit] of Object.entries(limited)) {
    let node: Record<string, unknown> | undefined = copy;
    for (const name of path.split('.')) node = (node?.properties as Record<string, Record<string, unknown>> | undefined)?.[name];
    if (node) node.description = `at most ${limits[limit]} here (limits.${limit}): a larger number is answered with ${limits[limit]} and a warning`;
  }
  return copy;
}

/**
 * The stdio transport with the checks the SDK leaves out, in front of it (not a fork of it): a line
 * that is not JSON gets JSON-RPC's -32700 answer and one that is JSON but no JSON-RPC message
 * -32600 (the SDK only reports them); a `tools/call` without a string `name` or with `arguments`
 * that are not an object gets -32602 in words rather than validator output. Each of them is
 * recorded in the audit log like any refused call; everything else passes through untouched.
 */
class CheckedTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  constructor(
    private readonly inner: StdioServerTransport,
    private readonly engine: Engine,
    private readonly log?: (message: string) => void,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.unreadable(error);
    inner.onmessage = (message) => {
      if (!this.malformedCall(message)) this.onmessage?.(message);
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** A line the SDK could not read as a message (its errors from JSON.parse and its message schema). */
  private unreadable(error: Error): void {
    const notJson = error instanceof SyntaxError;
    if (!notJson && error.name !== 'ZodError') {
      this.onerror?.(error);
      return;
    }
    recordUnreadable(this.engine, 'mcp', notJson ? `invalid JSON: ${error.message}` : 'not a JSON-RPC 2.0 message', {});
    const reason = notJson ? { code: -32700, message: `Parse error: ${error.message}` } : { code: -32600, message: 'Invalid Request: each line must hold one JSON-RPC 2.0 message' };
    this.reply({ jsonrpc: '2.0', id: null, error: reason });
  }

  /** True when `message` is a `tools/call` whose params are not shaped like one (then answered and recorded here). */
  private malformedCall(message: JSONRPCMessage): boolean {
    if (!('method' in message) || message.method !== 'tools/call' || !('id' in message) || CallToolRequestSchema.safeParse(message).success) return false;
    const params: Record<string, unknown> = typeof message.params === 'object' && message.params !== null ? message.params : {};
    const args = params.arguments;
    const isObject = typeof args === 'object' && args !== null && !Array.isArray(args);
    const shape = args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args;
    recordRefused(this.engine, { frontend: 'mcp', ...(typeof params.name === 'string' ? { tool: params.name } : {}) }, '', isObject ? (args as Record<string, unknown>) : { arguments: shape });
    const problem = typeof params.name !== 'string' ? 'params.name must be the name of a tool (a string)' : `params.arguments must be an object of tool arguments, got ${shape}`;
    this.reply({ jsonrpc: '2.0', id: message.id, error: { code: -32602, message: `Invalid params: ${problem}` } });
    return true;
  }

  private reply(message: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } }): void {
    // JSON-RPC answers an unreadable line with a null id, which the SDK's message type has no room for.
    this.inner.send(message as unknown as JSONRPCMessage).catch((error: unknown) => this.log?.(`repodex: cannot answer a refused MCP message: ${errorMessage(error)}`));
  }
}

/** Serve MCP over stdio until the client closes the connection. */
export async function serveMcp(engine: Engine, input: Readable, output: Writable, options: McpOptions = {}): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  const server = createMcpServer(engine, options, inFlight);
  const transport = new CheckedTransport(new StdioServerTransport(input, output), engine, options.log);
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
