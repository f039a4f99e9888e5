import type ParcelWatcher from '@parcel/watcher';
import { type Stats, close, open, rmSync, unlink, unwatchFile, watchFile, writeSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { RepodexError, errorMessage } from '../core/errors.js';
import { processExists } from '../core/process.js';
import { DATA_DIR_NAME } from '../core/paths.js';
import { SKIP_DIRS } from '../scan/ignore-rules.js';
import { RepoScope, isOutsideRoot } from '../scan/scope.js';
import type { CatalogView } from '../store/backend.js';
import type { Engine } from './engine.js';
import type { SyncSummary } from './sync.js';
import { type RepoContext, loadContext } from './context.js';
import { type ChangeProbe, type TreeCheck, statProbe } from './probe.js';
import { listDirOrEmpty, lstatIfExists, statIfExists } from '../core/stat.js';
import { FolderWatch, folderEventBursts } from './folder-watch.js';

/** The events a watcher backend delivers: the absolute path of something created, changed or removed. */
export interface WatchEvent {
  readonly path: string;
  /** What happened, when the backend says: a removal must not answer a cookie round (see sendCookie). */
  readonly type?: 'create' | 'update' | 'delete';
}

/** A live subscription to file events under a root. */
export interface Subscription {
  unsubscribe(): Promise<void>;
  /** The rules changed: start watching the folders they now include (backends that watch per folder). */
  rescan?(): void;
  /** For backends whose watches share one event queue in a process: how many times so far it may have overflowed (dropping anyone's events). */
  bursts?(): number;
}

/** What a backend is asked to watch. */
export interface SubscribeOptions {
  /** Globs of folders no watcher needs to see, at any depth (for backends that take globs). */
  readonly ignore: readonly string[];
  /** Whether folder `rel` (`''` = the root) is watched (for backends that watch folder by folder). */
  readonly watchesDir: (rel: string) => boolean;
}

/** Starts subscriptions (one folder watch per folder on Linux, @parcel/watcher elsewhere; tests may pass another). */
export type Subscribe = (root: string, onEvents: (events: readonly WatchEvent[]) => void, onError: (error: Error) => void, options: SubscribeOptions) => Promise<Subscription>;

/** @parcel/watcher: native recursive watching (FSEvents, ReadDirectoryChangesW, inotify); never follows symlinks. Batches events for ~50 ms. */
export const parcelSubscribe: Subscribe = async (root, onEvents, onError, options) => {
  let watcher: typeof ParcelWatcher;
  try {
    watcher = (await import('@parcel/watcher')).default;
  } catch (error) {
    throw new RepodexError('WATCH_UNAVAILABLE', `the file watcher could not load: ${errorMessage(error)}`);
  }
  try {
    return await watcher.subscribe(
      root,
      (error, events) => {
        if (error) onError(error);
        else onEvents(events);
      },
      { ignore: [...options.ignore] },
    );
  } catch (error) {
    throw new RepodexError('WATCH_UNAVAILABLE', `cannot watch ${root}: ${errorMessage(error)} (on Linux, raise fs.inotify.max_user_watches)`);
  }
};

/**
 * Node's own watcher, one folder at a time (see FolderWatch): on Linux every event arrives in
 * order on the next turn of the event loop, so a cookie proves within a tenth of a millisecond
 * that every earlier change was seen (parcel holds events back up to 50 ms).
 */
export const folderSubscribe: Subscribe = async (root, onEvents, onError, options) => {
  const watch = new FolderWatch(root, { watchesDir: options.watchesDir, onEvent: (event) => onEvents([event]), onError });
  watch.start();
  return {
    async unsubscribe() {
      watch.close();
    },
    rescan: () => watch.rescan(),
    bursts: folderEventBursts,
  };
};

/** The backend for this platform: folder watches where they deliver in order at once (Linux), parcel elsewhere. */
export const defaultSubscribe: Subscribe = process.platform === 'linux' ? folderSubscribe : parcelSubscribe;

/**
 * The folders no watcher needs to see, at any depth: version control and the built-in skip
 * folders (not `.repodex/`: its config matters). One glob with alternatives, not one per folder:
 * the watcher matches every path of its first crawl against each glob, and 24 globs made
 * subscribing to playwright take 411 ms against 57 ms for the one.
 */
function ignoredFolders(): string[] {
  return [`**/{${[...SKIP_DIRS].filter((name) => name !== DATA_DIR_NAME).join(',')}}`];
}

/**
 * How often the control files the watcher cannot see are stat-ed, in ms: git's exclude files and
 * config (inside `.git/`, which the watcher skips, or outside the root). They change rarely; a
 * second's delay is the price of not watching `.git/` or the home folder.
 */
const CONTROL_POLL_MS = 1000;

/** Cookie files (see syncToNow) are `.repodex/.cookie-<pid>-<n>`: the pid lets a later process sweep a killed one's. */
const COOKIE_PREFIX = '.cookie-';
const COOKIE_NAME = /^\.cookie-(\d+)-\d+$/;

/** How long a cookie may take to come back before a request checks stats instead. */
const COOKIE_TIMEOUT_MS = 500;

/**
 * More raw events than this since the last check (a branch switch, a build writing thousands of
 * files) and the next check also proves freshness from stats: the kernel drops events when its
 * queue overflows, and a dropped change must not go unseen just because the cookie came back.
 */
const FLOOD_EVENTS = 2048;

/**
 * Create an empty file off this thread and keep it open: its descriptor, or undefined when it
 * cannot be. Callbacks, not promises: a promise-returning open costs this thread several times
 * the syscall's own time, which a server pays on every request.
 */
function createOpen(path: string): Promise<number | undefined> {
  return new Promise((resolve) => open(path, 'w', 0o600, (error, fd) => resolve(error ? undefined : fd)));
}

/**
 * Change a byte of an open file (one modify event for a watcher); false when it cannot be. On this
 * thread: a one-byte write to an open file costs a few microseconds, where handing it to the I/O
 * threads cost a busy server's request thread five times that and a thread switch each way.
 */
function touchOpen(fd: number): boolean {
  try {
    writeSync(fd, COOKIE_BYTE, 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

const COOKIE_BYTE = new Uint8Array([0x2e]);

/**
 * Watches a repository for changes that matter to its index: files the scope includes, folders
 * it walks, ignore files, `.repodex/config.json` and `.repodex/ignore`, and (by polling) git's
 * exclude and config files. Everything else (build output, ignored paths, the index's own files)
 * is dropped here. Relevant events are counted with a sequence number, so a sync can settle
 * exactly the events it saw; `syncToNow` proves that every event up to now has arrived.
 */
export class RepoWatcher {
  private subscription: Subscription | undefined;
  private scope: RepoScope | undefined;
  private seq = 0;
  private settled = 0;
  private healthy = false;
  private readonly listeners = new Set<() => void>();
  private lastError: string | undefined;
  /** Control files polled because the watcher does not see them, by absolute path. */
  private readonly polled = new Map<string, (current: Stats, previous: Stats) => void>();
  /** The stat each polled control file had when last looked at (undefined: absent). */
  private readonly polledStats = new Map<string, Stats | undefined>();
  /** Cookies written and not yet seen, by file name. */
  private readonly cookies = new Map<string, () => void>();
  private cookieSeq = 0;
  /** The cookie file, kept open between rounds (see sendCookie). */
  private cookie: { readonly name: string; readonly fd: number } | undefined;
  /** The cookie out now, and the one to be written when it is back (shared by every request that came after it was written). */
  private cookieOut: Promise<boolean> | undefined;
  private cookieNext: Promise<boolean> | undefined;
  /** Raw events (relevant or not) since `takeFlood` last asked. */
  private rawEvents = 0;
  /** The shared queue's count of possible overflows when `takeFlood` last asked (see Subscription.bursts). */
  private burstsSeen = 0;

  constructor(
    private readonly root: string,
    private readonly subscribe: Subscribe = defaultSubscribe,
  ) {}

  /** Start watching; throws WATCH_UNAVAILABLE when the platform cannot. */
  async start(): Promise<void> {
    this.sweepCookies();
    this.subscription = await this.subscribe(
      this.root,
      (events) => this.receive(events),
      (error) => {
        this.healthy = false;
        this.lastError = error.message;
      },
      { ignore: ignoredFolders(), watchesDir: (rel) => this.watchesDir(rel) },
    );
    this.healthy = true;
    this.burstsSeen = this.subscription.bursts?.() ?? 0;
    // The scope the backend consulted while subscribing was loaded before there was a
    // subscription to poll for: load it again, so its control files are polled from now on.
    this.scope = undefined;
    this.refreshScope();
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    this.healthy = false;
    for (const [path, listener] of this.polled) unwatchFile(path, listener);
    this.polled.clear();
    this.polledStats.clear();
    for (const seen of this.cookies.values()) seen();
    this.retireCookie();
    await subscription?.unsubscribe();
  }

  /**
   * Resolves true once every event up to this call has been delivered, false when that could not
   * be shown within `timeoutMs` (or the watcher is not running). Watchman's synchronization
   * cookie: a file written now into a watched folder comes back as an event after every earlier
   * one, because events are delivered in the order they happened. Any cookie written after this
   * call proves it, so calls that arrive while one is out share the next one: a busy server
   * writes one cookie per round trip, not one per request.
   */
  syncToNow(timeoutMs = COOKIE_TIMEOUT_MS): Promise<boolean> {
    if (!this.subscription || !this.healthy) return Promise.resolve(false);
    if (!this.cookieOut) return this.sendCookie(timeoutMs);
    this.cookieNext ??= this.cookieOut.then(() => {
      this.cookieNext = undefined;
      return this.subscription && this.healthy ? this.sendCookie(timeoutMs) : false;
    });
    return this.cookieNext;
  }

  /**
   * Send a cookie and wait for it to come back. The cookie is one file per watcher, kept open:
   * its first round creates it (the creation is the event), every later round writes a byte to
   * it (one modify event), so a busy server's rounds cost one write each, not a create, a close
   * and a removal of a file in the index's folder. One round is out at a time, so each event of
   * the file answers the round that caused it. A round that does not come back (its folder was
   * removed, say) retires the file: a late event of it can never answer a later round.
   */
  private sendCookie(timeoutMs: number): Promise<boolean> {
    const out = (async (): Promise<boolean> => {
      let resolveSeen!: (arrived: boolean) => void;
      const seen = new Promise<boolean>((resolve) => {
        resolveSeen = resolve;
      });
      let cookie = this.cookie;
      if (cookie) {
        this.cookies.set(cookie.name, () => resolveSeen(true));
        if (!touchOpen(cookie.fd)) {
          this.retireCookie();
          return false;
        }
      } else {
        const name = `${COOKIE_PREFIX}${process.pid}-${++this.cookieSeq}`;
        this.cookies.set(name, () => resolveSeen(true));
        const fd = await createOpen(join(this.root, DATA_DIR_NAME, name));
        if (fd === undefined) {
          this.cookies.delete(name);
          return false; // no .repodex/ to write into (removed by hand): stats decide
        }
        cookie = this.cookie = { name, fd };
        if (!this.subscription) {
          this.retireCookie(); // stopped while the file was being made
          return false;
        }
      }
      // Timed from the write: creating the file may wait behind a sync's reads for the I/O threads.
      const timer = setTimeout(() => resolveSeen(false), timeoutMs);
      const arrived = await seen;
      clearTimeout(timer);
      this.cookies.delete(cookie.name);
      if (!arrived) this.retireCookie();
      return arrived && this.healthy;
    })();
    this.cookieOut = out;
    void out.finally(() => {
      if (this.cookieOut === out) this.cookieOut = undefined;
    });
    return out;
  }

  /** Close and remove the cookie file (off this thread); the next round makes a new one under a new name. */
  private retireCookie(): void {
    const cookie = this.cookie;
    if (!cookie) return;
    this.cookie = undefined;
    this.cookies.delete(cookie.name);
    close(cookie.fd, () => unlink(join(this.root, DATA_DIR_NAME, cookie.name), () => undefined));
  }

  /** Remove cookies left by processes that were killed before they could. */
  private sweepCookies(): void {
    const dir = join(this.root, DATA_DIR_NAME);
    for (const name of listDirOrEmpty(dir, 'any')) {
      const pid = COOKIE_NAME.exec(name)?.[1];
      if (pid !== undefined && !processExists(Number(pid))) rmSync(join(dir, name), { force: true });
    }
  }

  /**
   * True when a flood of events arrived since the last call (see FLOOD_EVENTS), or the event queue
   * this watcher shares with the process's other watchers may have overflowed meanwhile (a flood
   * in another repository); resets both.
   */
  takeFlood(): boolean {
    const bursts = this.subscription?.bursts?.() ?? 0;
    const flood = this.rawEvents > FLOOD_EVENTS || bursts !== this.burstsSeen;
    this.rawEvents = 0;
    this.burstsSeen = bursts;
    return flood;
  }

  /** Which folders a per-folder backend watches: the ones the walk enters, and `.repodex/` itself (its config and the cookies). */
  private watchesDir(rel: string): boolean {
    if (rel === '' || rel === DATA_DIR_NAME) return true;
    if (rel.startsWith(`${DATA_DIR_NAME}/`)) return false;
    try {
      return this.currentScope().includesDir(rel);
    } catch {
      // Rules that cannot be loaded: watch all but the built-in skip folders; the sync says what is wrong.
      return !rel.split('/').some((name) => SKIP_DIRS.has(name));
    }
  }

  /** Poll the scope's control files the watcher cannot see (under `.git/` or outside the root), and only those. */
  private pollControls(scope: RepoScope): void {
    if (!this.subscription) return;
    const wanted = new Set(scope.rootControls.filter((control) => isOutsideRoot(control.path) || control.path.startsWith('.git/')).map((control) => control.absolute));
    for (const [path, listener] of this.polled) {
      if (wanted.has(path)) continue;
      unwatchFile(path, listener);
      this.polled.delete(path);
      this.polledStats.delete(path);
    }
    for (const path of wanted) {
      if (this.polled.has(path)) continue;
      this.polledStats.set(path, statIfExists(path));
      const listener = (current: Stats, previous: Stats): void => {
        if (current.size === previous.size && current.mtimeMs === previous.mtimeMs && current.ctimeMs === previous.ctimeMs) return;
        const seen = this.polledStats.get(path);
        // Already counted by a request's own look (controlsChanged)?
        if (seen && seen.size === current.size && seen.mtimeMs === current.mtimeMs && seen.ctimeMs === current.ctimeMs) return;
        this.polledStats.set(path, current.nlink === 0 && current.mtimeMs === 0 ? undefined : current);
        this.rulesChanged();
        this.count(1);
      };
      // Not persistent: polling never keeps a process alive on its own.
      watchFile(path, { interval: CONTROL_POLL_MS, persistent: false }, listener);
      this.polled.set(path, listener);
    }
  }

  /**
   * True when a control file the watcher cannot see (polled once a second) has changed since it
   * was last polled: stat-ed now, so a request does not wait for the next poll. Counts the change.
   */
  controlsChanged(): boolean {
    let changed = false;
    for (const [path, seen] of this.polledStats) {
      const now = statIfExists(path);
      const same = now ? seen !== undefined && now.size === seen.size && now.mtimeMs === seen.mtimeMs && now.ctimeMs === seen.ctimeMs : seen === undefined;
      if (same) continue;
      this.polledStats.set(path, now);
      changed = true;
    }
    if (changed) {
      this.rulesChanged();
      this.count(1);
    }
    return changed;
  }

  /** True while events are arriving as they should (a backend error turns it off). */
  get isHealthy(): boolean {
    return this.healthy;
  }

  /** Why watching stopped working, if it did. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** Relevant changes not yet settled by a sync. */
  get pending(): number {
    return this.seq - this.settled;
  }

  /** A mark to settle later: events up to now. */
  mark(): number {
    return this.seq;
  }

  /** A sync that started at `mark` has committed (or stats proved the tree matched then): those events are in the index. */
  settle(mark: number): void {
    this.settled = Math.max(this.settled, mark);
  }

  /** Call `listener` whenever relevant changes arrive. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private receive(events: readonly WatchEvent[]): void {
    let relevant = 0;
    for (const event of events) {
      const cookie = this.cookieOf(event.path);
      if (cookie !== undefined) {
        // Only the round's own write (or the file's creation) answers it: the file's removal, by
        // someone removing .repodex/ say, happened before the write and proves nothing after it.
        if (event.type !== 'delete') this.cookies.get(cookie)?.();
        continue;
      }
      this.rawEvents++;
      if (this.matters(event.path)) relevant++;
    }
    this.count(relevant);
  }

  /** The cookie name an event's path is, or undefined. */
  private cookieOf(absolute: string): string | undefined {
    const name = basename(absolute);
    return name.startsWith(COOKIE_PREFIX) && basename(dirname(absolute)) === DATA_DIR_NAME ? name : undefined;
  }

  private count(relevant: number): void {
    if (relevant === 0) return;
    this.seq += relevant;
    for (const listener of this.listeners) listener();
  }

  /** The rules changed: decide later events with the new ones, and watch the folders they now include. */
  private rulesChanged(): void {
    this.scope = undefined;
    this.refreshScope();
    this.subscription?.rescan?.();
  }

  /** Whether a change at `absolute` can change the index. */
  private matters(absolute: string): boolean {
    const rel = relative(this.root, absolute).split(sep).join('/');
    if (rel === '' || rel.startsWith('..')) return false;
    if (rel.startsWith(`${DATA_DIR_NAME}/`)) {
      // Our own index files change on every sync; only the user's rules matter.
      const userRules = rel === `${DATA_DIR_NAME}/config.json` || rel === `${DATA_DIR_NAME}/ignore`;
      if (userRules) this.rulesChanged();
      return userRules;
    }
    const scope = this.currentScope();
    if (scope.isControl(rel)) {
      this.rulesChanged();
      return true;
    }
    // What is there now decides (a symlink is never followed); a path that is gone mattered if it could have been indexed.
    const stat = lstatIfExists(absolute);
    if (stat?.isFile()) return scope.includesFile(rel);
    if (stat?.isDirectory()) return scope.includesDir(rel);
    if (stat) return false;
    return scope.includesFile(rel) || scope.includesDir(rel);
  }

  /**
   * Load the scope now, so the control files it names are polled. Rules that cannot be loaded (a
   * broken config or ignore file) are left for the next sync to report.
   */
  private refreshScope(): void {
    try {
      this.currentScope();
    } catch {
      // the sync this change triggers says what is wrong
    }
  }

  private currentScope(): RepoScope {
    if (!this.scope) {
      const ctx = loadContext(this.root);
      this.scope = new RepoScope(this.root, ctx.loaded.config, ctx.denylist);
      this.pollControls(this.scope);
    }
    return this.scope;
  }
}

/**
 * A probe for servers: a request on an unchanged tree costs no walk. Before answering, it confirms
 * that the watcher has delivered every event up to now (a cookie, see RepoWatcher.syncToNow), so
 * a change made an instant before the request is never missed; with no relevant event since the
 * generation it answers from was proved to match the tree, that generation is fresh, and with no
 * event since the last walk of that generation, that walk's finding holds. Otherwise
 * stats decide, exactly as `status` does (so the two never disagree): after any relevant event
 * (a change reverted, or one another process's generation already holds, is then settled instead
 * of reported), when the generation answered from is not the one proved (another process
 * committed one, or a sync of this process committed while the request was being checked), on the
 * first request (changes made before the watcher started), when the cookie does not come back in
 * time, after a flood of events (the kernel may have dropped some), when a control file the
 * watcher cannot see changed, and whenever the watcher is broken.
 */
export class WatchProbe implements ChangeProbe {
  /** The generation proved to match the tree as of the last settled event (by stats, or by this process's sync). */
  private provenGeneration: number | undefined;
  /**
   * What the last walk found, as of the watcher's mark and the generation it compared: while
   * changes wait for a background re-index, every request would otherwise walk the whole tree
   * again to find the same changes (a tenth of a second each on kafka's 6,000 files).
   */
  private walked: { readonly mark: number; readonly generation: number; readonly found: TreeCheck } | undefined;
  /** Set when a WatchLoop re-indexes changes as they happen (`--watch`). */
  refreshesInBackground = false;

  constructor(readonly watcher: RepoWatcher) {}

  async check(ctx: RepoContext, view: CatalogView): Promise<TreeCheck> {
    const generation = view.meta.generation;
    // In this order: the cookie first, so the pending count and the control files are read after every event up to now.
    const caughtUp = this.watcher.isHealthy && (await this.watcher.syncToNow()) && !this.watcher.takeFlood() && !this.watcher.controlsChanged();
    if (caughtUp && this.watcher.pending === 0 && this.provenGeneration === generation) return { reasons: [], recordOutdated: false };
    const mark = this.watcher.mark();
    // Nothing happened since the last walk of this generation: the tree is as that walk found it.
    if (caughtUp && this.walked?.mark === mark && this.walked.generation === generation) return this.walked.found;
    const found = await statProbe.check(ctx, view);
    if (found.reasons.length === 0 && this.watcher.isHealthy) {
      // The tree matched `view` after every event counted so far: they are all in it.
      this.watcher.settle(mark);
      this.provenGeneration = generation;
    }
    this.walked = caughtUp ? { mark, generation, found } : undefined;
    return found;
  }

  syncStarting(): number {
    return this.watcher.mark();
  }

  synced(mark: number, generation: number): void {
    this.watcher.settle(mark);
    this.provenGeneration = this.watcher.isHealthy ? generation : undefined;
  }
}

/** What a watch loop reports. */
export interface WatchLoopEvents {
  /** A sync finished (also when it found nothing to do). */
  onSync?(summary: SyncSummary): void;
  /** A sync failed; the loop keeps watching and tries again on the next change. */
  onError?(error: unknown): void;
}

/** A trailing debounce never waits longer than this many debounce periods while changes keep coming. */
const MAX_WAIT_PERIODS = 10;

/**
 * At most this many relevant events since the last sync are a save or two (an editor's atomic
 * save is three or four: a temporary file written, then renamed); more are a flood.
 */
const FEW_EVENTS = 16;

/** A save or two waits this share of the debounce period: an edit is searchable within a fraction of a second. */
const FEW_EVENTS_SHARE = 0.1;

/**
 * Re-indexes a repository as it changes (seed 001 §2.7): relevant watcher events start a timer
 * that restarts with every further event. The quiet period adapts to what is changing: a save or
 * two (at most FEW_EVENTS events) re-indexes once events have been quiet for a tenth of
 * `debounceMs`; a flood (a branch checkout, a formatter run over the tree) waits the whole
 * `debounceMs`, so it becomes one sync (and never waits more than ten periods). One sync runs
 * at a time; changes that arrive while it runs are picked up by the next one. Each sync reads
 * only what changed (the engine's incremental sync).
 */
export class WatchLoop {
  private timer: NodeJS.Timeout | undefined;
  private firstPending = 0;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly unlisten: () => void;
  private readonly controller = new AbortController();

  constructor(
    private readonly engine: Engine,
    private readonly watcher: RepoWatcher,
    private readonly debounceMs: number,
    private readonly events: WatchLoopEvents = {},
    stop?: AbortSignal,
  ) {
    this.unlisten = watcher.onChange(() => this.schedule());
    // Stopping from outside (a signal) interrupts a running sync at once, even the first one.
    stop?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** True while a sync started by this loop runs. */
  get syncing(): boolean {
    return this.running !== undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    const now = Date.now();
    if (this.timer === undefined) this.firstPending = now;
    else clearTimeout(this.timer);
    const waited = now - this.firstPending;
    const quiet = this.watcher.pending <= FEW_EVENTS ? Math.round(this.debounceMs * FEW_EVENTS_SHARE) : this.debounceMs;
    const delay = Math.max(0, Math.min(quiet, this.debounceMs * MAX_WAIT_PERIODS - waited));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.fire();
    }, delay);
  }

  private async fire(): Promise<void> {
    if (this.running || this.stopped) return; // the running sync reschedules when it ends
    this.running = (async () => {
      try {
        const summary = await this.engine.sync({ signal: this.controller.signal });
        this.events.onSync?.(summary);
      } catch (error) {
        if (!this.stopped) this.events.onError?.(error);
      }
    })();
    await this.running;
    this.running = undefined;
    if (!this.stopped && this.watcher.pending > 0) this.schedule();
  }

  /** Run one sync now (at start-up), then keep following changes. */
  async syncNow(): Promise<void> {
    await this.fire();
  }

  /** Stop: no new syncs; a running one is interrupted (nothing is committed) and waited for. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.controller.abort();
    await this.running;
  }
}
