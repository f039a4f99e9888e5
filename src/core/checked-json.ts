import { crc32 } from './crc32.js';
import { RepodexError } from './errors.js';

/**
 * Checksummed JSON, for every JSON file repodex keeps beside its index (meta.json, the vector
 * manifest, the graph's sidecar, history.json, analytics.json) and for each line of its audit log.
 *
 * A file is the body's fields followed by `checksum`, the CRC-32 of the body serialised the same
 * way, written as `JSON.stringify` writes it (pretty or compact) plus a newline. Reading checks
 * two things: that the bytes are exactly the canonical serialisation of what they parse to (so an
 * edit that leaves the parsed value equal — a space, `1.0` for `1`, `\u0041` for `A`, a byte that
 * is not UTF-8 — is caught), and that the checksum matches the body (so an edit that changes a
 * value is caught). Together they catch every single-byte change, in the checksum itself too.
 */

/** How a checked JSON file is laid out: `JSON.stringify(value, null, 2)` or compact. */
export type JsonLayout = 'pretty' | 'compact';

function serialise(value: unknown, layout: JsonLayout): string {
  return layout === 'pretty' ? JSON.stringify(value, null, 2) : JSON.stringify(value);
}

/** The checksum a body gets: CRC-32 of its serialisation. */
export function bodyChecksum(body: Readonly<Record<string, unknown>>, layout: JsonLayout): number {
  return crc32(Buffer.from(serialise(body, layout), 'utf8'));
}

/** The text of a checked JSON file holding `body` (which must not have a `checksum` field of its own). */
export function checkedJsonText(body: Readonly<Record<string, unknown>>, layout: JsonLayout = 'pretty'): string {
  return `${serialise({ ...body, checksum: bodyChecksum(body, layout) }, layout)}\n`;
}

/**
 * The body of a checked JSON file (without `checksum`), or INDEX_CORRUPT naming `name` and what is
 * wrong: not JSON, not an object, bytes other than the canonical serialisation, no checksum, or a
 * checksum that does not match. The body is as written: fields this version does not know are kept.
 */
export function readCheckedJson(bytes: Uint8Array, name: string, layout: JsonLayout = 'pretty'): Record<string, unknown> {
  const damaged = (why: string): RepodexError => new RepodexError('INDEX_CORRUPT', `${name} is damaged: ${why}`);
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw damaged('it is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw damaged('it is not a JSON object');
  const record = parsed as Record<string, unknown>;
  if (!raw.equals(Buffer.from(`${serialise(record, layout)}\n`, 'utf8'))) throw damaged('its bytes differ from what repodex writes for its content');
  const { checksum, ...body } = record;
  if (typeof checksum !== 'number') throw damaged('it has no checksum');
  if (bodyChecksum(body, layout) !== checksum) throw damaged('checksum mismatch');
  return body;
}

/**
 * Log lines: `{"crc":"xxxxxxxx",` then the entry's fields, where `xxxxxxxx` is the CRC-32 (8 hex
 * digits) of every byte after that prefix up to the newline. The check needs no JSON parse (a log
 * of megabytes is checked at CRC speed), and still catches every single-byte change: in the
 * prefix, in the digits, or in what they cover.
 */
const LINE_PREFIX = '{"crc":"';
const LINE_PREFIX_BYTES = LINE_PREFIX.length + 10; // prefix, 8 hex digits, `",`

/** One log line (without its newline) holding `entry`, checksummed. */
export function checkedJsonLine(entry: Readonly<Record<string, unknown>>): string {
  const text = JSON.stringify(entry);
  if (!text.startsWith('{"')) throw new RepodexError('INTERNAL', 'a checked log line needs at least one field');
  const rest = text.slice(1);
  const crc = crc32(Buffer.from(rest, 'utf8')).toString(16).padStart(8, '0');
  return `${LINE_PREFIX}${crc}",${rest}`;
}

/** What one log line is: a checked entry, a line from before lines were checked, or damage (with why). */
export type LogLine = { readonly kind: 'checked'; readonly bytes: Uint8Array } | { readonly kind: 'unchecked' } | { readonly kind: 'damaged'; readonly why: string };

/**
 * Check one log line (its bytes without the newline). A line that does not start with the
 * checksum prefix is `unchecked` when `legacy` accepts it (a line an older version wrote), else
 * damaged. Only a checked line's content is trusted.
 */
export function checkJsonLine(line: Uint8Array, legacy: (line: Uint8Array) => boolean): LogLine {
  const bytes = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
  if (bytes.length < LINE_PREFIX_BYTES + 1 || bytes.toString('latin1', 0, LINE_PREFIX.length) !== LINE_PREFIX) {
    return legacy(bytes) ? { kind: 'unchecked' } : { kind: 'damaged', why: 'it does not start as repodex writes its lines' };
  }
  const digits = bytes.toString('latin1', LINE_PREFIX.length, LINE_PREFIX.length + 8);
  if (!/^[0-9a-f]{8}$/.test(digits) || bytes.toString('latin1', LINE_PREFIX.length + 8, LINE_PREFIX_BYTES) !== '",') return { kind: 'damaged', why: 'its checksum is unreadable' };
  if (crc32(bytes.subarray(LINE_PREFIX_BYTES)) !== Number.parseInt(digits, 16)) return { kind: 'damaged', why: 'checksum mismatch' };
  return { kind: 'checked', bytes };
}
