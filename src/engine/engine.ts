import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigSchema, type EmbeddingProvider, defaultConfigText } from '../core/config.js';
import type { Bundler } from '../bundle/bundler.js';
import { deterministicBundler } from '../bundle/deterministic.js';
import { bundleMarkdown } from '../bundle/markdown.js';
import type { BundleReport } from '../bundle/report.js';
import { RepodexError, errorMessage, isRepodexError } from '../core/errors.js';
import { createFileAtomic, writeFileAtomic } from '../core/fs-atomic.js';
import type { LimitOverrides, Limits } from '../core/limits.js';
import { hasAdapter } from '../lang/index.js';
import { REDACTION_MARKER, redactSecrets } from '../safety/secrets.js';
import { LANGUAGES } from '../scan/language.js';
import { type AuditReport, CallLog, MAX_AUDIT_LIMIT, readAudit } from './audit.js';
import { readLimitsOf, readRepoFile, scannedCleanHash } from './read-file.js';
import { FileMemo } from '../core/file-memo.js';
import { type GitHead, readGitHead } from '../core/git.js';
import { DATA_DIR_NAME, type RepoPaths, repoPaths } from '../core/paths.js';
import { FEATURE_VERSION } from '../core/version.js';
import type { Language } from '../scan/language.js';
import type { RankingProfile } from '../search/ranking.js';
import { DEFAULT_TOP_K, type SearchFields, type SearchMode, type SemanticQuery, filesAllowed, search } from '../search/search.js';
import { ANN_FROM, type Embedder, isLearning } from '../vector/embedder.js';
import { Analytics } from './analytics.js';
import { type EmbedSummary, tooSmallToEmbed } from './embed.js';
import { type CatalogView, type ChunkVectors, type HeldLock, type IndexMeta, type IndexStore, type IndexView, isIndexView } from '../store/backend.js';
import { type RepoContext, loadContext } from './context.js';
import { type FetchedChunks, MAX_FETCH_LINES, fetchChunks } from './fetch.js';
import { type FileList, listBlocked, listFiles } from './files.js';
import { type OpenReport, openFile } from './open.js';
import { type PresentedHit, presentHits } from './present.js';
import { type OutlineReport, outlineFile } from './outline.js';
import type { OutlineParser } from './outline-thread.js';
import { type ChangeProbe, type TreeCheck, statProbe } from './probe.js';
import { type Freshness, type SemanticStatus, type StatusReport, computeStatus, ruleStaleness } from './status.js';
import type { FirstAnswer, SyncEvent, SyncSummary } from './sync.js';
import { queryTerms } from '../text/tokenizer.js';
import { type EmbedderFactory, type SyncRunner, inProcessRunner } from './sync-runner.js';
import { type VerifyReport, verifyIndex } from './verify.js';

/** The default `.repodex/ignore`: gitignore syntax, applied on top of `.gitignore`. */
export const DEFAULT_IGNORE_TEXT = `# Paths repodex should not index, in .gitignore syntax (on top of .gitignore files).
# Examples:
# fixtures/large/
# *.generated.ts
`;

/** `.repodex/.gitignore`: the index never shows in `git status` and is never swept into a commit or a stash. */
export const DATA_GITIGNORE_TEXT = '*\n';

/** The answer to `init`. */
export interface InitReport {
  readonly root: string;
  readonly created: string[];
  readonly existing: string[];
}

/** The answer to `search`. */
export interface SearchReport {
  readonly query: string;
  /** The mode that ranked the results (`bm25` when `vector`/`hybrid` had no vectors to use: see `warnings`). */
  readonly mode: SearchMode;
  /** The query as the index understood it (after tokenizing and stopwords). */
  readonly terms: string[];
  readonly top_k: number;
  readonly results: PresentedHit[];
  /** Chunks that matched at least one term (after filters). */
  readonly matched: number;
  readonly generation: number;
  readonly freshness: Freshness;
  /** Present when this request had to build or refresh the index first. */
  readonly synced?: SyncSummary;
  readonly warnings: string[];
}

/** The answer to `fetch`. */
export interface FetchReport extends FetchedChunks {
  /** The generation the chunks were resolved in. */
  readonly generation: number;
  readonly freshness: Freshness;
  readonly synced?: SyncSummary;
  readonly warnings: string[];
}

/** The answer to `files`. */
export interface FilesReport extends FileList {
  readonly generation: number;
  readonly freshness: Freshness;
  readonly synced?: SyncSummary;
  readonly warnings: string[];
}

/** The answer to `clean`. */
export interface CleanReport {
  readonly root: string;
  readonly removed: string[];
}

/** Search options after validation: the search request's fields. */
export type SearchOptions = SearchFields;

/**
 * A read a server may hand to another thread once its freshness check is done: it is answered
 * from the generation the check proved, or a newer one (`generation`; absent for an outline,
 * which needs no index).
 */
export type AnswerJob =
  | { readonly op: 'search'; readonly options: SearchOptions & { readonly mode: 'bm25' | 'idf' }; readonly generation: number; readonly treeMatches: boolean }
  | { readonly op: 'fetch'; readonly ids: readonly number[]; readonly maxLines: number; readonly generation: number }
  | { readonly op: 'outline'; readonly path: string };

/** What a search answers from its view, before the freshness check's part is added. */
export type SearchAnswer = Pick<SearchReport, 'terms' | 'top_k' | 'results' | 'matched' | 'generation' | 'warnings'>;

/** An answer and the generation it came from (null for an outline answered with no index). */
export type Answered<J extends AnswerJob> = {
  readonly data: J extends { op: 'search' } ? SearchAnswer : J extends { op: 'fetch' } ? FetchedChunks : OutlineReport;
  readonly generation: number | null;
};

/** Answers reads on other threads (a team server's answer threads: see `workerPool`). */
export interface Answerer {
  answer<J extends AnswerJob>(job: J): Promise<Answered<J>>;
}

/** How an engine keeps its index fresh. */
export interface EngineOptions {
  /** Build a missing index and refresh a stale one before answering (`REPODEX_INDEXING=0` turns it off; so does config `auto_index`). */
  readonly autoIndex: boolean;
  /** bm25 structure signals (default: the measured profile). */
  readonly ranking?: RankingProfile;
  /** How stale trees are detected (default: stats). */
  readonly probe?: ChangeProbe;
  /** Where syncs run (default: in this thread). */
  readonly runner?: SyncRunner;
  /** How long a sync waits for another process's sync before answering LOCKED (default 2 s). */
  readonly lockWaitMs?: number;
  /** Limits set by the front end (flags on `serve`), over the config's. */
  readonly limits?: LimitOverrides;
  /** How bundles are made (default: the deterministic bundler). */
  readonly bundler?: Bundler;
  /** Makes the embedder the config names (default: none, the index stays lexical). */
  readonly embedders?: EmbedderFactory;
  /**
   * Embed after every sync in the background, never making a request wait (servers). Otherwise an
   * explicit sync embeds before it returns and reads never embed (one-shot commands).
   */
  readonly embedInBackground?: boolean;
  /**
   * Where lexical searches, fetches and outlines are answered once the freshness check is done
   * (default: in this thread). A server hands them to other threads, so the thread that checks
   * freshness and talks to clients is not the one busy scoring.
   */
  readonly answerer?: Answerer;
  /**
   * Where an outline that needs a large file parsed is parsed (default: in this thread). A
   * server's answer thread hands it to a thread of its own and answers other requests meanwhile.
   */
  readonly outlineParser?: OutlineParser | undefined;
  /**
   * A first search on a repository of at least `minBytes` of files answers after about
   * `budgetMs` from the files holding its words, marked partial (see FirstAnswer), and
   * `continueInBackground` is called to index the rest (one-shot commands: a detached sync).
   */
  readonly firstAnswer?: { readonly budgetMs: number; readonly minBytes: number; readonly continueInBackground: () => void };
}

/** Bundle options after validation. */
export interface BundleOptions {
  readonly prompt: string;
  readonly max_files?: number | undefined;
  readonly max_lines?: number | undefined;
  readonly include_tests?: boolean | undefined;
}

/** How long a server spends answering its own searches before its first request (see `warmUp`). */
const WARM_UP_MS = 400;

/** How long a read with no index to answer from waits for another process's first build of it, and how often it looks. */
const FIRST_BUILD_WAIT_MS = 120_000;
const FIRST_BUILD_POLL_MS = 50;

/** Default and largest line budget of a bundle. */
export const DEFAULT_BUNDLE_LINES = 400;
export const MAX_BUNDLE_LINES = 4000;

/** The index a read is answered from (its catalog at least: see `wholeView`), and what keeping it fresh took. */
interface FreshView {
  readonly view: CatalogView;
  readonly synced: SyncSummary | undefined;
  readonly warnings: string[];
  readonly freshness: Freshness;
  /** The probe just checked the working tree and found it exactly as `view` indexed it. */
  readonly treeMatches?: true;
}

/**
 * The one facade every front end calls. It owns the loaded index (loaded once, reused, reloaded
 * when any process commits a generation) and the one freshness policy: every read (`search`,
 * `fetch`, `files`) first builds a missing index and refreshes a stale one — unless automatic
 * indexing is off, when it answers from what is there and says `stale` in `warnings`. An index
 * built with other rules is never served.
 */
export class Engine {
  /** The generation last opened: its catalog, or the whole view (see `isIndexView`). */
  private cached: { view: CatalogView; stamp: string } | undefined;
  private readonly paths: RepoPaths;
  private readonly probe: ChangeProbe;
  private readonly runner: SyncRunner;
  /** Syncs of this engine run one after another. */
  private syncing: Promise<unknown> = Promise.resolve();
  /** Syncs of this engine asked for and not yet finished (running or waiting their turn). */
  private syncsUnderway = 0;
  /** How far this engine's running sync or embedding run has come (servers show it), or undefined. */
  private progressNow: SyncProgress | undefined;
  private loadCount = 0;
  /** Config and safety rules, derived again only when config.json changes (a server asks on every request). */
  private readonly contextMemo: FileMemo<RepoContext>;
  /** git HEAD, read again only when a file it came from changes. */
  private readonly headMemo: FileMemo<GitHead | undefined>;
  /** The audit log (the store keeps it): every front end records its calls here. */
  readonly auditLog: CallLog;
  /** Query, hit and miss counts (seed 003), gathered here and added to the store's. */
  readonly analytics: Analytics;
  /** The embedder of the current config, made once per distinct `embeddings` setting. */
  private embedderMemo: { key: string; embedder: Promise<Embedder | undefined> } | undefined;
  /** The packed vectors of the loaded generation, for `vector` and `hybrid`. */
  private vectorsMemo: { view: IndexView; stamp: string; model: string; annFrom: number; vectors: ChunkVectors; damage: string[] } | undefined;
  /** The background embedding run (servers), and whether another was asked for while it ran. */
  private embedding: Promise<void> | undefined;
  private embedAgain = false;
  /** Why the last embedding run failed, until one succeeds. */
  private embedProblem: string | undefined;
  /** Why the last embedding run made no vectors though it did not fail (too few distinct terms to learn from). */
  private embedNote: string | undefined;

  constructor(
    readonly root: string,
    private readonly store: IndexStore,
    private readonly options: EngineOptions,
  ) {
    this.paths = repoPaths(root);
    this.probe = options.probe ?? statProbe;
    this.runner = options.runner ?? inProcessRunner(store);
    this.contextMemo = new FileMemo((consulted) => {
      consulted.push(this.paths.config);
      return loadContext(root, options.limits);
    });
    this.auditLog = new CallLog(store.control.audit);
    this.analytics = new Analytics(store.control.analytics);
    this.headMemo = new FileMemo((consulted) => readGitHead(root, consulted));
  }

  /** How far the sync or embedding run this engine runs has come, or undefined when it runs none. */
  get progress(): SyncProgress | undefined {
    return this.progressNow;
  }

  /** `onEvent`, also keeping the progress the event tells of (until `done` clears it). */
  private tracking(onEvent: ((event: SyncEvent) => void) | undefined): { onEvent: (event: SyncEvent) => void; done: () => void } {
    const started_at = new Date().toISOString();
    return {
      onEvent: (event) => {
        this.progressNow = progressOf(event, this.progressNow, started_at);
        onEvent?.(event);
      },
      done: () => (this.progressNow = undefined),
    };
  }

  /** How many times whole index generations were loaded (observable for tests and benchmarks; a catalog alone is not counted). */
  get loads(): number {
    return this.loadCount;
  }

  private context(): RepoContext {
    return this.contextMemo.get();
  }

  /** Automatic indexing: on unless REPODEX_INDEXING=0 or config `auto_index: false`. */
  private autoIndex(ctx: RepoContext): boolean {
    return this.options.autoIndex && ctx.loaded.config.auto_index;
  }

  /** Create `.repodex/` with the default config, ignore file and .gitignore; never overwrites. */
  init(): InitReport {
    const dataDir = this.paths.dataDir;
    mkdirSync(dataDir, { recursive: true });
    const created: string[] = [];
    const existing: string[] = [];
    const files: [string, string][] = [
      ['config.json', defaultConfigText()],
      ['ignore', DEFAULT_IGNORE_TEXT],
      ['.gitignore', DATA_GITIGNORE_TEXT],
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

  async status(): Promise<StatusReport & { readonly repo_root: string; readonly adapters: Language[]; readonly limits: Limits }> {
    const ctx = this.context();
    // A watcher (servers, daemons) proves an unchanged tree without the walk a one-shot status makes.
    const probe = this.probe;
    const checkTree = probe === statProbe ? undefined : (view: CatalogView): Promise<TreeCheck> => probe.check(ctx, view);
    const report = await computeStatus(ctx, this.store, this.autoIndex(ctx), await this.embedderIfAny(ctx), checkTree);
    // A damaged lexical index is never opened to describe its vectors: the panel shows none.
    const semantic = await this.semanticStatus(ctx, report.indexed);
    // repo_root: seed 002's name for the root (repo.status), beside the `root` every other answer uses.
    return { ...report, semantic, repo_root: report.root, adapters: LANGUAGES.filter((language) => hasAdapter(language)), limits: ctx.limits };
  }

  /**
   * The vectors of a generation's live chunks, packed once per (generation, vector log, model) for
   * searches and status alike, and what is damaged in the files they come from (left out: a
   * damaged log's records from the damage on, a damaged graph).
   */
  private async docVectors(view: IndexView, embedder: Embedder): Promise<{ vectors: ChunkVectors; damage: string[] }> {
    const store = this.store.vectors(embedder);
    const stamp = await store.stamp();
    const annFrom = this.context().loaded.config.embeddings.ann_from ?? ANN_FROM;
    const memo = this.vectorsMemo;
    if (memo && memo.view === view && memo.stamp === stamp && memo.model === embedder.model && memo.annFrom === annFrom) return memo;
    const vectors = await store.searcher(view, { annFrom });
    const damage = vectors.damage.map(({ what, effect }) =>
      effect === 'partial'
        ? `${what}: vector search uses the vectors before it, the rest rank by bm25 only; \`repodex sync\` repairs it`
        : `${what}: searched every vector instead; \`repodex sync\` rebuilds it`,
    );
    this.vectorsMemo = { view, stamp, model: embedder.model, annFrom, vectors, damage };
    return this.vectorsMemo;
  }

  /** Seed 003's panel: state of the vectors against the current generation, model, size, analytics. */
  private async semanticStatus(ctx: RepoContext, indexed: boolean): Promise<SemanticStatus> {
    await this.analytics.flush();
    const counts = await this.store.control.analytics.read();
    const analytics = { ...counts, hit_ratio: counts.queries > 0 ? Math.round((counts.hits / counts.queries) * 1000) / 1000 : null };
    const base = { vectors: 0, chunks: 0, files: 0, last_indexed: null, size_on_disk: await this.store.vectorsSizeOnDisk(), search: null, analytics };
    if (ctx.loaded.config.embeddings.provider === 'off') return { state: 'off', engine: null, model: null, dim: null, problem: null, ...base };
    let embedder: Embedder | undefined;
    try {
      embedder = await this.embedder(ctx);
    } catch (error) {
      return { state: 'missing', engine: ctx.loaded.config.embeddings.provider, model: null, dim: null, problem: errorMessage(error), ...base };
    }
    if (!embedder) return { state: 'off', engine: null, model: null, dim: null, problem: null, ...base };
    const running = (await this.store.embeddingRunning()) !== undefined;
    const identity = { engine: embedder.engine, model: embedder.model, dim: embedder.dim, problem: this.embedProblem ?? embedder.damage ?? this.embedNote ?? null };
    let manifest;
    try {
      manifest = await this.store.readVectorManifest();
    } catch (error) {
      return { state: running ? 'building' : 'missing', ...identity, ...base, problem: errorMessage(error) };
    }
    const view = indexed ? await this.usableView() : undefined;
    if (!manifest || manifest.engine !== embedder.engine || manifest.model !== embedder.model || manifest.dim !== embedder.dim || !view) {
      // A repository too small to learn from has no vectors, and a sync will not change that: say why.
      const tooSmall = view && !running ? tooSmallToEmbed(embedder, view.stats.chunkCount) : undefined;
      return { state: running ? 'building' : 'missing', ...identity, ...(tooSmall ? { problem: tooSmall } : {}), ...base, chunks: view?.stats.chunkCount ?? 0, files: view?.stats.fileCount ?? 0 };
    }
    // The manifest still describes the vectors (same generation, nothing appended since) and
    // below the graph threshold searches scan: its counts answer without loading every vector.
    const annFrom = ctx.loaded.config.embeddings.ann_from ?? ANN_FROM;
    const described =
      manifest.generation === view.meta.generation &&
      manifest.vectors_stamp !== undefined &&
      manifest.vectors_stamp === (await this.store.vectors(embedder).stamp()) &&
      manifest.counts.chunks === view.stats.chunkCount &&
      manifest.counts.vectors < annFrom;
    if (described) {
      return {
        state: running ? 'building' : manifest.counts.vectors >= manifest.counts.chunks ? 'ready' : 'stale',
        ...identity,
        ...base,
        vectors: manifest.counts.vectors,
        chunks: manifest.counts.chunks,
        files: view.stats.fileCount,
        last_indexed: manifest.last_refresh,
        search: manifest.counts.vectors === 0 ? null : 'exact',
      };
    }
    let vectors: ChunkVectors;
    try {
      ({ vectors } = await this.docVectors(view, embedder));
    } catch (error) {
      // A vector log too damaged to read at all: reported in `damage`, and no vectors here.
      if (!isRepodexError(error) || (error.code !== 'INDEX_CORRUPT' && error.code !== 'INDEX_INCOMPATIBLE')) throw error;
      return { state: running ? 'building' : 'stale', ...identity, ...base, chunks: view.stats.chunkCount, files: view.stats.fileCount, last_indexed: manifest.last_refresh, problem: error.detail ?? error.message };
    }
    const current = manifest.generation === view.meta.generation && vectors.count >= vectors.live;
    return {
      state: running ? 'building' : current ? 'ready' : 'stale',
      ...identity,
      ...base,
      vectors: vectors.count,
      chunks: vectors.live,
      files: view.stats.fileCount,
      last_indexed: manifest.last_refresh,
      search: vectors.count === 0 ? null : vectors.approximate ? 'graph' : 'exact',
    };
  }

  /** The limits answers obey (defaults < config < this engine's overrides). */
  limits(): Limits {
    return this.context().limits;
  }

  /**
   * Run a sync (one at a time per engine; another process's sync is waited for briefly, then
   * LOCKED). Creates `.repodex/` on first use. Progress goes to `onEvent`.
   */
  async sync(
    options: {
      force?: boolean | undefined;
      signal?: AbortSignal | undefined;
      embed?: boolean | undefined;
      provider?: EmbeddingProvider | 'on' | undefined;
      firstAnswer?: FirstAnswer | undefined;
    } = {},
    onEvent?: (event: SyncEvent) => void,
  ): Promise<SyncSummary> {
    if (options.provider !== undefined) this.setEmbeddingsProvider(options.provider);
    this.syncsUnderway++;
    const run = this.syncing.then(() => this.syncNow(options, onEvent)).finally(() => this.syncsUnderway--);
    this.syncing = run.catch(() => undefined);
    const summary = await run;
    if (options.embed === false || this.context().loaded.config.embeddings.provider === 'off' || !this.options.embedders) return summary;
    if (this.options.embedInBackground) {
      this.embedInBackground();
      return summary;
    }
    // Index failures never block other commands (seed 003): the lexical sync stands, the summary says what failed.
    try {
      return { ...summary, embeddings: await this.embed({ signal: options.signal }, onEvent) };
    } catch (error) {
      if (isRepodexError(error) && error.code === 'ABORTED') throw error;
      return { ...summary, embeddings: { error: errorMessage(error) } };
    }
  }

  /**
   * Embed the current generation's chunks that have no vector yet, with the embedder the config
   * names (SPEC §6). Waits briefly for another embedding run, then LOCKED.
   */
  async embed(options: { signal?: AbortSignal | undefined } = {}, onEvent?: (event: SyncEvent) => void): Promise<EmbedSummary> {
    const ctx = this.context();
    const embedder = await this.embedder(ctx);
    if (!embedder) throw new RepodexError('BAD_REQUEST', 'embeddings are off: `repodex sync --embeddings builtin` turns them on (or set embeddings.provider in .repodex/config.json)');
    try {
      const progress = this.tracking(onEvent);
      const summary = await this.runner.embed(ctx, embedder, { signal: options.signal }, progress.onEvent).finally(progress.done);
      this.embedProblem = undefined;
      this.embedNote = summary.vectors === 0 && summary.reason !== undefined ? summary.reason : undefined;
      return summary;
    } catch (error) {
      this.embedProblem = errorMessage(error);
      throw error;
    }
  }

  /**
   * `sync --embeddings P`: record the provider in config.json (so searches embed queries with the
   * embedder the vectors came from), keeping every other setting. The lexical index is not rebuilt
   * for it (the sync that follows only records the new config); vectors already made are kept.
   * `on` keeps the configured embedder, and turns on builtin when embeddings are off.
   */
  private setEmbeddingsProvider(asked: EmbeddingProvider | 'on'): void {
    if (!this.context().loaded.exists) this.init();
    const configured = this.context().loaded.config.embeddings.provider;
    const provider = asked === 'on' ? (configured === 'off' ? 'builtin' : configured) : asked;
    if (configured === provider) return;
    const path = this.paths.config;
    const raw = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const current = (raw.embeddings ?? {}) as Record<string, unknown>;
    raw.embeddings = { ...current, provider };
    const text = `${JSON.stringify(raw, null, 2)}\n`;
    // Validate before writing: an openai provider without its url must not leave a config that fails every command.
    const parsed = ConfigSchema.safeParse(JSON.parse(text));
    if (!parsed.success || (provider === 'openai' && (current.url === undefined || current.model === undefined || current.dim === undefined)) || (provider === 'onnx' && current.model_path === undefined)) {
      const needs = provider === 'openai' ? 'embeddings.url, embeddings.model and embeddings.dim' : provider === 'onnx' ? 'embeddings.model_path' : 'a valid config';
      throw new RepodexError('CONFIG_INVALID', `--embeddings ${provider} needs ${needs} in ${path} first`);
    }
    writeFileAtomic(path, text, this.paths.dataDir);
  }

  /** Start an embedding run without waiting for it; a run asked for while one is going follows it. */
  private embedInBackground(): void {
    if (this.embedding) {
      this.embedAgain = true;
      return;
    }
    this.embedding = (async () => {
      do {
        this.embedAgain = false;
        try {
          await this.embed();
        } catch {
          // Kept in embedProblem, which status and searches report.
        }
      } while (this.embedAgain);
      this.embedding = undefined;
    })();
  }

  /** Wait for a background embedding run to finish (tests, and servers shutting down). */
  async embeddingSettled(): Promise<void> {
    while (this.embedding) await this.embedding;
  }

  /** The embedder of the current config, or undefined when it is off or cannot be made (for checks, which never fail for it). */
  private async embedderIfAny(ctx: RepoContext): Promise<Embedder | undefined> {
    try {
      return await this.embedder(ctx);
    } catch {
      return undefined;
    }
  }

  /** The embedder of the current config (made once per distinct setting), or undefined when off. */
  private async embedder(ctx: RepoContext): Promise<Embedder | undefined> {
    const key = JSON.stringify(ctx.loaded.config.embeddings);
    if (this.embedderMemo?.key !== key) {
      const previous = this.embedderMemo?.embedder;
      const factory = this.options.embedders;
      const made = factory ? factory(this.root, ctx.loaded.config) : Promise.resolve(undefined);
      made.catch(() => undefined);
      this.embedderMemo = { key, embedder: made };
      void previous?.then((old) => old?.close()).catch(() => undefined);
    }
    const embedder = await this.embedderMemo.embedder;
    // A server's embedding worker may have relearned the builtin table since: use the new one.
    if (embedder && isLearning(embedder)) embedder.reload();
    return embedder;
  }

  /**
   * What `vector` and `hybrid` need for one query, or undefined (with the reason in `warnings`)
   * when there is nothing to use: embeddings off, the embedder down, no vectors yet. Never throws
   * for those: the caller answers with bm25.
   */
  private async semantic(view: IndexView, q: string, warnings: string[]): Promise<SemanticQuery | undefined> {
    const ctx = this.context();
    if (ctx.loaded.config.embeddings.provider === 'off') {
      warnings.push('embeddings are off, so this was answered with bm25: `repodex sync --embeddings builtin` turns them on (vectors learned from this repository, nothing downloaded)');
      return undefined;
    }
    let embedder: Embedder | undefined;
    try {
      embedder = await this.embedder(ctx);
    } catch (error) {
      warnings.push(`the embedder cannot run (${errorMessage(error)}): answered with bm25`);
      return undefined;
    }
    if (!embedder) return undefined;
    // What the embedder keeps on disk is damaged (the builtin table): its vectors would mean something else.
    if (embedder.damage) {
      warnings.push(`${embedder.damage}; answered with bm25`);
      return undefined;
    }
    let packed: { vectors: ChunkVectors; damage: string[] };
    try {
      packed = await this.docVectors(view, embedder);
    } catch (error) {
      if (!isRepodexError(error) || (error.code !== 'INDEX_CORRUPT' && error.code !== 'INDEX_INCOMPATIBLE')) throw error;
      warnings.push(`${error.detail ?? error.message}; answered with bm25 (\`repodex sync\` repairs it)`);
      return undefined;
    }
    const { vectors, damage } = packed;
    warnings.push(...damage);
    const running = this.embedding !== undefined || (await this.store.embeddingRunning()) !== undefined;
    if (vectors.count === 0) {
      let made: string | undefined;
      try {
        made = (await this.store.readVectorManifest())?.model;
      } catch {
        made = undefined;
      }
      const other = made !== undefined && made !== embedder.model ? ` (the vectors on disk were made by ${made})` : '';
      const tooSmall = running ? undefined : tooSmallToEmbed(embedder, view.stats.chunkCount);
      const next = running ? 'embedding is running' : tooSmall ? tooSmall : this.embedProblem ? `the last embedding run failed: ${this.embedProblem}` : 'run `repodex sync` to embed';
      warnings.push(`no chunk vectors from ${embedder.engine} ${embedder.model} yet${other}: ${next}; answered with bm25`);
      return undefined;
    }
    if (vectors.count < vectors.live) {
      warnings.push(`vectors cover ${vectors.count} of ${vectors.live} chunks (${running ? 'embedding is running' : 'run `repodex sync` to embed the rest'}); the rest rank by bm25 only`);
    }
    try {
      const [query] = await embedder.embed([q], 'query');
      return { vectors, query: query! };
    } catch (error) {
      warnings.push(`the embedder cannot embed the query (${errorMessage(error)}): answered with bm25`);
      return undefined;
    }
  }

  private async syncNow(options: { force?: boolean | undefined; signal?: AbortSignal | undefined; firstAnswer?: FirstAnswer | undefined }, onEvent?: (event: SyncEvent) => void): Promise<SyncSummary> {
    let ctx = this.context();
    if (!ctx.loaded.exists) {
      this.init();
      ctx = this.context(); // the config hash is now that of the file init wrote
    } else {
      // Older indexes predate .repodex/.gitignore: add it (never overwriting one the user wrote).
      createFileAtomic(join(this.paths.dataDir, '.gitignore'), DATA_GITIGNORE_TEXT, this.paths.dataDir);
    }
    let lock: HeldLock;
    try {
      lock = await this.store.lock({ waitMs: this.options.lockWaitMs ?? 2000 });
    } catch (error) {
      throw await this.leftAsItWas(error);
    }
    try {
      const mark = this.probe.syncStarting();
      const progress = this.tracking(onEvent);
      progress.onEvent({ type: 'scan', files: 0 });
      let summary: SyncSummary;
      try {
        summary = await this.runner.run(ctx, { force: options.force, signal: options.signal, firstAnswer: options.firstAnswer }, progress.onEvent).finally(progress.done);
      } catch (error) {
        throw await this.leftAsItWas(error);
      }
      // The runner may have committed on a store object of its own (a worker thread's).
      this.store.forgetStamp();
      this.cached = undefined;
      this.probe.synced(mark, summary.generation);
      try {
        await this.store.control.analytics.repair();
      } catch {
        // Committed: counters that cannot be repaired now (a full disk) are repaired by the next sync.
      }
      return summary;
    } finally {
      await lock.release();
    }
  }

  /**
   * A sync the machine stopped before it committed (a read-only or full disk, a lost database
   * connection): its error, saying in the same line that the index is as it was (or that none was
   * written, on a first sync).
   */
  private async leftAsItWas(error: unknown): Promise<unknown> {
    if (!isRepodexError(error) || error.detail === undefined) return error;
    if (error.code === 'STORE_LOST') {
      // Said already when it is not known (lost while committing).
      if (error.toWire().selfContained) return error;
      return new RepodexError('STORE_LOST', `${error.detail} during the sync: nothing was committed; run \`repodex sync\` again`, { selfContained: true, cause: error });
    }
    if (error.code !== 'NOT_WRITABLE' && error.code !== 'DISK_FULL') return error;
    const indexed = await this.store.readMeta().then(
      (meta) => meta !== undefined,
      () => true,
    );
    return new RepodexError(error.code, `${error.detail}: ${indexed ? 'the index was left as it was' : 'no index was written'}`, { cause: error });
  }

  /**
   * The index state at a glance, for listings of many repositories: indexing (a sync runs here or
   * in another process), pending (no index), stale (git HEAD moved past the indexed commit, or the
   * record of the index cannot be read), else ready. Reads no index; `status` has the whole picture
   * (changed files, damage).
   */
  async quickState(): Promise<'pending' | 'indexing' | 'ready' | 'stale'> {
    if ((this.progressNow && isLexicalPhase(this.progressNow.phase)) || (await this.store.syncRunning())) return 'indexing';
    let meta: IndexMeta | undefined;
    try {
      meta = await this.store.readMeta();
    } catch {
      return 'stale';
    }
    if (!meta) return 'pending';
    const head = this.headMemo.get()?.commit ?? null;
    return head !== null && head !== (meta.git?.commit ?? null) ? 'stale' : 'ready';
  }

  /** The loaded index, reloading when a generation was committed (by anyone) since it was loaded. */
  async view(): Promise<IndexView> {
    const stamp = await this.store.stamp();
    if (this.cached && this.cached.stamp === stamp && isIndexView(this.cached.view)) return this.cached.view;
    if (stamp === '') throw new RepodexError('INDEX_MISSING');
    const view = await this.store.open();
    this.loadCount++;
    this.cached = { view, stamp };
    return view;
  }

  /**
   * The loaded index's catalog, reloading as `view` does: all a freshness check reads. A server
   * whose answer threads answer never loads more than this on the thread that checks.
   */
  private async catalogView(): Promise<CatalogView> {
    const stamp = await this.store.stamp();
    if (this.cached && this.cached.stamp === stamp) return this.cached.view;
    if (stamp === '') throw new RepodexError('INDEX_MISSING');
    const view = await this.store.openCatalog();
    if (isIndexView(view)) this.loadCount++;
    this.cached = { view, stamp };
    return view;
  }

  /** The whole view of a freshness check's generation (or of a newer one, committed since). */
  private wholeView(view: CatalogView): Promise<IndexView> {
    return isIndexView(view) ? Promise.resolve(view) : this.view();
  }

  /** The loaded index, or undefined when there is none this version can read (missing, older format, damaged). */
  async usableView(): Promise<IndexView | undefined> {
    return this.usable(() => this.view());
  }

  private usable<View>(open: () => Promise<View>): Promise<View | undefined> {
    return open().catch((error: unknown) => {
      if (isRepodexError(error) && (error.code === 'INDEX_MISSING' || error.code === 'INDEX_INCOMPATIBLE' || error.code === 'INDEX_CORRUPT')) return undefined;
      throw error;
    });
  }

  /**
   * The freshness policy, in one place for every front end: build if missing, refresh if stale,
   * else (automatic indexing off, or another process syncing) answer from what is there and say
   * so in `warnings`. An index built with other rules is rebuilt or refused, never served.
   */
  private async fresh(onEvent?: (event: SyncEvent) => void, query?: string): Promise<FreshView> {
    const answered = await this.freshOnce(onEvent, query);
    const partial = answered.view.meta.partial;
    if (!partial) return answered;
    if (answered.synced?.partial) this.options.firstAnswer?.continueInBackground();
    const warning = `partial index: ${partial.files} of ${partial.of} files indexed so far (for a first search, the files holding its words first); the rest is being indexed, and \`repodex status\` says when it is done`;
    return { ...answered, warnings: [warning, ...answered.warnings] };
  }

  private async freshOnce(onEvent?: (event: SyncEvent) => void, query?: string): Promise<FreshView> {
    const ctx = this.context();
    const auto = this.autoIndex(ctx);
    let view: CatalogView | undefined = await this.usable(() => this.catalogView());
    if (!view && auto) view = await this.afterRunningBuild();
    if (!view) {
      if (!auto) await this.catalogView(); // throws why there is no usable index (missing, damaged, other format)
      const first = this.options.firstAnswer;
      const words = query === undefined ? [] : queryTerms(query);
      const synced = await this.syncUnlessRunning(onEvent, first && words.length > 0 ? { budgetMs: first.budgetMs, minBytes: first.minBytes, words } : undefined);
      view = await this.catalogView();
      return { view, synced, warnings: synced ? [] : ['a sync is running in another process: results come from the index it is replacing'], freshness: this.freshness(view, false) };
    }
    const ruleReasons = ruleStaleness(ctx, view.meta, this.headMemo.get());
    const { reasons: treeReasons, recordOutdated } = await this.probe.check(ctx, view);
    const reasons = [...ruleReasons, ...treeReasons];
    if (reasons.length === 0) {
      const synced = recordOutdated && auto ? await this.recordTree() : undefined;
      if (synced) view = await this.catalogView();
      return { view, synced, warnings: [], freshness: this.freshness(view, false), treeMatches: true };
    }
    if (!auto) {
      if (view.meta.feature_version !== FEATURE_VERSION) throw new RepodexError('INDEX_STALE', reasons[0]);
      return { view, synced: undefined, warnings: [`index is stale (${reasons.join('; ')}): run \`repodex sync\``], freshness: this.freshness(view, true) };
    }
    if (ruleReasons.length === 0 && this.probe.refreshesInBackground) {
      return { view, synced: undefined, warnings: [`re-indexing in the background (${treeReasons.join('; ')}): results may miss those changes for a moment`], freshness: this.freshness(view, true) };
    }
    let synced: SyncSummary | undefined;
    try {
      synced = await this.syncUnlessRunning(onEvent);
    } catch (error) {
      // A read-only or full disk under .repodex/: the index is answered from as it is, saying so,
      // unless it was built with other rules (never served).
      const why = cannotRefresh(error, this.paths.dataDir);
      if (why === undefined || view.meta.feature_version !== FEATURE_VERSION) throw error;
      return { view, synced: undefined, warnings: [`${why}; results may miss these changes: ${reasons.join('; ')}`], freshness: this.freshness(view, true) };
    }
    if (!synced) {
      return { view, synced, warnings: ['a sync is running in another process: results come from the previous index'], freshness: this.freshness(view, true) };
    }
    view = await this.catalogView();
    return { view, synced, warnings: [], freshness: this.freshness(view, false) };
  }

  /**
   * The tree matches `view` but its record of the control files' stats is outdated: a sync
   * commits the new record (an empty generation), so later checks skip the walk that proved it.
   * Best effort: the answer stands either way, so a sync that cannot run now changes nothing.
   */
  private async recordTree(): Promise<SyncSummary | undefined> {
    try {
      return await this.syncUnlessRunning();
    } catch {
      return undefined;
    }
  }

  /**
   * There is no index to read, and one may be being built: by this engine (another request's
   * first search, which this one joins rather than failing for lack of an index), or by another
   * process (waited for until it has committed an index, even a partial one, which the answer then
   * says it is; up to FIRST_BUILD_WAIT_MS, then LOCKED naming it). The index that build left, or
   * undefined when none was running or it left none (it failed): the caller builds.
   */
  private async afterRunningBuild(): Promise<IndexView | undefined> {
    if (this.syncsUnderway > 0) {
      await this.syncing;
      const view = await this.usableView();
      if (view) return view;
    }
    const deadline = Date.now() + FIRST_BUILD_WAIT_MS;
    while (await this.store.syncRunning()) {
      const view = await this.usableView();
      if (view) return view;
      if (Date.now() >= deadline) {
        // Throws LOCKED naming the holder, unless it finished this moment.
        await (await this.store.lock()).release();
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, FIRST_BUILD_POLL_MS));
    }
    return this.usableView();
  }

  /** Sync now, or undefined when another process is already syncing (readers never wait for it). */
  private async syncUnlessRunning(onEvent?: (event: SyncEvent) => void, firstAnswer?: FirstAnswer): Promise<SyncSummary | undefined> {
    if (await this.store.syncRunning()) return undefined;
    try {
      // A read never waits for embedding: servers embed in the background, one-shot reads not at all.
      return await this.sync({ embed: this.options.embedInBackground === true, firstAnswer }, onEvent);
    } catch (error) {
      if (isRepodexError(error) && error.code === 'LOCKED') return undefined;
      throw error;
    }
  }

  private freshness(view: CatalogView, dirty: boolean): Freshness {
    const { partial } = view.meta;
    // A partial index never matches the tree: the files it has not read yet are missing from it.
    return { generation: view.meta.generation, indexed_commit: view.meta.git?.commit ?? null, dirty: dirty || partial !== undefined, ...(partial ? { partial } : {}) };
  }

  async search(options: SearchOptions, onEvent?: (event: SyncEvent) => void): Promise<SearchReport> {
    return this.again(() => this.searchOnce(options, onEvent));
  }

  private async searchOnce(options: SearchOptions, onEvent?: (event: SyncEvent) => void): Promise<SearchReport> {
    const { view: checked, synced, warnings, freshness, treeMatches } = await this.fresh(onEvent, options.q);
    const asked = options.mode ?? 'bm25';
    const semantic = asked === 'vector' || asked === 'hybrid' ? await this.semantic(await this.wholeView(checked), options.q, warnings) : undefined;
    const mode: SearchMode = semantic ? asked : asked === 'vector' || asked === 'hybrid' ? 'bm25' : asked;
    const answerHere = async (): Promise<SearchAnswer> => {
      const view = await this.wholeView(checked);
      return this.searchFrom(view, { ...options, mode }, treeMatches === true && view.meta.generation === checked.meta.generation, semantic);
    };
    // A lexical search can be answered on another thread; one with a query vector is answered here, by the embedder's owner.
    const answered =
      this.options.answerer && (mode === 'bm25' || mode === 'idf')
        ? (await this.options.answerer.answer({ op: 'search', options: { ...options, mode }, generation: checked.meta.generation, treeMatches: treeMatches === true })).data
        : await answerHere();
    this.analytics.record(answered.results.length > 0);
    return {
      query: options.q,
      mode,
      terms: answered.terms,
      top_k: answered.top_k,
      results: answered.results,
      matched: answered.matched,
      generation: answered.generation,
      freshness,
      ...(synced ? { synced } : {}),
      warnings: [...warnings, ...answered.warnings],
    };
  }

  /** Rank and present a search from `view` (the freshness check done: `treeMatches` when it found the tree exactly as indexed). */
  private async searchFrom(view: IndexView, options: SearchOptions & { readonly mode: SearchMode }, treeMatches: boolean, semantic?: SemanticQuery): Promise<SearchAnswer> {
    // The caps hold for every caller, not only those that came through the protocol schemas.
    const maxHits = this.context().limits.max_search_hits;
    const topK = Math.min(options.top_k ?? Math.min(DEFAULT_TOP_K, maxHits), maxHits);
    const { mode } = options;
    const outcome = await search(view, { q: options.q, topK, mode, semantic, glob: options.glob, lang: options.lang, ranking: this.options.ranking });
    const warnings: string[] = [];
    if (outcome.terms.length === 0 && mode !== 'vector') warnings.push('the query has no searchable terms (only stopwords or symbols): use English words or identifiers');
    if (outcome.hits.length === 0 && (options.glob !== undefined || options.lang !== undefined) && filesAllowed(view, options.glob, options.lang) === 0) {
      const filter = [options.glob !== undefined ? `glob ${JSON.stringify(options.glob)}` : '', options.lang !== undefined ? `language ${options.lang}` : ''].filter(Boolean).join(' and ');
      warnings.push(`no indexed file matches ${filter}: globs match paths from the repository root, such as src/**/*.ts or *.py`);
    }
    const results = await presentHits(this.context(), view, outcome.hits, outcome.words, treeMatches);
    if (results.some((hit) => hit.stale)) warnings.push('some result files changed since the last sync: run `repodex sync` for exact line ranges');
    return { terms: outcome.terms, top_k: topK, results, matched: outcome.matched, generation: view.meta.generation, warnings };
  }

  /**
   * Answer a read another thread's freshness check proved (see `Answerer`): from this engine's
   * view of the proved generation or a newer one. Never syncs, never checks the tree.
   */
  async answer<J extends AnswerJob>(job: J): Promise<Answered<J>> {
    // A view whose files a newer generation replaced meanwhile answers INDEX_CHANGED: load the current one and answer again.
    return this.again(() => this.answerOnce(job));
  }

  private async answerOnce<J extends AnswerJob>(job: J): Promise<Answered<J>> {
    if (job.op === 'outline') {
      const view = await this.usableView();
      return { data: await outlineFile(this.context(), view, job.path, this.options.outlineParser), generation: view?.meta.generation ?? null } as Answered<J>;
    }
    // The other thread has just proved `job.generation` current: a view of it (or of a newer one) needs no asking.
    const kept = this.cached?.view;
    let view = kept && isIndexView(kept) && kept.meta.generation >= job.generation ? kept : await this.view();
    if (view.meta.generation < job.generation) {
      // A stamp proven before the other thread saw the new generation: ask the store again.
      this.store.forgetStamp();
      view = await this.view();
    }
    // The tree was checked against the proved generation: of a newer one, it says nothing.
    const data = job.op === 'search' ? await this.searchFrom(view, job.options, job.treeMatches && view.meta.generation === job.generation) : await fetchChunks(this.context(), view, job.ids, job.maxLines);
    return { data, generation: view.meta.generation } as Answered<J>;
  }

  /**
   * Load the index and answer searches over its own terms, the whole way a request is answered
   * (ranking, focused snippets, the answer's JSON), so a long-running server answers its first
   * real queries with compiled code instead of paying for the compiler on them. Bounded by
   * `budgetMs` of work, yielding to the event loop after every search. Does nothing without a
   * readable index, and never fails: what stops it (an invalid config, say) is for the first
   * request to report, as it would have without a warm-up.
   *
   * Measured on kafka (2 cores; 8 fresh servers in turns, each then answering 250 corpus queries
   * it had not seen): p99 4.83 ms after 400 ms of whole answers, 5.74 ms after 150 ms of them,
   * 5.91 ms after 400 ms of ranking alone, 6.09 ms after 150 ms of ranking alone; 800 ms of whole
   * answers did no better than 400 (docs/benchmarks.md).
   */
  async warmUp(budgetMs = WARM_UP_MS): Promise<void> {
    try {
      const view = await this.usableView();
      if (!view) return;
      const terms = await view.sampleTerms(400);
      let spent = 0;
      for (let i = 0; i < terms.length && spent < budgetMs; i++) {
        const q = [terms[i], terms[(i * 7 + 3) % terms.length], terms[(i * 13 + 5) % terms.length]].slice(0, 1 + (i % 3)).join(' ');
        const started = performance.now();
        JSON.stringify(await this.searchFrom(view, { q, mode: i % 4 === 3 ? 'idf' : 'bm25' }, true));
        spent += performance.now() - started;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch {
      // Best effort: the first request meets what stopped it (an invalid config, a store out of reach) and says so.
    }
  }

  async fetch(ids: readonly number[], maxLines: number = MAX_FETCH_LINES, onEvent?: (event: SyncEvent) => void): Promise<FetchReport> {
    return this.again(() => this.fetchOnce(ids, maxLines, onEvent));
  }

  private async fetchOnce(ids: readonly number[], maxLines: number, onEvent?: (event: SyncEvent) => void): Promise<FetchReport> {
    const { view: checked, synced, warnings, freshness } = await this.fresh(onEvent);
    const lines = Math.max(1, Math.min(maxLines, MAX_FETCH_LINES));
    const answerHere = async (): Promise<{ data: FetchedChunks; generation: number }> => {
      const view = await this.wholeView(checked);
      return { data: await fetchChunks(this.context(), view, ids, lines), generation: view.meta.generation };
    };
    const { data: fetched, generation } = this.options.answerer ? await this.options.answerer.answer({ op: 'fetch', ids, maxLines: lines, generation: checked.meta.generation }) : await answerHere();
    return { ...fetched, generation: generation ?? checked.meta.generation, freshness, ...(synced ? { synced } : {}), warnings };
  }

  /** A bounded line range of any file under the root (no index needed). */
  open(path: string, start?: number, end?: number): Promise<OpenReport> {
    return openFile(this.context(), path, start, end);
  }

  /** Declarations of one file: from the index when unchanged, else parsed now (no index needed). */
  async outline(path: string): Promise<OutlineReport> {
    // An answer thread loads the current view itself when its own was replaced (`answer`).
    if (this.options.answerer) return (await this.options.answerer.answer({ op: 'outline', path })).data;
    return this.again(async () => outlineFile(this.context(), await this.usableView(), path, this.options.outlineParser));
  }

  /**
   * Run a read once more when the index changed under it (a store that reads per request, as a
   * database does, says INDEX_CHANGED rather than mix two generations in one answer).
   */
  private async again<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!isRepodexError(error) || error.code !== 'INDEX_CHANGED') throw error;
      this.cached = undefined;
      return work();
    }
  }

  /** Catalogued files (indexed and skipped), optionally filtered by a glob. */
  /** The catalogued files; with `blocked`, what is withheld as a secret instead, each with why (`listBlocked`). */
  async files(glob: string | undefined, limit: number, includeHidden = false, onEvent?: (event: SyncEvent) => void, blocked = false): Promise<FilesReport> {
    return this.again(() => this.filesOnce(glob, limit, includeHidden, onEvent, blocked));
  }

  private async filesOnce(glob: string | undefined, limit: number, includeHidden: boolean, onEvent: ((event: SyncEvent) => void) | undefined, blocked: boolean): Promise<FilesReport> {
    const { view, synced, warnings, freshness } = await this.fresh(onEvent);
    // Answered from the catalog in memory: never from a generation another process has replaced.
    await view.ensureCurrent();
    const ctx = this.context();
    const list = blocked
      ? await listBlocked(view, { root: ctx.paths.root, config: ctx.loaded.config, denylist: ctx.denylist, limits: readLimitsOf(ctx) }, glob, limit)
      : listFiles(view, glob, limit, includeHidden);
    return { ...list, generation: view.meta.generation, freshness, ...(synced ? { synced } : {}), warnings };
  }

  /**
   * A context bundle for a task (SPEC §5): excerpts with citations and reasons, within the budget.
   * Deterministic: the same prompt and budget on the same index give the same bundle, byte for
   * byte. Also written to `.repodex/last_bundle.json` and `last_bundle.md` for people.
   */
  async bundle(options: BundleOptions, onEvent?: (event: SyncEvent) => void): Promise<BundleReport> {
    return this.again(() => this.bundleOnce(options, onEvent));
  }

  private async bundleOnce(options: BundleOptions, onEvent?: (event: SyncEvent) => void): Promise<BundleReport> {
    const { view: checked, synced, warnings, freshness } = await this.fresh(onEvent);
    const view = await this.wholeView(checked);
    const ctx = this.context();
    const maxFiles = Math.min(options.max_files ?? ctx.limits.max_bundle_files, ctx.limits.max_bundle_files);
    const maxLines = Math.min(options.max_lines ?? DEFAULT_BUNDLE_LINES, MAX_BUNDLE_LINES);
    const includeTests = options.include_tests === true;
    const bundler = this.options.bundler ?? deterministicBundler;
    const limits = readLimitsOf(ctx);
    // A task pasted with a credential in it (a log line, a config snippet): the bundle, and
    // last_bundle.* beside the index, keep it redacted; its searches never look for it (no
    // credential is indexed), nor for the words of the marker that replaced it.
    const prompt = redactSecrets(options.prompt);
    const draft = await bundler.build(
      { prompt: prompt.replace(REDACTION_MARKER, ' '), maxFiles, maxLines, includeTests },
      {
        search: async (q, { topK, excludeTests }) => (await search(view, { q, topK, mode: 'bm25', excludeTests, ranking: this.options.ranking })).hits,
        documentFrequency: async (terms) => (await view.postings(terms)).map((list) => list?.df ?? 0),
        outline: async (path) => {
          const slot = view.findFile(path);
          return slot < 0 ? [] : (await view.outline(slot)).symbols;
        },
        read: async (path) => {
          const read = await readRepoFile(ctx.guard, path, limits, scannedCleanHash(view, path));
          return read.ok ? { ok: true, lines: read.lines } : { ok: false, reason: read.reason };
        },
      },
    );
    const normalized = prompt.trim().replace(/\s+/g, ' ');
    const fingerprint = createHash('sha256').update(normalized).digest('hex');
    const budget = { max_files: maxFiles, max_lines: maxLines, include_tests: includeTests };
    // Content-addressed: the same prompt, budget and excerpts give the same id, in any clone.
    const identity = JSON.stringify({ fingerprint, budget, strategy: bundler.name, excerpts: draft.excerpts.map((excerpt) => [excerpt.citation, excerpt.lines]) });
    const report: BundleReport = {
      bundle_id: createHash('sha256').update(identity).digest('hex').slice(0, 16),
      prompt_fingerprint: fingerprint,
      prompt,
      strategy: bundler.name,
      budget,
      used: { files: new Set(draft.excerpts.map((excerpt) => excerpt.path)).size, lines: draft.excerpts.reduce((sum, excerpt) => sum + excerpt.lines.length, 0) },
      keywords: draft.keywords,
      searches: draft.searches,
      excerpts: draft.excerpts,
      omitted: draft.omitted,
      generation: view.meta.generation,
      freshness,
      ...(synced ? { synced } : {}),
      warnings,
    };
    await this.keepLastBundle(report);
    return report;
  }

  /** The last bundle as JSON and Markdown, kept by the store (the bundle itself: without what keeping the index fresh took). */
  private async keepLastBundle(report: BundleReport): Promise<void> {
    const { synced: _synced, warnings: _warnings, ...bundle } = report;
    try {
      await this.store.control.writeDocument('last_bundle.json', `${JSON.stringify(bundle, null, 2)}\n`);
      await this.store.control.writeDocument('last_bundle.md', bundleMarkdown(report));
    } catch (error) {
      // The answer stands; only its copy for people is missing (a read-only .repodex/, a full disk).
      report.warnings.push(`last_bundle.json and last_bundle.md were not written: ${isRepodexError(error) ? (error.detail ?? error.message) : errorMessage(error)}`);
    }
  }

  /** Recent calls from the audit log (`since`: ISO time or a duration such as 15m). */
  async audit(since: string | undefined, limit: number): Promise<AuditReport> {
    // Calls recorded but not yet handed to the store are part of the answer.
    this.auditLog.flush();
    return readAudit(this.auditLog.store, since, Math.max(1, Math.min(limit, MAX_AUDIT_LIMIT)));
  }

  /** Check every checksum, size, version and cross-reference of the index, and every other file an answer depends on. */
  async verify(): Promise<VerifyReport> {
    const ctx = this.context();
    // Only the builtin embedder keeps files of its own under .repodex/ (its learned table); a model
    // provider is not loaded just to be asked (status loads it anyway, for its panel).
    const embedder = ctx.loaded.config.embeddings.provider === 'builtin' ? await this.embedderIfAny(ctx) : undefined;
    return verifyIndex(this.root, this.store, embedder);
  }

  /** Remove index artifacts (keeps config and ignore); refuses while a sync holds the lock. */
  async clean(): Promise<CleanReport> {
    const lock = await this.store.lock();
    try {
      const removed = await this.store.clean();
      this.cached = undefined;
      return { root: this.root, removed };
    } finally {
      await lock.release();
    }
  }

  /** The store (for watchers and servers built on this engine). */
  get indexStore(): IndexStore {
    return this.store;
  }
}

/**
 * The warning of a read answered from a stale index that cannot be refreshed here (a read-only or
 * another user's `.repodex/`, a full disk); undefined for any other failure, which the read reports.
 */
function cannotRefresh(error: unknown, dataDir: string): string | undefined {
  if (!isRepodexError(error)) return undefined;
  const detail = (error.detail ?? error.message).replace(/: (the index was left as it was|no index was written)$/, '');
  if (error.code === 'NOT_WRITABLE' || error.code === 'LOCK_DENIED') {
    const reason = /\(([^()]*)\)$/.exec(detail)?.[1];
    return `the index is stale and ${DATA_DIR_NAME}/ is not writable${reason === undefined ? '' : ` (${reason})`}: cannot refresh`;
  }
  if (error.code === 'DISK_FULL') return `the index is stale and cannot be refreshed: ${detail.replace(dataDir, `${DATA_DIR_NAME}/`)}`;
  return undefined;
}

/** How far a sync or embedding run has come: its phase, and for counted phases how many of how many. */
export interface SyncProgress {
  /** scan (finding changed files), index (reading and parsing them), write, train (learning the embedding table), embed, graph. */
  readonly phase: SyncEvent['type'];
  readonly done: number | null;
  readonly total: number | null;
  /** When the run started (ISO 8601). */
  readonly started_at: string;
}

/** Whether a phase is the lexical index's (scan, index, write): while vectors are made, the index is already there. */
export function isLexicalPhase(phase: SyncProgress['phase']): boolean {
  return phase === 'scan' || phase === 'index' || phase === 'write';
}

function progressOf(event: SyncEvent, before: SyncProgress | undefined, started_at: string): SyncProgress {
  const since = before?.started_at ?? started_at;
  if ('done' in event) return { phase: event.type, done: event.done, total: event.total, started_at: since };
  if (event.type === 'scan') return { phase: 'scan', done: null, total: event.files > 0 ? event.files : null, started_at: since };
  return { phase: event.type, done: null, total: event.type === 'train' ? event.chunks : null, started_at: since };
}
