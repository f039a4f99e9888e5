import { type BigIntStats, type Stats, lstatSync, statSync } from 'node:fs';
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
