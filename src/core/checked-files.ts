import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkedJsonText, readCheckedJson } from './checked-json.js';
import { RepodexError, isRepodexError } from './errors.js';
import { RACY_NS, versionOf } from './file-memo.js';

/** Where the versions of the files found sound are kept, in `.repodex/`. */
export const CHECKED_FILE = 'checked.json';

/** A file's version as `versionOf` gives it. */
export type FileVersion = ReturnType<typeof versionOf>;

/**
 * The files under `.repodex/` whose every byte a check found sound, each with the version it had
 * then (inode, size, mtime and ctime in nanoseconds): a later check of the same version need not
 * read the file again. `status`, and the check before a sync, read megabytes of segments and
 * caches otherwise, on every call. Any write to a file gives it a new ctime, which nobody can set
 * back, so damage done after the check shows as another version; what versions cannot show is a
 * disk changing bytes by itself, which `verify` finds (it reads everything, always). A cache only:
 * lost, damaged or unwritable, every file is simply checked again. It is checksummed like every
 * JSON file beside the index, so damage there is seen (and named by `status` and `verify`) rather
 * than read as versions.
 */
export class CheckedFiles {
  private versions: Map<string, string> | undefined;

  constructor(
    private readonly dataDir: string,
    /** The clock, in milliseconds (tests move it). */
    private readonly now: () => number = Date.now,
  ) {}

  /** The version of `name` now: take it before checking the file, and hand it to `found` after. */
  version(name: string): FileVersion {
    return versionOf(join(this.dataDir, name));
  }

  /** True when `name` was found sound as the very version it is now. */
  holds(name: string, now: FileVersion = this.version(name)): boolean {
    return now.key !== '-' && this.load().get(name) === now.key;
  }

  /**
   * Check `name` with `run`, unless it was found sound as the very version it is now (then
   * undefined: not read). The outcome is remembered: the version taken before `run` when
   * `isSound` says so (see `found`), none otherwise. `reuse` false always runs (`verify`).
   */
  check<T>(name: string, run: () => T, isSound: (result: T) => boolean, reuse = true): T | undefined {
    const before = this.version(name);
    if (reuse && this.holds(name, before)) return undefined;
    const result = run();
    if (isSound(result)) this.found(name, before);
    else this.forget(name);
    return result;
  }

  /**
   * A check that took `before` found `name` sound. Kept unless the file changed meanwhile, or so
   * lately that a change within the clock's granularity could have left its times as they were.
   */
  found(name: string, before: FileVersion): void {
    const now = this.version(name);
    if (before.key === '-' || now.key !== before.key) return;
    if (now.changedNs >= BigInt(Math.floor(this.now())) * 1_000_000n - RACY_NS) return;
    const versions = this.load();
    if (versions.get(name) === now.key) return;
    versions.set(name, now.key);
    this.save();
  }

  /** Forget `name` (a check found it damaged, or it is gone). */
  forget(name: string): void {
    if (this.load().delete(name)) this.save();
  }

  /**
   * Why the record read was damaged (then nothing in it was used), or undefined: for `status` and
   * `verify`, which name it. A record written since is sound again.
   */
  damage(): string | undefined {
    this.load();
    return this.damaged;
  }

  private damaged: string | undefined;

  private load(): Map<string, string> {
    if (this.versions) return this.versions;
    const versions = new Map<string, string>();
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(join(this.dataDir, CHECKED_FILE));
    } catch {
      // missing or unreadable: nothing is known to be sound
    }
    if (bytes) {
      try {
        const body = readCheckedJson(bytes, CHECKED_FILE, 'compact');
        if (body.version !== CHECKED_VERSION || typeof body.files !== 'object' || body.files === null) throw new RepodexError('INDEX_CORRUPT', `${CHECKED_FILE} is damaged: it is not a record of checked files`);
        for (const [name, key] of Object.entries(body.files)) if (typeof key === 'string') versions.set(name, key);
      } catch (error) {
        // A record an older repodex wrote (names and versions, no checksum) is simply not trusted; anything else is damage.
        if (!isOlderRecord(bytes)) this.damaged = `${isRepodexError(error) ? (error.detail ?? error.message) : `${CHECKED_FILE} is damaged`} (it records which files a check found sound; it is not used, and the next check writes it again)`;
      }
    }
    this.versions = versions;
    return versions;
  }

  private save(): void {
    const versions = this.load();
    // Files gone since (merged segments) are dropped: the list stays as long as the index's files.
    for (const name of [...versions.keys()]) if (this.version(name).key === '-') versions.delete(name);
    const path = join(this.dataDir, CHECKED_FILE);
    const temp = `${path}.tmp-${process.pid}`;
    try {
      writeFileSync(temp, checkedJsonText({ version: CHECKED_VERSION, files: Object.fromEntries(versions) }, 'compact'), { mode: 0o600 });
      renameSync(temp, path);
      this.damaged = undefined;
    } catch {
      rmSync(temp, { force: true }); // a read-only index: the checks just run again next time
    }
  }
}

/** The record's layout: `{version, files: {name: version key}}` with a checksum (1: the first with one). */
const CHECKED_VERSION = 1;

/** Whether `bytes` are a record as repodex wrote it before it had a checksum: one JSON object of file names to strings. */
function isOlderRecord(bytes: Buffer): boolean {
  try {
    const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
    return Object.entries(parsed).every(([name, key]) => /^[\w.-]+\.rpdx$/.test(name) && typeof key === 'string');
  } catch {
    return false;
  }
}

const byDir = new Map<string, CheckedFiles>();

/** The one CheckedFiles of `dataDir` in this process. */
export function checkedFilesOf(dataDir: string): CheckedFiles {
  let checked = byDir.get(dataDir);
  if (!checked) {
    checked = new CheckedFiles(dataDir);
    byDir.set(dataDir, checked);
  }
  return checked;
}
