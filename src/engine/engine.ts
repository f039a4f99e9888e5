import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defaultConfigText } from '../core/config.js';
import { RepodexError, isRepodexError } from '../core/errors.js';
import { readGitHead } from '../core/git.js';
import { isLockHeld } from '../index/lock.js';
import { DATA_DIR_NAME, type RepoPaths, repoPaths } from '../core/paths.js';
import type { Language } from '../scan/language.js';
import type { RankingProfile } from '../search/ranking.js';
import { DEFAULT_TOP_K, type LexicalMode, MAX_TOP_K, type SearchHit, search } from '../search/search.js';
import type { IndexStore, IndexView } from '../store/backend.js';
import { createFileAtomic } from '../core/fs-atomic.js';
import { type RepoContext, loadContext } from './context.js';
import { type FetchReport, MAX_FETCH_LINES, fetchChunks } from './fetch.js';
import { type FilesReport, listFiles } from './files.js';
import { type OpenReport, openFile } from './open.js';
import { type OutlineReport, outlineFile } from './outline.js';
import { type StatusReport, computeStatus, indexStaleness } from './status.js';
import { type SyncEvent, type SyncSummary, runSync } from './sync.js';

/** The default `.repodex/ignore`: gitignore syntax, applied on top of `.gitignore`. */
export const DEFAULT_IGNORE_TEXT = `# Paths repodex should not index, in .gitignore syntax (on top of .gitignore files).
# Examples:
# fixtures/large/
# *.generated.ts
`;

/** The answer to `init`. */
export interface InitReport {
  readonly root: string;
  readonly created: string[];
  readonly existing: string[];
}

/** The answer to `search`. */
export interface SearchReport {
  readonly query: string;
  readonly mode: LexicalMode;
  /** The query as the index understood it (after tokenizing and stopwords). */
  readonly terms: string[];
  readonly top_k: number;
  readonly results: (SearchHit & { readonly stale?: true })[];
  /** Chunks that matched at least one term (after filters). */
  readonly matched: number;
  readonly generation: number;
  /** Present when this request had to build or refresh the index first. */
  readonly synced?: SyncSummary;
  readonly warnings: string[];
}

/** Search options after validation. */
export interface SearchOptions {
  readonly q: string;
  readonly top_k?: number | undefined;
  readonly mode?: LexicalMode | undefined;
  readonly glob?: string | undefined;
  readonly lang?: Language | undefined;
}

/** How an engine is allowed to keep its index fresh. */
export interface EngineOptions {
  /** Build the index automatically when a search finds none (SPEC: `REPODEX_INDEXING=0` turns it off). */
  readonly autoIndex: boolean;
  /** bm25 structure signals (default: the measured profile). */
  readonly ranking?: RankingProfile;
}

interface CachedView {
  readonly view: IndexView;
  readonly metaStamp: string;
}

/**
 * The one facade every front end calls: init, status, sync, search, fetch, clean. It owns the
 * loaded index (loaded once, reused, reloaded when a sync — ours or another process's — commits).
 */
export class Engine {
  private cached: CachedView | undefined;
  /** How many times index artifacts were loaded from the store (observable for tests and benchmarks). */
  loads = 0;

  private readonly paths: RepoPaths;

  constructor(
    readonly root: string,
    private readonly store: IndexStore,
    private readonly options: EngineOptions,
  ) {
    this.paths = repoPaths(root);
  }

  private context(): RepoContext {
    return loadContext(this.root);
  }

  /** Create `.repodex/` with the default config and ignore file; never overwrites. */
  init(): InitReport {
    const dataDir = this.paths.dataDir;
    mkdirSync(dataDir, { recursive: true });
    const created: string[] = [];
    const existing: string[] = [];
    const files: [string, string][] = [
      ['config.json', defaultConfigText()],
      ['ignore', DEFAULT_IGNORE_TEXT],
    ];
    for (const [name, text] of files) {
      const path = join(dataDir, name);
      const rel = `${DATA_DIR_NAME}/${name}`;
      // Never overwrite, and never leave a half-written config behind if killed mid-write.
      if (createFileAtomic(path, text, dataDir)) created.push(rel);
      else existing.push(rel);
    }
    return { root: this.root, created, existing };
  }

  async status(): Promise<StatusReport> {
    return computeStatus(this.context(), this.store);
  }

  /** Run a sync, reporting progress to `onEvent`; returns its summary. */
  async sync(options: { force?: boolean | undefined } = {}, onEvent?: (event: SyncEvent) => void): Promise<SyncSummary> {
    let ctx = this.context();
    if (!ctx.loaded.exists) {
      this.init();
      ctx = this.context(); // the config hash is now that of the file init wrote
    }
    const lock = this.store.lock();
    try {
      let summary: SyncSummary | undefined;
      for await (const event of runSync(ctx, this.store, { force: options.force })) {
        onEvent?.(event);
        if (event.type === 'done') summary = event.summary;
      }
      if (!summary) throw new RepodexError('INTERNAL', 'sync ended without a summary');
      this.cached = undefined;
      return summary;
    } finally {
      lock.release();
    }
  }

  /** The loaded index, reloading when meta.json changed (a sync committed) since it was loaded. */
  async view(): Promise<IndexView> {
    const stamp = metaStamp(this.paths.meta);
    if (this.cached && this.cached.metaStamp === stamp) return this.cached.view;
    if (stamp === '') throw new RepodexError('INDEX_MISSING');
    const view = await this.store.open();
    this.loads++;
    this.cached = { view, metaStamp: stamp };
    return view;
  }

  /**
   * Why the index is stale ([] when fresh), checked against the loaded view so a one-shot search
   * reads meta.json and the artifacts once. Meant for callers about to search.
   */
  async staleness(): Promise<string[]> {
    const ctx = this.context();
    const view = await this.usableView();
    if (!view) return ['no readable index'];
    return indexStaleness(ctx, view.meta, await view.catalog(), readGitHead(this.root)).reasons;
  }

  /** True while another process holds the sync lock. */
  syncRunning(): boolean {
    return isLockHeld(this.paths.lock);
  }

  /** Whether this engine may build or refresh the index on its own. */
  get autoIndex(): boolean {
    return this.options.autoIndex;
  }

  /** The loaded index, or undefined when there is none this version can read (missing, older format, damaged). */
  async usableView(): Promise<IndexView | undefined> {
    try {
      return await this.view();
    } catch (error) {
      if (isRepodexError(error) && (error.code === 'INDEX_MISSING' || error.code === 'INDEX_INCOMPATIBLE' || error.code === 'INDEX_CORRUPT')) return undefined;
      throw error;
    }
  }

  async search(options: SearchOptions, onEvent?: (event: SyncEvent) => void, refresh?: { synced?: SyncSummary; warnings?: string[] }): Promise<SearchReport> {
    let synced = refresh?.synced;
    if (!(await this.usableView())) {
      // No index, or one this version cannot read: build it, unless automatic indexing is off.
      if (!this.options.autoIndex) await this.view(); // throws the reason (missing, incompatible, damaged)
      synced = await this.sync({ force: true }, onEvent);
    }
    const view = await this.view();
    // The caps hold for every caller, not only those that came through the protocol schemas.
    const topK = Math.min(options.top_k ?? DEFAULT_TOP_K, MAX_TOP_K);
    const mode = options.mode ?? 'bm25';
    const outcome = await search(view, { q: options.q, topK, mode, glob: options.glob, lang: options.lang, ranking: this.options.ranking });
    const warnings = [...(refresh?.warnings ?? [])];
    if (outcome.terms.length === 0) warnings.push('the query has no searchable terms (only stopwords or symbols): use English words or identifiers');
    const results = this.markStale(view, outcome.hits);
    if (results.some((hit) => hit.stale)) warnings.push('some result files changed since the last sync: run `repodex sync` for exact line ranges');
    return {
      query: options.q,
      mode,
      terms: outcome.terms,
      top_k: topK,
      results,
      matched: outcome.matched,
      generation: view.meta.generation,
      ...(synced ? { synced } : {}),
      warnings,
    };
  }

  /**
   * Load the index and run a few searches over its own terms, so a long-running server answers
   * its first real queries with compiled code instead of paying JIT warm-up on them. Bounded by
   * `budgetMs` of work; yields to the event loop after every search, so requests that arrive
   * meanwhile are answered between warm-up searches, not after them. Does nothing without a
   * readable index.
   */
  async warmUp(budgetMs = 150): Promise<void> {
    const view = await this.usableView();
    if (!view) return;
    const terms = view.sampleTerms(96);
    let spent = 0;
    for (let i = 0; i < terms.length && spent < budgetMs; i++) {
      const q = [terms[i], terms[(i * 7 + 3) % terms.length], terms[(i * 13 + 5) % terms.length]].slice(0, 1 + (i % 3)).join(' ');
      const started = performance.now();
      await search(view, { q, topK: DEFAULT_TOP_K, mode: i % 4 === 3 ? 'idf' : 'bm25', ranking: this.options.ranking });
      spent += performance.now() - started;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Flag results whose file changed on disk since indexing (a few stats: cheap enough for every search). */
  private markStale(view: IndexView, hits: SearchHit[]): SearchReport['results'] {
    const changed = new Map<string, boolean>();
    return hits.map((hit) => {
      let isChanged = changed.get(hit.path);
      if (isChanged === undefined) {
        const fileId = view.findFile(hit.path);
        const record = fileId >= 0 ? view.fileRecord(fileId) : undefined;
        const stat = statSync(join(this.root, hit.path), { throwIfNoEntry: false });
        isChanged = !record || !stat || stat.size !== record.size || stat.mtimeMs !== record.mtimeMs;
        changed.set(hit.path, isChanged);
      }
      return isChanged ? { ...hit, stale: true as const } : hit;
    });
  }

  async fetch(ids: readonly number[], maxLines: number = MAX_FETCH_LINES): Promise<FetchReport> {
    const view = await this.view();
    return fetchChunks(this.context(), view, ids, Math.max(1, Math.min(maxLines, MAX_FETCH_LINES)));
  }

  /** A bounded line range of any file under the root (no index needed). */
  open(path: string, start?: number, end?: number): OpenReport {
    return openFile(this.context(), path, start, end);
  }

  /** Declarations of one file: from the index when unchanged, else parsed now (no index needed). */
  async outline(path: string): Promise<OutlineReport> {
    return outlineFile(this.context(), await this.usableView(), path);
  }

  /** Catalogued files (indexed and skipped), optionally filtered by a glob. */
  async files(glob: string | undefined, limit: number): Promise<FilesReport> {
    return listFiles(await this.view(), glob, limit);
  }

  /** Remove index artifacts (keeps config and ignore); waits for no one: refuses while a sync holds the lock. */
  clean(): { root: string; removed: string[] } {
    const lock = this.store.lock();
    try {
      const removed = this.store.clean();
      this.cached = undefined;
      return { root: this.root, removed };
    } finally {
      lock.release();
    }
  }
}

function metaStamp(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false, bigint: true });
  return stat ? `${stat.ino}:${stat.mtimeNs}:${stat.size}` : '';
}
