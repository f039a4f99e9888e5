import { accessSync, constants, readFileSync, statSync, statfsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, dirname } from 'node:path';
import { RepodexError, isErrnoException, isRepodexError } from './errors.js';

/** What was being done when the machine refused: which file, and whether it was being written. */
export interface FailedOperation {
  /** The file or folder as a user should read it (default: the one the error names, without a temp file's suffix). */
  readonly path?: string | undefined;
  /** It was being written, created, renamed or removed (default: told by the system call). */
  readonly writing?: boolean | undefined;
  /** How many bytes the write needed in all, when known: a disk-full message says it. */
  readonly bytes?: number | undefined;
}

/** System calls that change the file system: a permission refused there means "cannot write". */
const WRITING_CALLS = new Set(['write', 'mkdir', 'rename', 'unlink', 'link', 'symlink', 'rmdir', 'rm', 'copyfile', 'ftruncate', 'fsync', 'fdatasync', 'utime', 'futime', 'chmod', 'fchmod', 'chown']);

/** Longest path a message quotes whole (a name too long for the file system is cut in the middle). */
const MAX_SHOWN_PATH = 160;

/** A temp file's name (`NAME.tmp-PID`, what atomic writes go through) as the file it stands for, cut when very long. */
function shownPath(path: string): string {
  const shown = path.replace(/\.tmp-\d+$/, '');
  return shown.length <= MAX_SHOWN_PATH ? shown : `${shown.slice(0, MAX_SHOWN_PATH / 2)}…${shown.slice(-MAX_SHOWN_PATH / 2)}`;
}

/** Bytes as a person reads them: `512 KB`, `7.9 MB`. */
export function sizeText(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.ceil(bytes / 1024))} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Bytes free for this user on the file system holding `path`, or undefined when it cannot be told. */
function freeBytes(path: string): number | undefined {
  try {
    const stats = statfsSync(path);
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    return undefined;
  }
}

/**
 * The refusal a user can fix (a read-only or full disk, permissions, the open-file limit, a path
 * the file system cannot hold, a failing disk) as a one-line RepodexError naming the file and
 * the fix; undefined for anything else (a bug, which stays an internal error). The one place that
 * turns system error numbers into words.
 */
export function systemFailure(error: unknown, operation: FailedOperation = {}): RepodexError | undefined {
  if (isRepodexError(error) || !isErrnoException(error) || typeof error.code !== 'string') return undefined;
  const raw = operation.path ?? error.path;
  const path = raw === undefined ? undefined : shownPath(raw);
  const at = path === undefined ? '' : ` ${path}`;
  const options = { cause: error };
  switch (error.code) {
    case 'EROFS':
      return new RepodexError('NOT_WRITABLE', `cannot write${at}: the file system is read-only`, options);
    case 'EACCES':
    case 'EPERM': {
      const writing = operation.writing ?? WRITING_CALLS.has(error.syscall ?? '');
      if (writing) return new RepodexError('NOT_WRITABLE', `cannot write${at}: permission denied${ownerNote(path)}`, options);
      return new RepodexError('FILE_SYSTEM', `cannot read${at}: permission denied${ownerNote(path)}: fix its permissions, or run repodex as a user who may read it`, { ...options, selfContained: true });
    }
    case 'ENOSPC':
    case 'EDQUOT': {
      const holder = path === undefined ? 'it' : dirname(path);
      const what = error.code === 'EDQUOT' ? `the disk quota is used up on the device holding ${holder}` : `no space left on the device holding ${holder}`;
      const free = freeBytes(path === undefined ? '.' : dirname(path));
      const needs = operation.bytes === undefined ? '' : `${path === undefined ? '' : `${basename(path)} `}needs about ${sizeText(operation.bytes)}`;
      const has = free === undefined ? '' : `${sizeText(free)} free`;
      const detail = [needs, has].filter(Boolean).join('; ');
      return new RepodexError('DISK_FULL', `${what}${detail ? ` (${detail})` : ''}`, options);
    }
    case 'EMFILE':
    case 'ENFILE':
      return new RepodexError('FILE_SYSTEM', `too many open files${path === undefined ? '' : ` (opening ${path})`}: raise the limit (\`ulimit -n\`) or close other programs, and run the command again`, { ...options, selfContained: true });
    case 'ENAMETOOLONG':
      return new RepodexError('FILE_SYSTEM', `a name is too long for the file system${path === undefined ? '' : `: ${path}`}; use a shorter path`, { ...options, selfContained: true });
    case 'ELOOP':
      return new RepodexError('FILE_SYSTEM', `too many levels of symbolic links at${at || ' a path'} (a link that leads back to itself?): fix or remove the link`, { ...options, selfContained: true });
    case 'EIO':
      return new RepodexError('FILE_SYSTEM', `the disk or network file system failed (input/output error)${path === undefined ? '' : ` at ${path}`}: check the device, then run the command again`, { ...options, selfContained: true });
    default:
      return undefined;
  }
}

/** Rethrow `error` as the user error `systemFailure` makes of it, or as it is. */
export function rethrowSystemFailure(error: unknown, operation?: FailedOperation): never {
  throw systemFailure(error, operation) ?? error;
}

/**
 * Why this user cannot create files in the folder `dir` (a read-only mount, another user's
 * folder), as NOT_WRITABLE naming it; undefined when it can, or when it does not exist (the caller
 * creates it, and meets its own error there).
 */
export function folderNotWritable(dir: string): RepodexError | undefined {
  try {
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    const reason = isErrnoException(error, 'EROFS') ? 'the file system is read-only' : isErrnoException(error, 'EACCES') || isErrnoException(error, 'EPERM') ? `permission denied${ownerNote(dir)}` : undefined;
    if (reason === undefined) return systemFailure(error, { path: dir, writing: true });
    return new RepodexError('NOT_WRITABLE', `${dir} is not writable (${reason})`, { cause: error });
  }
}

/** `: it belongs to alice, this is bob` for a path owned by another user; empty when it is ours or cannot be told. */
function ownerNote(path: string | undefined): string {
  if (path === undefined) return '';
  let uid: number | undefined;
  try {
    // The file, or the nearest folder above it that exists (a file about to be created has none yet).
    for (let at = path; uid === undefined; at = dirname(at)) {
      uid = statSync(at, { throwIfNoEntry: false })?.uid;
      if (dirname(at) === at) break;
    }
  } catch {
    return ''; // a folder above it cannot be looked into: who owns it stays unsaid
  }
  let me: { uid: number; username: string };
  try {
    me = userInfo();
  } catch {
    return '';
  }
  if (uid === undefined || uid === me.uid || me.uid < 0) return '';
  return `: it belongs to ${userName(uid)}, this is ${me.username}`;
}

/** A user's name by id (from /etc/passwd), or `user <id>`. */
function userName(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid) return name;
    }
  } catch {
    // no passwd file (not Unix): the number says it
  }
  return `user ${uid}`;
}
