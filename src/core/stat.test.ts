import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isErrnoException } from './errors.js';
import { listDirOrEmpty } from './stat.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder holding a file `f` and a folder `d`. */
function fixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'repodex-stat-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'f'), 'x');
  mkdirSync(join(dir, 'd'));
  return dir;
}

/** The error code `list` throws, or undefined when it returns. */
function thrownCode(list: () => unknown): string | undefined {
  try {
    list();
    return undefined;
  } catch (error) {
    return isErrnoException(error) ? error.code : String(error);
  }
}

describe('listDirOrEmpty', () => {
  it('lists the names of a real folder, files and folders alike', () => {
    const dir = fixture();
    expect(listDirOrEmpty(dir, 'any').sort()).toEqual(['d', 'f']);
    expect(listDirOrEmpty(dir, ['ENOENT']).sort()).toEqual(['d', 'f']);
    expect(listDirOrEmpty(join(dir, 'd'), ['ENOENT'])).toEqual([]);
  });

  it('gives nothing for a missing folder when ENOENT is tolerated, and throws it when it is not', () => {
    const missing = join(fixture(), 'gone');
    expect(listDirOrEmpty(missing, 'any')).toEqual([]);
    expect(listDirOrEmpty(missing, ['ENOENT'])).toEqual([]);
    expect(thrownCode(() => listDirOrEmpty(missing, ['ENOTDIR']))).toBe('ENOENT');
  });

  it('gives nothing for a file (ENOTDIR) only when that is tolerated', () => {
    const file = join(fixture(), 'f');
    expect(listDirOrEmpty(file, 'any')).toEqual([]);
    expect(listDirOrEmpty(file, ['ENOENT', 'ENOTDIR'])).toEqual([]);
    expect(thrownCode(() => listDirOrEmpty(file, ['ENOENT']))).toBe('ENOTDIR');
  });
});
