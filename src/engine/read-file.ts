import { readFileSync } from 'node:fs';
import { errorMessage } from '../core/errors.js';
import { containsPrivateKey } from '../safety/denylist.js';
import type { PathGuard } from '../safety/path-guard.js';
import { sniffBinary } from '../scan/binary.js';
import { decodeText, splitLines } from '../text/normalize.js';

/** Longest line a response carries; longer lines (minified code) are cut and flagged. */
export const MAX_LINE_CHARS = 2000;

/** A safe read of a whole file as normalized lines, or a refusal that says why and what to do. */
export type SafeRead =
  | { readonly ok: true; readonly path: string; readonly lines: string[] }
  | { readonly ok: false; readonly blocked: boolean; readonly reason: string; readonly hint: string };

/**
 * Read a repository file the way every front end must: through the path guard (root, `..`,
 * symlink escape, denylist), refusing binaries, oversized files and files holding private keys,
 * with line endings normalized exactly as at indexing time.
 */
export function readRepoFile(guard: PathGuard, path: string, maxBytes: number): SafeRead {
  const checked = guard.check(path);
  if (!checked.ok) return checked;
  let bytes: Buffer;
  try {
    bytes = readFileSync(checked.absolute);
  } catch (error) {
    return { ok: false, blocked: false, reason: `cannot read ${checked.path}: ${errorMessage(error)}`, hint: 'check the file permissions' };
  }
  if (bytes.length > maxBytes) {
    return {
      ok: false,
      blocked: true,
      reason: `${checked.path} is ${bytes.length} bytes, over the ${maxBytes}-byte limit`,
      hint: 'raise max_file_bytes in .repodex/config.json if this file should be readable',
    };
  }
  if (sniffBinary(bytes) !== undefined) {
    return { ok: false, blocked: true, reason: `${checked.path} is a binary file`, hint: 'only text files are served' };
  }
  const text = decodeText(bytes);
  if (containsPrivateKey(text)) {
    return { ok: false, blocked: true, reason: `${checked.path} contains a private key`, hint: 'secrets are never indexed or served' };
  }
  return { ok: true, path: checked.path, lines: splitLines(text) };
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
