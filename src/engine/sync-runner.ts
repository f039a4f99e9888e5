import type { IndexStore } from '../store/backend.js';
import type { RepoContext } from './context.js';
import { type SyncEvent, type SyncSummary, runSync } from './sync.js';

/** Options of one sync run. */
export interface RunOptions {
  readonly force?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Where a sync runs: in this thread (one-shot commands) or in a worker (servers, so requests keep being answered). */
export interface SyncRunner {
  /** Run one sync; the caller holds the writer lock. */
  run(ctx: RepoContext, options: RunOptions, onEvent?: (event: SyncEvent) => void): Promise<SyncSummary>;
  close(): Promise<void>;
}

/** Drive a sync generator to its summary, handing progress events to `onEvent`. */
export async function drive(run: AsyncGenerator<SyncEvent, SyncSummary, undefined>, onEvent?: (event: SyncEvent) => void): Promise<SyncSummary> {
  for (;;) {
    const step = await run.next();
    if (step.done) return step.value;
    onEvent?.(step.value);
  }
}

/** Syncs run in this thread. */
export function inProcessRunner(store: IndexStore): SyncRunner {
  return {
    run: (ctx, options, onEvent) => drive(runSync(ctx, store, options), onEvent),
    close: async () => undefined,
  };
}
