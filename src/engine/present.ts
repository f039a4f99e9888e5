import { closeSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { chunkHash } from '../chunk/chunker.js';
import type { IndexView } from '../store/backend.js';
import type { SearchHit } from '../search/search.js';
import { openRegularFile } from '../core/open-regular.js';
import { type QueryWords, focusSnippet, snippetShowsAll } from '../search/snippet.js';
import { normalizeNewlines, splitLines } from '../text/normalize.js';
import type { RepoContext } from './context.js';
import { changedSinceIndexed } from './read-file.js';

/** A search hit as front ends show it: `stale` when its file changed on disk since indexing. */
export type PresentedHit = Omit<SearchHit, 'matched' | 'hash'> & { readonly stale?: true };

/** Hits past this rank keep their stored snippet: a focused one costs a read of the file. */
export const MAX_FOCUSED_HITS = 5;

/**
 * Ready ranked hits for the caller: flag those whose file changed since indexing (one stat per
 * file), and place the snippet of the others on the lines that matched, with `symbol` naming the
 * declaration those lines sit in (a merged chunk's hit in `class Circle` does not say
 * `interface Shape`). Only a hit whose stored snippet (the chunk's first lines) misses some of its
 * matched terms reads its chunk's lines, and uses them only when they hash to the indexed chunk
 * (so the text is what was scanned for credentials and guarded at sync); otherwise the stored
 * snippet stays. The first MAX_FOCUSED_HITS hits are focused. `treeMatchesIndex`: the caller's
 * freshness check found the working tree exactly as this generation indexed it, so no file is
 * looked at again to say so.
 */
export async function presentHits(ctx: RepoContext, view: IndexView, hits: readonly SearchHit[], words: QueryWords, treeMatchesIndex = false): Promise<PresentedHit[]> {
  // When the freshness check just proved the whole tree matches this generation, no hit's file changed: no stat each.
  const changed = new Map<string, boolean>();
  // Focus the hits first, then ask the index for all their declarations at once (a database answers them in one round trip).
  const planned = hits.map((hit, rank): { shown: PresentedHit; slot: number; focused?: { snippet: string; line: number; last: number } } => {
    const { matched: _matched, hash: _hash, ...shown } = hit;
    const slot = view.findFile(hit.path);
    let isChanged = treeMatchesIndex ? false : changed.get(hit.path);
    if (isChanged === undefined) {
      isChanged = changedSinceIndexed(ctx.guard.root, view, hit.path);
      changed.set(hit.path, isChanged);
    }
    if (isChanged) return { shown: { ...shown, stale: true }, slot };
    if (rank >= MAX_FOCUSED_HITS || hit.end_line - hit.start_line < 3 || snippetShowsAll(hit.snippet, hit.matched, words)) return { shown, slot };
    const lines = readChunkLines(ctx, view, hit);
    const focused = lines && focusSnippet(lines, hit.start_line, words);
    return focused ? { shown, slot, focused } : { shown, slot };
  });
  const symbols = await Promise.all(planned.map(({ slot, focused }) => (focused ? view.symbolAt(slot, focused.line, focused.last) : null)));
  return planned.map(({ shown, focused }, i) => (focused ? { ...shown, snippet: focused.snippet, symbol: symbols[i] ?? shown.symbol } : shown));
}

/**
 * The lines of a hit's chunk as they are on disk, when they are still exactly the indexed chunk
 * (its hash matches); else undefined. Only text the index already holds is ever shown, whatever
 * the path now leads to, so the path guard's realpath walk is not needed: the hash is the check.
 * Decodes only the chunk. Nothing is kept between calls: a chunk is read again when a later search
 * focuses it (a few small reads), because lines kept for the next search outlived the young
 * generation and made every collection longer.
 */
function readChunkLines(ctx: RepoContext, view: IndexView, hit: SearchHit): string[] | undefined {
  // The bytes up to the chunk's last line, in blocks: a hit near the top of a large file reads little.
  let from = -1;
  let to = -1;
  const file = openRegularFile(join(ctx.guard.root, hit.path), ctx.limits.max_file_bytes);
  if (!file) return undefined;
  const { fd, size } = file;
  // Read into one buffer kept for every read (this runs start to end without yielding): a buffer
  // per read was memory outside the heap that made the collector run more often.
  if (readBuffer.length < size) readBuffer = Buffer.allocUnsafeSlow(Math.max(size, 2 * readBuffer.length));
  const bytes = readBuffer;
  try {
    let length = 0;
    let line = 1;
    let scan = 0;
    while (to < 0) {
      const n = length < size ? readSync(fd, bytes, length, Math.min(READ_BLOCK, size - length), length) : 0;
      length += n;
      // Count newlines in what was read: line `start_line` begins after the (start_line - 1)th.
      for (;;) {
        if (line === hit.start_line && from < 0) from = scan;
        const nl = bytes.indexOf(10, scan);
        if (nl < 0 || nl >= length) break;
        scan = nl + 1;
        if (line === hit.end_line) {
          to = scan;
          break;
        }
        line++;
      }
      if (n === 0) {
        if (from < 0) return undefined;
        if (to < 0) to = length;
        break;
      }
      scan = Math.min(scan, length);
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  let text = normalizeNewlines(bytes.toString('utf8', from, to));
  if (hit.start_line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // The chunk's text as its hash was made: its lines joined, which is the text less one final newline.
  if (chunkHash(text.endsWith('\n') ? text.slice(0, -1) : text, view.meta.chunker.params_key).toString('hex') !== hit.hash) return undefined;
  return splitLines(text);
}

/** Bytes read at a time when looking for a chunk's lines. */
const READ_BLOCK = 32 * 1024;

/** The buffer chunk lines are read into, grown to the largest file read (at most `max_file_bytes`). */
let readBuffer = Buffer.allocUnsafeSlow(64 * 1024);
