import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../core/config.js';
import type { Denylist } from '../safety/denylist.js';
import { describeSecret, findSecret, ruleName, shownPath } from '../safety/secrets.js';
import { globMatcher } from '../scan/glob.js';
import { languageOf } from '../scan/language.js';
import { type ReadLimits, readSource } from '../scan/read-source.js';
import { RepoScope } from '../scan/scope.js';
import { walkLeftOut } from '../scan/walker.js';
import type { CatalogView } from '../store/backend.js';

/** One catalogued file as `files` lists it. */
export interface FileEntry {
  readonly path: string;
  readonly size: number;
  readonly mtime: string;
  readonly language: string;
  /**
   * `indexed`, or why the file was skipped (too-large, binary, unreadable, secret, hard-link); in a
   * listing of what was withheld (`blocked`), also `secret-name` (a file or folder on the secrets
   * denylist) and `credential-name` (a name shaped like a credential).
   */
  readonly state: string;
  readonly chunks: number;
  /** In a listing of what was withheld: why, in a line (`contains a credential (github-pat, line 3)`). */
  readonly reason?: string;
  /** The credential rule that matched (content or name), when one did. */
  readonly rule?: string;
  /** The line of the first credential found in the content. */
  readonly line?: number;
  /** The denylist pattern the name matched. */
  readonly pattern?: string;
}

/** The files of `files`, before the engine adds which generation they came from. */
export interface FileList {
  readonly files: FileEntry[];
  /** Files that matched before the limit was applied. */
  readonly total: number;
  readonly truncated: boolean;
  /** True when the list is of what is withheld as a secret (`listBlocked`). */
  readonly blocked?: true;
}

/** Default and maximum number of files `files` lists. */
export const DEFAULT_FILES_LIMIT = 1000;
export const MAX_FILES_LIMIT = 10_000;

/** True when a folder or the file of a path starts with "." (`.github/workflows/ci.yml`). */
export function isHiddenPath(path: string): boolean {
  return path.startsWith('.') || path.includes('/.');
}

/** List catalogued files in path order, optionally filtered by a glob; hidden ones only when asked. */
export function listFiles(view: CatalogView, glob: string | undefined, limit: number, includeHidden = false): FileList {
  const matches = glob === undefined ? undefined : globMatcher(glob);
  const catalog = view.catalog();
  const files: FileEntry[] = [];
  let total = 0;
  for (let i = 0; i < catalog.count; i++) {
    const path = catalog.path(i);
    if (!includeHidden && isHiddenPath(path)) continue;
    if (matches && !matches(path)) continue;
    total++;
    if (files.length >= limit) continue;
    const record = catalog.record(i);
    files.push({
      path,
      size: record.size,
      mtime: new Date(record.mtimeMs).toISOString(),
      language: record.language,
      state: record.state,
      chunks: record.chunkCount,
    });
  }
  return { files, total, truncated: total > files.length };
}

/** Where `listBlocked` looks: the repository, its config and denylist, and how its files are read. */
export interface BlockedSources {
  readonly root: string;
  readonly config: Config;
  readonly denylist: Denylist;
  readonly limits: ReadLimits;
}

/**
 * What the index withholds as secrets, in path order, each with why — so a test fixture or a
 * file a rule took for a secret can be seen (and renamed, moved or excluded):
 * - files catalogued as `secret`: their text holds a credential; read again for the rule and line;
 * - files and folders left out for their names (a walk of their own: the index never looks at
 *   them): a secret file name (the denylist pattern it matches) or a name shaped like a
 *   credential (the rule; the name is shown with the credential replaced).
 * Hidden files are listed too (most secret files are). The glob is matched against paths as
 * shown, so it cannot be used to guess a credential in a name one character at a time.
 */
export async function listBlocked(view: CatalogView, sources: BlockedSources, glob: string | undefined, limit: number): Promise<FileList> {
  const matches = glob === undefined ? undefined : globMatcher(glob);
  const root = sources.root;
  const candidates: { path: string; entry: () => Promise<FileEntry> }[] = [];
  const catalog = view.catalog();
  for (let i = 0; i < catalog.count; i++) {
    const record = catalog.record(i);
    if (record.state !== 'secret') continue;
    const path = catalog.path(i);
    candidates.push({ path, entry: () => withheldContent(root, path, record, sources.limits) });
  }
  for (const left of walkLeftOut(new RepoScope(root, sources.config, sources.denylist))) {
    const path = shownPath(left.path) + (left.isDir ? '/' : '');
    candidates.push({ path, entry: async () => withheldName(root, left.path, path, left.isDir, sources.denylist) });
  }
  candidates.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const files: FileEntry[] = [];
  let total = 0;
  for (const candidate of candidates) {
    if (matches && !matches(candidate.path)) continue;
    total++;
    if (files.length < limit) files.push(await candidate.entry());
  }
  return { files, total, truncated: total > files.length, blocked: true };
}

/** A catalogued file whose text holds a credential, with the rule and line found now. */
async function withheldContent(root: string, path: string, record: { size: number; mtimeMs: number; language: string }, limits: ReadLimits): Promise<FileEntry> {
  const base = { path, size: record.size, mtime: new Date(record.mtimeMs).toISOString(), language: record.language, state: 'secret', chunks: 0 };
  const read = readSource(join(root, path), limits);
  const finding = read.ok ? await findSecret(read.text, path) : undefined;
  if (!finding) return { ...base, reason: 'contains a credential (changed since the last sync: `repodex sync` looks again)' };
  return { ...base, reason: describeSecret(finding), rule: ruleName(finding.rule), line: finding.line };
}

/** A file or folder left out for its name. `shown`: its path as it may be shown. */
function withheldName(root: string, path: string, shown: string, isDir: boolean, denylist: Denylist): FileEntry {
  let size = 0;
  let mtime = new Date(0).toISOString();
  try {
    const stat = lstatSync(join(root, path));
    size = isDir ? 0 : stat.size;
    mtime = stat.mtime.toISOString();
  } catch {
    // removed since the walk: listed as it was found
  }
  const base = { path: shown, size, mtime, language: isDir ? 'folder' : languageOf(path), chunks: 0 };
  const why = denylist.why(path);
  if (why?.kind === 'credential-name') return { ...base, state: 'credential-name', reason: `name shaped like a credential (${why.rule})`, rule: why.rule };
  if (why?.kind === 'secret-name') return { ...base, state: 'secret-name', reason: `secret ${isDir ? 'folder' : 'file'} name (matches ${why.pattern})`, pattern: why.pattern };
  return { ...base, state: 'secret-name', reason: 'its name holds a backslash (two names on Windows)' };
}
