import { isAbsolute, join, resolve } from 'node:path';
import type { Config } from './core/config.js';
import { discoverRoot, repoPaths } from './core/paths.js';
import { RepodexError } from './core/errors.js';
import type { LimitOverrides } from './core/limits.js';
import { loadContext } from './engine/context.js';
import { Engine } from './engine/engine.js';
import type { SyncSummary } from './engine/sync.js';
import { RepoWatcher, WatchLoop, WatchProbe } from './engine/watch.js';
import { workerRunner } from './engine/worker-runner.js';
import { type RankingProfile, rankingFromEnv } from './search/ranking.js';
import type { IndexStore } from './store/backend.js';
import { FsStore } from './store/fs/fs-store.js';
import { VECTORS_DIR } from './store/fs/fs-vectors.js';
import type { Embedder } from './vector/embedder.js';
import { BuiltinEmbedder } from './vector/providers/builtin.js';
import { createOpenAiEmbedder } from './vector/providers/openai.js';

/**
 * The embedder a config names (SPEC §6), or undefined when embeddings are off. `onnx` loads
 * transformers.js only here, on first use; `openai` takes its key from REPODEX_EMBEDDINGS_API_KEY.
 */
export async function createEmbedder(root: string, config: Config, env: NodeJS.ProcessEnv = process.env): Promise<Embedder | undefined> {
  const settings = config.embeddings;
  switch (settings.provider) {
    case 'off':
      return undefined;
    case 'builtin':
      return new BuiltinEmbedder(join(repoPaths(root).dataDir, VECTORS_DIR, 'builtin-table.bin'));
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
    case 'openai':
      return createOpenAiEmbedder({
        url: settings.url!,
        model: settings.model!,
        dim: settings.dim!,
        ...(env.REPODEX_EMBEDDINGS_API_KEY ? { apiKey: env.REPODEX_EMBEDDINGS_API_KEY } : {}),
        ...(settings.batch_size !== undefined ? { batchSize: settings.batch_size } : {}),
        ...(settings.timeout_ms !== undefined ? { timeoutMs: settings.timeout_ms } : {}),
        ...(settings.query_prefix !== undefined ? { queryPrefix: settings.query_prefix } : {}),
        ...(settings.document_prefix !== undefined ? { documentPrefix: settings.document_prefix } : {}),
      });
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
}

/** Whether automatic indexing is allowed in this environment (`REPODEX_INDEXING=0` turns it off). */
export function autoIndexEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.REPODEX_INDEXING !== '0' && env.REPODEX_INDEXING?.toLowerCase() !== 'off';
}

/** The backends `REPODEX_STORE` can name (only the embedded one exists so far). */
export const STORES = ['fs'] as const;

/** The index store for a root: the embedded file store under `.repodex/` (`REPODEX_STORE` picks another once one exists). */
export function createStore(root: string, env: NodeJS.ProcessEnv = process.env): IndexStore {
  const kind = env.REPODEX_STORE ?? 'fs';
  if (kind !== 'fs') throw new RepodexError('ENV_INVALID', `REPODEX_STORE=${kind}: the stores are ${STORES.join(', ')}`);
  return new FsStore(repoPaths(root).dataDir);
}

/** The only place that picks concrete backends: an engine for one-shot commands (syncs in this thread, stat-based freshness). */
export function createEngine(options: ComposeOptions = {}): Engine {
  const root = discoverRoot(options.cwd ?? process.cwd(), options.root, options.requireRepository ?? false);
  return new Engine(root, createStore(root), { autoIndex: autoIndexEnabled(), ranking: options.ranking ?? rankingFromEnv(), limits: options.limits, embedders: createEmbedder });
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
  /** Stop watching (a running sync is interrupted, nothing half-written is left) and stop the sync worker. */
  close(): Promise<void>;
}

/** Compose a server's engine: a file watcher feeding a freshness probe, and a worker-thread sync runner. */
export async function createServerEngine(options: ComposeOptions = {}): Promise<ServerEngine> {
  const root = discoverRoot(options.cwd ?? process.cwd(), options.root, options.requireRepository ?? false);
  const store = createStore(root);
  // .repodex/ is created before watching starts, so creating it is not a change to re-index.
  new Engine(root, store, { autoIndex: false }).init();
  const watcher = new RepoWatcher(root);
  let watchProblem: string | undefined;
  try {
    await watcher.start();
  } catch (error) {
    watchProblem = error instanceof Error ? error.message : String(error);
  }
  const runner = workerRunner(root, store);
  const probe = new WatchProbe(watcher);
  const engine = new Engine(root, store, {
    autoIndex: autoIndexEnabled(),
    ranking: options.ranking ?? rankingFromEnv(),
    probe,
    runner,
    limits: options.limits,
    embedders: createEmbedder,
    embedInBackground: true,
  });
  let loop: WatchLoop | undefined;
  return {
    engine,
    watchProblem,
    async watch(debounceMs, events, stop) {
      if (watchProblem !== undefined) throw new RepodexError('WATCH_UNAVAILABLE', watchProblem);
      const debounce = debounceMs ?? loadContext(root).loaded.config.watch.debounce_ms;
      loop = new WatchLoop(engine, watcher, debounce, events, stop);
      probe.refreshesInBackground = true;
      await loop.syncNow();
      return debounce;
    },
    async close() {
      await loop?.stop();
      await watcher.stop();
      await runner.close();
    },
  };
}
