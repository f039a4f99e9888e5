import { parseArgs } from 'node:util';
import { createEngine, createServerEngine } from '../../compose.js';
import { RepodexError, errorMessage, isRepodexError } from '../../core/errors.js';
import { TOOL_VERSION } from '../../core/version.js';
import { type HandleOptions, type Op, Request, type RequestOf, type ResponseOf, describeIssues, handle, isRefusal } from '../../protocol/index.js';
import { serveJsonl } from '../jsonl/server.js';
import {
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
} from './printers.js';
import { progressBar } from './progress.js';
import { type Style, styleFor } from './style.js';

const GLOBAL_OPTIONS = {
  root: { type: 'string' },
  json: { type: 'boolean' },
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
      'Stale when a file was added, removed or changed (size or mtime: a touched file counts until the next',
      'sync), .repodex/config.json or the indexing rules changed, git HEAD moved, or the index is damaged',
      '(every checksum is checked). Shows the indexed commit against HEAD.',
    ].join('\n'),
    options: {},
  },
  sync: {
    summary: 'bring the index up to date (only changed files are read)',
    usage: 'repodex sync [--force]',
    details: [
      'Incremental: new and changed files (by size and mtime) are read once each, removed ones dropped, and',
      'the result written as a small delta; with nothing changed nothing is written. A file whose content',
      'was parsed before is not parsed again. Chunk ids of unchanged chunks stay valid.',
      'Waits up to 2 s for a sync another process is running, then says so (exit 1).',
      'Shows a progress bar on a terminal and a summary line after; Ctrl-C stops it without writing.',
      '  --force   rebuild the whole index (still reusing earlier parses)',
    ].join('\n'),
    options: { force: { type: 'boolean' } },
  },
  search: {
    summary: 'ranked candidate chunks for an English query',
    usage: 'repodex search "QUERY" [--top-k N] [--mode bm25|idf] [--glob G] [--lang L]',
    details: [
      'Builds the index on first use and refreshes it when files changed (REPODEX_INDEXING=0 or config',
      'auto_index: false turn that off: results then carry a `stale` warning).',
      '  --q QUERY        the query (or give it as the first argument)',
      '  --top-k N        results to return (default 20, at most 20; at most 2 per file)',
      '  --mode M         bm25 (default) or idf',
      '  --glob G         only paths matching G, e.g. "src/**/*.ts" or "*.py"',
      '  --lang L         only one language, e.g. typescript, python, go, markdown',
    ].join('\n'),
    options: { q: { type: 'string' }, 'top-k': { type: 'string' }, mode: { type: 'string' }, glob: { type: 'string' }, lang: { type: 'string' } },
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
    options: { ids: { type: 'string' }, 'max-lines': { type: 'string' } },
  },
  open: {
    summary: 'a bounded, line-numbered range of any file in the repository',
    usage: 'repodex open PATH [--start N] [--end M]',
    details: '  --start N   first line (default 1)\n  --end M     last line (at most 120 lines are returned; `next_start` says where to continue)\nSandboxed: no paths outside the root, no secrets.',
    options: { start: { type: 'string' }, end: { type: 'string' } },
  },
  outline: {
    summary: 'the declarations of one file (classes, functions, methods, types, …)',
    usage: 'repodex outline PATH',
    details:
      'Nested and conditional declarations included, with parent, scope and control-flow context; nothing is executed.\nServed from the index when the file is unchanged since the last sync, else parsed now.',
    options: {},
  },
  files: {
    summary: 'the catalogued files, with size, mtime, language and state',
    usage: 'repodex files [--glob G] [--limit N]',
    details: '  --glob G    only paths matching G, e.g. "src/**/*.ts"\n  --limit N   at most N files (default 1000, at most 10000)',
    options: { glob: { type: 'string' }, limit: { type: 'string' } },
  },
  verify: {
    summary: 'check every checksum, size, version and cross-reference of the index',
    usage: 'repodex verify',
    details: 'Exits 1 and names each damaged file when anything is wrong; `repodex sync` repairs it.',
    options: {},
  },
  watch: {
    summary: 'keep the index fresh while files change (until Ctrl-C)',
    usage: 'repodex watch [--debounce-ms N]',
    details: [
      'Syncs once, then re-indexes the changed files whenever files have been quiet for the debounce period',
      '(a burst of changes, such as a branch checkout, becomes one sync). One line per sync; --json prints',
      'each sync summary as a JSON line. Ignored and skipped paths never trigger a sync; symlinks are not followed.',
      '  --debounce-ms N   quiet period before re-indexing (default: config watch.debounce_ms, 500)',
    ].join('\n'),
    options: { 'debounce-ms': { type: 'string' } },
  },
  serve: {
    summary: 'serve the JSONL protocol on stdin/stdout for an agent',
    usage: 'repodex serve --stdio [--watch] [--debounce-ms N]',
    details: [
      'One JSON request per line in, one JSON response per line out, in order. Ops: status, sync, search,',
      'fetch, open, outline, files, verify. See AGENTS.md for the protocol. A search, fetch or files on a',
      'stale index syncs first (as the CLI does), in a worker thread; file changes are noticed by a watcher.',
      '  --watch           re-index changes in the background as they happen; requests meanwhile answer',
      '                    from the previous index with a warning instead of waiting',
      '  --debounce-ms N   quiet period before a background re-index (default 500)',
    ].join('\n'),
    options: { stdio: { type: 'boolean' }, watch: { type: 'boolean' }, 'debounce-ms': { type: 'string' } },
  },
  clean: {
    summary: 'remove the index (keeps config.json and ignore)',
    usage: 'repodex clean',
    details: 'Refuses while a sync is running.',
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
    '  --json       print the result as JSON (the same object the JSONL protocol returns)',
    '  -h, --help   help for a command',
    '',
    'quick start: repodex search "where is the config loaded"',
  ].join('\n');
}

function commandHelp(spec: CommandSpec): string {
  return [`${spec.usage}`, '', spec.summary, '', spec.details, '', 'also: --root DIR, --json, --help'].join('\n');
}

function toInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim())) throw new RepodexError('BAD_REQUEST', `${flag} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function parseRequest<O extends Op>(input: { op: O } & Record<string, unknown>): RequestOf<O> {
  const parsed = Request.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new RepodexError('BAD_REQUEST', describeIssues(parsed.error));
  return parsed.data as RequestOf<O>;
}

/** Output streams, injectable for tests. */
export interface CliIo {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
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
    const style = styleFor(io.stdout);
    const handleOptions: HandleOptions = { ...(json || !progress ? {} : { onEvent: progress.onEvent }), signal: interrupt.signal };
    const emit = <T>(data: T, human: (data: T, style: Style) => string): void => {
      progress?.clear();
      out(json ? JSON.stringify(data) : human(data, style));
    };
    if (name === 'watch' || name === 'serve') return await runServer(name, values, root, io, interrupt.signal, json);
    const engine = createEngine({ root });
    const run = <O extends Op>(request: RequestOf<O>): Promise<ResponseOf<O>> => handle(engine, request, handleOptions);
    switch (name) {
      case 'init':
        emit(await run(parseRequest({ op: 'init' })), printInit);
        return 0;
      case 'status':
        emit(await run(parseRequest({ op: 'status' })), printStatus);
        return 0;
      case 'sync':
        emit(await run(parseRequest({ op: 'sync', force: values.force === true ? true : undefined })), printSyncSummary);
        return 0;
      case 'search': {
        const q = (values.q as string | undefined) ?? positionals.join(' ');
        if (q.trim() === '') throw new RepodexError('BAD_REQUEST', 'search needs a query: repodex search "where is the config loaded"');
        const report = await run(
          parseRequest({ op: 'search', q, top_k: toInt('--top-k', values['top-k'] as string | undefined), mode: values.mode, glob: values.glob, lang: values.lang }),
        );
        progress?.clear();
        if (report.synced && !json) io.stderr.write(`${printSyncSummary(report.synced)}\n`);
        emit(report, printSearch);
        return 0;
      }
      case 'fetch': {
        const idText = [(values.ids as string | undefined) ?? '', ...positionals].join(',');
        const ids = idText
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((id) => toInt('--ids', id)!);
        if (ids.length === 0) throw new RepodexError('BAD_REQUEST', 'fetch needs chunk ids from a search: repodex fetch --ids 3,7');
        const report = await run(parseRequest({ op: 'fetch', ids, max_lines: toInt('--max-lines', values['max-lines'] as string | undefined) }));
        emit(report, printFetch);
        return report.chunks.some(isRefusal) ? 1 : 0;
      }
      case 'open': {
        const [path, ...extra] = positionals;
        if (path === undefined || extra.length > 0) throw new RepodexError('BAD_REQUEST', 'open needs exactly one path: repodex open src/index.ts --start 10 --end 40');
        const report = await run(parseRequest({ op: 'open', path, start_line: toInt('--start', values.start as string | undefined), end_line: toInt('--end', values.end as string | undefined) }));
        emit(report, printOpen);
        return isRefusal(report) ? 1 : 0;
      }
      case 'outline': {
        const [path, ...extra] = positionals;
        if (path === undefined || extra.length > 0) throw new RepodexError('BAD_REQUEST', 'outline needs exactly one path: repodex outline src/router.ts');
        const report = await run(parseRequest({ op: 'outline', path }));
        emit(report, printOutline);
        return isRefusal(report) ? 1 : 0;
      }
      case 'files':
        emit(await run(parseRequest({ op: 'files', glob: values.glob, limit: toInt('--limit', values.limit as string | undefined) })), printFiles);
        return 0;
      case 'verify': {
        const report = await run(parseRequest({ op: 'verify' }));
        emit(report, printVerify);
        return report.ok ? 0 : 1;
      }
      case 'clean':
        emit(await run(parseRequest({ op: 'clean' })), printClean);
        return 0;
      default:
        throw new RepodexError('INTERNAL', `command ${name} has no handler`);
    }
  } catch (error) {
    progress?.clear();
    return reportError(error, json, io);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

/** `watch` and `serve`: long-running, on a server engine (worker-thread syncs, a file watcher). */
async function runServer(name: 'watch' | 'serve', values: Record<string, string | boolean | undefined>, root: string | undefined, io: CliIo, stop: AbortSignal, json: boolean): Promise<number> {
  if (name === 'serve' && values.stdio !== true) throw new RepodexError('BAD_REQUEST', 'serve needs a transport: repodex serve --stdio');
  const debounce = toInt('--debounce-ms', values['debounce-ms'] as string | undefined);
  if (debounce !== undefined && (debounce < 0 || debounce > 60_000)) throw new RepodexError('BAD_REQUEST', '--debounce-ms must be between 0 and 60000');
  const server = await createServerEngine({ root });
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
      await Promise.race([serveJsonl(server.engine, io.stdin, io.stdout, { log }), stopped]);
    } else {
      await stopped;
    }
    return 0;
  } finally {
    await server.close();
  }
}

/** A clear error for a misspelt flag, naming the closest real one. */
function unknownOption(command: string, arg: string, known: readonly string[]): RepodexError {
  const flag = arg.slice(2).split('=')[0]!;
  const squash = (text: string): string => text.replace(/[-_]/g, '').toLowerCase();
  const near = known.find((option) => squash(option) === squash(flag) || squash(option).startsWith(squash(flag)));
  const hint = near ? `did you mean --${near}?` : `options: ${known.map((option) => `--${option}`).join(', ')}`;
  return new RepodexError('BAD_REQUEST', `unknown option --${flag} for ${command}; ${hint} (see repodex ${command} --help)`);
}

function reportError(error: unknown, json: boolean, io: CliIo): number {
  const isArgError = typeof error === 'object' && error !== null && 'code' in error && String((error as { code: unknown }).code).startsWith('ERR_PARSE_ARGS');
  const code = isRepodexError(error) ? error.code : isArgError ? 'BAD_REQUEST' : 'INTERNAL';
  const user = isRepodexError(error) ? error.isUserError : isArgError;
  const message = isArgError ? `${errorMessage(error)} (see repodex <command> --help)` : errorMessage(error);
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: message, code })}\n`);
  io.stderr.write(`repodex: ${message}\n`);
  if (!user && !isRepodexError(error) && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  if (code === 'ABORTED') return INTERRUPTED;
  return user ? 1 : 2;
}
