import { closeSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { isErrnoException } from './errors.js';

/** Write a file and flush it to disk before returning, so a later rename cannot expose a torn file. `mode` applies when it is created. */
export function writeFileDurable(path: string, data: Uint8Array | string, mode?: number): void {
  const fd = openSync(path, 'w', mode);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flush a directory entry table, making a rename inside it durable. */
export function fsyncDir(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return; // some platforms cannot open directories; the rename is still atomic, just not yet durable
  }
  try {
    fsyncSync(fd);
  } catch {
    // EINVAL/EISDIR on file systems without directory fsync: atomicity holds, durability is best effort.
  } finally {
    closeSync(fd);
  }
}

/** Replace `path` atomically: write a temp file beside it, flush, rename over. */
export function writeFileAtomic(path: string, data: Uint8Array | string, dir: string): void {
  const temp = `${path}.tmp-${process.pid}`;
  writeFileDurable(temp, data);
  renameSync(temp, path);
  fsyncDir(dir);
}

/**
 * Create `path` with `data` only if it does not exist, atomically: the content is complete before
 * the name appears (a hard link of a flushed temp file), so a crash never leaves a torn file and
 * an existing file is never overwritten. Returns false when the file already existed. `mode` is
 * the file's from its first byte (a secret is never readable by others, not even for a moment).
 */
export function createFileAtomic(path: string, data: Uint8Array | string, dir: string, mode?: number): boolean {
  const temp = `${path}.tmp-${process.pid}`;
  writeFileDurable(temp, data, mode);
  try {
    linkSync(temp, path);
  } catch (error) {
    if (isErrnoException(error, 'EEXIST')) return false;
    throw error;
  } finally {
    unlinkSync(temp);
  }
  fsyncDir(dir);
  return true;
}
