import { crc32 } from './crc32.js';
import { RepodexError } from './errors.js';

/**
 * Checksummed JSON, for every JSON file repodex keeps beside its index (meta.json, the vector
 * manifest, the graph's sidecar, history.json, analytics.json) and for each line of its audit log.
 *
 * The text is the value as `JSON.stringify` writes it (pretty or compact), with a last field
 * `"checksum": "xxxxxxxx"`: the CRC-32, in hex, of the whole text with those eight digits written
 * as zeros. The checksum covers the bytes as written, not the parsed value, so an edit that leaves
 * the value equal (a space, `1.0` for `1`, `\u0041` for `A`, a byte that is not UTF-8) is caught as
 * surely as one that changes it, and so is any change to the field itself. Checking needs no JSON
 * parse: a megabyte is checked at CRC speed (what `status` does for every file, every time).
 *
 * meta.json was written before this scheme with a numeric `checksum` (the CRC-32 of the value
 * serialised without it): such a file is still read, its bytes compared with that serialisation.
 */

/** How a checked JSON text is laid out: `JSON.stringify(value, null, 2)`, compact, or compact without the final newline (a log line). */
export type JsonLayout = 'pretty' | 'compact' | 'line';

const PLACEHOLDER = '00000000';

/** What follows the body in each layout: the checksum field, around its eight hex digits. */
const TAIL: Readonly<Record<JsonLayout, { readonly before: string; readonly after: string }>> = {
  pretty: { before: ',\n  "checksum": "', after: '"\n}\n' },
  compact: { before: ',"checksum":"', after: '"}\n' },
  line: { before: ',"checksum":"', after: '"}' },
};

function serialise(value: unknown, layout: JsonLayout): string {
  return layout === 'pretty' ? JSON.stringify(value, null, 2) : JSON.stringify(value);
}

/** The checked text of `body` (at least one field, none named `checksum`). */
export function checkedJsonText(body: Readonly<Record<string, unknown>>, layout: JsonLayout = 'pretty'): string {
  if ('checksum' in body || Object.keys(body).length === 0) throw new RepodexError('INTERNAL', 'a checked JSON body needs fields of its own, and none named checksum');
  const text = `${serialise({ ...body, checksum: PLACEHOLDER }, layout)}${layout === 'line' ? '' : '\n'}`;
  const digits = crc32(Buffer.from(text, 'utf8')).toString(16).padStart(8, '0');
  const at = text.length - TAIL[layout].after.length - PLACEHOLDER.length;
  return `${text.slice(0, at)}${digits}${text.slice(at + PLACEHOLDER.length)}`;
}

/**
 * Why `bytes` are not a sound checked JSON text in `layout`, or undefined when they are: the
 * checksum field is not where it belongs, or the CRC does not match. No JSON parse.
 */
export function checkJsonBytes(bytes: Uint8Array, layout: JsonLayout = 'pretty'): string | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { before, after } = TAIL[layout];
  const digitsAt = buf.length - after.length - PLACEHOLDER.length;
  if (buf[0] !== 0x7b || digitsAt - before.length < 1 || buf.toString('latin1', digitsAt - before.length, digitsAt) !== before || buf.toString('latin1', digitsAt + PLACEHOLDER.length) !== after) {
    return 'its checksum field is missing or out of place';
  }
  const digits = buf.toString('latin1', digitsAt, digitsAt + PLACEHOLDER.length);
  if (!/^[0-9a-f]{8}$/.test(digits)) return 'its checksum is unreadable';
  let crc = crc32(buf.subarray(0, digitsAt));
  crc = crc32(Buffer.from(PLACEHOLDER, 'latin1'), crc);
  crc = crc32(buf.subarray(digitsAt + PLACEHOLDER.length), crc);
  return crc === Number.parseInt(digits, 16) ? undefined : 'checksum mismatch';
}

/**
 * The body of a checked JSON file (without `checksum`), or INDEX_CORRUPT naming `name` and what
 * is wrong. The body is as written: fields this version does not know are kept.
 */
export function readCheckedJson(bytes: Uint8Array, name: string, layout: JsonLayout = 'pretty'): Record<string, unknown> {
  const damaged = (why: string): RepodexError => new RepodexError('INDEX_CORRUPT', `${name} is damaged: ${why}`);
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const legacy = legacyBody(raw, layout);
  if (legacy) {
    if (typeof legacy === 'string') throw damaged(legacy);
    return legacy;
  }
  const why = checkJsonBytes(raw, layout);
  if (why) throw damaged(why);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw damaged('it is not valid JSON'); // a checksum that matches over text that does not parse: written so
  }
  const { checksum: _checksum, ...body } = parsed as Record<string, unknown>;
  return body;
}

/**
 * A file of the earlier scheme (a numeric `checksum` last, over the value serialised without it):
 * its body, why it is damaged, or undefined when it is not of that scheme.
 */
function legacyBody(raw: Buffer, layout: JsonLayout): Record<string, unknown> | string | undefined {
  if (!/"checksum": ?\d+\s*\}\s*$/.test(raw.toString('latin1', Math.max(0, raw.length - 40)))) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return 'it is not valid JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'it is not a JSON object';
  const record = parsed as Record<string, unknown>;
  if (!raw.equals(Buffer.from(`${serialise(record, layout)}${layout === 'line' ? '' : '\n'}`, 'utf8'))) return 'its bytes differ from what repodex writes for its content';
  const { checksum, ...body } = record;
  if (typeof checksum !== 'number' || crc32(Buffer.from(serialise(body, layout), 'utf8')) !== checksum) return 'checksum mismatch';
  return body;
}
