import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Open `path` for reading when it is a regular file of at most `maxBytes`: the descriptor and the
 * size, or undefined (missing, a directory, a FIFO or device put in the file's place, too large).
 * Opened non-blocking, so a FIFO never hangs the caller. The caller closes the descriptor.
 */
export function openRegularFile(path: string, maxBytes: number): { fd: number; size: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size <= maxBytes) return { fd, size: stat.size };
  } catch {
    // fall through: closed below
  }
  closeSync(fd);
  return undefined;
}

/**
 * The bytes of `path` when it is a regular file of at most `maxBytes` (see openRegularFile);
 * undefined otherwise, or when reading fails.
 */
export function readRegularFile(path: string, maxBytes: number): Buffer | undefined {
  const opened = openRegularFile(path, maxBytes);
  if (!opened) return undefined;
  try {
    return readAtMost(opened.fd, opened.size, opened.size);
  } catch {
    return undefined;
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * Up to `limit` bytes from an open descriptor, from where it stands, however large the file says
 * it is (`/proc` files say 0) and however short it turns out. Read in pieces of `piece` bytes: a
 * caller that knows the size passes it, for one read into one buffer.
 */
export function readAtMost(fd: number, limit: number, piece = 64 * 1024): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(piece, limit - total)));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    total += n;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** The UTF-8 text of a small regular file (see readRegularFile). */
export function readRegularText(path: string, maxBytes: number): string | undefined {
  return readRegularFile(path, maxBytes)?.toString('utf8');
}
