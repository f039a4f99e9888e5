import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, sep } from 'node:path';
import { type ServerEngine, createServerEngine, openRegistry } from './compose.js';
import { RepodexError, errorMessage, isErrnoException } from './core/errors.js';
import type { LimitOverrides } from './core/limits.js';
import { DATA_DIR_NAME } from './core/paths.js';
import { type SyncProgress, isLexicalPhase } from './engine/engine.js';
import type { SyncSummary } from './engine/sync.js';
import { type WorkerPool, workerPool } from './engine/worker-runner.js';
import type { StoreSpec } from './store/backend.js';
import type { RegisteredRepo, RepoRegistry } from './store/registry.js';

/** What a team server is started with. */
export interface HostOptions {
  /** Where every repository's index lives: each one's `.repodex/`, or one PostgreSQL database. */
  readonly store: StoreSpec;
  /** The server's folder: its registry on the embedded store, and its own audit log. */
  readonly folder: string;
  /** Limits set by flags, over each repository's config. */
  readonly limits?: LimitOverrides;
  /** Automatic indexing on reads (default on). */
  readonly autoIndex?: boolean;
  /** Only roots inside these folders may be registered (default: any the server may read). */
  readonly allowRoots?: readonly string[];
  /** Threads for syncs and for embedding runs, shared by every repository (default 1 and 1). */
  readonly syncThreads?: number;
  readonly embedThreads?: number;
  /** Threads that answer searches, fetches and outlines once the freshness check is done (default 0: the main thread answers). */
  readonly answerThreads?: number;
  /** Quiet period before a watched repository re-indexes (default: its config's). */
  readonly debounceMs?: number;
  /** Where background failures are told (a watched repository's failed re-index). */
  readonly log: (message: string) => void;
}

/** A repository's index status (seed 001 §2.8's fields), with progress while it indexes. */
export interface IndexStatus {
  readonly repo_id: string;
  readonly name: string;
  readonly root: string;
  readonly index_status: 'pending' | 'indexing' | 'ready' | 'stale';
  readonly last_indexed_commit: string | null;
  readonly last_indexed_at: string | null;
  readonly current_head: string | null;
  readonly is_stale: boolean;
  readonly chunk_count: number;
  readonly files_indexed: number;
  readonly chunks_with_embeddings: number;
  /** Why there are fewer vectors than chunks, when something says (embeddings off, too few terms to learn from, a failed run), or null. */
  readonly vectors_note: string | null;
  readonly watcher_active: boolean;
  /** How far the running sync or embedding run has come, or null (index_status is `indexing` only while the lexical index is built: vectors are made after it, in the background). */
  readonly progress: SyncProgress | null;
  /** Why it is stale (files changed, HEAD moved, rules changed), and what is damaged. */
  readonly reasons: string[];
  readonly damage: string[];
}

/** A registered repository with its state at a glance (`GET /repos`). */
export interface RepoListing extends RegisteredRepo {
  readonly index_status: IndexStatus['index_status'];
  readonly progress: SyncProgress | null;
  /** Why the repository cannot be served now (its root is gone or unreadable), or null. */
  readonly problem: string | null;
}

/** The server's health (`GET /health`). */
export interface HostHealth {
  readonly ok: boolean;
  readonly store: { readonly kind: 'fs' | 'postgres'; readonly where: string; readonly reachable: boolean; readonly problem: string | null };
  readonly repos: { readonly total: number; readonly ready: number; readonly indexing: number; readonly stale: number; readonly pending: number; readonly unavailable: number };
}

const MAX_NAME_CHARS = 100;
/** How long a read of the registry answers which repositories there are, for requests that name one. */
const SNAPSHOT_MS = 1000;

/**
 * The repositories a team server serves: a registry (the store keeps it), and an engine per
 * repository, opened on first use and kept, every one's syncs and embedding runs on one shared
 * pool of worker threads — one repository's re-index never stalls another's search, and a
 * hundred repositories do not start a hundred threads.
 */
export class RepoHost {
  private readonly engines = new Map<string, Promise<ServerEngine>>();
  /** The registry as last read (see `snapshot`); cleared by every change this server makes. */
  private known: { at: number; repos: RegisteredRepo[] } | undefined;
  private readonly pool: WorkerPool;
  private closed = false;

  private constructor(
    readonly registry: RepoRegistry,
    private readonly options: HostOptions,
  ) {
    this.pool = workerPool({ syncs: options.syncThreads ?? 1, embeds: options.embedThreads ?? 1, answers: options.answerThreads ?? 0 });
  }

  /** Open the registry (checking the store is usable) and start watching the repositories that were watched. */
  static async open(options: HostOptions): Promise<RepoHost> {
    const host = new RepoHost(openRegistry(options.store, options.folder), options);
    const repos = await host.registry.list();
    for (const repo of repos.filter((entry) => entry.watch)) {
      host.startWatching(repo).catch((error: unknown) => options.log(`repodex: cannot watch ${repo.name} (${repo.root}): ${errorMessage(error)}`));
    }
    return host;
  }

  get storeKind(): 'fs' | 'postgres' {
    return this.options.store.kind;
  }

  async list(): Promise<RepoListing[]> {
    const repos = await this.registry.list();
    return Promise.all(
      repos.map(async (repo) => {
        try {
          const engine = await this.engineOf(repo);
          return { ...repo, index_status: await engine.engine.quickState(), progress: engine.engine.progress ?? null, problem: null };
        } catch (error) {
          return { ...repo, index_status: 'pending' as const, progress: null, problem: errorMessage(error) };
        }
      }),
    );
  }

  /**
   * The registered repositories as read at most SNAPSHOT_MS ago (`fresh`: now). Another server on
   * the same database may have changed them since: a repository it registered is found on the
   * read a miss makes; one it removed is served for at most that moment longer.
   */
  private async snapshot(fresh = false): Promise<RegisteredRepo[]> {
    if (fresh || !this.known || Date.now() - this.known.at > SNAPSHOT_MS) this.known = { at: Date.now(), repos: await this.registry.list() };
    return this.known.repos;
  }

  /** The registered repository `repoId`, or REPO_UNKNOWN. */
  async get(repoId: string): Promise<RegisteredRepo> {
    // Every request names its repository: a snapshot a moment old answers, and a miss reads the registry again.
    const repo = (await this.snapshot()).find((entry) => entry.repo_id === repoId) ?? (await this.snapshot(true)).find((entry) => entry.repo_id === repoId);
    if (!repo) throw new RepodexError('REPO_UNKNOWN', `no repository ${JSON.stringify(repoId)} is registered here: GET /repos lists them, POST /repos adds one`, { selfContained: true });
    return repo;
  }

  /** The id of the repository `asked` names: its id, or its name when one repository has it; else REPO_UNKNOWN. */
  async resolve(asked: string): Promise<string> {
    const repos = await this.registry.list();
    const byId = repos.find((entry) => entry.repo_id === asked);
    if (byId) return byId.repo_id;
    const named = repos.filter((entry) => entry.name === asked);
    if (named.length === 1) return named[0]!.repo_id;
    if (named.length > 1) throw new RepodexError('BAD_REQUEST', `${named.length} repositories are named ${JSON.stringify(asked)}: name one by its id (GET /repos)`, { selfContained: true });
    throw new RepodexError('REPO_UNKNOWN', `no repository ${JSON.stringify(asked)} is registered here: GET /repos lists them, POST /repos adds one`, { selfContained: true });
  }

  /** The registered repository whose root is `root` (or holds it), or REPO_UNKNOWN. */
  async byRoot(root: string): Promise<RegisteredRepo> {
    let real: string;
    try {
      real = realpathSync(root);
    } catch {
      real = root;
    }
    const repos = await this.registry.list();
    const repo = repos.find((entry) => entry.root === real) ?? repos.find((entry) => isInside(real, entry.root));
    if (!repo) throw new RepodexError('REPO_UNKNOWN', `no registered repository holds ${root}: register it first (repodex repo add ${root})`, { selfContained: true });
    return repo;
  }

  /** Register a root (checked: a readable directory, a git work tree or one with .repodex/). */
  async add(path: string, name?: string): Promise<{ repo: RegisteredRepo; created: boolean }> {
    const root = this.checkRoot(path);
    const label = (name ?? basename(root)).trim();
    if (label === '' || label.length > MAX_NAME_CHARS) throw new RepodexError('BAD_REQUEST', `name must be 1 to ${MAX_NAME_CHARS} characters`);
    this.known = undefined;
    return this.registry.add(root, label);
  }

  /** Stop serving a repository: its watching stops, its engine closes; its index stays. */
  async remove(repoId: string): Promise<RegisteredRepo> {
    const repo = await this.get(repoId);
    const engine = this.engines.get(repoId);
    this.engines.delete(repoId);
    if (engine) await (await engine.catch(() => undefined))?.close();
    await this.registry.remove(repoId);
    this.known = undefined;
    return repo;
  }

  /** The engine of a registered repository (opened on first use). */
  async engine(repoId: string): Promise<ServerEngine> {
    return this.engineOf(await this.get(repoId));
  }

  /** Re-index a repository now (`POST /index/run`, `POST /hooks/push`): one sync at a time per repository. */
  async sync(repoId: string, force: boolean): Promise<SyncSummary> {
    const server = await this.engine(repoId);
    return server.engine.sync({ force, embed: true });
  }

  /** Re-index the repository as its files change (seed 001 §2.7), from now and after restarts. */
  async watch(repoId: string): Promise<IndexStatus> {
    const repo = await this.get(repoId);
    await this.startWatching(repo);
    await this.registry.setWatch(repoId, true);
    this.known = undefined;
    return this.status(repoId);
  }

  async unwatch(repoId: string): Promise<IndexStatus> {
    const server = await this.engine(repoId);
    await server.unwatch();
    await this.registry.setWatch(repoId, false);
    this.known = undefined;
    return this.status(repoId);
  }

  /** Seed 001 §2.8's status of one repository, with progress. */
  async status(repoId: string): Promise<IndexStatus> {
    const repo = await this.get(repoId);
    const server = await this.engineOf(repo);
    const report = await server.engine.status();
    const progress = server.engine.progress ?? null;
    const indexed = report.git?.indexed_commit ?? null;
    const head = report.git?.head ?? null;
    const state = progress && isLexicalPhase(progress.phase) ? 'indexing' : report.state;
    return {
      repo_id: repo.repo_id,
      name: repo.name,
      root: repo.root,
      index_status: state,
      last_indexed_commit: indexed,
      last_indexed_at: report.last_sync,
      current_head: head,
      is_stale: report.state === 'stale' || (head !== null && head !== indexed),
      chunk_count: report.chunks,
      files_indexed: report.files_indexed,
      chunks_with_embeddings: report.semantic?.vectors ?? 0,
      vectors_note: vectorsNote(report.semantic),
      watcher_active: server.watching,
      progress,
      reasons: report.reasons,
      damage: report.damage,
    };
  }

  /** Liveness: the store answers, and the repositories by state. */
  async health(): Promise<HostHealth> {
    const where = this.registry.where;
    let repos: RepoListing[];
    try {
      repos = await this.list();
    } catch (error) {
      return { ok: false, store: { kind: this.storeKind, where, reachable: false, problem: errorMessage(error) }, repos: { total: 0, ready: 0, indexing: 0, stale: 0, pending: 0, unavailable: 0 } };
    }
    const count = (state: IndexStatus['index_status']): number => repos.filter((repo) => repo.problem === null && repo.index_status === state).length;
    return {
      ok: true,
      store: { kind: this.storeKind, where, reachable: true, problem: null },
      repos: { total: repos.length, ready: count('ready'), indexing: count('indexing'), stale: count('stale'), pending: count('pending'), unavailable: repos.filter((repo) => repo.problem !== null).length },
    };
  }

  /** Stop every repository's watching and engine, then the worker threads. */
  async close(): Promise<void> {
    this.closed = true;
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.all(engines.map(async (engine) => (await engine.catch(() => undefined))?.close()));
    await this.pool.close();
    await this.registry.audit.settled();
  }

  private engineOf(repo: RegisteredRepo): Promise<ServerEngine> {
    if (this.closed) return Promise.reject(new RepodexError('INTERNAL', 'the server is stopping'));
    let engine = this.engines.get(repo.repo_id);
    if (!engine) {
      engine = createServerEngine({
        root: repo.root,
        store: this.options.store.kind === 'fs' ? 'fs' : this.options.store.url,
        pool: this.pool,
        limits: this.options.limits,
        autoIndex: this.options.autoIndex,
      });
      // A repository that could not be opened (its folder gone) is tried again on the next request.
      engine.catch(() => this.engines.delete(repo.repo_id));
      this.engines.set(repo.repo_id, engine);
    }
    return engine;
  }

  private async startWatching(repo: RegisteredRepo): Promise<void> {
    const server = await this.engineOf(repo);
    await server.watch(this.options.debounceMs, {
      onError: (error) => this.options.log(`repodex: re-indexing ${repo.name} failed: ${errorMessage(error)} (still watching)`),
    });
  }

  /** The absolute, real root of `path`, or a request error naming what is wrong with it. */
  private checkRoot(path: string): string {
    const refuse = (why: string): RepodexError => new RepodexError('BAD_REQUEST', `root ${JSON.stringify(path)} ${why}`, { selfContained: true });
    if (!isAbsolute(path)) throw refuse('must be an absolute path (as the server sees it)');
    let root: string;
    try {
      root = realpathSync(path);
    } catch (error) {
      throw refuse(isErrnoException(error, 'ENOENT') ? 'does not exist on the server' : `cannot be read by the server (${errorMessage(error)})`);
    }
    if (!statSync(root).isDirectory()) throw refuse('is not a directory');
    try {
      accessSync(root, constants.R_OK | constants.X_OK);
    } catch {
      throw refuse('is a directory the server may not read: give the user the server runs as read access, or register another root');
    }
    const allowed = this.options.allowRoots;
    if (allowed && allowed.length > 0 && !allowed.some((folder) => root === folder || isInside(root, folder))) {
      throw refuse(`is outside the folders this server serves (${allowed.join(', ')}; --allow-roots on serve)`);
    }
    if (!existsSync(join(root, '.git')) && !existsSync(join(root, DATA_DIR_NAME))) {
      throw refuse(`is neither a git work tree nor a folder with ${DATA_DIR_NAME}/: register the top of a checkout, or run \`repodex init\` there first`);
    }
    return root;
  }
}

/** What the vectors panel says when vectors are missing: off, or the problem it names. */
function vectorsNote(semantic: { readonly state: string; readonly problem: string | null } | undefined): string | null {
  if (!semantic) return null;
  if (semantic.state === 'off') return 'embeddings are off (embeddings.provider in the repository\'s .repodex/config.json)';
  return semantic.problem;
}

/** Whether `path` is strictly inside `folder` (both absolute and real). */
function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && !rel.startsWith(`..${sep}`);
}
