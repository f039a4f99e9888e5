import type * as z from 'zod/mini';
import type { LimitName } from '../core/limits.js';
import type { Engine } from '../engine/engine.js';
import type { SyncEvent } from '../engine/sync.js';
import { bundleNotes, searchNotes } from './notes.js';
import type { ResponseOf } from './responses.js';
import {
  AuditRequest,
  BundleRequest,
  CleanRequest,
  DEFAULTS,
  FetchRequest,
  FilesRequest,
  InitRequest,
  type Op,
  OpenRequest,
  OutlineRequest,
  type RequestOf,
  SearchRequest,
  StatusRequest,
  SyncRequest,
  VerifyRequest,
} from './schemas.js';

/**
 * The op table: every operation once, and every front end generated from it.
 *
 * An entry holds the op's request schema (schemas.ts; its response schema is `RESPONSES[op]` in
 * responses.ts, kept apart so that one-shot commands never build it, and checked against the
 * handler's type at compile time), its handler, its refusal rule (what a refused read inside an
 * answer means), the server limits that cap its fields, and how each front end spells it: the
 * CLI's command, flags and arguments (and the help for them), the MCP tool and its argument
 * names, the HTTP method, path and parameter names, and whether JSONL serves it. A field is named
 * the same on every surface unless an entry says otherwise, and is on every surface that serves
 * the op unless the entry withholds it there and says why: a field added to a request schema is a
 * JSONL field, an MCP argument, an HTTP parameter, a `--repo` parameter and (once its flag's help
 * is written, which the compiler asks for) a CLI flag, with nothing else to change.
 *
 * Adding an operation: its request schema (schemas.ts, and the `Request` union there), its
 * response schema (responses.ts `RESPONSES`), its entry here with its handler, and a printer for
 * the CLI's human output (frontends/cli/op-commands.ts `PRESENTERS`, which the compiler asks
 * for). The MCP tool, the HTTP route and its OpenAPI description, the CLI command and its
 * `--help`, the JSONL op and the `--repo` client follow from the entry.
 */

/** Options a front end may set for one request. */
export interface HandleOptions {
  /** Progress of any sync the request runs (the CLI draws a bar; servers pass nothing). */
  readonly onEvent?: (event: SyncEvent) => void;
  /** Stops a sync the request runs (Ctrl-C in the CLI). */
  readonly signal?: AbortSignal;
}

/** The front ends: the CLI, the JSONL protocol, MCP (stdio and HTTP), the team server's HTTP API. */
export type Surface = 'cli' | 'jsonl' | 'mcp' | 'http';

/** The fields of an op's request, without the envelope's `op` and JSONL's `id`. */
export type FieldOf<O extends Op> = Exclude<keyof RequestOf<O>, 'op' | 'id'> & string;

/** How the CLI takes one field. */
export interface CliField {
  /** The flag that sets it (default: `--` and the field's name in kebab case); null when it is given as the command's arguments only. */
  readonly flag?: string | null;
  /** What its value is called in `--help` (`N`, `G`); none for a boolean flag. */
  readonly value?: string;
  /** What it is called in the usage line when given as arguments (default: `value`). */
  readonly argument?: string;
  /** Its lines in `--help`, after the flag (none for a field given as arguments only). */
  readonly help?: string;
  /** Given as the command's arguments too: all of them joined by spaces (`words`), exactly one (`one`), or a list (`list`, with the flag's comma-separated values). */
  readonly arguments?: 'words' | 'one' | 'list';
  /** What to say when a field given as arguments is missing. */
  readonly missing?: string;
}

/** How a surface names an op's fields, and which it withholds. */
interface Naming<O extends Op> {
  /** Names that differ from the field's (a dotted name nests: MCP's `budget.max_files`). */
  readonly names?: { readonly [F in FieldOf<O>]?: string };
  /** Fields this surface does not take, each with why. */
  readonly withheld?: { readonly [F in FieldOf<O>]?: string };
}

/** One operation. */
export interface OpSpec<O extends Op> {
  readonly request: z.ZodMiniObject & z.ZodMiniType<RequestOf<O>>;
  readonly handle: (engine: Engine, request: RequestOf<O>, options: HandleOptions) => Promise<ResponseOf<O>>;
  /**
   * What a refused read inside the answer means: the whole answer is the refusal (`whole`: open,
   * outline), or each item of a list may be one while the others are served (`items`: a fetch's
   * chunks). Absent: the op never refuses inside its answer.
   */
  readonly refuses?: 'whole' | { readonly items: string };
  /** Fields a server limit caps: a larger value is answered with the limit and a warning (its fixed caps are in the schema: `capOf`). */
  readonly limited?: { readonly [F in FieldOf<O>]?: LimitName };
  readonly cli: { readonly summary: string; readonly about?: string; readonly fields: { readonly [F in FieldOf<O>]: CliField } };
  /** Served over JSONL (`init` and `clean` change the repository's files: the CLI's only). */
  readonly jsonl: boolean;
  readonly mcp?: Naming<O> & { readonly tool: string; readonly description: string };
  readonly http?: Naming<O> & {
    readonly method: 'GET' | 'POST';
    readonly path: string;
    readonly summary: string;
    /** It may run a whole sync: it gets the long request timeout. */
    readonly long?: boolean;
  };
}

/** Why `sync`'s `embeddings` is the CLI's and JSONL's only. */
const EMBEDDER_SWITCH = 'switching the embedder rewrites the repository\'s .repodex/config.json: a decision for its owner, made with `repodex sync --embeddings`';

/** Every operation, in the order help lists them. */
export const OPS: { readonly [O in Op]: OpSpec<O> } = {
  init: {
    request: InitRequest,
    handle: async (engine) => engine.init(),
    cli: { summary: 'create .repodex/ with a default config.json, ignore file and .gitignore', about: 'Idempotent: existing files are never overwritten.', fields: {} },
    jsonl: false,
  },
  status: {
    request: StatusRequest,
    handle: (engine) => engine.status(),
    cli: {
      summary: 'is there an index, is it fresh, is it sound?',
      about: [
        'State: pending (no index yet), indexing (a sync is running), ready, or stale.',
        'Stale when a file was added, removed or changed (size, mtime, ctime or inode: a touched file counts until',
        'the next sync), .repodex/config.json or the indexing rules changed, git HEAD moved, or the index is damaged.',
        'Shows the indexed commit against HEAD.',
        'Damaged: every checksum of every file under .repodex/ that an answer depends on is checked (the index,',
        'the parse cache, the vectors and their graph, the embedding table, history.json, analytics.json, the',
        'audit log), and each damaged file is listed with what fixes it, as `repodex verify` would list it.',
        'Then the vectors: Ready, Building, Stale, Missing or Off (with the reason), model, coverage, size, whether',
        'vector queries scan every vector or use the nearest-neighbour graph (embeddings.ann_from), and',
        'query analytics.',
      ].join('\n'),
      fields: {},
    },
    jsonl: true,
    mcp: {
      tool: 'repo.status',
      description: 'The repository and its index: root, state (pending, indexing, ready, stale), last refresh, file and chunk counts, git commit indexed vs HEAD, outline adapters and the response limits.',
    },
    http: { method: 'GET', path: '/status', summary: 'The whole status of one repository, as `repodex status --json` prints it.' },
  },
  sync: {
    request: SyncRequest,
    handle: (engine, request, options) => engine.sync({ force: request.force, signal: options.signal, provider: request.embeddings }, options.onEvent),
    cli: {
      summary: 'bring the index up to date (only changed files are read)',
      about: [
        'Incremental: new and changed files (by size, mtime, ctime, inode) are read once each, removed ones dropped, and',
        'the result written as a small delta; with nothing changed nothing is written. A file whose content',
        'was parsed before is not parsed again. Chunk ids of unchanged chunks stay valid.',
        'Waits up to 2 s for a sync another process is running, then says so (exit 1).',
        'Shows a progress bar on a terminal and a summary line after; Ctrl-C stops it without writing.',
        'With embeddings on (config embeddings.provider; off by default, since on the measured tasks they did not',
        'rank better than bm25), then embeds the chunks that have no vector yet, for --mode vector|hybrid.',
        'Vectors are keyed by chunk content: an unchanged chunk is never embedded again, not after --force or a',
        'branch switch. An embedder that fails never fails the sync.',
      ].join('\n'),
      fields: {
        force: { help: 'rebuild the whole index (still reusing earlier parses and vectors)' },
        embeddings: {
          value: 'P',
          help: 'use embedder P from now on (written to config.json): builtin (learned from\nthis repository, nothing downloaded), onnx (needs embeddings.model_path),\nopenai (needs embeddings.url, model, dim), off, or on (the configured\nembedder, builtin when embeddings are off)',
        },
      },
    },
    jsonl: true,
    mcp: {
      tool: 'repo.refresh_index',
      description: 'Bring the index up to date now (only changed files are read; force rebuilds everything). Answers added / updated / removed file counts, chunk counts, duration and the new timestamp. Other tools refresh a stale index by themselves.',
      withheld: { embeddings: EMBEDDER_SWITCH },
    },
    http: {
      method: 'POST',
      path: '/index/run',
      summary: 'Re-index now (only changed files are read; force rebuilds everything). Answers the sync counters.',
      long: true,
      withheld: { embeddings: EMBEDDER_SWITCH },
    },
  },
  search: {
    request: SearchRequest,
    handle: async (engine, request, options) => searchNotes(request, await engine.search(fieldsOf(request), options.onEvent)),
    limited: { top_k: 'max_search_hits' },
    cli: {
      summary: 'ranked candidate chunks for an English query',
      about: [
        'Builds the index on first use and refreshes it when files changed (REPODEX_INDEXING=0 or config',
        'auto_index: false turn that off: results then carry a `stale` warning).',
        'Queries may be questions, identifiers or whole bug reports with stack traces (up to 64 KB).',
        'Each hit shows the lines that matched, the declaration they sit in, and why: the matched terms,',
        'then each signal that moved it (path:T, name:T, file:+T, history:T, form:F→T, mention:×2, role:R×W).',
      ].join('\n'),
      fields: {
        q: { value: 'QUERY', argument: '"QUERY"', arguments: 'words', help: 'the query (or give it as the first argument)', missing: 'search needs a query: repodex search "where is the config loaded"' },
        top_k: { value: 'N', help: 'results to return (default 20, at most 20; at most 2 per file)' },
        mode: {
          value: 'M',
          help: 'bm25 (default), idf (plain inverse document frequency), vector (nearest chunk embeddings) or hybrid\n(bm25 and vector fused); vector and hybrid need `repodex sync` to have embedded\nthe chunks, and answer with bm25 and a warning until then',
        },
        glob: { value: 'G', help: 'only paths matching G, e.g. "src/**/*.ts" or "*.py"' },
        lang: { value: 'L', help: 'only one language, e.g. typescript, python, go, markdown' },
      },
    },
    jsonl: true,
    mcp: {
      tool: 'repo.search',
      description:
        'Ranked code chunks for a query in English words or identifiers ("where is the retry handled", "parseConfig"): path, line range, the lines that matched, the declaration they sit in, score, and why (matched terms, then signals such as path:T or history:T). Pasted bug reports and stack traces work as queries. At most 2 results per file. Read more with repo.open_file using the line range. file_glob narrows to paths such as "src/**/*.py", lang to one language (see repo.status adapters for those with outlines). mode: bm25 (default, measured best), vector (nearest chunk embeddings: for questions that name no identifier) or hybrid (both fused; why then carries vector:SIM); vector and hybrid answer with bm25 and a warning until the chunks are embedded.',
      names: { q: 'query', glob: 'file_glob' },
    },
    http: { method: 'POST', path: '/search', summary: 'Ranked code chunks for a query (indexes first when the index is missing or stale).', long: true, names: { q: 'query' } },
  },
  fetch: {
    request: FetchRequest,
    handle: (engine, request, options) => engine.fetch(request.ids, request.max_lines ?? DEFAULTS.max_lines, options.onEvent),
    refuses: { items: 'chunks' },
    cli: {
      summary: 'line-numbered text of chunks by id (at most 5 ids, 120 lines each)',
      about: ['Chunk ids are stable: an id names its chunk for as long as the chunk is unchanged, across syncs.', 'An id whose chunk was edited or removed is refused ("chunk N is gone: search again"); exit 1.'].join('\n'),
      fields: {
        ids: { value: 'A,B,…', argument: 'ID…', arguments: 'list', help: 'chunk ids from a search (or give them as arguments)', missing: 'fetch needs chunk ids from a search: repodex fetch --ids 3,7' },
        max_lines: { value: 'N', help: 'lines per chunk (default 120, at most 120)' },
      },
    },
    jsonl: true,
    http: { method: 'POST', path: '/fetch', summary: 'Line-numbered text of chunks by id (at most 5 ids, 120 lines each).', long: true },
  },
  open: {
    request: OpenRequest,
    handle: async (engine, request) => engine.open(request.path, request.start_line, request.end_line),
    refuses: 'whole',
    cli: {
      summary: 'a bounded, line-numbered range of any file in the repository',
      about: 'Sandboxed: no paths outside the root, no secrets.',
      fields: {
        path: { flag: null, value: 'PATH', arguments: 'one', missing: 'open needs exactly one path: repodex open src/index.ts --start 10 --end 40' },
        start_line: { flag: '--start', value: 'N', help: 'first line (default 1)' },
        end_line: { flag: '--end', value: 'M', help: 'last line (at most 120 lines are returned; `next_start` says where to continue)' },
      },
    },
    jsonl: true,
    mcp: {
      tool: 'repo.open_file',
      description:
        'Numbered lines ("N| text") of one file, from start_line to end_line (at most max_open_lines, 120 by default). `truncated` says whether lines of the range were withheld; `next_start` where to continue. Paths are relative to the repository root (absolute paths inside it work too). Secrets and paths outside the repository are refused with blocked: true.',
    },
    http: { method: 'GET', path: '/open', summary: 'A bounded, line-numbered range of a file (sandboxed, secrets refused).', names: { start_line: 'start', end_line: 'end' } },
  },
  outline: {
    request: OutlineRequest,
    handle: (engine, request) => engine.outline(request.path),
    refuses: 'whole',
    cli: {
      summary: 'the declarations of one file (classes, functions, methods, types, …)',
      about: 'Nested and conditional declarations included, with parent, scope and control-flow context; nothing is executed.\nServed from the index when the file is unchanged since the last sync, else parsed now.',
      fields: { path: { flag: null, value: 'PATH', arguments: 'one', missing: 'outline needs exactly one path: repodex outline src/router.ts' } },
    },
    jsonl: true,
    mcp: {
      tool: 'repo.outline',
      description:
        'The declarations of one file (classes, functions, methods, types, …) with line ranges, signatures, doc lines, parent symbol, scope and whether they sit under control flow. Nothing is executed. Languages: see repo.status adapters.',
    },
    http: { method: 'GET', path: '/outline', summary: 'The declarations of one file.' },
  },
  files: {
    request: FilesRequest,
    handle: (engine, request, options) => engine.files(request.glob, request.limit ?? DEFAULTS.files_limit, request.include_hidden === true, options.onEvent, request.blocked === true),
    cli: {
      summary: 'the catalogued files, with size, mtime, language and state',
      fields: {
        glob: { value: 'G', help: 'only paths matching G, e.g. "src/**/*.ts"' },
        limit: { value: 'N', help: 'at most N files (default 1000, at most 10000)' },
        include_hidden: { help: 'also files under a name starting with "." (.github/, .eslintrc.json)' },
        blocked: { help: 'what is withheld as a secret instead, hidden files too, each with why: a credential\nin its text (rule and line), a secret file name, or a name shaped like a credential' },
      },
    },
    jsonl: true,
    mcp: {
      tool: 'repo.list_files',
      description:
        'Files of the repository the index knows, with size and mtime (path order). Filter with a glob such as "src/**/*.ts"; hidden files (a name starting with ".") only with include_hidden. With blocked, what is withheld as a secret instead, each with a reason (a credential in its text with rule and line, a secret file name, a name shaped like a credential).',
      names: { limit: 'max_results' },
    },
    http: { method: 'GET', path: '/files', summary: 'The catalogued files, with size, mtime and language; with blocked=true, what is withheld as a secret, each with a reason.', long: true },
  },
  bundle: {
    request: BundleRequest,
    handle: async (engine, request, options) => bundleNotes(request, await engine.bundle(fieldsOf(request), options.onEvent)),
    limited: { max_files: 'max_bundle_files' },
    cli: {
      summary: 'the context a task needs: cited excerpts with reasons, within a budget',
      about: [
        'Keywords from the prompt, several searches, excerpts widened to their enclosing declarations, each cited',
        '(path:start-end) with the reason it was chosen. Deterministic: the same prompt on the same index gives the',
        'same bundle. Also written to .repodex/last_bundle.json and .repodex/last_bundle.md.',
      ].join('\n'),
      fields: {
        prompt: { flag: null, value: '"TASK PROMPT"', arguments: 'words', missing: 'bundle needs a task prompt: repodex bundle "add retries to the HTTP client"' },
        max_files: { value: 'N', help: 'files cited (default and most: limits.max_bundle_files, 8)' },
        max_lines: { value: 'N', help: 'lines of excerpts in all (default 400, at most 4000)' },
        include_tests: { help: 'let test files in (left out by default)' },
        strategy: { value: 'S', help: 'deterministic (the default, and the one strategy built); hybrid is taken and\nanswered deterministically, with a warning' },
      },
    },
    jsonl: true,
    mcp: {
      tool: 'repo.build_context_bundle',
      description:
        'The context a task needs, in one call: keywords from the prompt, several searches, excerpts widened to their enclosing declarations, each with a citation (path:start-end) and the reason it was chosen, within a strict budget of files and lines. Deterministic (strategy: deterministic is the one built; hybrid is answered deterministically, with a warning); also written to .repodex/last_bundle.md for people.',
      names: { max_files: 'budget.max_files', max_lines: 'budget.max_total_lines' },
    },
    http: { method: 'POST', path: '/bundle', summary: 'The context a task needs: cited excerpts with reasons, within a budget.', long: true },
  },
  audit: {
    request: AuditRequest,
    handle: (engine, request) => engine.audit(request.since, request.limit ?? DEFAULTS.audit_limit),
    cli: {
      summary: 'recent calls from every front end (.repodex/audit.jsonl, or the audit_log table on a PostgreSQL store)',
      about: [
        'One line per call: time, front end, operation or tool, outcome, blocked, duration, sanitized arguments',
        '(queries and paths, never file contents). The log is rotated past 4 MiB (audit.1.jsonl keeps the previous one).',
      ].join('\n'),
      fields: {
        since: { value: 'T', help: 'only calls from T on: an ISO time (2026-11-24T10:00:00Z) or a duration back from now (15m, 2h, 7d)' },
        limit: { value: 'N', help: 'the newest N calls (default 50, at most 1000)' },
      },
    },
    jsonl: true,
    mcp: {
      tool: 'repo.audit_log',
      description:
        'Recent tool calls from the audit log (.repodex/audit.jsonl, or the audit_log table on a PostgreSQL store; every front end): request id, tool, sanitized arguments, outcome, blocked, duration. since: an ISO time or a duration such as 15m, 2h, 7d.',
    },
    http: { method: 'GET', path: '/audit', summary: 'Recent calls from the repository’s audit log.' },
  },
  verify: {
    request: VerifyRequest,
    handle: (engine) => engine.verify(),
    cli: {
      summary: 'check every checksum, size, version and cross-reference of the index',
      about: [
        'Checks every byte of every file under .repodex/ that an answer depends on: the index (meta.json,',
        'gen-N.rpdx, seg-N.rpdx, with every cross-reference), the parse cache, the vector manifest, log and',
        'graph, the builtin embedding table, history.json, analytics.json, the audit log, and checked.json',
        '(the record of which files a check found sound).',
        'Exits 1 and names each damaged file with its fix when anything is wrong: `repodex sync` repairs all',
        'of them but the audit log, which cannot be rebuilt (the message says what to do). A damaged file is',
        'never used meanwhile.',
      ].join('\n'),
      fields: {},
    },
    jsonl: true,
  },
  clean: {
    request: CleanRequest,
    handle: (engine) => engine.clean(),
    cli: { summary: 'remove the index (keeps config.json and ignore)', about: "Stops the repository's daemon first (serving or still starting). Refuses while a sync is running.", fields: {} },
    jsonl: false,
  },
};

/** A request's fields, without its envelope (`op`, JSONL's `id`): what the engine is asked. */
function fieldsOf<R extends { readonly op: string; readonly id?: unknown }>(request: R): Omit<R, 'op' | 'id'> {
  const { op: _op, id: _id, ...fields } = request;
  return fields;
}

/** Run one validated request against the engine; the result is the `data` every front end emits. */
export function handle<O extends Op>(engine: Engine, request: RequestOf<O>, options: HandleOptions = {}): Promise<ResponseOf<O>> {
  return (OPS[request.op] as OpSpec<O>).handle(engine, request, options);
}
