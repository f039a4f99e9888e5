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
  search: async (engine, request, options) =>
    searchNotes(request, await engine.search({ q: request.q, top_k: request.top_k, mode: request.mode, glob: request.glob, lang: request.lang }, options.onEvent)),
  fetch: (engine, request, options) => engine.fetch(request.ids, request.max_lines ?? DEFAULTS.max_lines, options.onEvent),
  open: async (engine, request) => engine.open(request.path, request.start_line, request.end_line),
  outline: (engine, request) => engine.outline(request.path),
  files: (engine, request, options) => engine.files(request.glob, request.limit ?? DEFAULTS.files_limit, request.include_hidden === true, options.onEvent, request.blocked === true),
  bundle: async (engine, request, options) => {
    const report = await engine.bundle({ prompt: request.prompt, max_files: request.max_files, max_lines: request.max_lines, include_tests: request.include_tests }, options.onEvent);
    const note = capNote(request.max_files, report.budget.max_files, 'files', 'a bundle cites', 'max_bundle_files');
    return note ? { ...report, warnings: [...report.warnings, note] } : report;
  },
  audit: (engine, request) => engine.audit(request.since, request.limit ?? DEFAULTS.audit_limit),
  verify: (engine) => engine.verify(),
  clean: (engine) => engine.clean(),
};

/** What to say when a server limit cut what a request asked for (silently answering fewer would mislead). */
function capNote(asked: number | undefined, given: number, noun: string, what: string, limit: string): string | undefined {
  if (asked === undefined || asked <= given) return undefined;
  return `asked for ${asked} ${noun}; ${what} at most ${given} here (limits.${limit} in .repodex/config.json, or --${limit.replace(/_/g, '-')} on serve)`;
}

/** Words in Latin script: what the index is made of (code, its English names and comments). */
const LATIN = /[a-z]/;

/** A search answer with what it cannot say by itself: a capped `top_k`, a query in another script that found nothing. */
function searchNotes(request: RequestOf<'search'>, report: ResponseOf<'search'>): ResponseOf<'search'> {
  const notes: string[] = [];
  const capped = capNote(request.top_k, report.top_k, 'results', 'a search returns', 'max_search_hits');
  if (capped) notes.push(capped);
  if (report.results.length === 0 && report.terms.length > 0 && !report.terms.some((term) => LATIN.test(term))) {
    notes.push('the query has no words in Latin script, and code is named and commented mostly in English: ask again in English words or identifiers');
  }
  return notes.length > 0 ? { ...report, warnings: [...report.warnings, ...notes] } : report;
}

/** Run one validated request against the engine; the result is the `data` every front end emits. */
export function handle<O extends Op>(engine: Engine, request: RequestOf<O>, options: HandleOptions = {}): Promise<ResponseOf<O>> {
  return (HANDLERS[request.op] as Handler<O>)(engine, request, options);
}

/** Whether a response is a refusal (a blocked or failed read): the CLI exits 1 for those. */
export function isRefusal(response: unknown): boolean {
  return typeof response === 'object' && response !== null && 'error' in response && 'hint' in response;
}
