import { chunkHash } from '../chunk/chunker.js';
import type { IndexView } from '../store/backend.js';
import type { RepoContext } from './context.js';
import { splitLines } from '../text/normalize.js';
import { changedSinceIndexed, numberLines, readLimitsOf, readRepoFile, scannedCleanHash } from './read-file.js';

/** Fetch limits from seed 000 §4.2. */
export const MAX_FETCH_IDS = 5;
export const MAX_FETCH_LINES = 120;

/** One fetched chunk, or why it could not be served. */
export type FetchedChunk =
  | {
      readonly chunk_id: number;
      readonly path: string;
      readonly start_line: number;
      readonly end_line: number;
      /** `"N| text"` lines, at most max_lines of them. */
      readonly lines: string[];
      /** True when the chunk is longer than max_lines and only its first lines are returned. */
      readonly truncated: boolean;
      /** True when a line over the per-line limit was cut. */
      readonly long_lines_cut: boolean;
      /** True when the file changed since indexing: the lines are current, the ranges may be off. */
      readonly stale: boolean;
    }
  | { readonly chunk_id: number; readonly path?: string; readonly blocked: boolean; readonly error: string; readonly hint: string };

/** The chunks of `fetch`, before the engine adds which generation they came from. */
export interface FetchedChunks {
  readonly chunks: FetchedChunk[];
  /** Ids beyond the first MAX_FETCH_IDS, not processed. */
  readonly ignored_ids: number[];
  readonly max_lines: number;
}

/**
 * Resolve stable chunk ids to bounded, line-numbered text. An id whose chunk is no longer in the
 * index is refused ("gone"), never answered with other code.
 * - A store that keeps chunk text (PostgreSQL) answers with the chunk as indexed — scanned for
 *   credentials when it was indexed, under the rules this index was built with — so a server
 *   needs no checkout; `stale` says the file on disk changed (or is not there) since.
 * - Otherwise the lines are read from disk through the path guard, and `stale` says they no
 *   longer match the indexed chunk.
 */
export async function fetchChunks(ctx: RepoContext, view: IndexView, ids: readonly number[], maxLines: number): Promise<FetchedChunks> {
  const unique = [...new Set(ids)];
  const wanted = unique.slice(0, MAX_FETCH_IDS);
  const docs = wanted.map((id) => view.docOf(id));
  const live = docs.filter((doc) => doc >= 0);
  const [records, stored] = await Promise.all([view.chunks(live), live.length > 0 ? view.storedTexts(live) : undefined]);
  let next = 0;
  const fetchOne = async (id: number, i: number): Promise<FetchedChunk> => {
    if (docs[i]! < 0) {
      return {
        chunk_id: id,
        blocked: false,
        error: `chunk ${id} is gone: search again`,
        hint: 'a chunk id names one chunk for as long as that chunk is unchanged; this one was edited or removed (or never existed)',
      };
    }
    const record = records[next++]!;
    const answer = (lines: readonly string[], stale: boolean): FetchedChunk => {
      const numbered = numberLines(lines.slice(0, maxLines), record.startLine);
      return {
        chunk_id: id,
        path: record.path,
        start_line: record.startLine,
        end_line: record.endLine,
        lines: numbered.lines,
        truncated: record.endLine - record.startLine + 1 > maxLines,
        long_lines_cut: numbered.cut,
        stale,
      };
    };
    const text = stored?.get(docs[i]!);
    if (text !== undefined) return answer(splitLines(text), changedSinceIndexed(ctx.paths.root, view, record.path));
    const read = await readRepoFile(ctx.guard, record.path, readLimitsOf(ctx), scannedCleanHash(view, record.path));
    if (!read.ok) return { chunk_id: id, path: record.path, blocked: read.blocked, error: read.reason, hint: read.hint };
    const chunkLines = read.lines.slice(record.startLine - 1, record.endLine);
    const stale =
      chunkLines.length !== record.endLine - record.startLine + 1 || chunkHash(chunkLines.join('\n'), view.meta.chunker.params_key).toString('hex') !== record.hash;
    return answer(chunkLines, stale);
  };
  const chunks: FetchedChunk[] = [];
  for (let i = 0; i < wanted.length; i++) chunks.push(await fetchOne(wanted[i]!, i));
  return { chunks, ignored_ids: unique.slice(MAX_FETCH_IDS), max_lines: maxLines };
}
