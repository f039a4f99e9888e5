import { globMatcher } from '../scan/glob.js';
import type { CatalogView } from '../store/backend.js';

/** One catalogued file as `files` lists it. */
export interface FileEntry {
  readonly path: string;
  readonly size: number;
  readonly mtime: string;
  readonly language: string;
  /** `indexed`, or why the file was skipped (too-large, binary, unreadable, secret). */
  readonly state: string;
  readonly chunks: number;
}

/** The files of `files`, before the engine adds which generation they came from. */
export interface FileList {
  readonly files: FileEntry[];
  /** Files that matched before the limit was applied. */
  readonly total: number;
  readonly truncated: boolean;
}

/** Default and maximum number of files `files` lists. */
export const DEFAULT_FILES_LIMIT = 1000;
export const MAX_FILES_LIMIT = 10_000;

/** True when a folder or the file of a path starts with "." (`.github/workflows/ci.yml`). */
export function isHiddenPath(path: string): boolean {
  return path.startsWith('.') || path.includes('/.');
}

/** List catalogued files in path order, optionally filtered by a glob; hidden ones only when asked. */
export function listFiles(view: CatalogView, glob: string | undefined, limit: number, includeHidden = false): FileList {
  const matches = glob === undefined ? undefined : globMatcher(glob);
  const catalog = view.catalog();
  const files: FileEntry[] = [];
  let total = 0;
  for (let i = 0; i < catalog.count; i++) {
    const path = catalog.path(i);
    if (!includeHidden && isHiddenPath(path)) continue;
    if (matches && !matches(path)) continue;
    total++;
    if (files.length >= limit) continue;
    const record = catalog.record(i);
    files.push({
      path,
      size: record.size,
      mtime: new Date(record.mtimeMs).toISOString(),
      language: record.language,
      state: record.state,
      chunks: record.chunkCount,
    });
  }
  return { files, total, truncated: total > files.length };
}
