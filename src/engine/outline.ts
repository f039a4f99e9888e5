import { analyze, hasAdapter, loadLanguages } from '../lang/index.js';
import type { OutlineSymbol } from '../lang/types.js';
import { type Language, languageOf } from '../scan/language.js';
import type { IndexView } from '../store/backend.js';
import { FEATURE_VERSION } from '../core/version.js';
import type { RepoContext } from './context.js';
import { diskRefusal, readLimitsOf, readRepoFile, scannedCleanHash } from './read-file.js';
import { sameStamp, stampOf, statIfExists } from '../core/stat.js';
import type { OutlineParser } from './outline-thread.js';

/**
 * A file this long or longer that must be parsed to be outlined goes to `elsewhere` when given
 * (about 30 ms of parsing and up; a 1 MB file takes a second).
 */
export const OUTLINE_ELSEWHERE_CHARS = 64 * 1024;

/** The answer to `outline`: a file's declarations, or why it could not be read. */
export type OutlineReport =
  | {
      readonly path: string;
      readonly language: Language;
      /** False when the language has a grammar but the file did not parse: then `symbols` is empty. */
      readonly parsed: boolean;
      /** `index` when served from symbols.bin (file unchanged since sync), `parse` when parsed now. */
      readonly source: 'index' | 'parse';
      readonly symbols: OutlineSymbol[];
      readonly blocked: false;
    }
  | { readonly path: string; readonly blocked: boolean; readonly error: string; readonly hint: string };

/**
 * Outline of one file (seed 002 §10.3): from the index when the file is unchanged since the sync
 * that parsed it, else parsed now: a large file by `elsewhere` when given (a server's answer
 * thread hands it to a thread of its own). Reads go through the same guard as `open`; nothing executes.
 */
export async function outlineFile(ctx: RepoContext, view: IndexView | undefined, path: string, elsewhere?: OutlineParser): Promise<OutlineReport> {
  const checked = ctx.guard.check(path);
  if (!checked.ok) return diskRefusal({ path, blocked: checked.blocked, error: checked.reason, hint: checked.hint });
  const language = languageOf(checked.path);
  if (!hasAdapter(language)) {
    return { path: checked.path, blocked: false, error: `no outline for ${language} files`, hint: 'outline supports TypeScript, TSX, JavaScript, Python, Go, Rust, Java, C, C++, C#, Ruby and PHP' };
  }
  // Only an index built with this version's rules answers: one built with others (older credential
  // rules, say) may hold outlines no longer served.
  const fileId = view && view.meta.feature_version === FEATURE_VERSION ? view.findFile(checked.path) : -1;
  if (view && fileId >= 0) {
    const record = view.fileRecord(fileId);
    const stat = statIfExists(checked.absolute);
    if (record.state === 'indexed' && stat && sameStamp(stampOf(stat), record)) {
      const stored = await view.outline(fileId);
      // Only a parsed file's stored outline is complete; others (e.g. too large to parse at sync) are parsed now.
      if (stored.fallback === null) return { path: checked.path, language, parsed: true, source: 'index', symbols: stored.symbols, blocked: false };
      if (stored.fallback === 'parse-error') return { path: checked.path, language, parsed: false, source: 'index', symbols: [], blocked: false };
    }
  }
  const read = await readRepoFile(ctx.guard, checked.path, readLimitsOf(ctx), view ? scannedCleanHash(view, checked.path) : undefined);
  if (!read.ok) return diskRefusal({ path: checked.path, blocked: read.blocked, error: read.reason, hint: read.hint });
  const text = read.lines.join('\n');
  let analysis;
  if (elsewhere && text.length >= OUTLINE_ELSEWHERE_CHARS) analysis = await elsewhere.analyze(language, text, read.contentHash);
  else {
    await loadLanguages([language]);
    analysis = analyze(language, text);
  }
  return { path: read.path, language, parsed: analysis.ok, source: 'parse', symbols: analysis.symbols, blocked: false };
}
