import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { errorMessage } from '../core/errors.js';
import { decodeText } from '../text/normalize.js';
import { decodeWindows1252, sniffBinary, textEncoding } from './binary.js';

/** A source file read the one way indexing and serving both read files, or why it was refused. */
export type SourceRead =
  | { readonly ok: true; readonly text: string; readonly bytes: number }
  | { readonly ok: false; readonly state: 'too-large' | 'binary' | 'unreadable' | 'hard-link'; readonly reason: string; readonly bytes?: number };

/** How a read is bounded. */
export interface ReadLimits {
  readonly maxBytes: number;
  /** Read files that have more than one hard link (off by default: another name may be a secret's). */
  readonly allowHardLinks: boolean;
}

/**
 * Read a file for indexing or serving: its size and link count are checked on the open descriptor
 * before a byte is read (a 1.5 GB log costs one fstat, not 1.5 GB of memory), then binaries (NUL,
 * magic bytes, neither UTF-8 nor single-byte text in the first 8 KiB) are refused, and the text is decoded and
 * normalized (BOM dropped, CRLF/CR → LF) exactly as at indexing time. A file with more than one
 * hard link is refused unless allowed: a path denylist cannot see that `notes.txt` is also
 * `.env`, or a key outside the repository. Credentials in the text are the caller's to check
 * (`findSecret`, asynchronous).
 */
export function readSource(absolute: string, limits: ReadLimits): SourceRead {
  const { maxBytes } = limits;
  let fd: number;
  try {
    fd = openSync(absolute, 'r');
  } catch (error) {
    return { ok: false, state: 'unreadable', reason: `cannot read: ${errorMessage(error)}` };
  }
  let bytes: Buffer;
  try {
    const stat = fstatSync(fd);
    if (stat.nlink > 1 && !limits.allowHardLinks) {
      return { ok: false, state: 'hard-link', reason: `has ${stat.nlink} hard links: another name for it may be a secret`, bytes: stat.size };
    }
    const size = stat.size;
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
  const text = decodeSource(bytes);
  if (text === undefined) return { ok: false, state: 'binary', reason: 'binary file', bytes: bytes.length };
  return { ok: true, text, bytes: bytes.length };
}

/** A file's bytes as the index reads them (UTF-8, or Windows-1252 for legacy single-byte text), or undefined for a binary file. */
export function decodeSource(bytes: Uint8Array): string | undefined {
  if (sniffBinary(bytes) !== undefined) return undefined;
  return decodeText(bytes, textEncoding(bytes) === 'windows-1252' ? decodeWindows1252 : undefined);
}
