import type { Writable } from 'node:stream';
import { shownFailure } from '../../core/error-log.js';
import { type Engine, OPS, Request, call, describeIssues, recordRefused, recordUnreadable } from '../../protocol/index.js';

/** Longest request line accepted (SPEC §9: 1 MiB). */
export const MAX_REQUEST_BYTES = 1024 * 1024;

type Response =
  | { ok: true; op: string; data: unknown; warnings?: string[]; id?: string | number }
  | { ok: false; op: string; error: string; code: string; blocked?: boolean; hint?: string; data?: unknown; id?: string | number };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** First bytes of an oversized line kept for the audit log (searched for credentials, then cut to a preview). */
const HEAD_BYTES = 4 * 8192;

/** Options for a JSONL session. */
export interface JsonlOptions {
  readonly maxRequestBytes?: number;
  /** Where internal errors are logged for people (never the protocol stream). */
  readonly log?: (message: string) => void;
}

/**
 * Serve the JSONL protocol (seed 000 §4.3): one request per line in, one response per line out,
 * in order. Nothing a client sends ends the session: bad JSON, unknown ops, bad fields, invalid
 * UTF-8 and lines over the size limit each get an error line. An oversized line is discarded as
 * it streams in, never buffered whole. Resolves at end of input once every response is written.
 */
export async function serveJsonl(engine: Engine, input: AsyncIterable<Buffer | string>, output: Writable, options: JsonlOptions = {}): Promise<void> {
  const max = options.maxRequestBytes ?? MAX_REQUEST_BYTES;
  const write = async (response: Response | Serialized): Promise<void> => {
    if (!output.write(`${response instanceof Serialized ? response.text : JSON.stringify(response)}\n`)) {
      await new Promise<void>((resolve) => output.once('drain', resolve));
    }
  };
  let parts: Buffer[] = [];
  let size = 0;
  let oversized = false;
  // Of an oversized line: its length and first bytes, for the audit log (the rest is never kept).
  let dropped = 0;
  let head: Buffer = Buffer.alloc(0);
  const endLine = async (): Promise<void> => {
    if (oversized) {
      recordUnreadable(engine, 'jsonl', `over the ${max}-byte line limit`, { bytes: dropped, head });
      await write({ ok: false, op: '', error: `request too large (limit ${max} bytes per line)`, code: 'BAD_REQUEST' });
    } else {
      await write(await respond(engine, Buffer.concat(parts, size), options.log));
    }
    parts = [];
    size = 0;
    oversized = false;
    dropped = 0;
    head = Buffer.alloc(0);
  };
  let sawBytes = false;
  for await (const raw of input) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const end = newline < 0 ? chunk.length : newline;
      if (oversized) {
        dropped += end - start;
      } else if (end > start) {
        if (size + (end - start) > max) {
          oversized = true; // keep reading to the newline, keep nothing but the first bytes
          head = Buffer.concat([...parts, chunk.subarray(start, end)]).subarray(0, HEAD_BYTES);
          dropped = size + (end - start);
          parts = [];
          size = 0;
        } else {
          parts.push(chunk.subarray(start, end));
          size += end - start;
        }
      }
      sawBytes ||= end > start;
      if (newline < 0) break;
      await endLine();
      sawBytes = false;
      start = newline + 1;
    }
  }
  if (sawBytes || oversized) await endLine(); // a last line without its newline still gets an answer
}

/** A response line already made: the JSON of its answer was made when it was measured against the response cap. */
class Serialized {
  constructor(readonly text: string) {}
}

async function respond(engine: Engine, line: Buffer, log?: (message: string) => void): Promise<Response | Serialized> {
  // A line that is no request at all is a call too: the audit log records what was wrong with it.
  const unreadable = (error: string, head: Uint8Array | string = line, id: { id?: string | number } = {}): Response => {
    recordUnreadable(engine, 'jsonl', error, { bytes: line.length, head });
    return { ok: false, op: '', error, code: 'BAD_REQUEST', ...id };
  };
  let text: string;
  try {
    text = utf8.decode(line);
  } catch {
    return unreadable('request is not valid UTF-8');
  }
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (text.trim() === '') return unreadable('empty request line: send one JSON object per line', text);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return unreadable(`invalid JSON: ${(error as Error).message}`, text);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return unreadable('a request must be a JSON object with an "op" field', text);
  }
  const record = raw as Record<string, unknown>;
  // Echo only ids the schema would accept, so a response never carries an arbitrarily large id back.
  const id = (typeof record.id === 'string' && record.id.length <= 256) || typeof record.id === 'number' ? { id: record.id } : {};
  const { op: _op, id: _id, ...args } = record;
  const op = record.op;
  if (typeof op !== 'string') {
    recordRefused(engine, { frontend: 'jsonl' }, '', args);
    return { ok: false, op: '', error: 'missing "op": one of ' + OPS.join(', '), code: 'BAD_REQUEST', ...id };
  }
  if (!(OPS as readonly string[]).includes(op)) {
    recordRefused(engine, { frontend: 'jsonl' }, op, args);
    return { ok: false, op: '', error: `unknown op ${JSON.stringify(op)}: expected one of ${OPS.join(', ')}`, code: 'BAD_REQUEST', ...id };
  }
  const parsed = Request.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    recordRefused(engine, { frontend: 'jsonl' }, op, args);
    return { ok: false, op, error: `bad request: ${describeIssues(parsed.error)}`, code: 'BAD_REQUEST', ...id };
  }
  try {
    // Every op goes through the same call: the engine's freshness policy, the response cap, the audit log.
    const result = await call(engine, parsed.data, { frontend: 'jsonl' });
    if (result.error) {
      const { code, message, hint } = result.error;
      return { ok: false, op, error: message, code, ...(hint !== undefined ? { blocked: result.blocked, hint } : {}), ...(result.data !== undefined ? { data: result.data } : {}), ...id };
    }
    // Answers without their own `warnings` (a cut `open`, say) carry the call's at the top level.
    const extra = result.warnings.length > 0 && !('warnings' in (result.data as object)) ? { warnings: result.warnings } : {};
    if (result.json !== undefined) {
      // The line JSON.stringify would make of { ok, op, data, ...extra, ...id }, around the answer's JSON as it was made.
      const rest = JSON.stringify({ ...extra, ...id });
      return new Serialized(`{"ok":true,"op":${JSON.stringify(op)},"data":${result.json}${rest === '{}' ? '}' : `,${rest.slice(1)}`}`);
    }
    return { ok: true, op, data: result.data, ...extra, ...id };
  } catch (error) {
    // A bug: one line for the people watching the server, the stack in the error log.
    const shown = shownFailure(error, `serve --stdio: ${op} in ${engine.root}`);
    log?.(`repodex: ${op} failed: ${shown.message}`);
    return { ok: false, op, error: shown.message, code: shown.code, ...id };
  }
}
