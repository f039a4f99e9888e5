import { spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './core/config.js';
import { discoverRoot, repoPaths } from './core/paths.js';
import { RepodexError } from './core/errors.js';
import type { LimitOverrides } from './core/limits.js';
import { loadContext } from './engine/context.js';
import { Engine } from './engine/engine.js';
import type { SyncSummary } from './engine/sync.js';
import { RepoWatcher, WatchLoop, WatchProbe } from './engine/watch.js';
import { type WorkerPool, workerPool } from './engine/worker-runner.js';
import { type RankingProfile, rankingFromEnv } from './search/ranking.js';
import type { IndexStore, StoreSpec } from './store/backend.js';
import { FsStore } from './store/fs/fs-store.js';
import { localParseCache } from './store/fs/parse-cache.js';
import { type DistributeReport, distribute } from './store/pg/distribute.js';
import { PgStore, describeUrl } from './store/pg/pg-store.js';
import { PgRegistry } from './store/pg/pg-registry.js';
import { FileRegistry } from './store/fs/fs-registry.js';
import type { RepoRegistry } from './store/registry.js';
import type { HeldSession, SqlPool } from './store/pg/sql.js';
import { embedderTablePath, removeEmbedderTable } from './store/fs/fs-control.js';
import type { Embedder } from './vector/embedder.js';
import { BuiltinEmbedder } from './vector/providers/builtin.js';
import { DEFAULT_KEY_ENV, createOpenAiEmbedder } from './vector/providers/openai.js';

/**
 * The embedder a config names (SPEC §6), or undefined when embeddings are off. `onnx` loads
 * transformers.js only here, on first use; `openai` takes its key from the variable
 * `embeddings.api_key_env` names (REPODEX_EMBEDDINGS_API_KEY by default).
 */
export async function createEmbedder(root: string, config: Config, env: NodeJS.ProcessEnv = process.env): Promise<Embedder | undefined> {
  const settings = config.embeddings;
  switch (settings.provider) {
    case 'off':
      return undefined;
    case 'builtin':
      return new BuiltinEmbedder(embedderTablePath(repoPaths(root).dataDir));
    case 'onnx': {
      const { createOnnxEmbedder } = await import('./vector/providers/onnx.js');
      const modelPath = settings.model_path!;
      return createOnnxEmbedder({
        modelPath: isAbsolute(modelPath) ? modelPath : resolve(root, modelPath),
        ...(settings.model !== undefined ? { model: settings.model } : {}),
        ...(settings.query_prefix !== undefined ? { queryPrefix: settings.query_prefix } : {}),
        ...(settings.document_prefix !== undefined ? { documentPrefix: settings.document_prefix } : {}),
        ...(settings.batch_size !== undefined ? { batchSize: settings.batch_size } : {}),
      });
    }
    case 'openai': {
      const keyVariable = settings.api_key_env ?? DEFAULT_KEY_ENV;
      const apiKey = env[keyVariable];
      return createOpenAiEmbedder({
        url: settings.url!,
        model: settings.model!,
        dim: settings.dim!,
        ...(apiKey ? { apiKey } : {}),
        apiKeyVariable: keyVariable,
        ...(settings.batch_size !== undefined ? { batchSize: settings.batch_size } : {}),
        ...(settings.timeout_ms !== undefined ? { timeoutMs: settings.timeout_ms } : {}),
        ...(settings.query_prefix !== undefined ? { queryPrefix: settings.query_prefix } : {}),
        ...(settings.document_prefix !== undefined ? { documentPrefix: settings.document_prefix } : {}),
      });
    }
  }
}

/** Options every front end accepts for choosing a repository. */
export interface ComposeOptions {
  /** Where to start looking for the repository root (default: the working directory). */
  readonly cwd?: string;
  /** An explicit root (`--root`). */
  readonly root?: string;
  /** bm25 structure signals; default from the environment (`REPODEX_BOOSTS`, `REPODEX_RANKING`). */
  readonly ranking?: RankingProfile;
  /** Refuse when no repository is found above the working folder (every command but `init`). */
  readonly requireRepository?: boolean;
  /** Limits set by flags (`serve`), over the config's. */
  readonly limits?: LimitOverrides;
  /** Where the index lives (`--store`: fs or a PostgreSQL URL), over REPODEX_STORE and the config. */
  readonly store?: string | undefined;
  /** Automatic indexing (`--indexing=on|off`), over REPODEX_INDEXING; config `auto_index: false` still turns it off. */
  readonly autoIndex?: boolean | undefined;
  /** The worker threads a server's syncs, embedding runs and (if it has answer threads) reads use (default: a pool of its own, stopped by `close`). */
  readonly pool?: WorkerPool;
  /**
   * A first search on a large repository answers from a partial index after about a second, and a
   * detached `repodex sync` indexes the rest (one-shot CLI commands, embedded store; see
   * firstAnswerMs).
   */
  readonly firstAnswer?: boolean;
}

/** A first answer waits for the index only on repositories with at least this many bytes of files to index: smaller ones index in about as long. */
const FIRST_ANSWER_MIN_BYTES = 4_000_000;
const FIRST_ANSWER_MS = 600;

/**
 * How long a first search may spend indexing files (after it has found them) before it answers
 * from what it has (`REPODEX_FIRST_ANSWER_MS`, default 600; 0 waits for the whole index, as a
 * server's first search does).
 */
export function firstAnswerMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.REPODEX_FIRST_ANSWER_MS;
  if (text === undefined || text === '') return FIRST_ANSWER_MS;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 0) throw new RepodexError('BAD_REQUEST', `REPODEX_FIRST_ANSWER_MS must be a whole number of milliseconds (0 turns first answers from a partial index off), got ${JSON.stringify(text)}`);
  return ms;
}

/** Index the rest of a partial index in a process of its own, which outlives this one (its lock keeps other syncs out). */
function syncInBackground(root: string): void {
  const cli = fileURLToPath(new URL('../bin/repodex.js', import.meta.url));
  const child = spawn(process.execPath, [cli, 'sync', '--root', root], { detached: true, stdio: 'ignore' });
  child.on('error', () => undefined);
  child.unref();
}

/** Whether automatic indexing is allowed in this environment (`REPODEX_INDEXING=0` turns it off). */
export function autoIndexEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.REPODEX_INDEXING !== '0' && env.REPODEX_INDEXING?.toLowerCase() !== 'off';
}

/** Read a store setting (`fs`, or a postgres:// URL) from `source` (a flag, a variable, the config). */
export function parseStoreSetting(value: string, source: string): StoreSpec {
  const trimmed = value.trim();
  if (trimmed === 'fs' || trimmed === '') return { kind: 'fs' };
  const problem = storeUrlProblem(trimmed);
  if (problem !== undefined) {
    const code = source === 'REPODEX_STORE' ? 'ENV_INVALID' : source === '--store' ? 'BAD_REQUEST' : 'CONFIG_INVALID';
    throw new RepodexError(code, `${source}: ${problem}`, { selfContained: true });
  }
  return { kind: 'postgres', url: trimmed };
}

const EXAMPLE_URL = 'postgres://user@localhost:5432/repodex';
/** The `sslmode` values PostgreSQL's clients know (libpq's meanings: see pg-driver.ts), and the driver's `no-verify`. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/** What is wrong with a store setting that is not `fs`, quoting it with its password masked; undefined for a usable PostgreSQL URL. */
function storeUrlProblem(text: string): string | undefined {
  const shown = `"${text.replace(/^([a-z][\w+.-]*:\/\/[^/:@\s]*):[^@/\s]*@/i, '$1:***@')}"`;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const scheme = /^([a-z][\w+.-]*):/i.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined && /^postgres(ql)?\b/i.test(text)) return `${shown} is not a URL: write it as postgres://user@host:5432/database`;
  if (scheme !== 'postgres' && scheme !== 'postgresql') return `${shown} is neither fs nor a PostgreSQL URL such as ${EXAMPLE_URL}`;
  if (!text.slice(scheme.length + 1).startsWith('//')) return `${shown} is not a URL: write it as ${scheme}://user@host:5432/database`;
  // The authority: user@host:port, the host in brackets when it is an IPv6 address.
  const port = /^[a-z]+:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*)(?::([^/?#]*))?/i.exec(text)?.[1];
  if (port !== undefined && port !== '' && (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65_535)) {
    return `the port in ${shown} must be a number from 1 to 65535, not ${JSON.stringify(port)}`;
  }
  if (!url) return `${shown} is not a valid URL: write it as ${scheme}://user@host:5432/database (a password with @, : or / in it written as %40, %3A, %2F)`;
  if (url.hostname === '') return `${shown} names no host: write it as ${scheme}://user@host:5432/database`;
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && !SSL_MODES.includes(sslmode)) return `sslmode in ${shown} must be one of ${SSL_MODES.join(', ')}, not ${JSON.stringify(sslmode)}`;
  if (sslmode === 'verify-ca' && !url.searchParams.has('sslrootcert')) return `sslmode=verify-ca in ${shown} needs sslrootcert=FILE, the certificate of the authority that signed the server's (or use sslmode=verify-full)`;
  return undefined;
}

/** The store a repository uses: `--store`, else REPODEX_STORE, else config `store`, else the embedded one. */
export function storeSpecFor(root: string, options: { readonly flag?: string | undefined; readonly env?: NodeJS.ProcessEnv } = {}): StoreSpec {
  const env = options.env ?? process.env;
  if (options.flag !== undefined) return parseStoreSetting(options.flag, '--store');
  if (env.REPODEX_STORE !== undefined && env.REPODEX_STORE !== '') return parseStoreSetting(env.REPODEX_STORE, 'REPODEX_STORE');
  let configured: string | undefined;
  try {
    configured = loadContext(root).loaded.config.store;
  } catch {
    configured = undefined; // an unreadable config is reported by whatever reads it next
  }
  return configured === undefined ? { kind: 'fs' } : parseStoreSetting(configured, 'store in .repodex/config.json');
}

/** One pool per database URL in a process: every repository and engine on it shares the connections. */
const pools = new Map<string, SqlPool>();

/**
 * A pool that loads the PostgreSQL driver on first use: commands on the embedded store never
 * load it (it is a separate chunk of the bundle), and nothing below this file imports it.
 */
function lazyPool(url: string): SqlPool {
  let real: Promise<SqlPool> | undefined;
  const pool = (): Promise<SqlPool> => (real ??= import('./pg-driver.js').then((driver) => driver.pgPool(url, describeUrl(url))));
  return {
    query: async (text, params) => (await pool()).query(text, params),
    connect: async (): Promise<HeldSession> => (await pool()).connect(),
    end: async () => {
      if (real) await (await real).end();
    },
  };
}

/** Open the store `spec` names for the repository at `root`. */
export function openStore(root: string, spec: StoreSpec): IndexStore {
  const dataDir = repoPaths(root).dataDir;
  if (spec.kind === 'fs') return new FsStore(dataDir);
  return new PgStore(poolFor(spec.url), root, describeUrl(spec.url), localParseCache(dataDir), () => removeEmbedderTable(dataDir));
}

/** The pool of a database URL, shared by everything in this process that uses it. */
function poolFor(url: string): SqlPool {
  let pool = pools.get(url);
  if (!pool) pools.set(url, (pool = lazyPool(url)));
  return pool;
}

/**
 * `repodex db distribute`: spread the PostgreSQL store's tables over the Citus cluster the store
 * URL names (a no-op on plain PostgreSQL). The store comes from `--store`, REPODEX_STORE or the
 * config of the repository here, if any.
 */
export async function distributeStore(options: ComposeOptions = {}): Promise<DistributeReport & { readonly where: string }> {
  let root: string;
  try {
    root = discoverRoot(options.cwd ?? process.cwd(), options.root, false);
  } catch {
    root = options.cwd ?? process.cwd();
  }
  const spec = storeSpecFor(root, { flag: options.store });
  if (spec.kind === 'fs') {
    throw new RepodexError('BAD_REQUEST', 'db distribute works on a PostgreSQL store, and the store here is the embedded one (.repodex/): pass --store postgres://…', { selfContained: true });
  }
  const where = describeUrl(spec.url);
  return { ...(await distribute(poolFor(spec.url), where)), where };
}

/** The registry of a team server on `spec`'s store: a file in `folder` on the embedded store, the `repos` table on PostgreSQL. */
export function openRegistry(spec: StoreSpec, folder: string): RepoRegistry {
  return spec.kind === 'fs' ? new FileRegistry(folder) : new PgRegistry(poolFor(spec.url), describeUrl(spec.url));
}

/** The index store for a root, as `--store`, REPODEX_STORE or the config choose it. */
export function createStore(root: string, env: NodeJS.ProcessEnv = process.env, flag?: string): IndexStore {
  return openStore(root, storeSpecFor(root, { flag, env }));
}

/** The only place that picks concrete backends: an engine for one-shot commands (syncs in this thread, stat-based freshness). */
export function createEngine(options: ComposeOptions = {}): Engine {
  const root = discoverRoot(options.cwd ?? process.cwd(), options.root, options.requireRepository ?? false);
  const spec = storeSpecFor(root, { flag: options.store, env: process.env });
  const budgetMs = options.firstAnswer && spec.kind === 'fs' ? firstAnswerMs() : 0;
  return new Engine(root, openStore(root, spec), {
    autoIndex: options.autoIndex ?? autoIndexEnabled(),
    ranking: options.ranking ?? rankingFromEnv(),
    limits: options.limits,
    embedders: createEmbedder,
    ...(budgetMs > 0 ? { firstAnswer: { budgetMs, minBytes: FIRST_ANSWER_MIN_BYTES, continueInBackground: () => syncInBackground(root) } } : {}),
  });
}

/** A long-running server's engine: syncs in a worker thread, freshness from a file watcher (falling back to stats). */
export interface ServerEngine {
  readonly engine: Engine;
  /** Why there is no file watching (the engine then checks stats on every request), or undefined. */
  readonly watchProblem: string | undefined;
  /**
   * Re-index changes in the background as they happen (`watch`, `serve --watch`): debounced,
   * coalesced, one sync at a time; reads meanwhile answer from the previous generation with a
   * warning. Runs one sync first. `debounceMs` defaults to config `watch.debounce_ms`; returns
   * the one in use. Throws WATCH_UNAVAILABLE without a watcher.
   */
  watch(debounceMs: number | undefined, events: { onSync?(summary: SyncSummary): void; onError?(error: unknown): void }, stop?: AbortSignal): Promise<number>;
  /** Stop re-indexing in the background (a running re-index is interrupted); reads sync on demand again. */
  unwatch(): Promise<void>;
  /** Whether changes are re-indexed in the background now. */
  readonly watching: boolean;
  /** Stop watching (a running sync is interrupted, nothing half-written is left) and stop the sync worker. */
  close(): Promise<void>;
}

/** Compose a server's engine: a file watcher feeding a freshness probe, and a worker-thread sync runner. */
export async function createServerEngine(options: ComposeOptions = {}): Promise<ServerEngine> {
  const root = discoverRoot(options.cwd ?? process.cwd(), options.root, options.requireRepository ?? false);
  const spec = storeSpecFor(root, { flag: options.store });
  const store = openStore(root, spec);
  // .repodex/ is created before watching starts, so creating it is not a change to re-index.
  new Engine(root, store, { autoIndex: false }).init();
  // Read before the watcher starts: an invalid REPODEX_RANKING must not leave a watcher running (it would keep a server from exiting).
  const ranking = options.ranking ?? rankingFromEnv();
  const watcher = new RepoWatcher(root);
  let watchProblem: string | undefined;
  try {
    await watcher.start();
  } catch (error) {
    watchProblem = error instanceof Error ? error.message : String(error);
  }
  // A server of one repository has a pool of its own; a server of many hands them all one.
  const pool = options.pool ?? workerPool();
  const runner = pool.runner(root, spec, store);
  const probe = new WatchProbe(watcher);
  const answerer = pool.answerer(root, spec, { ranking, limits: options.limits });
  const engine = new Engine(root, store, {
    autoIndex: options.autoIndex ?? autoIndexEnabled(),
    ranking,
    probe,
    runner,
    limits: options.limits,
    embedders: createEmbedder,
    embedInBackground: true,
    ...(answerer ? { answerer } : {}),
  });
  let loop: WatchLoop | undefined;
  return {
    engine,
    watchProblem,
    async watch(debounceMs, events, stop) {
      if (watchProblem !== undefined) throw new RepodexError('WATCH_UNAVAILABLE', watchProblem);
      const debounce = debounceMs ?? loadContext(root).loaded.config.watch.debounce_ms;
      if (loop) return debounce;
      loop = new WatchLoop(engine, watcher, debounce, events, stop);
      probe.refreshesInBackground = true;
      await loop.syncNow();
      return debounce;
    },
    async unwatch() {
      const running = loop;
      loop = undefined;
      probe.refreshesInBackground = false;
      await running?.stop();
    },
    get watching() {
      return loop !== undefined;
    },
    async close() {
      await loop?.stop();
      await watcher.stop();
      await runner.close();
      if (!options.pool) await pool.close();
    },
  };
}
