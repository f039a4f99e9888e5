import type { CatalogView } from '../store/backend.js';
import type { RepoContext } from './context.js';
import { type Changes, sameControls } from './changes.js';
import { describeChanges, treeChanges } from './status.js';

/** What a probe found. */
export interface TreeCheck {
  /** Why the tree no longer matches the generation (empty when it does). */
  readonly reasons: string[];
  /**
   * The tree matches, but the generation's record of the control files' stats no longer holds,
   * so every check proves the rules the same by a full walk; a sync would record them.
   */
  readonly recordOutdated: boolean;
  /** What changed, when the check walked the tree to find out (undefined when a watcher proved nothing did). */
  readonly changes?: Changes;
}

/**
 * Tells the engine whether files changed since a generation was synced. The default compares
 * stats (cheap for one-shot commands); a server with a file watcher answers from its events.
 */
export interface ChangeProbe {
  /** Whether the tree still matches `view`. */
  check(ctx: RepoContext, view: CatalogView): Promise<TreeCheck>;
  /** A sync is starting: returns a mark to hand to `synced` once it has committed. */
  syncStarting(): number;
  /** The sync that started at `mark` committed `generation`: changes seen before it are in the index. */
  synced(mark: number, generation: number): void;
  /** True when changes are re-indexed in the background (watch mode): reads then answer at once, with a warning. */
  readonly refreshesInBackground: boolean;
}

/** The stat-based probe: every catalogued file and changed folder, compared with the generation. */
export const statProbe: ChangeProbe = {
  async check(ctx, view) {
    const changes = treeChanges(ctx, view);
    const described = describeChanges(changes);
    return described ? { reasons: [described], recordOutdated: false, changes } : { reasons: [], recordOutdated: !sameControls(view.catalog().tree, changes.tree), changes };
  },
  syncStarting: () => 0,
  synced() {},
  refreshesInBackground: false,
};
