import { join } from 'node:path';
import { sameStamp, stampOf, statIfExists } from '../core/stat.js';
import type { CatalogView, IndexView } from '../store/backend.js';
import type { PathGuard } from '../safety/path-guard.js';
import { describeSecret, findServedSecret } from '../safety/secrets.js';
import { type ReadLimits, readSource } from '../scan/read-source.js';
import { splitLines } from '../text/normalize.js';
import { FEATURE_VERSION } from '../core/version.js';
import { contentHashOf } from './prepare-file.js';

/** Longest line a response carries; longer lines (minified code) are cut and flagged. */
export const MAX_LINE_CHARS = 2000;

/** A safe read of a whole file as normalized lines, or a refusal that says why and what to do. */
export type SafeRead =
  | { readonly ok: true; readonly path: string; readonly lines: string[]; readonly contentHash: string }
  | { readonly ok: false; readonly blocked: boolean; readonly reason: string; readonly hint: string };

/**
 * Read a repository file the way every front end must: through the path guard (root, `..`,
 * symlink escape, denylist), then as indexing reads it (`readSource`: size and hard links checked
 * before reading, binaries refused, line endings normalized), then checked for credentials
 * (`findServedSecret`): a file holding one is refused whole, never served in part. `scannedHash`
 * (see `scannedCleanHash`): the text the index scanned clean at this path; a file that still
 * hashes to it is not scanned again.
 */
export async function readRepoFile(guard: PathGuard, path: string, limits: ReadLimits, scannedHash?: string): Promise<SafeRead> {
  const checked = guard.check(path);
  if (!checked.ok) return checked;
  const read = readSource(checked.absolute, limits);
  if (read.ok) {
    const hash = contentHashOf(read.text);
    const secret = hash === scannedHash ? undefined : await findServedSecret(read.text, checked.path, hash);
    if (secret) return { ok: false, blocked: true, reason: `${checked.path} ${describeSecret(secret)}`, hint: SECRET_HINT };
    return { ok: true, path: checked.path, lines: splitLines(read.text), contentHash: hash };
  }
  switch (read.state) {
    case 'unreadable':
      return { ok: false, blocked: false, reason: `${checked.path}: ${read.reason}`, hint: 'check the file permissions' };
    case 'too-large':
      return {
        ok: false,
        blocked: true,
        reason: `${checked.path} is ${read.reason}`,
        hint: 'raise limits.max_file_bytes in .repodex/config.json (or --max-file-bytes on serve) if this file should be readable',
      };
    case 'binary':
      return { ok: false, blocked: true, reason: `${checked.path} is a binary file`, hint: 'only text files are served' };
    case 'hard-link':
      return {
        ok: false,
        blocked: true,
        reason: `${checked.path} ${read.reason}`,
        hint: 'if no other name of this file is a secret, set "allow_hard_links": true in .repodex/config.json',
      };
  }
}

/**
 * A refusal as a read from the disk (`open`, `outline`) gives it. The guard's hint for a missing
 * file suggests `repodex sync`, which helps a read through the index (`fetch`) but cannot bring a
 * file back for one that reads the disk: that one says how to find the right path instead.
 */
export function diskRefusal<T extends { readonly path: string; readonly blocked: boolean; readonly error: string; readonly hint: string }>(refusal: T): T {
  if (refusal.blocked || !refusal.error.endsWith(' does not exist')) return refusal;
  const name = refusal.path.split(/[\\/]/).filter((part) => part !== '').pop() ?? refusal.path;
  return { ...refusal, hint: `check the path, or list files with a glob such as ${JSON.stringify(`**/${name}`)} to find it by name` };
}

/** What a refusal for a credential tells the caller to do. */
export const SECRET_HINT = 'files holding credentials are never indexed or served; read it yourself if you really need it';

/**
 * The content hash of `path` when `view` indexed it, which means its text was scanned for
 * credentials and found clean by this version's rules (an index another version built may have
 * used others); undefined when it was not indexed.
 */
export function scannedCleanHash(view: CatalogView, path: string): string | undefined {
  if (view.meta.feature_version !== FEATURE_VERSION) return undefined;
  const slot = view.findFile(path);
  if (slot < 0) return undefined;
  const record = view.fileRecord(slot);
  return record.state === 'indexed' ? record.contentHash : undefined;
}

/** Whether a file changed on disk since the view indexed it (or is not there, or is not in the index): one stat. */
export function changedSinceIndexed(root: string, view: IndexView, path: string): boolean {
  const slot = view.findFile(path);
  const record = slot >= 0 ? view.fileRecord(slot) : undefined;
  const stat = statIfExists(join(root, path));
  return !record || !stat || !sameStamp(stampOf(stat), record);
}

/** Read limits from an engine context. */
export function readLimitsOf(ctx: { readonly limits: { readonly max_file_bytes: number }; readonly loaded: { readonly config: { readonly allow_hard_links: boolean } } }): ReadLimits {
  return { maxBytes: ctx.limits.max_file_bytes, allowHardLinks: ctx.loaded.config.allow_hard_links };
}

/** Format lines as `"N| text"` (seed 000 §4.2), cutting overlong lines. Returns the lines and whether any was cut. */
export function numberLines(lines: readonly string[], firstLine: number): { lines: string[]; cut: boolean } {
  let cut = false;
  const out = lines.map((line, i) => {
    let text = line;
    if (text.length > MAX_LINE_CHARS) {
      text = `${text.slice(0, MAX_LINE_CHARS)} [… ${text.length - MAX_LINE_CHARS} more characters]`;
      cut = true;
    }
    return `${firstLine + i}| ${text}`;
  });
  return { lines: out, cut };
}
