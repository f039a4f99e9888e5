import * as z from 'zod/mini';
import { RepodexError } from '../core/errors.js';
import type { core } from 'zod/mini';
import { type CliField, OPS, type OpSpec, type Surface } from './ops.js';
import { type Op, capOf, wholeNumber } from './schemas.js';

/**
 * What the op table says of each surface, derived once: which ops it serves, which fields it
 * takes and what it calls them, its input schemas (MCP, HTTP), and translations between a
 * surface's names and the request's, for input, for validation errors and for messages.
 */

type AnySpec = OpSpec<Op>;
const spec = (op: Op): AnySpec => OPS[op] as unknown as AnySpec;

/** Every op, in table order. */
export const ALL_OPS = Object.keys(OPS) as Op[];

/** Whether `surface` serves `op` (the CLI serves every op). */
export function serves(surface: Surface, op: Op): boolean {
  const entry = spec(op);
  return surface === 'cli' ? true : surface === 'jsonl' ? entry.jsonl : entry[surface] !== undefined;
}

/** The ops a surface serves, in table order. */
export function opsOn(surface: Surface): Op[] {
  return ALL_OPS.filter((op) => serves(surface, op));
}

/** The fields of an op's request, in schema order, without the envelope (`op`, JSONL's `id`). */
export function requestFields(op: Op): string[] {
  return Object.keys(spec(op).request.shape).filter((field) => field !== 'op' && field !== 'id');
}

/** The fields `surface` does not take for `op`, each with why. */
export function withheldOn(surface: Surface, op: Op): Readonly<Record<string, string>> {
  const entry = spec(op);
  return (surface === 'mcp' || surface === 'http' ? entry[surface]?.withheld : undefined) ?? {};
}

/** The fields of `op` that `surface` takes, in schema order. */
export function fieldsOn(surface: Surface, op: Op): string[] {
  const withheld = withheldOn(surface, op);
  return requestFields(op).filter((field) => !(field in withheld));
}

/** How the CLI takes a field of `op`. */
export function cliField(op: Op, field: string): CliField {
  return (spec(op).cli.fields as Record<string, CliField>)[field] ?? {};
}

/** The CLI flag of a field, or undefined when it is given as the command's arguments only. */
export function flagOf(op: Op, field: string): string | undefined {
  const given = cliField(op, field).flag;
  return given === null ? undefined : (given ?? `--${field.replace(/_/g, '-')}`);
}

/**
 * What `surface` calls a field of `op`: MCP's `file_glob` or `budget.max_files` (dotted: nested),
 * HTTP's `start`, the CLI's `--top-k` (`the path` for a field given as arguments only).
 */
export function nameOn(surface: Surface, op: Op, field: string): string {
  if (surface === 'cli') return flagOf(op, field) ?? `the ${field}`;
  if (surface === 'jsonl') return field;
  return (spec(op)[surface]?.names as Record<string, string> | undefined)?.[field] ?? field;
}

/** What a field is, as text must be read into it (CLI flags, HTTP query parameters). */
export type FieldKind = 'boolean' | 'integer' | 'integers' | 'string';

type Def = { type: string; innerType?: z.ZodMiniType; in?: z.ZodMiniType; element?: z.ZodMiniType; entries?: Record<string, string> };

/** The schema under optional and pipe wrappers: what a value is checked as first. */
function base(schema: z.ZodMiniType): Def {
  let def = schema._zod.def as Def;
  while ((def.type === 'optional' && def.innerType) || (def.type === 'pipe' && def.in)) def = ((def.type === 'optional' ? def.innerType : def.in) as z.ZodMiniType)._zod.def as Def;
  return def;
}

function fieldSchema(op: Op, field: string): z.ZodMiniType {
  const schema = (spec(op).request.shape as Record<string, z.ZodMiniType>)[field];
  if (!schema) throw new RepodexError('INTERNAL', `${op} has no field ${field}`);
  return schema;
}

/** How text is read into a field of `op`. */
export function kindOf(op: Op, field: string): FieldKind {
  const def = base(fieldSchema(op, field));
  if (def.type === 'boolean') return 'boolean';
  if (def.type === 'number') return 'integer';
  if (def.type === 'array') return 'integers';
  return 'string';
}

/** The values an enum field takes, or undefined for any other field. */
export function choicesOf(op: Op, field: string): readonly string[] | undefined {
  const def = base(fieldSchema(op, field));
  return def.type === 'enum' && def.entries ? Object.values(def.entries) : undefined;
}

/** The name of `op` on `surface`: the CLI command and the JSONL op are the op's, the MCP tool (dotted), `METHOD path` on HTTP. */
export function opName(surface: Surface, op: Op): string {
  const entry = spec(op);
  if (surface === 'mcp') return entry.mcp!.tool;
  if (surface === 'http') return `${entry.http!.method} ${entry.http!.path}`;
  return op;
}

/** The op a name on `surface` stands for (an MCP tool in either spelling: `repo.search`, `repo_search`), or undefined. */
export function opNamed(surface: Surface, name: string): Op | undefined {
  return opsOn(surface).find((op) => {
    const own = opName(surface, op);
    return own === name || (surface === 'mcp' && own.replace(/\./g, '_') === name);
  });
}

/** The HTTP surface's own parameter: the repository every route answers for. */
export const REPO_ID = z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(100, 'must be at most 100 characters'));

/**
 * The input schema of `op` on MCP or HTTP: the request's own field schemas under the surface's
 * names, a dotted name nesting in an object (`budget.max_files`), strict at every level. On MCP a
 * field with a fixed cap advertises it as its maximum (a larger number is refused there, where
 * other surfaces take it and cap it); HTTP adds `repo_id`.
 */
export function inputSchema(surface: 'mcp' | 'http', op: Op): z.ZodMiniObject {
  const key = `${surface} ${op}`;
  let schema = INPUT_SCHEMAS.get(key);
  if (!schema) INPUT_SCHEMAS.set(key, (schema = buildInputSchema(surface, op)));
  return schema;
}

/** Input schemas as built, one per surface and op: every request on MCP and HTTP is parsed with one. */
const INPUT_SCHEMAS = new Map<string, z.ZodMiniObject>();

function buildInputSchema(surface: 'mcp' | 'http', op: Op): z.ZodMiniObject {
  const shape: Record<string, z.ZodMiniType> = surface === 'http' ? { repo_id: REPO_ID } : {};
  const nested = new Map<string, Record<string, z.ZodMiniType>>();
  for (const field of fieldsOn(surface, op)) {
    let schema = fieldSchema(op, field);
    const cap = capOf(schema);
    if (surface === 'mcp' && cap !== undefined) schema = z.optional(wholeNumber(1, cap));
    const [head, inner] = splitName(nameOn(surface, op, field));
    if (inner === undefined) shape[head] = schema;
    else nested.set(head, { ...(nested.get(head) ?? {}), [inner]: schema });
  }
  for (const [head, inner] of nested) shape[head] = z.optional(z.strictObject(inner));
  return z.strictObject(shape);
}

function splitName(name: string): [string, string | undefined] {
  const dot = name.indexOf('.');
  return dot < 0 ? [name, undefined] : [name.slice(0, dot), name.slice(dot + 1)];
}

/** Validated input of a surface (its names, MCP's nested ones) as the op's request. */
export function fromSurface(surface: Surface, op: Op, input: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const request: Record<string, unknown> = { op };
  for (const field of fieldsOn(surface, op)) {
    const [head, inner] = splitName(nameOn(surface, op, field));
    const value = inner === undefined ? input[head] : (input[head] as Record<string, unknown> | undefined)?.[inner];
    if (value !== undefined) request[field] = value;
  }
  return request;
}

/** A request's fields under a surface's names (MCP's nested): what the `--repo` client sends. */
export function toSurface(surface: 'mcp' | 'http', op: Op, request: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fieldsOn(surface, op)) {
    if (request[field] === undefined) continue;
    const [head, inner] = splitName(nameOn(surface, op, field));
    if (inner === undefined) out[head] = request[field];
    else out[head] = { ...((out[head] as Record<string, unknown> | undefined) ?? {}), [inner]: request[field] };
  }
  return out;
}

/** Validation issues of a request with their paths in a surface's names (`q` → `query`, `max_files` → `budget.max_files`). */
export function issuesOn(surface: Surface, op: Op, issues: readonly core.$ZodIssue[]): core.$ZodIssue[] {
  const fields = new Set(requestFields(op));
  return issues.map((issue) => {
    const [first, ...rest] = issue.path;
    if (typeof first !== 'string' || !fields.has(first)) return issue;
    return { ...issue, path: [...nameOn(surface, op, first).split('.'), ...rest] } as core.$ZodIssue;
  });
}

/**
 * A message that names request fields (`end_line 2 is before start_line 3`, `since must be …`)
 * in a surface's names: names with an underscore wherever they stand, and any field that begins
 * the message as its subject.
 */
export function inSurfaceTerms(surface: Surface, op: Op, message: string): string {
  let out = message;
  for (const field of requestFields(op)) {
    const name = nameOn(surface, op, field);
    if (name === field) continue;
    if (field.includes('_')) out = out.replace(new RegExp(`\\b${field}\\b`, 'g'), name);
    else if (out.startsWith(`${field} must `)) out = `${name}${out.slice(field.length)}`;
  }
  return out;
}
