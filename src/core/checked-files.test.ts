import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { CHECKED_FILE, CheckedFiles } from './checked-files.js';

/** A clock a minute ahead: every file is old enough for its times to tell a change. */
const later = (): number => Date.now() + 60_000;

function fileIn(dir: string, name = 'seg-1.rpdx', text = 'sound bytes'): string {
  writeFileSync(join(dir, name), text);
  return name;
}

describe('CheckedFiles', () => {
  it('vouches for a file found sound only while it is the same version, in this process and the next', () => {
    const dir = tempDir();
    const name = fileIn(dir);
    const checked = new CheckedFiles(dir, later);
    expect(checked.holds(name)).toBe(false);
    checked.found(name, checked.version(name));
    expect(checked.holds(name)).toBe(true);
    expect(new CheckedFiles(dir, later).holds(name)).toBe(true);

    // A byte flipped in place, with the old mtime put back: the ctime still moved.
    const path = join(dir, name);
    const { atime, mtime } = statSync(path);
    const bytes = readFileSync(path);
    bytes[0]! ^= 1;
    writeFileSync(path, bytes);
    utimesSync(path, atime, mtime);
    expect(checked.holds(name)).toBe(false);
    expect(new CheckedFiles(dir, later).holds(name)).toBe(false);
  });

  it('does not vouch for a file that changed while it was checked, or too lately for its times to tell', () => {
    const dir = tempDir();
    const name = fileIn(dir);
    const checked = new CheckedFiles(dir, later);
    const before = checked.version(name);
    writeFileSync(join(dir, name), 'other bytes');
    checked.found(name, before);
    expect(checked.holds(name)).toBe(false);

    const now = new CheckedFiles(dir); // the real clock: the file was written just now
    now.found(name, now.version(name));
    expect(now.holds(name)).toBe(false);
  });

  it('check runs a check only for a version not found sound before, and always when told not to reuse', () => {
    const dir = tempDir();
    const name = fileIn(dir);
    const checked = new CheckedFiles(dir, later);
    let runs = 0;
    const run = (sound: boolean) => () => {
      runs++;
      return sound;
    };
    expect(checked.check(name, run(false), (sound) => sound)).toBe(false);
    expect(checked.check(name, run(true), (sound) => sound)).toBe(true);
    expect(checked.check(name, run(true), (sound) => sound)).toBeUndefined();
    expect(runs).toBe(2);
    expect(checked.check(name, run(false), (sound) => sound, false)).toBe(false);
    expect(checked.holds(name)).toBe(false);
    expect(runs).toBe(3);
  });

  it('forgets a file found damaged, and takes a damaged record for none', () => {
    const dir = tempDir();
    const a = fileIn(dir, 'seg-1.rpdx');
    const b = fileIn(dir, 'seg-2.rpdx');
    const checked = new CheckedFiles(dir, later);
    checked.found(a, checked.version(a));
    checked.found(b, checked.version(b));
    checked.forget(a);
    expect(new CheckedFiles(dir, later).holds(a)).toBe(false);
    expect(new CheckedFiles(dir, later).holds(b)).toBe(true);

    writeFileSync(join(dir, CHECKED_FILE), '{"seg-2.rpdx": 12');
    expect(new CheckedFiles(dir, later).holds(b)).toBe(false);
  });
});
