import { mkdirSync, openSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { RepodexError } from './errors.js';
import { folderNotWritable, systemFailure } from './system-errors.js';

/** A system error as Node makes one. */
function errno(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: something, ${syscall}${path ? ` '${path}'` : ''}`), { code, syscall, ...(path ? { path } : {}) });
}

/** What a thrown value shows as: code and message, or `bug` when it stays an internal error. */
function shown(error: unknown, operation?: Parameters<typeof systemFailure>[1]): string {
  const known = systemFailure(error, operation);
  return known ? `${known.code}: ${known.message}` : 'bug';
}

describe('systemFailure: what a user can fix, in words', () => {
  it('a read-only or refused write is NOT_WRITABLE, naming the file (not its temp file)', () => {
    expect(shown(errno('EROFS', 'open', '/r/.repodex/meta.json.tmp-42'))).toBe(
      'NOT_WRITABLE: cannot write /r/.repodex/meta.json: the file system is read-only (make it writable or mount it read-write, or run repodex as the user who owns it)',
    );
    expect(shown(errno('EACCES', 'rename', '/r/x'))).toMatch(/^NOT_WRITABLE: cannot write \/r\/x: permission denied/);
    expect(shown(errno('EPERM', 'open', '/r/x'), { writing: true })).toMatch(/^NOT_WRITABLE: /);
  });

  it('a refused read says how to read it, never "internal"', () => {
    expect(shown(errno('EACCES', 'open', '/r/secret'))).toMatch(/^FILE_SYSTEM: cannot read \/r\/secret: permission denied.*: fix its permissions, or run repodex as a user who may read it$/);
  });

  it('a full disk or quota is DISK_FULL with what the write needed and what is free', () => {
    const dir = tempDir();
    expect(shown(errno('ENOSPC', 'write'), { path: join(dir, 'seg-3.rpdx'), bytes: 5 * 1024 * 1024 })).toMatch(
      new RegExp(`^DISK_FULL: no space left on the device holding ${dir} \\(seg-3\\.rpdx needs about 5\\.0 MB; \\d+(\\.\\d)? (KB|MB) free\\) \\(free some space there and run the command again\\)$`),
    );
    expect(shown(errno('EDQUOT', 'write', join(dir, 'a')))).toMatch(/^DISK_FULL: the disk quota is used up on the device holding /);
  });

  it('the open-file limit, a name too long, a link loop and a failing disk each name their fix', () => {
    expect(shown(errno('EMFILE', 'open', '/r/a'))).toBe('FILE_SYSTEM: too many open files (opening /r/a): raise the limit (`ulimit -n`) or close other programs, and run the command again');
    expect(shown(errno('ENAMETOOLONG', 'open', `/r/${'x'.repeat(400)}`))).toMatch(/^FILE_SYSTEM: a name is too long for the file system: \/r\/x+…x+; use a shorter path$/);
    expect(shown(errno('ELOOP', 'stat', '/r/loop'))).toBe('FILE_SYSTEM: too many levels of symbolic links at /r/loop (a link that leads back to itself?): fix or remove the link');
    expect(shown(errno('EIO', 'read', '/r/a'))).toBe('FILE_SYSTEM: the disk or network file system failed (input/output error) at /r/a: check the device, then run the command again');
  });

  it('anything else stays a bug: the caller reports it as an internal error', () => {
    expect(shown(errno('ENOENT', 'open', '/r/a'))).toBe('bug');
    expect(shown(new TypeError('x is undefined'))).toBe('bug');
    expect(shown(new RepodexError('INDEX_MISSING'))).toBe('bug');
  });

  it('real refusals of the system map the same way (a link loop, a folder that is not writable)', () => {
    const dir = tempDir();
    symlinkSync(join(dir, 'b'), join(dir, 'a'));
    symlinkSync(join(dir, 'a'), join(dir, 'b'));
    let caught: unknown;
    try {
      readFileSync(join(dir, 'a'));
    } catch (error) {
      caught = error;
    }
    expect(shown(caught)).toMatch(/^FILE_SYSTEM: too many levels of symbolic links at /);
    try {
      openSync(join(dir, 'x'.repeat(300)), 'w');
    } catch (error) {
      caught = error;
    }
    expect(shown(caught)).toMatch(/^FILE_SYSTEM: a name is too long/);
    mkdirSync(join(dir, 'ok'));
    expect(folderNotWritable(join(dir, 'ok'))).toBeUndefined();
    expect(folderNotWritable(join(dir, 'missing'))).toBeUndefined();
  });
});
