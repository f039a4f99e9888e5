import { closeSync, fsyncSync, linkSync, lstatSync, openSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { isErrnoException } from './errors.js';
import { rethrowSystemFailure } from './system-errors.js';

/**
 * Write a file and flush it to disk before returning, so a later rename cannot expose a torn file.
 * A write that fails (a full disk, a read-only one) removes what it wrote and says why in words
 * (see `systemFailure`), naming `shownAs` (default: `path`). `mode` applies when it is created.
 */
export function writeFileDurable(path: string, data: Uint8Array | string, shownAs: string = path, mode?: number): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let fd: number;
  try {
    fd = openSync(path, 'w', mode);
  } catch (error) {
    rethrowSystemFailure(error, { path: shownAs, writing: true, bytes: bytes.length });
  }
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } catch (error) {
    closeQuietly(fd);
    rmSync(path, { force: true });
    rethrowSystemFailure(error, { path: shownAs, writing: true, bytes: bytes.length });
  }
  closeSync(fd);
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // the write already failed: that is the error to report
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

/** Replace `path` atomically: write a temp file beside it, flush, rename over. A failed write leaves `path` as it was and no temp file. */
export function writeFileAtomic(path: string, data: Uint8Array | string, dir: string): void {
  const temp = `${path}.tmp-${process.pid}`;
  writeFileDurable(temp, data, path);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    rethrowSystemFailure(error, { path, writing: true });
  }
  fsyncDir(dir);
}

/**
 * Create `path` with `data` only if it does not exist, atomically: the content is complete before
 * the name appears (a hard link of a flushed temp file), so a crash never leaves a torn file and
 * an existing file is never overwritten. Returns false when the file already existed; then
 * nothing is written at all (a read-only folder holding it is fine). `mode` is the file's from its
 * first byte (a secret is never readable by others, not even for a moment).
 */
export function createFileAtomic(path: string, data: Uint8Array | string, dir: string, mode?: number): boolean {
  if (exists(path)) return false;
  const temp = `${path}.tmp-${process.pid}`;
  writeFileDurable(temp, data, path, mode);
  try {
    linkSync(temp, path);
  } catch (error) {
    if (isErrnoException(error, 'EEXIST')) return false;
    rethrowSystemFailure(error, { path, writing: true });
  } finally {
    unlinkSync(temp);
  }
  fsyncDir(dir);
  return true;
}

/** Whether a directory entry named `path` exists (a dangling link counts: it is not overwritten either). */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false; // missing, or not to be looked at: creating it says why if it cannot be done
  }
}
