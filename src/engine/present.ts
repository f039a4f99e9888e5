import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chunkHash } from '../chunk/chunker.js';
import { chunkSymbolPath } from '../chunk/symbol-paths.js';
import type { IndexView } from '../store/backend.js';
import type { SearchHit } from '../search/search.js';
import { type QueryWords, focusSnippet, snippetShowsAll } from '../search/snippet.js';
import { normalizeNewlines, splitLines } from '../text/normalize.js';
import type { RepoContext } from './context.js';

/** A search hit as front ends show it: `stale` when its file changed on disk since indexing. */
export type PresentedHit = Omit<SearchHit, 'matched'> & { readonly stale?: true };

/**
 * Ready ranked hits for the caller: flag those whose file changed since indexing (one stat per
 * file), and place the snippet of the others on the lines that matched, with `symbol` naming the
 * declaration those lines sit in (a merged chunk's hit in `class Circle` does not say
 * `interface Shape`). Only a hit whose stored snippet (the chunk's first lines) misses some of its
 * matched terms reads its chunk's lines, and uses them only when they hash to the indexed chunk
 * (so the text is what was scanned for credentials and guarded at sync); otherwise the stored
 * snippet stays. The first MAX_FOCUSED_HITS hits are focused.
 */
/** Hits past this rank keep their stored snippet: a focused one costs a read of the file. */
export const MAX_FOCUSED_HITS = 10;

export async function presentHits(ctx: RepoContext, view: IndexView, hits: readonly SearchHit[], words: QueryWords): Promise<PresentedHit[]> {
  const changed = new Map<string, boolean>();
  const out: PresentedHit[] = [];
  for (const [rank, hit] of hits.entries()) {
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
    if (rank >= MAX_FOCUSED_HITS || hit.end_line - hit.start_line < 3 || snippetShowsAll(hit.snippet, hit.matched, words)) {
      out.push(shown);
      continue;
    }
    const lines = await readChunkLines(ctx, view, hit);
    const focused = lines && focusSnippet(lines, hit.start_line, words);
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

/**
 * The lines of a hit's chunk as they are on disk, when they are still exactly the indexed chunk
 * (its hash matches); else undefined. Only text the index already holds is ever shown, whatever
 * the path now leads to, so the path guard's realpath walk is not needed: the hash is the check.
 * Decodes only the chunk.
 */
async function readChunkLines(ctx: RepoContext, view: IndexView, hit: SearchHit): Promise<string[] | undefined> {
  let bytes: Buffer;
  let fd: number | undefined;
  try {
    // Non-blocking: a FIFO put in the file's place must not hang the search.
    fd = openSync(join(ctx.guard.root, hit.path), constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    const size = stat.size;
    if (!stat.isFile() || size > ctx.limits.max_file_bytes) return undefined;
    bytes = Buffer.allocUnsafe(size);
    let length = 0;
    while (length < size) {
      const n = readSync(fd, bytes, length, size - length, length);
      if (n === 0) break;
      length += n;
    }
    bytes = bytes.subarray(0, length);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  // Byte offsets of the chunk's first and last lines (LF-separated; CR-only files fail the hash).
  let from = 0;
  for (let line = 1; line < hit.start_line; line++) {
    const nl = bytes.indexOf(10, from);
    if (nl < 0) return undefined;
    from = nl + 1;
  }
  let to = from;
  for (let line = hit.start_line; line <= hit.end_line; line++) {
    const nl = bytes.indexOf(10, to);
    to = nl < 0 ? bytes.length : nl + 1;
  }
  let text = normalizeNewlines(bytes.toString('utf8', from, to));
  if (hit.start_line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = splitLines(text).slice(0, hit.end_line - hit.start_line + 1);
  const doc = view.docOf(hit.chunk_id);
  const [record] = doc >= 0 ? await view.chunks([doc]) : [];
  if (!record || chunkHash(lines.join('\n'), view.meta.chunker.params_key).toString('hex') !== record.hash) return undefined;
  return lines;
}
