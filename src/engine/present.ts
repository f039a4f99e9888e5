import { statSync } from 'node:fs';
import { join } from 'node:path';
import { chunkSymbolPath } from '../chunk/symbol-paths.js';
import type { IndexView } from '../store/backend.js';
import type { SearchHit } from '../search/search.js';
import { type QueryWords, focusSnippet, snippetShowsAll } from '../search/snippet.js';
import { readSource } from '../scan/read-source.js';
import { splitLines } from '../text/normalize.js';
import type { RepoContext } from './context.js';
import { readLimitsOf } from './read-file.js';
import { contentHashOf } from './prepare-file.js';

/** A search hit as front ends show it: `stale` when its file changed on disk since indexing. */
export type PresentedHit = Omit<SearchHit, 'matched'> & { readonly stale?: true };

/**
 * Ready ranked hits for the caller: flag those whose file changed since indexing (one stat per
 * file), and place the snippet of the others on the lines that matched, with `symbol` naming the
 * declaration those lines sit in (a merged chunk's hit in `class Circle` does not say
 * `interface Shape`). Only a hit whose stored snippet (the chunk's first lines) misses some of its
 * matched terms reads its file: through the path guard, and only when its content hash is still
 * the indexed one (so the text was scanned for credentials at sync); otherwise the stored snippet
 * stays.
 */
export async function presentHits(ctx: RepoContext, view: IndexView, hits: readonly SearchHit[], words: QueryWords): Promise<PresentedHit[]> {
  const changed = new Map<string, boolean>();
  const texts = new Map<string, string[] | undefined>();
  const out: PresentedHit[] = [];
  for (const hit of hits) {
    const { matched: _matched, ...shown } = hit;
    const slot = view.findFile(hit.path);
    let isChanged = changed.get(hit.path);
    if (isChanged === undefined) {
      const record = slot >= 0 ? view.fileRecord(slot) : undefined;
      const stat = statSync(join(ctx.guard.root, hit.path), { throwIfNoEntry: false });
      isChanged = !record || !stat || stat.size !== record.size || stat.mtimeMs !== record.mtimeMs;
      changed.set(hit.path, isChanged);
    }
    if (isChanged) {
      out.push({ ...shown, stale: true });
      continue;
    }
    if (snippetShowsAll(hit.snippet, hit.matched, words) || hit.end_line - hit.start_line < 3) {
      out.push(shown);
      continue;
    }
    let lines = texts.get(hit.path);
    if (!texts.has(hit.path)) {
      lines = readIndexedText(ctx, view, slot, hit.path);
      texts.set(hit.path, lines);
    }
    const focused = lines && focusSnippet(lines, hit.start_line, hit.end_line, words);
    if (!focused) {
      out.push(shown);
      continue;
    }
    const { symbols } = await view.outline(slot);
    const symbol = chunkSymbolPath(symbols, focused.line, focused.line) ?? hit.symbol;
    out.push({ ...shown, snippet: focused.snippet, symbol });
  }
  return out;
}

/** A file's lines when its content is still exactly what was indexed, read through the path guard; else undefined. */
function readIndexedText(ctx: RepoContext, view: IndexView, slot: number, path: string): string[] | undefined {
  const checked = ctx.guard.check(path);
  if (!checked.ok) return undefined;
  const read = readSource(checked.absolute, readLimitsOf(ctx));
  if (!read.ok || contentHashOf(read.text) !== view.fileRecord(slot).contentHash) return undefined;
  return splitLines(read.text);
}
