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
  type CallResult,
  type Caller,
  type Engine,
  OPS,
  type Op,
  accept,
  call,
  describeIssues,
  inputSchema,
  nameOn,
  opNamed,
  opsOn,
  recordUnreadable,
  refuseCall,
} from '../../protocol/index.js';
import { RESPONSES } from '../../protocol/responses.js';

/**
 * The MCP server (seed 002 §11): a `repo.*` tool for each op the op table serves over MCP, each
 * answering the envelope `{request_id, ok, result, warnings, blocked}` as structured content (with
 * an output schema) and as text. Its input schema is the op's request under the table's argument
 * names, and every call goes through `accept` and `call`: the same validation, freshness policy,
 * safety, limits and audit log as the CLI and JSONL.
 */

/** How tool names are spelled: the seed's dotted names, or with underscores for clients that reject dots. */
export type ToolNaming = 'dotted' | 'underscore';

interface ToolSpec {
  readonly name: string;
  readonly op: Op;
  readonly description: string;
  /** The op's request under the tool's argument names (generated from the op table). */
  readonly input: z.ZodMiniObject;
  /**
   * Arguments capped by a server limit (`top_k` by max_search_hits; nested: `budget.max_files`): a
   * larger value is answered with that many and a warning, so the schema sets no maximum; its
   * description names the limit in force.
   */
  readonly limited: Readonly<Record<string, LimitName>>;
}

/** The tools: one per op the op table serves over MCP, its arguments the op's request fields under the table's names. */
const TOOLS: readonly ToolSpec[] = opsOn('mcp').map((op) => {
  const entry = OPS[op];
  const limited = Object.entries((entry.limited ?? {}) as Record<string, LimitName>).map(([field, limit]) => [nameOn('mcp', op, field), limit]);
  return { name: entry.mcp!.tool, op, description: entry.mcp!.description, input: inputSchema('mcp', op), limited: Object.fromEntries(limited) as Record<string, LimitName> };
});

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
function badArguments(tool: ToolSpec, message: string, requestId: string): Envelope {
  return { request_id: requestId, ok: false, result: null, warnings: [], blocked: false, error: { code: 'BAD_REQUEST', message: `${tool.name}: ${message}` } };
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
  const who: CallWho = { frontend: 'mcp', ...(options.client !== undefined ? { client: options.client } : {}) };
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
  const toolOf = new Map<Op, ToolSpec>(TOOLS.map((tool) => [tool.op, tool]));
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
    // Both spellings of a tool's name are always answered.
    const op = opNamed('mcp', request.params.name);
    const tool = op === undefined ? undefined : toolOf.get(op);
    if (!tool) {
      refuseCall({ auditLog: log }, { ...who, tool: request.params.name }, '', request.params.arguments ?? {});
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
  const caller: Caller = { ...who, tool: calledAs };
  const named = REPO_ARGUMENT.safeParse(repo, { reportInput: true });
  if (!named.success) {
    const message = repo === undefined ? 'repo: required (the repository to ask: its id or its name)' : `repo: ${describeIssues(named.error)}`;
    return badArguments(tool, message, refuseCall({ auditLog: log }, caller, tool.op, args));
  }
  let engine: Engine;
  try {
    engine = await repos.engine(named.data);
  } catch (error) {
    const shown = shownFailure(error, `MCP ${calledAs} (opening its repository)`);
    if (shown.internal) onError?.(`repodex: ${calledAs} failed: ${shown.message}`);
    return { request_id: refuseCall({ auditLog: log }, caller, tool.op, args), ok: false, result: null, warnings: [], blocked: false, error: { code: shown.code, message: shown.message } };
  }
  return runTool(engine, tool, calledAs, rest, who, onError);
}

/** Who calls, as the audit log records it. */
type CallWho = { readonly frontend: 'mcp'; readonly client?: string };

async function runTool(engine: Engine, tool: ToolSpec, calledAs: string, args: Record<string, unknown>, who: CallWho, log?: (message: string) => void): Promise<Envelope> {
  // Refused arguments are calls too: `accept` records them like any other.
  const taken = accept('mcp', engine, { ...who, tool: calledAs }, calledAs, args);
  if (!taken.ok) return badArguments(tool, taken.message, taken.request_id);
  try {
    return envelopeOf(await call(engine, taken.request, { ...who, tool: calledAs }));
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
function withLimits(schema: Record<string, unknown>, limited: Readonly<Record<string, LimitName>>, limits: Limits): Record<string, unknown> {
  if (Object.keys(limited).length === 0) return schema;
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
    refuseCall(this.engine, { frontend: 'mcp', ...(typeof params.name === 'string' ? { tool: params.name } : {}) }, '', isObject ? (args as Record<string, unknown>) : { arguments: shape });
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
