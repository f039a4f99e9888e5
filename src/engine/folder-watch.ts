import { type FSWatcher, lstatSync, readdirSync, watch } from 'node:fs';
import { basename, join } from 'node:path';
import { RepodexError, errorMessage, isErrnoException } from '../core/errors.js';
import { readProcText } from '../core/process.js';
import { lstatIfExists } from '../core/stat.js';

/** A file event: the absolute path of something created, changed or removed. */
export interface FolderEvent {
  readonly path: string;
  /** `delete`: nothing is at the path any more (removed or moved away). */
  readonly type?: 'delete';
}

/** What a folder watch reports to, and asks of, its owner. */
export interface FolderWatchOptions {
  /** Whether folder `rel` (`''` = the root, `/` separators) is watched: folders the index never walks are not. */
  readonly watchesDir: (rel: string) => boolean;
  readonly onEvent: (event: FolderEvent) => void;
  /** Watching stopped working (no inotify watches left, say): events may be missed from now on. */
  readonly onError: (error: Error) => void;
}

/**
 * Every folder watch of a process shares the event loop's one inotify queue, and the kernel drops
 * events (silently, as far as Node tells) once more are waiting than it holds: a flood in one
 * repository (a branch switch, a build) can drop another's events, which that repository's own
 * count of events would never show. The loop takes every waiting event in one turn, so a turn
 * that delivers a quarter of what it holds says it may have overflowed, for every watch of the process.
 */
let burstEvents: number | undefined;

/** A quarter of the events the kernel queues for one inotify descriptor (fs.inotify.max_queued_events, 16384 by default), at most 4,096. */
function burstThreshold(): number {
  const capacity = Number(readProcText('/proc/sys/fs/inotify/max_queued_events')?.trim());
  return Math.min(4096, Math.floor((Number.isInteger(capacity) && capacity > 0 ? capacity : 16384) / 4));
}

let eventsThisTurn = 0;
let turnCounted = false;
let bursts = 0;

/** Count one raw event of any folder watch in this process, by turn of the event loop. */
function countEvent(): void {
  if (!turnCounted) {
    turnCounted = true;
    setImmediate(() => {
      eventsThisTurn = 0;
      turnCounted = false;
    });
  }
  // Read on the first event, not at startup: most processes that load this never watch.
  burstEvents ??= burstThreshold();
  if (++eventsThisTurn === burstEvents) bursts++;
}

/** How many turns of the event loop so far delivered so many folder events that the shared queue may have overflowed (see burstThreshold). */
export function folderEventBursts(): number {
  return bursts;
}

/**
 * Watches a tree one folder at a time with Node's own watcher (inotify on Linux): each watched
 * folder is one inotify watch on the event loop's single inotify descriptor, so every event is
 * delivered in the order it happened, on the next turn of the loop, without batching. That order
 * is what lets a cookie file prove that every earlier change has arrived (RepoWatcher.syncToNow).
 * A folder created later is watched as its event arrives; one removed is dropped with everything
 * under it. Symlinks are never followed.
 */
export class FolderWatch {
  /**
   * The watch of each folder, and the folder it was made on (inode and birth time: a folder made
   * again under its name usually gets the inode just freed): a folder replaced needs a new watch.
   */
  private readonly watchers = new Map<string, { readonly watcher: FSWatcher; readonly identity: string }>();
  private closed = false;

  constructor(
    private readonly root: string,
    private readonly options: FolderWatchOptions,
  ) {}

  /** Watch the root and every folder below it that `watchesDir` accepts. Throws WATCH_UNAVAILABLE when the system refuses. */
  start(): void {
    try {
      this.addTree('');
    } catch (error) {
      this.close();
      throw unavailable(this.root, error);
    }
  }

  /** How many folders are watched. */
  get size(): number {
    return this.watchers.size;
  }

  /** Watch the folders the rules now include that are not watched yet (after an ignore file changed). */
  rescan(): void {
    try {
      this.addTree('');
    } catch (error) {
      this.options.onError(unavailable(this.root, error));
    }
  }

  /** Stop every watch. */
  close(): void {
    this.closed = true;
    for (const { watcher } of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  /** Watch folder `rel` and its included subfolders (those already watched are left as they are). */
  private addTree(rel: string): void {
    if (this.closed || !this.options.watchesDir(rel)) return;
    const absolute = rel === '' ? this.root : join(this.root, rel);
    if (!this.watchers.has(rel)) {
      const identity = folderIdentity(absolute);
      if (identity === undefined) return; // gone (or replaced by a file) since it was listed: its parent's event says so
      let watcher: FSWatcher;
      try {
        watcher = watch(absolute, { persistent: true, encoding: 'utf8' }, (_type, name) => this.receive(rel, name));
      } catch (error) {
        if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return;
        throw error;
      }
      watcher.on('error', (error) => this.dropped(rel, error));
      this.watchers.set(rel, { watcher, identity });
    }
    let entries;
    try {
      entries = readdirSync(absolute, { withFileTypes: true });
    } catch (error) {
      if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) this.addTree(rel === '' ? entry.name : `${rel}/${entry.name}`);
    }
  }

  private receive(dir: string, name: string | null): void {
    countEvent();
    if (this.closed) return;
    if (name === null) {
      // The system could not name the entry: report the folder itself.
      this.options.onEvent({ path: dir === '' ? this.root : join(this.root, dir) });
      return;
    }
    const rel = dir === '' ? name : `${dir}/${name}`;
    const absolute = join(this.root, rel);
    const stat = lstatIfExists(absolute);
    if (!stat && dir !== '' && name === basename(dir)) {
      // The system names the watched folder itself when it is removed or moved away: whatever is
      // under its name now (nothing, or a folder made again) needs a watch of its own.
      this.rewatch(dir);
      this.options.onEvent({ path: join(this.root, dir) });
      return;
    }
    if (stat?.isDirectory()) {
      // A new folder, or a new one under a watched name (removed and made again, as a branch
      // switch does with a folder whose files all differ; or another moved over it: the old watch
      // follows the old inode, or is dead): watch it before reporting, so nothing created in it
      // afterwards is missed (what was created before the watch is found by the sync this starts).
      const known = this.watchers.get(rel);
      if (!known || known.identity !== folderIdentity(absolute)) this.rewatch(rel);
    } else if (this.watchers.has(rel)) {
      this.forget(rel); // a watched folder removed, renamed away or replaced by a file
    }
    this.options.onEvent(stat ? { path: absolute } : { path: absolute, type: 'delete' });
  }

  /** Drop the watches of `rel` and below, and watch what is there now (if anything). */
  private rewatch(rel: string): void {
    this.forget(rel);
    try {
      this.addTree(rel);
    } catch (error) {
      this.options.onError(unavailable(this.root, error));
    }
  }

  /** A watch that failed: its folder is gone (dropped quietly) or watching broke (reported). */
  private dropped(rel: string, error: Error): void {
    const gone = lstatIfExists(rel === '' ? this.root : join(this.root, rel));
    if (rel !== '' && !gone?.isDirectory()) {
      this.forget(rel);
      return;
    }
    this.options.onError(error);
  }

  /** Stop watching `rel` and every folder below it. */
  private forget(rel: string): void {
    const prefix = `${rel}/`;
    for (const [path, { watcher }] of this.watchers) {
      if (path !== rel && !path.startsWith(prefix)) continue;
      watcher.close();
      this.watchers.delete(path);
    }
  }
}

/** What tells one folder from another made later under the same name, or undefined when `absolute` is no folder. */
function folderIdentity(absolute: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(absolute, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (isErrnoException(error, 'ENOTDIR')) return undefined;
    throw error;
  }
  return stat?.isDirectory() ? `${stat.ino}:${stat.birthtimeNs}` : undefined;
}

function unavailable(root: string, error: unknown): RepodexError {
  const limit = isErrnoException(error, 'ENOSPC') ? ' (no inotify watches left: raise fs.inotify.max_user_watches)' : '';
  return new RepodexError('WATCH_UNAVAILABLE', `cannot watch ${root}: ${errorMessage(error)}${limit}`);
}
