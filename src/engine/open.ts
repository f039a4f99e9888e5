import type { RepoContext } from './context.js';
import { numberLines, readRepoFile } from './read-file.js';

/** Most lines one `open` returns (the same bound as a fetched chunk). */
export const MAX_OPEN_LINES = 120;

/** The answer to `open`: a bounded, numbered line range of one file, or why it was refused. */
export type OpenReport =
  | {
      readonly path: string;
      readonly start_line: number;
      readonly end_line: number;
      readonly total_lines: number;
      readonly lines: string[];
      /** True when the requested range was longer than the limit or ran past the end of the file. */
      readonly truncated: boolean;
      /** Where to continue reading, when there is more. */
      readonly next_start: number | null;
      readonly long_lines_cut: boolean;
      readonly blocked: false;
    }
  | { readonly path: string; readonly blocked: boolean; readonly error: string; readonly hint: string };

/** Read lines `start..end` (1-based, inclusive) of any file under the root, through the path guard. */
export function openFile(ctx: RepoContext, path: string, start = 1, end?: number): OpenReport {
  const read = readRepoFile(ctx.guard, path, ctx.loaded.config.max_file_bytes);
  if (!read.ok) return { path, blocked: read.blocked, error: read.reason, hint: read.hint };
  const total = read.lines.length;
  const first = Math.max(1, start);
  const requestedEnd = end ?? first + MAX_OPEN_LINES - 1;
  const last = Math.min(requestedEnd, first + MAX_OPEN_LINES - 1, total);
  const numbered = numberLines(first <= total ? read.lines.slice(first - 1, last) : [], first);
  return {
    path: read.path,
    start_line: first,
    end_line: Math.max(last, first - 1),
    total_lines: total,
    lines: numbered.lines,
    truncated: last < requestedEnd,
    next_start: last < total ? last + 1 : null,
    long_lines_cut: numbered.cut,
    blocked: false,
  };
}
