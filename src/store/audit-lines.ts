import { checkJsonBytes, checkedJsonText } from '../core/checked-json.js';
import { redactSecrets } from '../safety/secrets.js';

/** One call as the audit log records it: who asked what, how it went, never any file content. */
export interface AuditEntry {
  /** When the call started (ISO 8601, UTC). */
  readonly time: string;
  readonly request_id: string;
  /** The front end: `cli`, `jsonl`, `mcp` or `http`. */
  readonly frontend: string;
  /** Who sent it, where a server can tell (HTTP: the client's address). */
  readonly client?: string;
  /** The operation (`search`) and, for MCP, the tool name the client used (`repo.search`). */
  readonly op: string;
  readonly tool?: string;
  /** The request's arguments, sanitized (`sanitizeArguments`). */
  readonly args: Record<string, unknown>;
  /** `ok`, or the error code of a failed call (`BLOCKED`, `BAD_REQUEST`, …). */
  readonly outcome: string;
  readonly blocked: boolean;
  readonly duration_ms: number;
}

/** The fields an entry can have: a line without its checksum is an older version's only if it has no others. */
const ENTRY_FIELDS = new Set(['time', 'request_id', 'frontend', 'client', 'op', 'tool', 'args', 'outcome', 'blocked', 'duration_ms']);

/** What a log cannot do, and what the user can: said wherever a damaged line is reported. */
export const AUDIT_FIX =
  'an audit log cannot be rebuilt, so `repodex audit` leaves damaged lines out; to clear this, keep a copy of the file if you need it and delete it (a new log starts with the next call)';

/** An entry as one line of the log (no newline), with its checksum as its last field. */
export function encodeEntry(entry: AuditEntry): string {
  return checkedJsonText({ ...entry }, 'line');
}

/** Why a line is damaged, or undefined when it is sound or an older version's (no checksum). */
export function lineDamage(line: Buffer): string | undefined {
  const why = checkJsonBytes(line, 'line');
  return why !== undefined && !looksOlder(line) ? why : undefined;
}

/** One line of the log: its entry, or why it is damaged. */
export function decodeLine(line: Buffer): AuditEntry | { readonly damage: string } {
  const damage = lineDamage(line);
  if (damage) return { damage };
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { damage: 'it is not valid JSON' };
  }
  const { checksum: _checksum, ...fields } = entry;
  if (Object.keys(fields).some((key) => !ENTRY_FIELDS.has(key))) return { damage: 'it has fields an entry never has' };
  return fields as unknown as AuditEntry;
}

/**
 * A line an older version wrote, without a checksum: an entry from its time to its duration, the
 * last field it always has. (A checksummed line ends with its checksum: no single changed byte
 * makes one look like this.)
 */
function looksOlder(line: Buffer): boolean {
  return line.toString('latin1', 0, 9) === '{"time":"' && /,"duration_ms":[0-9.eE+-]+\}$/.test(line.toString('latin1', Math.max(0, line.length - 40)));
}

/** The lines of a log, without their newlines; a last line without one counts too. */
export function linesOf(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  forEachLine(bytes, (line) => lines.push(line));
  return lines;
}

/**
 * Each line of a log (as linesOf has them) that starts at or after byte `from`, with its number
 * among all of them (1-based); the lines before are only counted.
 */
export function forEachLine(bytes: Buffer, visit: (line: Buffer, number: number) => void, from = 0): void {
  let number = 0;
  for (let at = 0; at < bytes.length; ) {
    let end = bytes.indexOf(0x0a, at);
    if (end < 0) end = bytes.length;
    if (end > at) {
      number++;
      if (at >= from) visit(bytes.subarray(at, end), number);
    }
    at = end + 1;
  }
}

/** Damaged line numbers (1-based) as one problem naming what the user can do, or undefined. */
export function damagedLinesProblem(name: string, damaged: readonly number[]): string | undefined {
  if (damaged.length === 0) return undefined;
  const which = damaged.length === 1 ? `line ${damaged[0]} is` : `${damaged.length} lines (${damaged.slice(0, 5).join(', ')}${damaged.length > 5 ? ', …' : ''}) are`;
  return `${name}: ${which} damaged; ${AUDIT_FIX}`;
}

/** An entry with its names and every string in its arguments passed through `redactSecrets` again. */
export function redactEntry(entry: AuditEntry): AuditEntry {
  return { ...entry, op: redactSecrets(entry.op), ...(entry.tool !== undefined ? { tool: redactSecrets(entry.tool) } : {}), args: redactValue(entry.args) as Record<string, unknown> };
}

/** A logged value with every string in it redacted (already cut and bounded when it was logged). */
function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactSecrets(key), redactValue(item)]));
  return value;
}
