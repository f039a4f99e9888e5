import { type BigIntStats, type Stats, lstatSync, readdirSync, statSync } from 'node:fs';
import { isErrnoException } from './errors.js';

/**
 * The result of a stat of a path that may be gone: undefined when it does not exist, including
 * when a folder on its way was replaced by a file (ENOTDIR, which `throwIfNoEntry: false` still
 * throws: a folder of the tree turned into a file must read as its files being removed, not crash
 * the caller).
 */
function unlessGone<T>(stat: () => T | undefined): T | undefined {
  try {
    return stat();
  } catch (error) {
    if (isErrnoException(error, 'ENOTDIR')) return undefined;
    throw error;
  }
}

/** Stat a path that may be gone (see unlessGone). */
export function statIfExists(path: string): Stats | undefined {
  return unlessGone(() => statSync(path, { throwIfNoEntry: false }));
}

/** statIfExists with nanosecond times. */
export function statIfExistsNs(path: string): BigIntStats | undefined {
  return unlessGone(() => statSync(path, { bigint: true, throwIfNoEntry: false }));
}

/** statIfExists without following a final symlink. */
export function lstatIfExists(path: string): Stats | undefined {
  return unlessGone(() => lstatSync(path, { throwIfNoEntry: false }));
}

/**
 * The names in a folder, or none when it cannot be listed for one of the `tolerated` error codes
 * (any other failure is thrown). `'any'` swallows every failure: for best-effort sweeps and sizes
 * of repodex's own folders, where an unreadable folder must not fail the operation around them.
 */
export function listDirOrEmpty(dir: string, tolerated: 'any' | readonly string[]): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    if (tolerated === 'any' || tolerated.some((code) => isErrnoException(error, code))) return [];
    throw error;
  }
}

/**
 * What change detection compares for a file: size and mtime, plus ctime and inode as git does. A
 * same-size edit whose mtime was put back (`cp -p`, `rsync -a`, `tar x`, `touch -r`) still moves
 * ctime, which no user-space call can set; a file replaced by another gets another inode.
 */
export interface FileStamp {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
}

/** The stamp of a stat. */
export function stampOf(stat: Stats): FileStamp {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
}

/** True when two stamps say the file is unchanged. */
export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}
