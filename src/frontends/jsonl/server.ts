import type { Writable } from 'node:stream';
import { shownFailure } from '../../core/error-log.js';
import { type Engine, accept, call, recordUnreadable } from '../../protocol/index.js';
import { type Line, LineSplitter } from '../lines.js';

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
  const answer = async (line: Line): Promise<void> => {
    if (line.kind === 'oversized') {
      recordUnreadable(engine, 'jsonl', `over the ${max}-byte line limit`, { bytes: line.length, head: line.head });
      await write({ ok: false, op: '', error: `request too large (limit ${max} bytes per line)`, code: 'BAD_REQUEST' });
    } else {
      await write(await respond(engine, line.bytes, options.log));
    }
  };
  const lines = new LineSplitter(max, HEAD_BYTES);
  for await (const chunk of input) for (const line of lines.push(chunk)) await answer(line);
  for (const line of lines.end()) await answer(line); // a last line without its newline still gets an answer
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
  const taken = accept('jsonl', engine, { frontend: 'jsonl' }, record.op, record);
  if (!taken.ok) return { ok: false, op: taken.op ?? '', error: taken.reason === 'invalid' ? `bad request: ${taken.message}` : taken.message, code: 'BAD_REQUEST', ...id };
  const op = taken.op;
  try {
    // Every op goes through the same call: the engine's freshness policy, the response cap, the audit log.
    const result = await call(engine, taken.request, { frontend: 'jsonl' });
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
