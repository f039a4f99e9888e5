import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import { createFileAtomic } from '../../core/fs-atomic.js';

// The team server's access token when none is given: made once in the server's folder, readable
// by its user only, and found there by that user's CLI. Server and client both read this module
// (it has no dependency beyond Node's): the file name and the folder are defined once.

/** Shortest token a server accepts: anything shorter is guessable. */
export const MIN_TOKEN_CHARS = 16;

/** The name of the generated token's file in the server's folder. */
export const TOKEN_FILE_NAME = 'token';

/** Whether an address is this machine only. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** The team server's folder when --data-dir is not given: $XDG_STATE_HOME/repodex/server, or ~/.local/state/repodex/server. */
export function defaultServerFolder(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'repodex', 'server');
}

/** Where a server keeps the token it made: `<folder>/token`. */
export function generatedTokenPath(folder: string): string {
  return join(folder, TOKEN_FILE_NAME);
}

/** The token a token file holds (its first line), refused when shorter than MIN_TOKEN_CHARS; `named` is how messages name the file. */
export function tokenIn(text: string, path: string, named: string): string {
  const token = text.split(/\r?\n/)[0]!.trim();
  if (token.length < MIN_TOKEN_CHARS) {
    throw new RepodexError('BAD_REQUEST', `${named} ${path} holds a token of ${token.length} characters; use at least ${MIN_TOKEN_CHARS} random ones (e.g. \`openssl rand -hex 32 > ${path}\`)`, { selfContained: true });
  }
  return token;
}

/** The generated token of the server whose folder is `folder`, and whether this call made it. */
export interface GeneratedToken {
  readonly token: string;
  readonly path: string;
  readonly created: boolean;
}

/**
 * The server's own token: read from `<folder>/token`, or made there on first start (256 random
 * bits, hex; the folder 0700 when made here, the file 0600 from its first byte). Kept across
 * restarts, so a page's address and a client's configuration stay valid. A file others may read
 * is refused rather than trusted: whoever could read it may hold the token.
 */
export function loadOrCreateToken(folder: string): GeneratedToken {
  const path = generatedTokenPath(folder);
  try {
    if (!existsSync(path)) {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      const made = randomBytes(32).toString('hex');
      if (createFileAtomic(path, `${made}\n`, folder, 0o600)) return { token: made, path, created: true };
      // Another server on this folder made it at the same moment: that one is the token.
    }
    const mode = statSync(path).mode;
    // Windows reports no permission bits to judge by (every file reads 0666): its ACLs decide there.
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      throw new RepodexError(
        'BAD_REQUEST',
        `the server's token file ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}): remove it (a new token is made at the next start) or \`chmod 600 ${path}\``,
        { selfContained: true },
      );
    }
    return { token: tokenIn(readFileSync(path, 'utf8'), path, 'the token file'), path, created: false };
  } catch (error) {
    if (error instanceof RepodexError) throw error;
    const reason = isErrnoException(error, 'EACCES') ? 'permission denied (run the server as the user who owns it, or give --data-dir)' : errorMessage(error);
    throw new RepodexError('BAD_REQUEST', `the server's token file ${path} cannot be made or read: ${reason}`, { selfContained: true });
  }
}

/** The token a server made in `folder`, or undefined when there is none (or it cannot be read). */
export function readGeneratedToken(folder: string): string | undefined {
  try {
    const token = readFileSync(generatedTokenPath(folder), 'utf8').split(/\r?\n/)[0]!.trim();
    return token.length >= MIN_TOKEN_CHARS ? token : undefined;
  } catch {
    return undefined; // no server made one here (or it is not ours to read): the request goes without
  }
}
