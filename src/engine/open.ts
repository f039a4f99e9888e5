import { RepodexError } from '../core/errors.js';
import type { RepoContext } from './context.js';
import { diskRefusal, numberLines, readLimitsOf, readRepoFile } from './read-file.js';

/** The answer to `open`: a bounded, numbered line range of one file, or why it was refused. */
export type OpenReport =
  | {
      readonly path: string;
      readonly start_line: number;
      /** The last line returned (`start_line - 1` when none is: an empty file). */
      readonly end_line: number;
      readonly total_lines: number;
      readonly lines: string[];
      /** True when lines of the requested range were withheld (the line limit or the response cap cut it). */
      readonly truncated: boolean;
      /** Where to continue reading (the line after `end_line`), or null at the end of the file. */
      readonly next_start: number | null;
      readonly long_lines_cut: boolean;
      readonly blocked: false;
    }
  | { readonly path: string; readonly blocked: boolean; readonly error: string; readonly hint: string };

/**
 * Read lines `start..end` (1-based, inclusive) of any file under the root, through the path
 * guard, at most `limits.max_open_lines` of them. Without `end`, reads as many lines as the limit
 * allows. An empty range (`end < start`) or a start past the end of the file is an error, not an
 * empty answer; an `end` past the end of the file reads to the end.
 */
export async function openFile(ctx: RepoContext, path: string, start = 1, end?: number): Promise<OpenReport> {
  if (end !== undefined && end < start) throw new RepodexError('BAD_REQUEST', `end_line ${end} is before start_line ${start}`);
  const read = await readRepoFile(ctx.guard, path, readLimitsOf(ctx));
  if (!read.ok) return diskRefusal({ path, blocked: read.blocked, error: read.reason, hint: read.hint });
  const total = read.lines.length;
  if (start > Math.max(total, 1)) {
    throw new RepodexError('BAD_REQUEST', `start_line ${start} is past the end of ${read.path} (${total} ${total === 1 ? 'line' : 'lines'})`);
  }
  const maxLines = ctx.limits.max_open_lines;
  // Without an end, the request is the rest of the file: anything past the limit is withheld.
  const wantedEnd = Math.min(end ?? total, total);
  const last = Math.min(wantedEnd, start + maxLines - 1);
  const numbered = numberLines(read.lines.slice(start - 1, last), start);
  return {
    path: read.path,
    start_line: start,
    end_line: Math.max(last, start - 1),
    total_lines: total,
    lines: numbered.lines,
    truncated: last < wantedEnd,
    next_start: last < total ? last + 1 : null,
    long_lines_cut: numbered.cut,
    blocked: false,
  };
}
