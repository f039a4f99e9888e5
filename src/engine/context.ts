import { type LoadedConfig, configLimits, loadConfig } from '../core/config.js';
import { type LimitOverrides, type Limits, resolveLimits } from '../core/limits.js';
import { type RepoPaths, repoPaths } from '../core/paths.js';
import { Denylist } from '../safety/denylist.js';
import { PathGuard } from '../safety/path-guard.js';

/** What every engine operation needs about one repository: where it is, its config, its safety rules, its limits. */
export interface RepoContext {
  readonly paths: RepoPaths;
  readonly loaded: LoadedConfig;
  readonly denylist: Denylist;
  readonly guard: PathGuard;
  /**
   * The limits answers obey: defaults < config `limits.*` < the overrides a server was started
   * with. Indexing uses the config's own (`configLimits`), so every process builds the same index.
   */
  readonly limits: Limits;
}

/** Load config and build safety rules for a root (re-read on every call: config may change between calls). */
export function loadContext(root: string, overrides: LimitOverrides = {}): RepoContext {
  const paths = repoPaths(root);
  const loaded = loadConfig(paths.config);
  const denylist = new Denylist(loaded.config.denylist);
  return { paths, loaded, denylist, guard: new PathGuard(root, denylist), limits: resolveLimits(configLimits(loaded.config), overrides) };
}
