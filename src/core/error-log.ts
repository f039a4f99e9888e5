import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { type ErrorCode, errorMessage, isRepodexError } from './errors.js';
import { systemFailure } from './system-errors.js';
import { TOOL_VERSION } from './version.js';

/** The error log is rotated past this size, keeping one older file (`errors.log.1`). */
const MAX_LOG_BYTES = 1024 * 1024;

/**
 * Where the details of internal errors (bugs) go: one file per user, whatever the repository or
 * store, `$XDG_STATE_HOME/repodex/errors.log` (default `~/.local/state/repodex/errors.log`).
 */
export function errorLogPath(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'repodex', 'errors.log');
}

/** The error log when the home folder cannot hold it (a user without one, a read-only home): this user's folder under the temp folder. */
function fallbackLogPath(): string {
  let uid: number | string;
  try {
    uid = userInfo().uid;
  } catch {
    uid = 'user';
  }
  return join(tmpdir(), `repodex-${uid}`, 'errors.log');
}

/** A URL's password as `***` (a store URL may appear in a message). */
function withoutPasswords(text: string): string {
  return text.replace(/(\/\/[^/\s:@]+):[^@\s/]+@/g, '$1:***@');
}

/** Append one entry to the log at `path` (rotating it when large); throws when it cannot. */
function append(path: string, entry: string): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  if ((statSync(path, { throwIfNoEntry: false })?.size ?? 0) > MAX_LOG_BYTES) renameSync(path, `${path}.1`);
  appendFileSync(path, entry, { mode: 0o600 });
}

/**
 * Keep the stack of an internal error in the error log, with what was being done (`what`: the
 * command or request), and return where it went; or, when no log can be written, why not.
 */
export function logInternalError(error: unknown, what: string, env: NodeJS.ProcessEnv = process.env): { path: string } | { problem: string } {
  const detail = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `\ncaused by: ${error.cause.stack ?? error.cause.message}` : '';
  const entry = `${new Date().toISOString()} repodex ${TOOL_VERSION} (node ${process.version}, ${process.platform}), pid ${process.pid}: ${withoutPasswords(what)}\n${withoutPasswords(detail)}${withoutPasswords(cause)}\n\n`;
  let problem = '';
  for (const path of [errorLogPath(env), fallbackLogPath()]) {
    try {
      append(path, entry);
      return { path };
    } catch (failure) {
      problem ||= errorMessage(failure);
    }
  }
  return { problem };
}

/** How a failure is shown to a user: its code, one line, and whether it is a bug (exit 2). */
export interface ShownFailure {
  readonly code: ErrorCode;
  readonly message: string;
  readonly internal: boolean;
}

/**
 * The one line a user sees for any failure, the same in every front end: a RepodexError's own
 * message; a refusal of the machine a user can fix (a read-only or full disk, permissions) in
 * words (see `systemFailure`); anything else is a bug, whose stack goes to the error log and whose
 * line names that log. Never a stack trace.
 */
export function shownFailure(error: unknown, what: string): ShownFailure {
  const known = isRepodexError(error) ? error : systemFailure(error);
  if (known && known.isUserError) return { code: known.code, message: known.message, internal: false };
  const logged = logInternalError(error, what);
  const where = 'path' in logged ? `details in ${logged.path}` : `its details could not be logged: ${logged.problem}`;
  const message = known ? known.message : `internal error: ${errorMessage(error)}`;
  return { code: known?.code ?? 'INTERNAL', message: `${message} (a bug in repodex: ${where}; please report it with them)`, internal: true };
}
