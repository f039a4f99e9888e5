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
    const bytes = Buffer.alloc(opened.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(opened.fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return bytes.subarray(0, read);
  } catch {
    return undefined;
  } finally {
    closeSync(opened.fd);
  }
}

/** The UTF-8 text of a small regular file (see readRegularFile). */
export function readRegularText(path: string, maxBytes: number): string | undefined {
  return readRegularFile(path, maxBytes)?.toString('utf8');
}
