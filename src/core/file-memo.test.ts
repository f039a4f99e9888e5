import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileMemo } from './file-memo.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Block for `ms`: file change times come from a coarse clock, so two writes in one tick could share them. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A memo over files `a` and `b` of a fresh folder, with a clock `skewMs` ahead of the real one. */
function fixture(skewMs: number): { dir: string; reads: () => number; memo: FileMemo<string> } {
  const dir = mkdtempSync(join(tmpdir(), 'repodex-memo-'));
  dirs.push(dir);
  let reads = 0;
  const memo = new FileMemo(
    (consulted) => {
      reads++;
      let text = '';
      for (const name of ['a', 'b']) {
        const path = join(dir, name);
        consulted.push(path);
        try {
          text += readFileSync(path, 'utf8');
        } catch {
          text += '(none)';
        }
      }
      return text;
    },
    () => Date.now() + skewMs,
  );
  return { dir, reads: () => reads, memo };
}

describe('FileMemo', () => {
  it('derives once while the files stay as they were', () => {
    const { dir, reads, memo } = fixture(10_000);
    writeFileSync(join(dir, 'a'), 'one');
    expect(memo.get()).toBe('one(none)');
    expect(memo.get()).toBe('one(none)');
    expect(reads()).toBe(1);
  });

  it('derives again when a file changes, appears or goes, even when its size and mtime stay the same', () => {
    const { dir, reads, memo } = fixture(10_000);
    const a = join(dir, 'a');
    writeFileSync(a, 'one');
    utimesSync(a, 1_700_000_000, 1_700_000_000);
    expect(memo.get()).toBe('one(none)');
    pause(30);
    writeFileSync(a, 'two');
    utimesSync(a, 1_700_000_000, 1_700_000_000); // same size, same mtime: only the ctime moved
    expect(memo.get()).toBe('two(none)');
    writeFileSync(join(dir, 'b'), '+');
    expect(memo.get()).toBe('two+');
    rmSync(a);
    expect(memo.get()).toBe('(none)+');
    expect(reads()).toBe(4);
  });

  it('does not keep a value read from a file changed moments ago (a second change in the same clock tick could leave no trace)', () => {
    const { dir, reads, memo } = fixture(0);
    writeFileSync(join(dir, 'a'), 'one');
    memo.get();
    memo.get();
    expect(reads()).toBe(2);
  });
});
