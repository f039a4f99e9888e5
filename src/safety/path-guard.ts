import { lstatSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isErrnoException } from '../core/errors.js';
import { type Denylist, holdsBackslash } from './denylist.js';
import { shownPath } from './secrets.js';

/** The outcome of checking a requested path: a readable file inside the root, or a refusal that says why. */
export type GuardedPath =
  | { readonly ok: true; readonly path: string; readonly absolute: string }
  | { readonly ok: false; readonly blocked: boolean; readonly reason: string; readonly hint: string };

/** Normalize a user-supplied relative path to `a/b/c` form, or undefined when it is not a plain relative path. */
export function normalizeRelativePath(input: string): string | undefined {
  if (input.length === 0 || input.includes('\0')) return undefined;
  if (isAbsolute(input) || /^[A-Za-z]:/.test(input) || input.startsWith('\\') || input.startsWith('/')) return undefined;
  const segments = input.split(/[\\/]+/).filter((segment) => segment !== '' && segment !== '.');
  if (segments.length === 0 || segments.includes('..')) return undefined;
  return segments.join('/');
}

/**
 * Confines reads to one root (seed 000 §4.2): rejects absolute paths and `..`, resolves symlinks
 * and requires the real path to stay under the real root, and refuses denylisted files.
 */
export class PathGuard {
  readonly root: string;
  private realRootCache: string | undefined;

  constructor(root: string, private readonly denylist: Denylist) {
    this.root = root;
  }

  private get realRoot(): string {
    this.realRootCache ??= realpathSync.native(this.root);
    return this.realRootCache;
  }

  /**
   * True when a request holding a backslash names, taken literally, an existing entry: on Linux
   * and macOS `a\b.ts` can be a file of its own, which the walk leaves out (`holdsBackslash`).
   * Reading the backslash as a separator would then serve `a/b.ts` in its place, so the request is
   * refused instead; where no such entry exists, the backslash is a separator as on Windows.
   */
  private namesBackslashFile(input: string): boolean {
    if (sep === '\\' || !holdsBackslash(input)) return false;
    const inside = this.insideRoot(input);
    // Only a plain relative path is looked up: nothing outside the root is ever touched.
    if (normalizeRelativePath(inside) === undefined || isAbsolute(inside)) return false;
    try {
      return lstatSync(join(this.root, inside), { throwIfNoEntry: false }) !== undefined;
    } catch (error) {
      if (['ENOTDIR', 'ENAMETOOLONG', 'ELOOP', 'EACCES'].some((code) => isErrnoException(error, code))) return false;
      throw error;
    }
  }

  /**
   * An absolute POSIX path inside the root, as a repository-relative one (git accepts those too);
   * anything else is returned as given, for the relative-path rules to judge.
   */
  private insideRoot(input: string): string {
    if (!input.startsWith('/') || input.startsWith('//') || input.includes('\0')) return input;
    for (const base of [this.root, this.realRoot]) {
      const rel = relative(base, resolve(input));
      if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/');
    }
    return input;
  }

  /** Check a repository-relative path (or an absolute one inside the root) before reading it. */
  check(input: string): GuardedPath {
    if (this.namesBackslashFile(input)) {
      return {
        ok: false,
        blocked: true,
        reason: `${JSON.stringify(input)} names a file or folder whose name holds a backslash; such files are never indexed or served`,
        hint: 'rename it without the backslash (a backslash in a request is read as a folder separator)',
      };
    }
    const rel = normalizeRelativePath(this.insideRoot(input));
    if (rel === undefined) {
      return {
        ok: false,
        blocked: true,
        reason: `path ${JSON.stringify(input)} is not a path inside the repository`,
        hint: 'use a repository-relative path such as "src/index.ts" (or an absolute path inside the repository), without ".."',
      };
    }
    if (this.denylist.blocks(rel)) {
      const credential = this.denylist.why(rel)?.kind === 'credential-name';
      return {
        ok: false,
        blocked: true,
        reason: credential ? `${shownPath(rel)} has a name shaped like a credential` : `${rel} matches the secrets denylist`,
        hint: credential ? 'a name that holds a credential is never indexed or served; rename the file' : 'secrets are never indexed or served; read the file yourself if you really need it',
      };
    }
    let real: string;
    try {
      real = realpathSync.native(join(this.root, rel));
    } catch (error) {
      const missing = isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR');
      return {
        ok: false,
        blocked: false,
        reason: missing ? `${quotedPath(rel)} does not exist` : `${quotedPath(rel)} cannot be resolved (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        hint: missing ? 'run `repodex sync` if the file was moved or deleted' : 'check the file permissions',
      };
    }
    const realRoot = this.realRoot;
    if (real !== realRoot && !real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
      return {
        ok: false,
        blocked: true,
        reason: `${rel} resolves outside the repository root (symlink escape)`,
        hint: 'only files inside the repository can be read',
      };
    }
    const realRel = real.slice(realRoot.length + 1).split(sep).join('/');
    if (realRel !== '' && this.denylist.blocks(realRel)) {
      return {
        ok: false,
        blocked: true,
        reason: this.denylist.why(realRel)?.kind === 'credential-name' ? `${rel} points at ${shownPath(realRel)}, whose name is shaped like a credential` : `${rel} points at ${realRel}, which matches the secrets denylist`,
        hint: 'secrets are never indexed or served',
      };
    }
    if (!statSync(real).isFile()) {
      return { ok: false, blocked: false, reason: `${rel} is not a regular file`, hint: 'pass a file path, not a folder' };
    }
    return { ok: true, path: rel, absolute: real };
  }
}

/** A path as an error shows it: quoted when blanks at either end would otherwise be invisible. */
function quotedPath(rel: string): string {
  return /^\s|\s$/.test(rel) ? JSON.stringify(rel) : rel;
}
