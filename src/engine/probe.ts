import type { IndexView } from '../store/backend.js';
import type { RepoContext } from './context.js';
import { describeChanges, treeChanges } from './status.js';

/**
 * Tells the engine whether files changed since a generation was synced. The default compares
 * stats (cheap for one-shot commands); a server with a file watcher answers from its events.
 */
export interface ChangeProbe {
  /** Why the tree no longer matches `view` (empty when it does). */
  check(ctx: RepoContext, view: IndexView): Promise<string[]>;
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
    const described = describeChanges(treeChanges(ctx, view));
    return described ? [described] : [];
  },
  syncStarting: () => 0,
  synced() {},
  refreshesInBackground: false,
};
