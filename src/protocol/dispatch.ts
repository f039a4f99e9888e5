import type { Engine } from '../engine/engine.js';
import type { SyncEvent } from '../engine/sync.js';
import type { ResponseOf } from './responses.js';
import { DEFAULTS, type Op, type RequestOf } from './schemas.js';

/** Options a front end may set for one request. */
export interface HandleOptions {
  /** Progress of any sync the request runs (the CLI draws a bar; servers pass nothing). */
  readonly onEvent?: (event: SyncEvent) => void;
  /** Stops a sync the request runs (Ctrl-C in the CLI). */
  readonly signal?: AbortSignal;
}

type Handler<O extends Op> = (engine: Engine, request: RequestOf<O>, options: HandleOptions) => Promise<ResponseOf<O>>;

/**
 * The one typed dispatch: each op's handler returns exactly its response type, so the engine's
 * report types are checked against the response schemas here, at compile time. Every front end
 * goes through `handle`; none calls the engine directly or casts a response.
 */
const HANDLERS: { readonly [O in Op]: Handler<O> } = {
  init: async (engine) => engine.init(),
  status: (engine) => engine.status(),
  sync: (engine, request, options) => engine.sync({ force: request.force, signal: options.signal, provider: request.embeddings }, options.onEvent),
  search: (engine, request, options) =>
    engine.search({ q: request.q, top_k: request.top_k, mode: request.mode, glob: request.glob, lang: request.lang }, options.onEvent),
  fetch: (engine, request, options) => engine.fetch(request.ids, request.max_lines ?? DEFAULTS.max_lines, options.onEvent),
  open: async (engine, request) => engine.open(request.path, request.start_line, request.end_line),
  outline: (engine, request) => engine.outline(request.path),
  files: (engine, request, options) => engine.files(request.glob, request.limit ?? DEFAULTS.files_limit, request.include_hidden === true, options.onEvent),
  bundle: (engine, request, options) =>
    engine.bundle({ prompt: request.prompt, max_files: request.max_files, max_lines: request.max_lines, include_tests: request.include_tests }, options.onEvent),
  audit: (engine, request) => engine.audit(request.since, request.limit ?? DEFAULTS.audit_limit),
  verify: (engine) => engine.verify(),
  clean: (engine) => engine.clean(),
};

/** Run one validated request against the engine; the result is the `data` every front end emits. */
export function handle<O extends Op>(engine: Engine, request: RequestOf<O>, options: HandleOptions = {}): Promise<ResponseOf<O>> {
  return (HANDLERS[request.op] as Handler<O>)(engine, request, options);
}

/** Whether a response is a refusal (a blocked or failed read): the CLI exits 1 for those. */
export function isRefusal(response: unknown): boolean {
  return typeof response === 'object' && response !== null && 'error' in response && 'hint' in response;
}
