import type { PathGuard } from '../safety/path-guard.js';
import { readSource } from '../scan/read-source.js';
import { splitLines } from '../text/normalize.js';

/** Longest line a response carries; longer lines (minified code) are cut and flagged. */
export const MAX_LINE_CHARS = 2000;

/** A safe read of a whole file as normalized lines, or a refusal that says why and what to do. */
export type SafeRead =
  | { readonly ok: true; readonly path: string; readonly lines: string[] }
  | { readonly ok: false; readonly blocked: boolean; readonly reason: string; readonly hint: string };

/**
 * Read a repository file the way every front end must: through the path guard (root, `..`,
 * symlink escape, denylist), then as indexing reads it (`readSource`: size checked before
 * reading, binaries and private keys refused, line endings normalized).
 */
export function readRepoFile(guard: PathGuard, path: string, maxBytes: number): SafeRead {
  const checked = guard.check(path);
  if (!checked.ok) return checked;
  const read = readSource(checked.absolute, maxBytes);
  if (read.ok) return { ok: true, path: checked.path, lines: splitLines(read.text) };
  switch (read.state) {
    case 'unreadable':
      return { ok: false, blocked: false, reason: `${checked.path}: ${read.reason}`, hint: 'check the file permissions' };
    case 'too-large':
      return {
        ok: false,
        blocked: true,
        reason: `${checked.path} is ${read.reason}`,
        hint: 'raise max_file_bytes in .repodex/config.json if this file should be readable',
      };
    case 'binary':
      return { ok: false, blocked: true, reason: `${checked.path} is a binary file`, hint: 'only text files are served' };
    case 'secret':
      return { ok: false, blocked: true, reason: `${checked.path} contains a private key`, hint: 'secrets are never indexed or served' };
  }
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
