import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { type ComposeOptions, createEngine, createServerEngine, distributeStore, parseStoreSetting } from '../../compose.js';
import type { Engine } from '../../engine/engine.js';
import { helpersInBackground } from '../../engine/give-way.js';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import { TOOL_VERSION } from '../../core/version.js';
import { shownFailure } from '../../core/error-log.js';
import { discoverRoot } from '../../core/paths.js';
import { normalizeRelativePath } from '../../safety/path-guard.js';
import { type CallError, type HandleOptions, type Op, Request, type RequestOf, type ResponseOf, call, describeIssues } from '../../protocol/index.js';
import { LIMITS, LIMIT_NAMES, limitProblem } from '../../core/limits.js';
import { serveJsonl } from '../jsonl/server.js';
import type * as McpServerModule from '../mcp/server.js';
import type * as HttpServerModule from '../http/main.js';
import type { ToolNaming } from '../mcp/server.js';

type McpModule = typeof McpServerModule;
type HttpModule = typeof HttpServerModule;
import { bundledScript } from '../../core/bundled.js';
import { importModule } from '../../core/import-module.js';
import {
  humanSafe,
  printAudit,
  printBundle,
  printClean,
  printFetch,
  printFiles,
  printInit,
  printOpen,
  printOutline,
  printSearch,
  printStatus,
  printSyncSummary,
  printVerify,
  printWatchSync,
  shellWord,
  printDistribute,
} from './printers.js';
import { progressBar } from './progress.js';
import { DEFAULT_IDLE_MINUTES, type StopOutcome, daemonStatus, launcherFile, runDaemon, startDaemon, stopDaemon } from './daemon.js';
import { DAEMON_MAX_ENV, DAEMON_MEMORY_ENV, DEFAULT_MAX_DAEMONS, DaemonRegistry, daemonLimits, residentBytes } from './daemon-registry.js';
import { DEFAULT_SERVER, ServerClient, remoteCommand, runRemote, runRepoCommand } from './remote.js';
import { defaultServerFolder } from '../http/access-token.js';
import { type Style, styleFor } from './style.js';

/** Options of the commands that can run on a team server (`--repo ID`). */
const REMOTE_OPTIONS = { repo: { type: 'string' }, server: { type: 'string' }, 'token-file': { type: 'string' } } as const;

const GLOBAL_OPTIONS = {
  root: { type: 'string' },
  store: { type: 'string' },
  json: { type: 'boolean' },
  indexing: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface CommandSpec {
  readonly summary: string;
  readonly usage: string;
  readonly details: string;
  readonly options: Record<string, { type: 'string' | 'boolean'; short?: string }>;
}

const COMMANDS: Record<string, CommandSpec> = {
  init: {
    summary: 'create .repodex/ with a default config.json, ignore file and .gitignore',
    usage: 'repodex init',
    details: 'Idempotent: existing files are never overwritten.',
    options: {},
  },
  status: {
    summary: 'is there an index, is it fresh, is it sound?',
    usage: 'repodex status',
    details: [
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
    options: { ...REMOTE_OPTIONS },
  },
  sync: {
    summary: 'bring the index up to date (only changed files are read)',
    usage: 'repodex sync [--force] [--embeddings builtin|onnx|openai|off|on]',
    details: [
      'Incremental: new and changed files (by size, mtime, ctime, inode) are read once each, removed ones dropped, and',
      'the result written as a small delta; with nothing changed nothing is written. A file whose content',
      'was parsed before is not parsed again. Chunk ids of unchanged chunks stay valid.',
      'Waits up to 2 s for a sync another process is running, then says so (exit 1).',
      'Shows a progress bar on a terminal and a summary line after; Ctrl-C stops it without writing.',
      'With embeddings on (config embeddings.provider; off by default, since on the measured tasks they did not',
      'rank better than bm25), then embeds the chunks that have no vector yet, for --mode vector|hybrid.',
      'Vectors are keyed by chunk content: an unchanged chunk is never embedded again, not after --force or a',
      'branch switch. An embedder that fails never fails the sync.',
      '  --force              rebuild the whole index (still reusing earlier parses and vectors)',
      '  --embeddings P       use embedder P from now on (written to config.json): builtin (learned from',
      '                       this repository, nothing downloaded), onnx (needs embeddings.model_path),',
      '                       openai (needs embeddings.url, model, dim), off, or on (the configured',
      '                       embedder, builtin when embeddings are off)',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, force: { type: 'boolean' }, embeddings: { type: 'string' } },
  },
  search: {
    summary: 'ranked candidate chunks for an English query',
    usage: 'repodex search "QUERY" [--top-k N] [--mode bm25|idf|vector|hybrid] [--glob G] [--lang L]',
    details: [
      'Builds the index on first use and refreshes it when files changed (REPODEX_INDEXING=0 or config',
      'auto_index: false turn that off: results then carry a `stale` warning).',
      'Queries may be questions, identifiers or whole bug reports with stack traces (up to 64 KB).',
      'Each hit shows the lines that matched, the declaration they sit in, and why: the matched terms,',
      'then each signal that moved it (path:T, name:T, file:+T, history:T, form:F→T, mention:×2, role:R×W).',
      '  --q QUERY        the query (or give it as the first argument)',
      '  --top-k N        results to return (default 20, at most 20; at most 2 per file)',
      '  --mode M         bm25 (default), idf (plain inverse document frequency), vector (nearest chunk embeddings) or hybrid',
      '                   (bm25 and vector fused); vector and hybrid need `repodex sync` to have embedded',
      '                   the chunks, and answer with bm25 and a warning until then',
      '  --glob G         only paths matching G, e.g. "src/**/*.ts" or "*.py"',
      '  --lang L         only one language, e.g. typescript, python, go, markdown',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, q: { type: 'string' }, 'top-k': { type: 'string' }, mode: { type: 'string' }, glob: { type: 'string' }, lang: { type: 'string' } },
  },
  fetch: {
    summary: 'line-numbered text of chunks by id (at most 5 ids, 120 lines each)',
    usage: 'repodex fetch --ids 3,7 [--max-lines N]',
    details: [
      'Chunk ids are stable: an id names its chunk for as long as the chunk is unchanged, across syncs.',
      'An id whose chunk was edited or removed is refused ("chunk N is gone: search again"); exit 1.',
      '  --ids A,B,…       chunk ids from a search (or give them as arguments)',
      '  --max-lines N     lines per chunk (default 120, at most 120)',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, ids: { type: 'string' }, 'max-lines': { type: 'string' } },
  },
  open: {
    summary: 'a bounded, line-numbered range of any file in the repository',
    usage: 'repodex open PATH [--start N] [--end M]',
    details: '  --start N   first line (default 1)\n  --end M     last line (at most 120 lines are returned; `next_start` says where to continue)\nSandboxed: no paths outside the root, no secrets.',
    options: { ...REMOTE_OPTIONS, start: { type: 'string' }, end: { type: 'string' } },
  },
  outline: {
    summary: 'the declarations of one file (classes, functions, methods, types, …)',
    usage: 'repodex outline PATH',
    details:
      'Nested and conditional declarations included, with parent, scope and control-flow context; nothing is executed.\nServed from the index when the file is unchanged since the last sync, else parsed now.',
    options: { ...REMOTE_OPTIONS },
  },
  files: {
    summary: 'the catalogued files, with size, mtime, language and state',
    usage: 'repodex files [--glob G] [--limit N] [--include-hidden] [--blocked]',
    details: [
      '  --glob G           only paths matching G, e.g. "src/**/*.ts"',
      '  --limit N          at most N files (default 1000, at most 10000)',
      '  --include-hidden   also files under a name starting with "." (.github/, .eslintrc.json)',
      '  --blocked          what is withheld as a secret instead, hidden files too, each with why: a credential',
      '                     in its text (rule and line), a secret file name, or a name shaped like a credential',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, glob: { type: 'string' }, limit: { type: 'string' }, 'include-hidden': { type: 'boolean' }, blocked: { type: 'boolean' } },
  },
  bundle: {
    summary: 'the context a task needs: cited excerpts with reasons, within a budget',
    usage: 'repodex bundle "TASK PROMPT" [--max-files N] [--max-lines N] [--include-tests] [--format md|json]',
    details: [
      'Keywords from the prompt, several searches, excerpts widened to their enclosing declarations, each cited',
      '(path:start-end) with the reason it was chosen. Deterministic: the same prompt on the same index gives the',
      'same bundle. Also written to .repodex/last_bundle.json and .repodex/last_bundle.md.',
      '  --max-files N     files cited (default and most: limits.max_bundle_files, 8)',
      '  --max-lines N     lines of excerpts in all (default 400, at most 4000)',
      '  --include-tests   let test files in (left out by default)',
      '  --format F        md (default) or json (the same as --json)',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, 'max-files': { type: 'string' }, 'max-lines': { type: 'string' }, 'include-tests': { type: 'boolean' }, format: { type: 'string' } },
  },
  audit: {
    summary: 'recent calls from every front end (.repodex/audit.jsonl, or the audit_log table on a PostgreSQL store)',
    usage: 'repodex audit [--since T] [--limit N]',
    details: [
      'One line per call: time, front end, operation or tool, outcome, blocked, duration, sanitized arguments',
      '(queries and paths, never file contents). The log is rotated past 4 MiB (audit.1.jsonl keeps the previous one).',
      '  --since T   only calls from T on: an ISO time (2026-11-24T10:00:00Z) or a duration back from now (15m, 2h, 7d)',
      '  --limit N   the newest N calls (default 50, at most 1000)',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, since: { type: 'string' }, limit: { type: 'string' } },
  },
  verify: {
    summary: 'check every checksum, size, version and cross-reference of the index',
    usage: 'repodex verify',
    details: [
      'Checks every byte of every file under .repodex/ that an answer depends on: the index (meta.json,',
      'gen-N.rpdx, seg-N.rpdx, with every cross-reference), the parse cache, the vector manifest, log and',
      'graph, the builtin embedding table, history.json, analytics.json, the audit log, and checked.json',
      '(the record of which files a check found sound).',
      'Exits 1 and names each damaged file with its fix when anything is wrong: `repodex sync` repairs all',
      'of them but the audit log, which cannot be rebuilt (the message says what to do). A damaged file is',
      'never used meanwhile.',
    ].join('\n'),
    options: {},
  },
  watch: {
    summary: 'keep the index fresh while files change (until Ctrl-C)',
    usage: 'repodex watch [--debounce-ms N]',
    details: [
      'Syncs once, then re-indexes the changed files whenever files have been quiet for the debounce period',
      '(a burst of changes, such as a branch checkout, becomes one sync). One line per sync; --json prints',
      'each sync summary as a JSON line. Ignored and skipped paths never trigger a sync; symlinks are not followed.',
      '  --debounce-ms N   quiet period before re-indexing a burst of changes; a save or two waits a tenth of it\n                    (default: config watch.debounce_ms, 500)',
    ].join('\n'),
    options: { 'debounce-ms': { type: 'string' } },
  },
  serve: {
    summary: 'serve agents and people: MCP (--mcp) or JSONL (--stdio) on stdin/stdout, or a team server over HTTP (--http)',
    usage: 'repodex serve --mcp|--stdio [--watch] [--debounce-ms N] [--tool-names dotted|underscore] [limit flags]\n       repodex serve --http [ROOT…] [--port 7800] [--host 127.0.0.1] [--store URL] [--token-file F] [server flags]',
    details: [
      '--mcp     an MCP server: tools repo.status, repo.list_files, repo.open_file, repo.outline, repo.search,',
      '          repo.refresh_index, repo.build_context_bundle, repo.audit_log (AGENTS.md: client set-up).',
      '--stdio   the JSONL protocol: one JSON request per line in, one response per line out, in order. Ops:',
      '          status, sync, search, fetch, open, outline, files, bundle, audit, verify.',
      'A read on a stale index syncs first (as the CLI does), in a worker thread; a watcher notices changes.',
      '  --watch                re-index changes in the background as they happen; requests meanwhile answer',
      '                         from the previous index with a warning instead of waiting',
      '  --debounce-ms N        quiet period before a background re-index of a burst of changes; a save or two\n                         waits a tenth of it (default 500)',
      '  --tool-names N         dotted (repo.search, default) or underscore (repo_search) for clients that reject dots',
      '',
      '--http    a team server for many repositories: a JSON API (GET /openapi.json describes it), MCP over',
      '          HTTP at /mcp?repo_id=ID, and a web page at /. Each ROOT given is registered (as `repodex repo',
      '          add ROOT` would). Repositories stay registered across restarts: on the embedded store in',
      '          DIR/repos.json, on PostgreSQL in the database.',
      '  --port N               port (default 7800; 0 picks a free one)',
      '  --host H               address to listen on (default 127.0.0.1); any other needs --token-file',
      '  --token-file F         a file holding the bearer token every request must send (Authorization: Bearer …).',
      '                         Without it the server makes one, DIR/token (readable by you only; kept across',
      '                         restarts), and prints the page\'s address with it; repodex repo and --repo find it',
      '  --no-token             ask for no token: trusts every user and process on this machine (127.0.0.1 only)',
      '  --data-dir DIR         the server\'s folder: its token, its registry (embedded store) and its own audit log',
      '                         (default $XDG_STATE_HOME/repodex/server, or ~/.local/state/repodex/server)',
      '  --allow-roots D,D      only repositories inside these folders may be registered',
      '  --sync-threads N       threads re-indexing repositories, shared by all of them (default 1)',
      '  --answer-threads N     threads answering searches, fetches and outlines (default: cores - 1, 1 to 4;',
      '                         0: the thread talking to clients answers them too)',
      '  --debounce-ms N        quiet period before a watched repository re-indexes a burst of changes; a save\n                         or two waits a tenth of it (default: its config, 500)',
      '  --rate-limit N         requests a minute per client (default 6000; 0: no limit)',
      '  --max-body-bytes N     largest request body (default 1048576)',
      '  --request-timeout-ms N longest a request waits for its answer (default 30000; index runs 10 minutes)',
      '  --cors-origin URL      let pages of this origin call the API (off by default)',
      'Limits (default < .repodex/config.json limits.* < these flags):',
      ...LIMIT_NAMES.map((limit) => `  ${`${LIMITS[limit].flag} N`.padEnd(37)}${LIMITS[limit].min}–${LIMITS[limit].max}, default ${LIMITS[limit].default}`),
    ].join('\n'),
    options: {
      stdio: { type: 'boolean' },
      mcp: { type: 'boolean' },
      http: { type: 'boolean' },
      watch: { type: 'boolean' },
      'debounce-ms': { type: 'string' },
      'tool-names': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'token-file': { type: 'string' },
      'no-token': { type: 'boolean' },
      'data-dir': { type: 'string' },
      'allow-roots': { type: 'string' },
      'sync-threads': { type: 'string' },
      'answer-threads': { type: 'string' },
      'rate-limit': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'request-timeout-ms': { type: 'string' },
      'cors-origin': { type: 'string' },
      ...Object.fromEntries(LIMIT_NAMES.map((limit) => [LIMITS[limit].flag.slice(2), { type: 'string' as const }])),
    },
  },
  repo: {
    summary: 'the repositories of a team server: repo add PATH | list | remove ID | watch ID | unwatch ID | status ID',
    usage: 'repodex repo add PATH [--name N] | list | remove ID | watch ID | unwatch ID | status ID  [--server URL]',
    details: [
      'Talks to a team server (repodex serve --http): --server URL, else REPODEX_SERVER, else http://127.0.0.1:7800.',
      'A bearer token comes from --token-file F, else REPODEX_TOKEN, else (a server on this machine run by you)',
      'the token a server keeps in the default --data-dir. ID is a repository id or its name.',
      '  add PATH        register the repository at PATH (as the server sees it: the server must be able to read it)',
      '  list            every repository, with its state (ready, indexing done/total, stale, pending)',
      '  remove ID       stop serving it (its index stays)',
      '  watch ID        re-index it as files change (kept across server restarts); unwatch ID stops that',
      '  status ID       its index status: state, indexed commit vs HEAD, files, chunks, vectors, progress',
      'Other commands run on a server with --repo ID: repodex search --repo app "retry logic", repodex sync --repo app.',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, name: { type: 'string' } },
  },
  index: {
    summary: 'other names: index build|query|status|clean|verify (= sync, search --mode hybrid, status, clean, verify)',
    usage: 'repodex index build [--force] [--embeddings P] | query "TEXT" [-k N] | status | clean | verify',
    details: [
      '  index build    = repodex sync --embeddings on (lexical index, then vectors; turns the builtin embedder',
      '                   on when embeddings are off)',
      '  index query    = repodex search --mode hybrid (-k N is --top-k N; --show-snippets is accepted: snippets are always shown)',
      '  index status   = repodex status',
      '  index clean    = repodex clean',
      '  index verify   = repodex verify',
    ].join('\n'),
    options: {},
  },
  db: {
    summary: 'set up a PostgreSQL store for scale-out: db distribute --store URL',
    usage: 'repodex db distribute --store postgres://user@host:5432/db',
    details: [
      'On a Citus coordinator, spread repodex\'s tables over the worker nodes: every table is',
      'distributed by repository (one repository\'s queries go to one node), the repository list',
      'is copied to every node. Safe to run again, and before or after the first sync. On plain',
      'PostgreSQL it changes nothing and says so.',
    ].join('\n'),
    options: {},
  },
  daemon: {
    summary: "keep this repository's index loaded in the background, so one-shot commands answer at once",
    usage: 'repodex daemon start|stop|status|run [--idle-minutes N] | daemon stop --all',
    details: [
      'A daemon is a background process for one repository. While it runs, status, sync, search, fetch,',
      'open, outline, files and bundle, run here or in any folder of the repository, are answered by it: the',
      'same output and exit code, without loading the engine and the index each time, and with a file',
      'watcher instead of a walk of the tree to prove the index fresh.',
      'The second of those commands (sync aside) to run in its own process in a repository within 10 minutes',
      'starts a daemon after it answers, so the next ones are quick (a person at a terminal is told); one that',
      'no command uses stops after 5 idle minutes. A script that passes through a repository once starts none.',
      'REPODEX_DAEMON=manual uses only a daemon started with `daemon start`; REPODEX_DAEMON=0 runs every',
      'command in its own process.',
      `At most ${DEFAULT_MAX_DAEMONS} daemons of yours run at once (REPODEX_DAEMON_MAX), using at most 1 GB of memory together,`,
      'or an eighth of the memory where that is less (REPODEX_DAEMON_MEMORY_MB, in MB): a daemon starting beyond',
      'either asks the least recently used one a command started to stop, never one answering a command.',
      'Daemons started with `daemon start` or `daemon run` count, but are never stopped to make room.',
      'start        start one now, and return once it answers.',
      'stop         stop it, serving or still starting (it also stops after --idle-minutes without a command,',
      '             30 by default; 0: never).',
      'stop --all   stop every daemon of yours (after a script or an evaluation run).',
      'status       this repository\'s daemon (exit 1: none runs), then every daemon of yours: memory, idle time.',
      'run          the same in the foreground, logging to stderr (for a service manager).',
      'A command runs in its own process when no daemon runs, with --store, --repo or --server, when its',
      'REPODEX_*, GIT_*, HOME or XDG_CONFIG_HOME differ from the daemon\'s, and while the daemon runs a sync.',
      'A daemon stops when another build of repodex calls it (after an upgrade), when its socket is removed,',
      'and on `repodex clean`. Its socket is .repodex/daemon.sock, usable by this user only; its log',
      '.repodex/daemon.log. The list of your daemons is kept in $XDG_RUNTIME_DIR/repodex (else',
      '~/.local/state/repodex/daemons; REPODEX_DAEMON_DIR sets another folder).',
    ].join('\n'),
    options: { 'idle-minutes': { type: 'string' }, all: { type: 'boolean' } },
  },
  clean: {
    summary: 'remove the index (keeps config.json and ignore)',
    usage: 'repodex clean',
    details: "Stops the repository's daemon first (serving or still starting). Refuses while a sync is running.",
    options: {},
  },
};

function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    `repodex ${TOOL_VERSION} — a local code index and retrieval engine for AI coding agents`,
    '',
    'usage: repodex <command> [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, spec]) => `  ${name.padEnd(width)}  ${spec.summary}`),
    '',
    'options for every command:',
    '  --root DIR   the repository (default: found from the current folder upwards)',
    '  --store URL  where the index lives: fs (.repodex/ in the repository, the default) or a',
    '               PostgreSQL URL such as postgres://user@host:5432/db (also REPODEX_STORE, or',
    '               `store` in .repodex/config.json)',
    '  --json       print the result as JSON (the same object the JSONL protocol returns)',
    '  --indexing=off  never build or refresh the index automatically (as REPODEX_INDEXING=0)',
    '  -h, --help   help for a command',
    '  --repo ID    run the command on a team server (status, sync, search, fetch, open, outline, files,',
    '               bundle, audit): --server URL or REPODEX_SERVER, default http://127.0.0.1:7800',
    '',
    'quick start: repodex search "where is the config loaded"',
  ].join('\n');
}

function commandHelp(spec: CommandSpec): string {
  return [`${spec.usage}`, '', spec.summary, '', spec.details, '', 'also: --root DIR, --store URL, --json, --indexing=off, --help'].join('\n');
}

function toInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim())) throw new RepodexError('BAD_REQUEST', `${flag} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function parseRequest<O extends Op>(input: { op: O } & Record<string, unknown>): RequestOf<O> {
  const parsed = Request.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new RepodexError('BAD_REQUEST', flagNames(describeIssues(parsed.error)));
  return parsed.data as RequestOf<O>;
}

/** The CLI flag of each request field: errors name what the user typed, not the protocol's field. */
const FLAG_OF: Record<string, string> = {
  q: '--q',
  top_k: '--top-k',
  mode: '--mode',
  glob: '--glob',
  lang: '--lang',
  ids: '--ids',
  max_lines: '--max-lines',
  start_line: '--start',
  end_line: '--end',
  limit: '--limit',
  max_files: '--max-files',
  include_tests: '--include-tests',
  since: '--since',
  prompt: 'the prompt',
  path: 'the path',
};

/** A message with request field names replaced by the flags that set them ("top_k: must be…" → "--top-k must be…"). */
export function flagNames(message: string): string {
  return message
    .replace(/(^|; )([a-z_]+)(?:\.\d+)?: /g, (whole, separator: string, field: string) => (FLAG_OF[field] ? `${separator}${FLAG_OF[field]} ` : whole))
    .replace(/^([a-z_]+) must /, (whole, field: string) => (FLAG_OF[field] ? `${FLAG_OF[field]} must ` : whole))
    .replace(/\b(start_line|end_line|top_k|max_lines|max_files)\b/g, (field) => FLAG_OF[field] ?? field);
}

/** An error's message in CLI terms: request fields named by their flags (only for a bad request: other messages, such as config errors, name config fields). */
function requestMessage(error: { code: string; message: string }): string {
  return error.code === 'BAD_REQUEST' ? flagNames(error.message) : error.message;
}

/** Report a call that failed without an answer (a bad request, a damaged index, …): exit 1, 2 for internal errors. */
function reportCallError(error: CallError, json: boolean, io: CliIo): number {
  writeFailure(requestMessage(error), error.code, json, io);
  if (error.code === 'ABORTED') return INTERRUPTED;
  return error.code === 'INTERNAL' ? 2 : 1;
}

/** A failure as the CLI shows it: `{ok:false, error, code}` on stdout with --json, and a line on stderr. */
function writeFailure(message: string, code: string, json: boolean, io: CliIo): void {
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: message, code })}\n`);
  io.stderr.write(`repodex: ${message}\n`);
}

/** A language filter as typed (`TypeScript` works as well as `typescript`). */
function langOf(value: unknown): unknown {
  return typeof value === 'string' ? value.toLowerCase() : value;
}

/** A path typed on the command line as a repository path: relative to the current folder (as git does), or absolute inside the root. */
export function cliPath(root: string, typed: string, cwd = process.cwd()): string {
  // Anything that is not a plain POSIX path (NUL, drive letters, UNC) goes to the guard as typed.
  if (typed.includes('\0') || /^[A-Za-z]:/.test(typed) || typed.startsWith('\\')) return typed;
  const rel = relative(root, resolve(cwd, typed)).split(sep).join('/');
  // Outside the root (or the root itself): the guard refuses the path as the user typed it.
  if (rel === '' || rel === '..' || rel.startsWith('../') || isAbsolute(rel)) return typed;
  return rel;
}

/**
 * A refused `open`/`outline` of a path typed in a subfolder, with a better hint when the typed path
 * names no file from here but does from the repository root (a root-relative path pasted into a
 * subfolder): "did you mean <root-relative path>?", with the command that works from this folder.
 */
export function withPathSuggestion<T extends { readonly path: string }>(report: T, root: string, typed: string, command: 'open' | 'outline', cwd = process.cwd()): T {
  if (!('error' in report) || (report as { blocked?: unknown }).blocked !== false) return report;
  const fromHere = resolve(cwd, typed);
  const fromRoot = normalizeRelativePath(typed);
  if (fromRoot === undefined || isAbsolute(typed) || existsSync(fromHere)) return report;
  const candidate = join(root, fromRoot);
  if (candidate === fromHere || !isFile(candidate)) return report;
  const hint = `did you mean ${fromRoot} (a path from the repository root)? Paths are relative to the current folder: from here, repodex ${command} ${shellWord(relative(cwd, candidate))}`;
  return { ...report, hint };
}

/** Whether a path names a regular file; any error (a file where a folder was expected, a name too long) means it does not. */
function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch (error) {
    if (isErrnoException(error)) return false;
    throw error;
  }
}

/**
 * A refused answer split for printing: what was served (to stdout; undefined when nothing was)
 * and what was refused (to stderr). Only `fetch` can be both: some chunks read, some refused.
 */
function splitRefusals<T>(op: Op, data: T): { answer: T | undefined; refused: T } {
  if (op !== 'fetch') return { answer: undefined, refused: data };
  const report = data as ResponseOf<'fetch'>;
  const served = report.chunks.filter((chunk) => !('error' in chunk));
  const refused = report.chunks.filter((chunk) => 'error' in chunk);
  if (served.length === 0) return { answer: undefined, refused: data };
  return { answer: { ...report, chunks: served } as T, refused: { ...report, chunks: refused, ignored_ids: [], warnings: [] } as T };
}

/** Output streams, injectable for tests. */
export interface CliIo {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  /** The engine a command uses (a daemon's already loaded one); default: a new one. */
  readonly engineFor?: (options: ComposeOptions, command: string) => Engine;
  /** Stops the command as Ctrl-C would (a daemon's client went away). */
  readonly signal?: AbortSignal;
}

/** Exit code of a command stopped by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;

/** Run the CLI; resolves to the process exit code (0 ok, 1 user error, 2 internal error, 130 interrupted). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const out = (text: string): void => {
    io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    out(mainHelp());
    return 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    out(TOOL_VERSION);
    return 0;
  }
  if (name === 'index') {
    if (rest[0] === undefined || rest[0] === '--help' || rest[0] === '-h') {
      out(commandHelp(COMMANDS.index!));
      return rest[0] === undefined ? 1 : 0;
    }
    let routed: string[];
    try {
      routed = indexAlias(rest);
    } catch (error) {
      return reportError(error, rest.includes('--json'), io);
    }
    return runCli(routed, io);
  }
  const spec = COMMANDS[name];
  if (!spec) {
    io.stderr.write(`repodex: unknown command ${JSON.stringify(name)}; commands: ${Object.keys(COMMANDS).join(', ')} (see repodex --help)\n`);
    return 1;
  }
  let json = rest.includes('--json');
  const progress = progressBar(io.stderr);
  // Ctrl-C stops a running sync at the next file: nothing is committed, the lock is released.
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  io.signal?.addEventListener('abort', onSignal, { once: true });
  try {
    const options = { ...GLOBAL_OPTIONS, ...spec.options };
    const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest; // after `--` everything is positional
    const unknown = flags.find((arg) => arg.startsWith('--') && !(arg.slice(2).split('=')[0]! in options));
    if (unknown !== undefined) throw unknownOption(name, unknown, Object.keys(options));
    const parsed = parseArgs({ args: [...rest], options, allowPositionals: true, strict: true });
    const values = parsed.values as Record<string, string | boolean | undefined>;
    const positionals = parsed.positionals;
    json = values.json === true;
    if (values.help) {
      out(commandHelp(spec));
      return 0;
    }
    const root = values.root as string | undefined;
    const store = values.store as string | undefined;
    const autoIndex = indexingFlag(values.indexing as string | undefined);
    const style = styleFor(io.stdout);
    const handleOptions: HandleOptions = { ...(json || !progress ? {} : { onEvent: progress.onEvent }), signal: interrupt.signal };
    const emit = <T>(data: T, human: (data: T, style: Style) => string): void => {
      progress?.clear();
      out(json ? JSON.stringify(data) : human(humanSafe(data), style));
    };
    if (name === 'watch' || name === 'serve') return await runServer(name, values, root, io, interrupt.signal, json, positionals);
    if (name === 'daemon') return await runDaemonCommand(positionals, values, root, io, json);
    if (name === 'db') {
      if (positionals[0] !== 'distribute') {
        const asked = positionals[0] === undefined ? 'repodex db needs a subcommand' : `unknown db command ${JSON.stringify(positionals[0])}`;
        throw new RepodexError('BAD_REQUEST', `${asked}: use \`repodex db distribute --store URL\``, { selfContained: true });
      }
      const report = await distributeStore({ root, store });
      emit(report, (data) => printDistribute(data));
      return 0;
    }
    if (name === 'repo') {
      const client = ServerClient.for(serverUrl(values), values['token-file'] as string | undefined);
      const output = await runRepoCommand(client, positionals[0], positionals.slice(1), { name: values.name as string | undefined, json });
      if (output.stdout !== undefined) out(output.stdout);
      return output.code;
    }
    // `--repo ID`: the command runs on a team server, for one of its repositories.
    let remote: { client: ServerClient; repoId: string } | undefined;
    if (values.repo !== undefined) {
      if (root !== undefined || store !== undefined) throw new RepodexError('BAD_REQUEST', '--repo runs the command on a server, which has its own roots and store: leave out --root and --store');
      const client = ServerClient.for(serverUrl(values), values['token-file'] as string | undefined);
      remote = { client, repoId: await client.repoId(String(values.repo)) };
    }
    const engineOptions: ComposeOptions = { root, requireRepository: name !== 'init', store, autoIndex, firstAnswer: name === 'search' };
    const local = remote ? undefined : io.engineFor ? io.engineFor(engineOptions, name) : createEngine(engineOptions);
    // A path typed in a subfolder means that subfolder's file, as in git; an absolute one inside the root works too. On a server: from the repository's root.
    const repoPath = (path: string): string => (local ? cliPath(local.root, path) : path);
    /**
     * Run one request as a call (audit log, response cap). A refusal (a blocked or missing file, a
     * chunk that is gone) exits 1 and, without --json, is printed on stderr only: `repodex open x > out`
     * never writes an error into `out`. `refine` adjusts the answer for the terminal (hints in the
     * caller's frame) before it is printed.
     */
    const run = async <O extends Op>(request: RequestOf<O>, human: (data: ResponseOf<O>, style: Style) => string, refine?: (data: ResponseOf<O>) => ResponseOf<O>): Promise<number> => {
      if (remote) {
        const output = await runRemote(remote.client, remoteCommand(name, remote.repoId, request), json, io.stdout);
        if (output.stderr !== undefined) io.stderr.write(`${output.stderr}\n`);
        if (output.stdout !== undefined) out(output.stdout);
        return output.code;
      }
      if (!local) throw new RepodexError('INTERNAL', `${name} has no engine here`);
      const result = await call(local, request, { ...handleOptions, frontend: 'cli' });
      progress?.clear();
      if (result.data === undefined) return reportCallError(result.error!, json, io);
      const data = refine ? refine(result.data) : result.data;
      const synced = (data as { synced?: ResponseOf<'sync'> }).synced;
      if (synced && !json) io.stderr.write(`${printSyncSummary(humanSafe(synced))}\n`);
      if (result.error && !json) {
        const { answer, refused } = splitRefusals(request.op, data);
        if (answer !== undefined) emit(answer, human);
        io.stderr.write(`${human(humanSafe(refused), styleFor(io.stderr))}\n`);
        return 1;
      }
      emit(data, human);
      const own = (data as { warnings?: unknown }).warnings;
      if (!json && !Array.isArray(own)) for (const warning of result.warnings) io.stderr.write(`repodex: warning: ${warning}\n`);
      if (result.error) return 1;
      return request.op === 'verify' && !(data as ResponseOf<'verify'>).ok ? 1 : 0;
    };
    switch (name) {
      case 'init':
        return await run(parseRequest({ op: 'init' }), printInit);
      case 'status':
        return await run(parseRequest({ op: 'status' }), printStatus);
      case 'sync':
        return await run(parseRequest({ op: 'sync', force: values.force === true ? true : undefined, embeddings: values.embeddings }), printSyncSummary);
      case 'search': {
        const q = (values.q as string | undefined) ?? positionals.join(' ');
        if (q.trim() === '') throw new RepodexError('BAD_REQUEST', 'search needs a query: repodex search "where is the config loaded"');
        return await run(
          parseRequest({ op: 'search', q, top_k: toInt('--top-k', values['top-k'] as string | undefined), mode: values.mode, glob: values.glob, lang: langOf(values.lang) }),
          printSearch,
        );
      }
      case 'fetch': {
        const idText = [(values.ids as string | undefined) ?? '', ...positionals].join(',');
        const ids = idText
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((id) => toInt('--ids', id)!);
        if (ids.length === 0) throw new RepodexError('BAD_REQUEST', 'fetch needs chunk ids from a search: repodex fetch --ids 3,7');
        return await run(parseRequest({ op: 'fetch', ids, max_lines: toInt('--max-lines', values['max-lines'] as string | undefined) }), printFetch);
      }
      case 'open': {
        const [path, ...extra] = positionals;
        if (path === undefined || extra.length > 0) throw new RepodexError('BAD_REQUEST', 'open needs exactly one path: repodex open src/index.ts --start 10 --end 40');
        const start = toInt('--start', values.start as string | undefined);
        const end = toInt('--end', values.end as string | undefined);
        // Hints name the path as typed here: `repodex open fetch.ts --start 3` works from this folder.
        return await run(
          parseRequest({ op: 'open', path: repoPath(path), start_line: start, end_line: end }),
          (report, style) => printOpen(report, style, path),
          (report) => (local ? withPathSuggestion(report, local.root, path, 'open') : report),
        );
      }
      case 'outline': {
        const [path, ...extra] = positionals;
        if (path === undefined || extra.length > 0) throw new RepodexError('BAD_REQUEST', 'outline needs exactly one path: repodex outline src/router.ts');
        return await run(parseRequest({ op: 'outline', path: repoPath(path) }), printOutline, (report) => (local ? withPathSuggestion(report, local.root, path, 'outline') : report));
      }
      case 'files':
        return await run(
          parseRequest({
            op: 'files',
            glob: values.glob,
            limit: toInt('--limit', values.limit as string | undefined),
            include_hidden: values['include-hidden'] === true ? true : undefined,
            blocked: values.blocked === true ? true : undefined,
          }),
          printFiles,
        );
      case 'bundle': {
        const prompt = positionals.join(' ');
        if (prompt.trim() === '') throw new RepodexError('BAD_REQUEST', 'bundle needs a task prompt: repodex bundle "add retries to the HTTP client"');
        const format = values.format as string | undefined;
        if (format !== undefined && format !== 'md' && format !== 'json') throw new RepodexError('BAD_REQUEST', `--format must be md or json, got ${JSON.stringify(format)}`);
        if (format === 'json') json = true;
        return await run(
          parseRequest({
            op: 'bundle',
            prompt,
            max_files: toInt('--max-files', values['max-files'] as string | undefined),
            max_lines: toInt('--max-lines', values['max-lines'] as string | undefined),
            include_tests: values['include-tests'] === true ? true : undefined,
          }),
          printBundle,
        );
      }
      case 'audit':
        return await run(parseRequest({ op: 'audit', since: values.since, limit: toInt('--limit', values.limit as string | undefined) }), printAudit);
      case 'verify':
        return await run(parseRequest({ op: 'verify' }), printVerify);
      case 'clean': {
        // The daemon goes first, serving or still starting: it holds the index's files open (their
        // space is not freed while it runs) and would answer from what is being removed.
        const daemon = local ? await stopDaemon(local.root, fileURLToPath(import.meta.url), openRegistry()) : undefined;
        const code = await run(parseRequest({ op: 'clean' }), printClean);
        if (daemon !== undefined && daemon.was !== 'none') io.stderr.write(`repodex: ${stopLine(daemon)}\n`);
        return code;
      }
      default:
        throw new RepodexError('INTERNAL', `command ${name} has no handler`);
    }
  } catch (error) {
    progress?.clear();
    return reportError(error, json, io, `repodex ${name}`);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    io.signal?.removeEventListener('abort', onSignal);
  }
}

/** `repodex daemon start|stop|status|run`. */
async function runDaemonCommand(positionals: readonly string[], values: Record<string, string | boolean | undefined>, root: string | undefined, io: CliIo, json: boolean): Promise<number> {
  const [action, ...extra] = positionals;
  if (action === undefined || !['start', 'stop', 'status', 'run'].includes(action) || extra.length > 0) {
    throw new RepodexError('BAD_REQUEST', `daemon takes one of start, stop, status or run${action === undefined ? '' : `, not ${JSON.stringify([action, ...extra].join(' '))}`}: repodex daemon start`);
  }
  for (const flag of ['store', 'indexing']) {
    if (values[flag] !== undefined) throw new RepodexError('BAD_REQUEST', `a daemon takes no --${flag}: it serves the repository as its config and environment set it up, and a command given --${flag} runs in its own process`);
  }
  const all = values.all === true;
  if (all && action !== 'stop') throw new RepodexError('BAD_REQUEST', `--all goes with daemon stop (every daemon of yours); daemon status always lists them all`);
  if (all && root !== undefined) throw new RepodexError('BAD_REQUEST', 'daemon stop --all stops every daemon of yours: leave out --root, or leave out --all to stop one');
  const idleMinutes = boundedInt('--idle-minutes', values['idle-minutes'], 0, 7 * 24 * 60) ?? DEFAULT_IDLE_MINUTES;
  // The built CLI identifies the build a daemon runs (see daemon-protocol.ts); the launcher starts one.
  const cliFile = fileURLToPath(import.meta.url);
  const out = (data: unknown, text: string): void => {
    io.stdout.write(`${json ? JSON.stringify(data) : text}\n`);
  };
  const idleText = (minutes: number): string => (minutes === 0 ? 'runs until stopped' : `stops after ${minutes} idle minutes`);
  switch (action) {
    case 'run':
      await runDaemon(discoverRoot(process.cwd(), root, true), { idleMinutes, cliFile, runCli, log: (line) => io.stderr.write(`${new Date().toISOString()} repodex daemon: ${line}\n`) });
      return 0;
    case 'start': {
      const status = await startDaemon(discoverRoot(process.cwd(), root, true), cliFile, launcherFile(), idleMinutes);
      out(status, `repodex: daemon started for ${status.root} (pid ${status.pid}): one-shot commands in this repository now use it; it ${idleText(status.idle_minutes)} (repodex daemon stop)`);
      return 0;
    }
    case 'stop': {
      if (all) {
        const registry = DaemonRegistry.open();
        const outcomes = await Promise.all(registry.all().map((entry) => stopDaemon(entry.root, cliFile, registry)));
        const stopped = outcomes.filter((outcome) => outcome.was !== 'none');
        const lines = stopped.length === 0 ? ['repodex: no daemon of yours runs'] : [`repodex: stopped ${stopped.length} daemon${stopped.length === 1 ? '' : 's'}:`, ...stopped.map((outcome) => `  ${stopLine(outcome)}`)];
        out({ stopped: stopped.map(stopJson) }, lines.join('\n'));
        return stopped.every((outcome) => outcome.exited) ? 0 : 1;
      }
      const outcome = await stopDaemon(discoverRoot(process.cwd(), root, true), cliFile, openRegistry());
      out(stopJson(outcome), `repodex: ${stopLine(outcome)}`);
      return outcome.exited ? 0 : 1;
    }
    default:
      return daemonStatusCommand(root, cliFile, json, io, idleText);
  }
}

/** `repodex daemon status`: this repository's daemon (exit 1 when none runs), then every daemon of this user. */
async function daemonStatusCommand(root: string | undefined, cliFile: string, json: boolean, io: CliIo, idleText: (minutes: number) => string): Promise<number> {
  const limits = daemonLimits();
  // Outside any repository the list alone: every daemon of this user.
  let here: string | undefined;
  try {
    here = discoverRoot(process.cwd(), root, true);
  } catch (error) {
    if (root !== undefined) throw error;
  }
  const answer = here === undefined ? undefined : await daemonStatus(here, cliFile);
  const running = answer !== undefined && answer !== 'other build' ? answer : undefined;
  const registry = DaemonRegistry.open(); // a folder it cannot use is told, with the fix
  const now = Date.now();
  const daemons = registry.all().map((entry) => {
    const rss = residentBytes(entry);
    const lastUse = Date.parse(entry.last_used ?? entry.since);
    return { root: entry.root, pid: entry.pid, state: entry.state, started_by: entry.started_by, since: entry.since, idle_seconds: entry.state === 'serving' ? Math.max(0, Math.round((now - lastUse) / 1000)) : null, calls: entry.calls ?? 0, rss_mb: rss === undefined ? null : Math.round(rss / (1024 * 1024)) };
  });
  if (json) {
    const mine = running ? { running: true, ...running } : { root: here ?? null, running: false };
    io.stdout.write(`${JSON.stringify({ ...mine, daemons, max_daemons: limits.maxDaemons, memory_budget_mb: limits.memoryBudgetMb })}\n`);
    return here !== undefined && !running ? 1 : 0;
  }
  const lines: string[] = [];
  if (running) {
    const minutes = Math.max(0, Math.round((now - Date.parse(running.started_at)) / 60_000));
    lines.push(`repodex: daemon for ${running.root}: pid ${running.pid}, running ${minutes} min, ${running.calls} command${running.calls === 1 ? '' : 's'} answered, ${running.watching ? 'file watcher on' : 'no file watcher (checks the tree by stats)'}; it ${idleText(running.idle_minutes)}`);
  } else if (here !== undefined) {
    const why = answer === 'other build' ? ' (one started by another build of repodex was running: it stops now)' : '';
    lines.push(`repodex: no daemon runs for ${here}${why}; start one: repodex daemon start`);
  }
  const total = daemons.reduce((sum, daemon) => sum + (daemon.rss_mb ?? 0), 0);
  const bounds = `at most ${limits.maxDaemons} and ${limits.memoryBudgetMb} MB together (${DAEMON_MAX_ENV}, ${DAEMON_MEMORY_ENV})`;
  lines.push(daemons.length === 0 ? `repodex: no daemon of yours runs; ${bounds}` : `repodex: ${daemons.length} daemon${daemons.length === 1 ? '' : 's'} of yours, ${total} MB; ${bounds}:`);
  const width = Math.max(0, ...daemons.map((daemon) => daemon.root.length));
  for (const daemon of daemons) {
    const facts =
      daemon.state === 'starting'
        ? ['starting', daemon.pid === null ? '' : `pid ${daemon.pid}`]
        : [`pid ${daemon.pid}`, daemon.rss_mb === null ? '' : `${daemon.rss_mb} MB`, `idle ${idleFor(daemon.idle_seconds ?? 0)}`, `${daemon.calls} command${daemon.calls === 1 ? '' : 's'}`];
    const by = daemon.started_by === 'command' ? 'started by a command' : `started with ${daemon.started_by}`;
    lines.push(`  ${daemon.root.padEnd(width)}  ${[...facts.filter((fact) => fact !== ''), by].join(', ')}${daemon.root === here ? ' (this repository)' : ''}`);
  }
  io.stdout.write(`${lines.join('\n')}\n`);
  return here !== undefined && !running ? 1 : 0;
}

/** This user's daemon registry, or undefined when its folder cannot be used (a daemon is then still found by its socket). */
function openRegistry(): DaemonRegistry | undefined {
  try {
    return DaemonRegistry.open();
  } catch {
    return undefined;
  }
}

/** What `daemon stop` (or `clean`) did, in a line. */
function stopLine(outcome: StopOutcome): string {
  const pid = outcome.pid === null ? '' : ` (pid ${outcome.pid})`;
  if (outcome.was === 'none') return `no daemon runs for ${outcome.root}`;
  if (!outcome.exited) return `asked the daemon for ${outcome.root}${pid} to stop, but it still runs after 30 s${outcome.pid === null ? '' : `: kill ${outcome.pid}`}`;
  return outcome.was === 'starting' ? `stopped the daemon for ${outcome.root}${pid}, which was still starting` : `stopped the daemon for ${outcome.root}${pid}`;
}

function stopJson(outcome: StopOutcome): { root: string; stopped: boolean; was: StopOutcome['was']; pid: number | null } {
  return { root: outcome.root, stopped: outcome.was !== 'none' && outcome.exited, was: outcome.was, pid: outcome.pid };
}

function idleFor(seconds: number): string {
  return seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${Math.floor(seconds / 60)} min` : `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/** `index build|query|status|clean|verify` (the names of the semantic-search plan) as the commands they stand for. */
function indexAlias(args: readonly string[]): string[] {
  const [sub = '', ...rest] = args;
  const routes: Record<string, string> = { build: 'sync', query: 'search', status: 'status', clean: 'clean', verify: 'verify' };
  const target = routes[sub];
  if (!target) throw new RepodexError('BAD_REQUEST', `index ${sub}: the index commands are ${Object.keys(routes).join(', ')} (see repodex index --help)`);
  const out = rest.flatMap((arg) => {
    if (target !== 'search') return [arg];
    if (arg === '--show-snippets') return [];
    if (arg === '-k') return ['--top-k'];
    if (arg.startsWith('-k=')) return [`--top-k=${arg.slice(3)}`];
    return [arg];
  });
  if (target === 'search' && !out.some((arg) => arg === '--mode' || arg.startsWith('--mode='))) out.push('--mode', 'hybrid');
  // Building the semantic index makes vectors: with embeddings off, it turns the builtin embedder on.
  if (target === 'sync' && !out.some((arg) => arg === '--embeddings' || arg.startsWith('--embeddings='))) out.push('--embeddings', 'on');
  return [target, ...out];
}

/** `watch` and `serve`: long-running, on a server engine (worker-thread syncs, a file watcher). */
/** `--indexing=on|off` (over REPODEX_INDEXING, for this command only), or undefined when not given. */
function indexingFlag(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new RepodexError('BAD_REQUEST', `--indexing must be on or off, got ${JSON.stringify(value)}`);
  return value === 'on';
}

async function runServer(name: 'watch' | 'serve', values: Record<string, string | boolean | undefined>, root: string | undefined, io: CliIo, stop: AbortSignal, json: boolean, positionals: readonly string[]): Promise<number> {
  const transports = (['stdio', 'mcp', 'http'] as const).filter((transport) => values[transport] === true);
  if (name === 'serve' && transports.length === 0) {
    throw new RepodexError('BAD_REQUEST', 'serve needs a transport: repodex serve --mcp (for MCP clients), --stdio (the JSONL protocol) or --http (a team server)');
  }
  if (transports.length > 1) throw new RepodexError('BAD_REQUEST', `serve takes one transport, not ${transports.map((transport) => `--${transport}`).join(' and ')}`);
  const naming = values['tool-names'] as string | undefined;
  if (naming !== undefined && naming !== 'dotted' && naming !== 'underscore') throw new RepodexError('BAD_REQUEST', `--tool-names must be dotted or underscore, got ${JSON.stringify(naming)}`);
  const debounce = toInt('--debounce-ms', values['debounce-ms'] as string | undefined);
  if (debounce !== undefined && (debounce < 0 || debounce > 60_000)) throw new RepodexError('BAD_REQUEST', '--debounce-ms must be between 0 and 60000');
  const limits: Record<string, number> = {};
  for (const limit of LIMIT_NAMES) {
    const { flag } = LIMITS[limit];
    const value = toInt(flag, values[flag.slice(2)] as string | undefined);
    if (value === undefined) continue;
    const problem = limitProblem(limit, value, flag);
    if (problem) throw new RepodexError('BAD_REQUEST', problem);
    limits[limit] = value;
  }
  if (values.http === true) return runTeamServerCommand(values, root, io, stop, limits, naming as ToolNaming | undefined, positionals, debounce);
  const httpOnly = ['port', 'host', 'token-file', 'no-token', 'data-dir', 'allow-roots', 'sync-threads', 'answer-threads', 'rate-limit', 'max-body-bytes', 'request-timeout-ms', 'cors-origin'].find((flag) => values[flag] !== undefined);
  if (httpOnly) throw new RepodexError('BAD_REQUEST', `--${httpOnly} is an option of the team server: repodex serve --http --${httpOnly} …`);
  const server = await createServerEngine({ root, requireRepository: true, limits, store: values.store as string | undefined, autoIndex: indexingFlag(values.indexing as string | undefined) });
  const log = (message: string): void => {
    io.stderr.write(`${message}\n`);
  };
  const stopped = new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    else stop.addEventListener('abort', () => resolve(), { once: true });
  });
  try {
    if (name === 'watch' || values.watch === true) {
      const onSync = (summary: ResponseOf<'sync'>): void => {
        if (name === 'watch') io.stdout.write(`${json ? JSON.stringify(summary) : printWatchSync(summary)}\n`);
      };
      const onError = (error: unknown): void => {
        if (!stop.aborted) log(`repodex: re-index failed: ${errorMessage(error)} (watching on)`);
      };
      const debounceMs = await server.watch(debounce, { onSync, onError }, stop);
      if (name === 'watch' && !stop.aborted) log(`repodex: watching ${server.engine.root} (re-indexing ${debounceMs} ms after changes settle; Ctrl-C stops)`);
    } else if (server.watchProblem) {
      log(`repodex: no file watcher (${server.watchProblem}); every request checks the tree by stats instead`);
    }
    if (name === 'serve') {
      io.stdout.on('error', (error: NodeJS.ErrnoException) => {
        // The client closed its end: nobody is left to answer.
        if (error.code === 'EPIPE') process.exit(0);
        throw error;
      });
      // Load the index and warm the JIT before the first request, so early queries are as fast as later ones.
      await server.engine.warmUp();
      helpersInBackground();
      const session =
        values.mcp === true
          ? loadMcp().then(({ serveMcp }) => serveMcp(server.engine, io.stdin, io.stdout, { naming: naming as ToolNaming | undefined, log }))
          : serveJsonl(server.engine, io.stdin, io.stdout, { log });
      await Promise.race([session, stopped]);
    } else {
      await stopped;
    }
    return 0;
  } finally {
    await server.close();
  }
}

/** The team server a client command talks to: --server, else REPODEX_SERVER, else the default address. */
function serverUrl(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = process.env): string {
  return (values.server as string | undefined) ?? (env.REPODEX_SERVER || DEFAULT_SERVER);
}

/** A whole number flag within [min, max], or undefined when not given. */
function boundedInt(flag: string, value: string | boolean | undefined, min: number, max: number): number | undefined {
  const n = toInt(flag, value as string | undefined);
  if (n !== undefined && (n < min || n > max)) throw new RepodexError('BAD_REQUEST', `${flag} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** `serve --http`: the team server, from its own bundle (the HTTP and MCP libraries load only here). */
async function runTeamServerCommand(
  values: Record<string, string | boolean | undefined>,
  root: string | undefined,
  io: CliIo,
  stop: AbortSignal,
  limits: Record<string, number>,
  naming: ToolNaming | undefined,
  positionals: readonly string[],
  debounceMs: number | undefined,
): Promise<number> {
  if (values.watch === true) throw new RepodexError('BAD_REQUEST', 'a team server watches repositories one by one: POST /repo/watch or `repodex repo watch ID`, not --watch');
  if (root !== undefined) throw new RepodexError('BAD_REQUEST', 'a team server serves many repositories: give their roots as arguments (repodex serve --http ~/code/app), not --root');
  const storeFlag = values.store as string | undefined;
  const storeSetting = storeFlag ?? process.env.REPODEX_STORE;
  const store = storeSetting === undefined || storeSetting === '' ? ({ kind: 'fs' } as const) : parseStoreSetting(storeSetting, storeFlag !== undefined ? '--store' : 'REPODEX_STORE');
  const { runTeamServer } = await loadHttp();
  // A line per request: lines of one turn of the event loop go out in one write (a write to a pipe blocks the thread answering requests).
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    io.stderr.write(pending.join(''));
    pending = [];
  };
  const log = (line: string): void => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(`${line}\n`);
  };
  process.once('exit', flush);
  await runTeamServer(
    {
      host: (values.host as string | undefined) ?? '127.0.0.1',
      port: boundedInt('--port', values.port, 0, 65_535) ?? 7800,
      tokenFile: values['token-file'] as string | undefined,
      noToken: values['no-token'] === true,
      store,
      folder: resolve((values['data-dir'] as string | undefined) ?? defaultServerFolder()),
      ...(values['allow-roots'] !== undefined ? { allowRoots: String(values['allow-roots']).split(',').map((part) => part.trim()).filter(Boolean) } : {}),
      ...optional('syncThreads', boundedInt('--sync-threads', values['sync-threads'], 1, 64)),
      ...optional('answerThreads', boundedInt('--answer-threads', values['answer-threads'], 0, 64)),
      ...optional('debounceMs', debounceMs),
      ...optional('ratePerMinute', boundedInt('--rate-limit', values['rate-limit'], 0, 10_000_000)),
      ...optional('bodyLimitBytes', boundedInt('--max-body-bytes', values['max-body-bytes'], 1024, 1 << 30)),
      ...optional('timeoutMs', boundedInt('--request-timeout-ms', values['request-timeout-ms'], 100, 3_600_000)),
      corsOrigin: values['cors-origin'] as string | undefined,
      limits,
      ...optional('autoIndex', indexingFlag(values.indexing as string | undefined)),
      ...(naming ? { naming } : {}),
      roots: positionals,
      log,
    },
    stop,
  );
  return 0;
}

/** `{[key]: value}`, or nothing when the value is undefined (options that must be absent rather than undefined). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** A clear error for a misspelt flag, naming the closest real one. */
function unknownOption(command: string, arg: string, known: readonly string[]): RepodexError {
  const flag = arg.slice(2).split('=')[0]!;
  const squash = (text: string): string => text.replace(/[-_]/g, '').toLowerCase();
  const near = known.find((option) => squash(option) === squash(flag) || squash(option).startsWith(squash(flag)));
  const hint = near ? `did you mean --${near}?` : `options: ${known.map((option) => `--${option}`).join(', ')}`;
  return new RepodexError('BAD_REQUEST', `unknown option --${flag} for ${command}; ${hint} (see repodex ${command} --help)`);
}

/** Node's argument-parser messages, where one misleads: a value starting with "-" reads as an option. */
function argErrorMessage(message: string): string {
  const ambiguous = /^Option '(--[\w-]+)(?:, -\w)?' argument is ambiguous/.exec(message);
  if (ambiguous) return `${ambiguous[1]} was given a value that starts with "-", which reads as an option: write it as ${ambiguous[1]}=VALUE`;
  return message;
}

/**
 * Print a failure as one line (exit 1 for what a user can fix, 130 when interrupted). A bug
 * (exit 2) prints one line too, naming the error log that holds its stack (see `shownFailure`).
 */
function reportError(error: unknown, json: boolean, io: CliIo, command = 'repodex'): number {
  const isArgError = typeof error === 'object' && error !== null && 'code' in error && String((error as { code: unknown }).code).startsWith('ERR_PARSE_ARGS');
  if (isArgError) {
    writeFailure(`${argErrorMessage(errorMessage(error))} (see repodex <command> --help)`, 'BAD_REQUEST', json, io);
    return 1;
  }
  const shown = shownFailure(error, `${command} in ${process.cwd()}`);
  writeFailure(shown.message, shown.code, json, io);
  if (shown.code === 'ABORTED') return INTERRUPTED;
  return shown.internal ? 2 : 1;
}

/**
 * The MCP server module, loaded only by `serve --mcp`: built as its own bundle (dist/mcp-server.js),
 * so one-shot commands load one module without the MCP SDK in it. From sources, the module itself.
 */
async function loadMcp(): Promise<McpModule> {
  const bundled = bundledScript('mcp-server.js');
  const source = '../mcp/server.js'; // a variable: the CLI bundle does not pull it in
  return (await (bundled ? importModule(bundled.href) : import(source))) as McpModule;
}

/** The team server module, loaded only by `serve --http` (dist/http-server.js; from sources, the module itself). */
async function loadHttp(): Promise<HttpModule> {
  const bundled = bundledScript('http-server.js');
  const source = '../http/main.js';
  return (await (bundled ? importModule(bundled.href) : import(source))) as HttpModule;
}
