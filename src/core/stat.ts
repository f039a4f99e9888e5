import { type BigIntStats, type Stats, lstatSync, statSync } from 'node:fs';
import { isErrnoException } from './errors.js';

/**
 * Stat a path that may be gone: undefined when it does not exist, including when a folder on its
 * way was replaced by a file (ENOTDIR, which `throwIfNoEntry: false` still throws: a folder of
 * the tree turned into a file must read as its files being removed, not crash the caller).
 */
export function statIfExists(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    if (isErrnoException(error, 'ENOTDIR')) return undefined;
    throw error;
  }
}

/** statIfExists with nanosecond times. */
export function statIfExistsNs(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (isErrnoException(error, 'ENOTDIR')) return undefined;
    throw error;
  }
}

/** statIfExists without following a final symlink. */
export function lstatIfExists(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    if (isErrnoException(error, 'ENOTDIR')) return undefined;
    throw error;
  }
}
