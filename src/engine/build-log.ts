import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** `.repodex/build.log`: one line per sync or embedding run (seed 003 §4), for when something went wrong. */
export const BUILD_LOG = 'build.log';
/** The log is rotated past this size, keeping ROTATIONS older files (`build.log.1` is the newest of them). */
const MAX_LOG_BYTES = 256 * 1024;
const ROTATIONS = 3;

/** Append a timestamped line to the build log, rotating it when it has grown; never fails the caller. */
export function appendBuildLog(dataDir: string, line: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, BUILD_LOG);
    const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    if (size > MAX_LOG_BYTES) {
      for (let i = ROTATIONS - 1; i >= 1; i--) {
        try {
          renameSync(`${path}.${i}`, `${path}.${i + 1}`);
        } catch {
          // that rotation did not exist yet
        }
      }
      renameSync(path, `${path}.1`);
    }
    appendFileSync(path, `${new Date().toISOString()} ${line.replace(/\n/g, ' ')}\n`);
  } catch {
    // The log is a convenience: a read-only or full disk must not fail a sync over it.
  }
}
