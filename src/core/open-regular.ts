import { closeSync, constants, fstatSync, openSync } from 'node:fs';

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
