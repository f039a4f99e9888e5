import type { Engine } from '../engine/engine.js';
import type { SyncEvent } from '../engine/sync.js';
import { DEFAULTS, type Request } from './schemas.js';

/** Options a front end may set for one request. */
export interface HandleOptions {
  /** Progress of any sync the request runs (the CLI draws a bar; servers pass nothing). */
  readonly onEvent?: (event: SyncEvent) => void;
  /**
   * Check the tree before searching and sync when it changed (one-shot CLI). Servers skip it:
   * a walk per query would dominate latency; they flag stale results per file instead.
   */
  readonly refreshIfDirty?: boolean;
}

/** Run one validated request against the engine; the returned object is the `data` every front end emits. */
export async function handleRequest(engine: Engine, request: Request, options: HandleOptions = {}): Promise<unknown> {
  switch (request.op) {
    case 'status':
      return engine.status();
    case 'sync':
      return engine.sync({ force: request.force }, options.onEvent);
    case 'search': {
      const refresh = options.refreshIfDirty ? await refreshIfDirty(engine, options.onEvent) : undefined;
      return engine.search(
        { q: request.q, top_k: request.top_k, mode: request.mode, glob: request.glob, lang: request.lang },
        options.onEvent,
        refresh,
      );
    }
    case 'fetch':
      return engine.fetch(request.ids, request.max_lines ?? DEFAULTS.max_lines);
    case 'open':
      return engine.open(request.path, request.start_line, request.end_line);
    case 'outline':
      return engine.outline(request.path);
    case 'files':
      return engine.files(request.glob, request.limit ?? DEFAULTS.files_limit);
  }
}

async function refreshIfDirty(engine: Engine, onEvent?: (event: SyncEvent) => void): Promise<{ synced?: Awaited<ReturnType<Engine['sync']>>; warnings: string[] }> {
  if (!(await engine.usableView())) return { warnings: [] }; // search builds a missing or unreadable index itself
  const reasons = await engine.staleness();
  if (reasons.length === 0) return { warnings: [] };
  if (!engine.autoIndex) return { warnings: [`index is stale (${reasons.join('; ')}): run \`repodex sync\``] };
  if (engine.syncRunning()) return { warnings: ['a sync is running: results come from the previous index'] };
  return { synced: await engine.sync({}, onEvent), warnings: [] };
}
