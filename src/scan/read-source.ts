import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { errorMessage } from '../core/errors.js';
import { containsPrivateKey } from '../safety/denylist.js';
import { decodeText } from '../text/normalize.js';
import { sniffBinary } from './binary.js';

/** A source file read the one way indexing and serving both read files, or why it was refused. */
export type SourceRead =
  | { readonly ok: true; readonly text: string; readonly bytes: number }
  | { readonly ok: false; readonly state: 'too-large' | 'binary' | 'unreadable' | 'secret'; readonly reason: string; readonly bytes?: number };

/**
 * Read a file for indexing or serving: its size is checked on the open descriptor before a byte
 * is read (a 1.5 GB log costs one fstat, not 1.5 GB of memory), then binaries (NUL, magic bytes,
 * invalid UTF-8 in the first 8 KiB) and files holding a private key are refused, and the text is
 * decoded and normalized (BOM dropped, CRLF/CR → LF) exactly as at indexing time.
 */
export function readSource(absolute: string, maxBytes: number): SourceRead {
  let fd: number;
  try {
    fd = openSync(absolute, 'r');
  } catch (error) {
    return { ok: false, state: 'unreadable', reason: `cannot read: ${errorMessage(error)}` };
  }
  let bytes: Buffer;
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) return { ok: false, state: 'too-large', reason: `${size} bytes, over the ${maxBytes}-byte limit`, bytes: size };
    // Read at most one byte past the limit: a file that grew since the fstat is still caught.
    bytes = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, bytes, length, bytes.length - length, length);
      if (n === 0) break;
      length += n;
      if (length === bytes.length) break;
    }
    if (length > maxBytes) return { ok: false, state: 'too-large', reason: `over the ${maxBytes}-byte limit`, bytes: length };
    bytes = bytes.subarray(0, length);
  } catch (error) {
    return { ok: false, state: 'unreadable', reason: `cannot read: ${errorMessage(error)}` };
  } finally {
    closeSync(fd);
  }
  if (sniffBinary(bytes) !== undefined) return { ok: false, state: 'binary', reason: 'binary file', bytes: bytes.length };
  const text = decodeText(bytes);
  if (containsPrivateKey(text)) return { ok: false, state: 'secret', reason: 'contains a private key', bytes: bytes.length };
  return { ok: true, text, bytes: bytes.length };
}
