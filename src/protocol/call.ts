import { randomUUID } from 'node:crypto';
import { type ErrorCode, errorMessage, isRepodexError } from '../core/errors.js';
import { systemFailure } from '../core/system-errors.js';
import { faultPoint } from '../core/crash.js';
import { type CallLog, sanitizeArguments } from '../engine/audit.js';
import { RecentMap } from '../core/recent-map.js';
import { redactSecrets } from '../safety/secrets.js';
import type { Engine } from '../engine/engine.js';
import { type HandleOptions, OPS, type Surface, handle } from './ops.js';
import { fitResponse } from './fit.js';
import type { ResponseOf } from './responses.js';
import type { Op, RequestOf } from './schemas.js';
import { inSurfaceTerms } from './surfaces.js';

/** Who is calling: recorded in the audit log. */
export interface CallContext extends HandleOptions {
  /** The front end: its names are the ones a bad request's message uses. */
  readonly frontend: Surface;
  /** The name the client used, when it is not the op's (an MCP tool name such as `repo.search`). */
  readonly tool?: string;
  /** Set when the front end already has one (default: a new UUID). */
  readonly requestId?: string;
  /** Who sent it, where a server can tell (HTTP: the client's address). */
  readonly client?: string;
}

/** Why a call did not succeed: a stable code, a message that names the fix, and for refused reads a hint. */
export interface CallError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly hint?: string;
}

/**
 * The outcome of one call, the same for every front end, which only renders it: JSONL writes it as
 * `{ok, op, data}` or `{ok:false, op, error, code}`, MCP as the envelope `{request_id, ok, result,
 * warnings, blocked}`, HTTP as a status and a body, the CLI as output and an exit code. A refused
 * read (blocked, missing, a chunk that is gone) is `ok: false` and still carries its `data`, split
 * once here, by the op's refusal rule, into what was served and what was refused.
 */
export interface CallResult<O extends Op = Op> {
  readonly request_id: string;
  readonly op: O;
  readonly ok: boolean;
  readonly data: ResponseOf<O> | undefined;
  /** What was answered: all of `data` when nothing was refused, the part served when some was (a fetch's readable chunks), undefined when the whole answer is a refusal or the call failed. */
  readonly served: ResponseOf<O> | undefined;
  /** What was refused (a fetch's chunks that are gone, a blocked open), undefined when nothing was. */
  readonly refused: ResponseOf<O> | undefined;
  readonly error: CallError | undefined;
  readonly blocked: boolean;
  readonly warnings: string[];
  readonly duration_ms: number;
  /** `data` as JSON, when it was made already (measuring the answer against the response cap). */
  readonly json?: string | undefined;
}

/** A refusal inside an answer: why, what to do, and whether it was blocked (a secret, outside the repository) or is not there. */
interface Refusal {
  readonly blocked: boolean;
  readonly error: string;
  readonly hint: string;
}

const isRefusal = (value: unknown): value is Refusal => typeof value === 'object' && value !== null && 'error' in value && 'hint' in value && 'blocked' in value;

/** An answer split by its op's refusal rule (see `OpSpec.refuses`). */
export interface Partition<T> {
  readonly served: T | undefined;
  readonly refused: T | undefined;
  /** The first refusal (the call's error), when anything was refused. */
  readonly refusal: Refusal | undefined;
}

/**
 * What an answer of `op` served and what it refused, by the op's refusal rule: the whole answer,
 * or each item of its list (a fetch with chunks that are gone serves the others; the refused part
 * keeps the refused items alone, without the answer's warnings, which go with what was served).
 */
export function partition<O extends Op>(op: O, data: ResponseOf<O>): Partition<ResponseOf<O>> {
  const rule = OPS[op].refuses;
  if (rule === undefined) return { served: data, refused: undefined, refusal: undefined };
  if (rule === 'whole') return isRefusal(data) ? { served: undefined, refused: data, refusal: data } : { served: data, refused: undefined, refusal: undefined };
  const record = data as unknown as Record<string, unknown>;
  const items = (record[rule.items] as unknown[] | undefined) ?? [];
  const refusals = items.filter(isRefusal);
  if (refusals.length === 0) return { served: data, refused: undefined, refusal: undefined };
  const kept = items.filter((item) => !isRefusal(item));
  const refused = { ...record, [rule.items]: refusals, ...('ignored_ids' in record ? { ignored_ids: [] } : {}), ...('warnings' in record ? { warnings: [] } : {}) } as unknown as ResponseOf<O>;
  return { served: kept.length === 0 ? undefined : ({ ...record, [rule.items]: kept } as unknown as ResponseOf<O>), refused, refusal: refusals[0] };
}

/**
 * Run one validated request for a front end: dispatch it (through the engine's freshness policy),
 * cut the answer to the response cap, turn refusals into `ok: false`, and record the call in the
 * audit log. Never throws for a request's own failure: that is an `ok: false` result.
 */
export async function call<O extends Op>(engine: Engine, request: RequestOf<O>, context: CallContext): Promise<CallResult<O>> {
  const started = performance.now();
  const time = new Date().toISOString();
  const requestId = context.requestId ?? randomUUID();
  let data: ResponseOf<O> | undefined;
  let split: Partition<ResponseOf<O>> = { served: undefined, refused: undefined, refusal: undefined };
  let json: string | undefined;
  let error: CallError | undefined;
  let blocked = false;
  const warnings: string[] = [];
  let internal: unknown;
  try {
    // Every op but init reads the config first, so an invalid one is refused the same way by all of them.
    const maxBytes = request.op === 'init' ? Infinity : engine.limits().max_total_bytes_per_response;
    faultPoint('request');
    const answer = await handle(engine, request, context);
    const fitted = fitResponse(request.op, answer, maxBytes);
    data = fitted.data;
    json = fitted.json;
    const own = (data as { warnings?: unknown }).warnings;
    if (Array.isArray(own)) warnings.push(...(own as string[]));
    else if (fitted.warning) warnings.push(fitted.warning);
    split = partition(request.op, data);
    const refusal = split.refusal;
    if (refusal) {
      blocked = refusal.blocked;
      error = { code: refusal.blocked ? 'BLOCKED' : 'REFUSED', message: refusal.error, hint: refusal.hint };
    }
  } catch (thrown) {
    // A refusal of the machine a user can fix (a read-only or full disk) is said in words like any user error.
    const known = isRepodexError(thrown) ? thrown : systemFailure(thrown);
    if (!known?.isUserError) internal = thrown;
    // A bad request the engine found (a start line past the end) names the fields as the caller's front end does.
    const message = known?.code === 'BAD_REQUEST' ? inSurfaceTerms(context.frontend, request.op, known.message) : known?.message;
    error = known ? { code: known.code, message: message! } : { code: 'INTERNAL', message: `internal error: ${errorMessage(thrown)}` };
  }
  const durationMs = Math.round((performance.now() - started) * 100) / 100;
  const { op, id: _id, ...args } = request as { op: O; id?: unknown } & Record<string, unknown>;
  recordCall(engine.auditLog, context, { time, request_id: requestId, op, args, outcome: error ? error.code : 'ok', blocked, duration_ms: durationMs });
  if (internal !== undefined) throw internal; // a bug: the front end reports it (exit 2, INTERNAL, its stack in the error log), after the call was audited
  return { request_id: requestId, op: request.op, ok: error === undefined, data, served: split.served, refused: split.refused, error, blocked, warnings, duration_ms: durationMs, json };
}

/** Longest op, tool or field name a refused call records: a client may send anything as a name. */
const MAX_NAME_CHARS = 64;
/** Most argument fields a refused call records: a client may send any number of them. */
const MAX_REFUSED_FIELDS = 20;
/** Most characters of an unreadable line the log keeps, to show how it began. */
const MAX_LINE_PREVIEW_CHARS = 200;
/** How much of an unreadable line is searched for credentials before it is cut to the preview. */
const REDACTION_WINDOW_CHARS = 8192;

/** Names as the log keeps them, by name: the same few (`query`, `top_k`) come with every call. Only short names are kept. */
const boundedNames = new RecentMap<string, string>(1024);
const KEPT_NAME_CHARS = 256;

/** A name a client chose (op, tool, field), as the log keeps it: credentials redacted first, then cut. */
function boundedName(name: string): string {
  let bounded = boundedNames.get(name);
  if (bounded === undefined) {
    const redacted = redactSecrets(name);
    bounded = redacted.length > MAX_NAME_CHARS ? `${redacted.slice(0, MAX_NAME_CHARS)}…` : redacted;
    if (name.length <= KEPT_NAME_CHARS) boundedNames.set(name, bounded);
  }
  return bounded;
}

/**
 * Record a call that was refused before it could run (an unknown op or tool, arguments that do
 * not validate): such calls are logged too, with names and the number of fields bounded, since
 * they are what a client chose to send. Returns the call's request id.
 */
export function recordRefused(
  target: { readonly auditLog: CallLog },
  context: { readonly frontend: string; readonly tool?: string; readonly client?: string },
  op: string,
  args: Record<string, unknown>,
  requestId: string = randomUUID(),
): string {
  const fields = Object.entries(args);
  const kept = Object.fromEntries(fields.slice(0, MAX_REFUSED_FIELDS).map(([name, value]) => [boundedName(name), value]));
  if (fields.length > MAX_REFUSED_FIELDS) kept['…'] = `${fields.length - MAX_REFUSED_FIELDS} more fields`;
  const who = { frontend: context.frontend, ...(context.client !== undefined ? { client: context.client } : {}), ...(context.tool !== undefined ? { tool: boundedName(context.tool) } : {}) };
  recordCall(target.auditLog, who, { time: new Date().toISOString(), request_id: requestId, op: boundedName(op), args: kept, outcome: 'BAD_REQUEST', blocked: false, duration_ms: 0 });
  return requestId;
}

/**
 * Record a server request that is not an op of the protocol (registering a repository, a health
 * check) or that was refused before it reached one (a missing token, a body too large): in `log`,
 * the server's own or a repository's.
 */
export function recordRequest(
  log: CallLog,
  context: { readonly frontend: string; readonly tool?: string; readonly client?: string },
  request: { time: string; request_id: string; op: string; args: Record<string, unknown>; outcome: string; blocked?: boolean; duration_ms: number },
): void {
  const fields = Object.entries(request.args);
  const kept = Object.fromEntries(fields.slice(0, MAX_REFUSED_FIELDS).map(([name, value]) => [boundedName(name), value]));
  if (fields.length > MAX_REFUSED_FIELDS) kept['…'] = `${fields.length - MAX_REFUSED_FIELDS} more fields`;
  recordCall(log, context, { ...request, op: boundedName(request.op), args: kept, blocked: request.blocked === true });
}

const lenientUtf8 = new TextDecoder('utf-8');

/** Text cut anywhere, without half of a surrogate pair at its end (that would not be valid text). */
function wholeCharacters(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}

/**
 * Record a line a server could not read as a request at all (not UTF-8, not JSON, not a request
 * object, over the size limit): no op, and as arguments what was wrong, the line's length in bytes
 * (when known) and how it began — as text (bytes that are not UTF-8 shown as U+FFFD), at most 200 characters.
 */
export function recordUnreadable(engine: { readonly auditLog: CallLog }, frontend: string, problem: string, line: { readonly bytes?: number; readonly head?: Uint8Array | string }): string {
  // The parser's message quotes the line (unescaped, so no pattern can find where the quote
  // ends): that excerpt may be part of a credential too short to recognise. Keep what kind of
  // error it was and where, no text of the line.
  const args: Record<string, unknown> = { problem: withoutExcerpt(problem), ...(line.bytes !== undefined ? { bytes: line.bytes } : {}) };
  if (line.head !== undefined && line.head.length > 0) {
    // More than the preview, so a credential that runs past its end is still recognised and redacted before the cut.
    const text = typeof line.head === 'string' ? line.head.slice(0, REDACTION_WINDOW_CHARS) : lenientUtf8.decode(line.head.subarray(0, 4 * REDACTION_WINDOW_CHARS));
    const redacted = redactSecrets(wholeCharacters(text));
    args.line = redacted.length > MAX_LINE_PREVIEW_CHARS ? `${wholeCharacters(redacted.slice(0, MAX_LINE_PREVIEW_CHARS - 1))}…` : redacted;
  }
  return recordRefused(engine, { frontend }, '', args);
}

/**
 * A parser's message without the text of the line it quotes: `invalid JSON: Unexpected token 'g',
 * "garbage gh"... is not valid JSON` → `invalid JSON: Unexpected token`; a position is kept.
 */
function withoutExcerpt(problem: string): string {
  const quote = problem.search(/["'`]/);
  if (quote < 0) return problem;
  const position = / at position (\d+)/.exec(problem.slice(quote));
  return `${problem.slice(0, quote).replace(/[\s,:]+$/, '')}${position ? ` at position ${position[1]}` : ''}`;
}

/** One audit-log line for a call: who called (front end, tool name), with the arguments sanitized. */
function recordCall(
  log: CallLog,
  context: { readonly frontend: string; readonly tool?: string; readonly client?: string },
  call: { time: string; request_id: string; op: string; args: Record<string, unknown>; outcome: string; blocked: boolean; duration_ms: number },
): void {
  // Built when written, after the answer is on its way: sanitizing the arguments costs a call nothing.
  log.record(() => ({
    time: call.time,
    request_id: call.request_id,
    frontend: context.frontend,
    ...(context.client ? { client: boundedName(context.client) } : {}),
    op: boundedName(call.op),
    ...(context.tool ? { tool: boundedName(context.tool) } : {}),
    args: sanitizeArguments(call.args),
    outcome: call.outcome,
    blocked: call.blocked,
    duration_ms: call.duration_ms,
  }));
}
