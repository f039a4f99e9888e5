import type { CallLog } from '../engine/audit.js';
import { describeIssues } from '../core/issues.js';
import { recordRefused } from './call.js';
import type { Surface } from './ops.js';
import { type Op, Request, type RequestOf } from './schemas.js';
import { fromSurface, inputSchema, issuesOn, opName, opNamed, opsOn } from './surfaces.js';
import type * as z from 'zod/mini';

/** Who sent a request, as the audit log records it. */
export interface Caller {
  readonly frontend: Surface;
  /** The name the client used, when it is not the op's (an MCP tool, `POST /search`). */
  readonly tool?: string;
  readonly client?: string;
  /** The request's id, when the front end has one already (HTTP's X-Request-Id). */
  readonly requestId?: string;
}

/** A request as a front end received it, parsed: the op's request, and the surface's own fields (HTTP's `repo_id`). */
export interface Taken<O extends Op = Op> {
  readonly ok: true;
  readonly op: O;
  readonly request: RequestOf<O>;
  readonly own: Readonly<Record<string, unknown>>;
}

/** A request refused before it could run, recorded in the audit log already. */
export interface Refused {
  readonly ok: false;
  /** No name was given (`missing`), the name is no op of this surface (`unknown`), or its fields do not validate (`invalid`). */
  readonly reason: 'missing' | 'unknown' | 'invalid';
  /** The op, when the name was one. */
  readonly op: Op | undefined;
  /** What was wrong, in the surface's names (`--top-k must be…`, `query: must not be empty`). */
  readonly message: string;
  readonly request_id: string;
}

/** Where a refusal is recorded: a repository's audit log, or a server's own; none when the request reached no repository. */
export type RefusalLog = { readonly auditLog: CallLog } | undefined;

/**
 * The one door of every front end: take what a surface received — the op's name on that surface
 * (the CLI command, the JSONL op, the MCP tool, `METHOD path`) and its fields in the surface's
 * names — parse it against the op's schema, and either hand back the request or refuse it in the
 * surface's own words (`--top-k must be at least 1` on the CLI, `top_k: …` on JSONL, `file_glob: …`
 * on MCP), recording the refusal in the audit log like any call. `args` on JSONL is the whole line
 * (`op` and `id` in it); elsewhere the fields alone.
 */
export function accept(surface: Surface, log: RefusalLog, caller: Caller, name: unknown, args: Readonly<Record<string, unknown>>): Taken | Refused {
  const { op: _op, id: _id, ...fields } = surface === 'jsonl' ? args : { op: undefined, id: undefined, ...args };
  const refuse = (reason: Refused['reason'], op: Op | undefined, message: string): Refused => {
    const recorded = typeof name === 'string' ? name : '';
    const request_id = refuseCall(log, caller, op ?? (surface === 'mcp' ? '' : recorded), fields);
    return { ok: false, reason, op, message, request_id };
  };
  if (typeof name !== 'string') return refuse('missing', undefined, `missing "op": one of ${opsOn(surface).join(', ')}`);
  const op = opNamed(surface, name);
  if (op === undefined) return refuse('unknown', undefined, `unknown ${surface === 'mcp' ? 'tool' : 'op'} ${JSON.stringify(name)}: expected one of ${opsOn(surface).map((known) => opName(surface, known)).join(', ')}`);
  let input: Readonly<Record<string, unknown>> = surface === 'jsonl' ? args : { op, ...fields };
  let own: Record<string, unknown> = {};
  if (surface === 'mcp' || surface === 'http') {
    // The surface's own schema first, so that a problem is said in its names exactly as its input schema has them.
    const parsed = inputSchema(surface, op).safeParse(fields, { reportInput: true });
    if (!parsed.success) return refuse('invalid', op, describeIssues(parsed.error));
    const { repo_id, ...rest } = parsed.data as Record<string, unknown>;
    own = repo_id === undefined ? {} : { repo_id };
    input = fromSurface(surface, op, rest);
  }
  const parsed = Request.safeParse(input, { reportInput: true });
  if (!parsed.success) return refuse('invalid', op, issuesIn(surface, op, parsed.error.issues));
  return { ok: true, op, request: parsed.data, own };
}

/**
 * Refuse a request a front end found wrong before its fields could be parsed (a CLI flag that is
 * no number, a missing query): recorded in the audit log like any refused call; returns its id.
 */
export function refuseCall(log: RefusalLog, caller: Caller, op: string, args: Readonly<Record<string, unknown>>): string {
  const who = { frontend: caller.frontend, ...(caller.tool !== undefined ? { tool: caller.tool } : {}), ...(caller.client !== undefined ? { client: caller.client } : {}) };
  return log ? recordRefused(log, who, op, { ...args }, caller.requestId) : (caller.requestId ?? '');
}

/** Validation issues in a surface's words; the CLI's read as sentences about its flags (`--top-k must be at least 1`). */
function issuesIn(surface: Surface, op: Op, issues: readonly z.core.$ZodIssue[]): string {
  const described = describeIssues({ issues: issuesOn(surface, op, issues) });
  if (surface !== 'cli') return described;
  return described.replace(/(^|; )(--[\w-]+|the [a-z_]+)(?:\.\d+)*: /g, (_whole, separator: string, name: string) => `${separator}${name} `);
}
