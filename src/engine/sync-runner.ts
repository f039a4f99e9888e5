import type { IndexStore } from '../store/backend.js';
import type { RepoContext } from './context.js';
import { type FirstAnswer, type SyncEvent, type SyncSummary, runSync } from './sync.js';
import { type EmbedSummary, runEmbed } from './embed.js';
import type { Embedder } from '../vector/embedder.js';

/** Makes the embedder a config names (undefined: embeddings off); compose.ts supplies it. */
export type EmbedderFactory = (root: string, config: RepoContext['loaded']['config']) => Promise<Embedder | undefined>;

/** Options of one sync run. */
export interface RunOptions {
  readonly force?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly firstAnswer?: FirstAnswer | undefined;
}

/** Where a sync runs: in this thread (one-shot commands) or in a worker (servers, so requests keep being answered). */
export interface SyncRunner {
  /** Run one sync; the caller holds the writer lock. */
  run(ctx: RepoContext, options: RunOptions, onEvent?: (event: SyncEvent) => void): Promise<SyncSummary>;
  /** Embed the current generation's chunks that have no vector yet (the runner takes the vectors lock). */
  embed(ctx: RepoContext, embedder: Embedder, options: RunOptions, onEvent?: (event: SyncEvent) => void): Promise<EmbedSummary>;
  close(): Promise<void>;
}

/** Drive a sync generator to its summary, handing progress events to `onEvent`. */
export async function drive<T>(run: AsyncGenerator<SyncEvent, T, undefined>, onEvent?: (event: SyncEvent) => void): Promise<T> {
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
    embed: (ctx, embedder, options, onEvent) => drive(runEmbed(ctx, store, embedder, options), onEvent),
    close: async () => undefined,
  };
}
