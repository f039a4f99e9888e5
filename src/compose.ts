import { discoverRoot, repoPaths } from './core/paths.js';
import { Engine } from './engine/engine.js';
import { type RankingProfile, rankingFromEnv } from './search/ranking.js';
import { FsStore } from './store/fs/fs-store.js';

/** Options every front end accepts for choosing a repository. */
export interface ComposeOptions {
  /** Where to start looking for the repository root (default: the working directory). */
  readonly cwd?: string;
  /** An explicit root (`--root`). */
  readonly root?: string;
  /** bm25 structure signals; default from the environment (`REPODEX_BOOSTS`, `REPODEX_RANKING`). */
  readonly ranking?: RankingProfile;
}

/** Whether automatic indexing is allowed in this environment (`REPODEX_INDEXING=0` turns it off). */
export function autoIndexEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.REPODEX_INDEXING !== '0' && env.REPODEX_INDEXING?.toLowerCase() !== 'off';
}

/** The only place that picks concrete backends: today the embedded file store. */
export function createEngine(options: ComposeOptions = {}): Engine {
  const root = discoverRoot(options.cwd ?? process.cwd(), options.root);
  return new Engine(root, new FsStore(repoPaths(root)), { autoIndex: autoIndexEnabled(), ranking: options.ranking ?? rankingFromEnv() });
}
