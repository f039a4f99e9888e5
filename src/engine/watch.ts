import type ParcelWatcher from '@parcel/watcher';
import { type Stats, unwatchFile, watchFile } from 'node:fs';
import { relative, sep } from 'node:path';
import { RepodexError, errorMessage } from '../core/errors.js';
import { DATA_DIR_NAME } from '../core/paths.js';
import { SKIP_DIRS } from '../scan/ignore-rules.js';
import { RepoScope, isOutsideRoot } from '../scan/scope.js';
import type { IndexView } from '../store/backend.js';
import type { Engine } from './engine.js';
import type { SyncSummary } from './sync.js';
import { type RepoContext, loadContext } from './context.js';
import { type ChangeProbe, statProbe } from './probe.js';
import { lstatIfExists } from '../core/stat.js';

/** The events a watcher backend delivers: paths (absolute) created, updated or deleted. */
export interface WatchEvent {
  readonly type: 'create' | 'update' | 'delete';
  readonly path: string;
}

/** A live subscription to file events under a root. */
export interface Subscription {
  unsubscribe(): Promise<void>;
}

/** Starts subscriptions (the @parcel/watcher backend by default; tests may pass another). */
export type Subscribe = (root: string, onEvents: (events: readonly WatchEvent[]) => void, onError: (error: Error) => void, ignore: readonly string[]) => Promise<Subscription>;

/** @parcel/watcher: native recursive watching (inotify, FSEvents, ReadDirectoryChangesW); never follows symlinks. */
export const parcelSubscribe: Subscribe = async (root, onEvents, onError, ignore) => {
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
      { ignore: [...ignore] },
    );
  } catch (error) {
    throw new RepodexError('WATCH_UNAVAILABLE', `cannot watch ${root}: ${errorMessage(error)} (on Linux, raise fs.inotify.max_user_watches)`);
  }
};

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

/**
 * Watches a repository for changes that matter to its index: files the scope includes, folders
 * it walks, ignore files, `.repodex/config.json` and `.repodex/ignore`, and (by polling) git's
 * exclude and config files. Everything else (build output, ignored paths, the index's own files)
 * is dropped here. Relevant events are counted with a sequence number, so a sync can settle
 * exactly the events it saw.
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

  constructor(
    private readonly root: string,
    private readonly subscribe: Subscribe = parcelSubscribe,
  ) {}

  /** Start watching; throws WATCH_UNAVAILABLE when the platform cannot. */
  async start(): Promise<void> {
    this.subscription = await this.subscribe(
      this.root,
      (events) => this.receive(events),
      (error) => {
        this.healthy = false;
        this.lastError = error.message;
      },
      ignoredFolders(),
    );
    this.healthy = true;
    this.refreshScope();
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    this.healthy = false;
    for (const [path, listener] of this.polled) unwatchFile(path, listener);
    this.polled.clear();
    await subscription?.unsubscribe();
  }

  /** Poll the scope's control files the watcher cannot see (under `.git/` or outside the root), and only those. */
  private pollControls(scope: RepoScope): void {
    if (!this.subscription) return;
    const wanted = new Set(scope.rootControls.filter((control) => isOutsideRoot(control.path) || control.path.startsWith('.git/')).map((control) => control.absolute));
    for (const [path, listener] of this.polled) {
      if (wanted.has(path)) continue;
      unwatchFile(path, listener);
      this.polled.delete(path);
    }
    for (const path of wanted) {
      if (this.polled.has(path)) continue;
      const listener = (current: Stats, previous: Stats): void => {
        if (current.size === previous.size && current.mtimeMs === previous.mtimeMs && current.ctimeMs === previous.ctimeMs) return;
        this.scope = undefined; // the rules changed: decide later events with the new ones
        this.count(1);
        this.refreshScope();
      };
      // Not persistent: polling never keeps a process alive on its own.
      watchFile(path, { interval: CONTROL_POLL_MS, persistent: false }, listener);
      this.polled.set(path, listener);
    }
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

  /** A sync that started at `mark` has committed: those events are in the index. */
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
    for (const event of events) if (this.matters(event.path)) relevant++;
    this.count(relevant);
  }

  private count(relevant: number): void {
    if (relevant === 0) return;
    this.seq += relevant;
    for (const listener of this.listeners) listener();
  }

  /** Whether a change at `absolute` can change the index. */
  private matters(absolute: string): boolean {
    const rel = relative(this.root, absolute).split(sep).join('/');
    if (rel === '' || rel.startsWith('..')) return false;
    if (rel.startsWith(`${DATA_DIR_NAME}/`)) {
      // Our own index files change on every sync; only the user's rules matter.
      const userRules = rel === `${DATA_DIR_NAME}/config.json` || rel === `${DATA_DIR_NAME}/ignore`;
      if (userRules) this.scope = undefined;
      return userRules;
    }
    const scope = this.currentScope();
    if (scope.isControl(rel)) {
      this.scope = undefined; // the rules changed: decide later events with the new ones
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

/** How long a check by stats may take before a server trusts its watcher instead (per request). */
const EXACT_CHECK_BUDGET_MS = 2;

/**
 * A probe for servers: a watcher's events say whether anything changed, so a request costs no
 * walk. Where proving it from stats is cheap (small trees), requests still do, so a change made
 * an instant before a request is never missed; on large trees a change is seen once its event
 * arrives (tens of milliseconds). Without a healthy watcher every request checks stats.
 */
export class WatchProbe implements ChangeProbe {
  /** What the last check by stats took (undefined until one ran). */
  private statCost: number | undefined;
  /** Set when a WatchLoop re-indexes changes as they happen (`--watch`). */
  refreshesInBackground = false;

  constructor(readonly watcher: RepoWatcher) {}

  async check(ctx: RepoContext, view: IndexView): Promise<string[]> {
    const healthy = this.watcher.isHealthy;
    if (healthy && this.watcher.pending > 0) return [`${this.watcher.pending} change(s) seen by the file watcher since the last sync`];
    if (healthy && this.statCost !== undefined && this.statCost > EXACT_CHECK_BUDGET_MS) return [];
    const started = performance.now();
    const reasons = await statProbe.check(ctx, view);
    this.statCost = performance.now() - started;
    return reasons;
  }

  syncStarting(): number {
    return this.watcher.mark();
  }

  synced(mark: number): void {
    this.watcher.settle(mark);
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
 * Re-indexes a repository as it changes (seed 001 §2.7): relevant watcher events start a timer
 * that restarts with every further event, so a flood (a branch checkout) becomes one sync once
 * events have been quiet for `debounceMs` (and never waits more than ten periods). One sync runs
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
    const delay = Math.max(0, Math.min(this.debounceMs, this.debounceMs * MAX_WAIT_PERIODS - waited));
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
