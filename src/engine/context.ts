import { type LoadedConfig, loadConfig } from '../core/config.js';
import { type RepoPaths, repoPaths } from '../core/paths.js';
import { Denylist } from '../safety/denylist.js';
import { PathGuard } from '../safety/path-guard.js';

/** What every engine operation needs about one repository: where it is, its config, its safety rules. */
export interface RepoContext {
  readonly paths: RepoPaths;
  readonly loaded: LoadedConfig;
  readonly denylist: Denylist;
  readonly guard: PathGuard;
}

/** Load config and build safety rules for a root (re-read on every call: config may change between calls). */
export function loadContext(root: string): RepoContext {
  const paths = repoPaths(root);
  const loaded = loadConfig(paths.config);
  const denylist = new Denylist(loaded.config.denylist);
  return { paths, loaded, denylist, guard: new PathGuard(root, denylist) };
}
