import { parseArgs } from 'node:util';
import { RepodexError, errorMessage, isRepodexError } from '../../core/errors.js';
import { TOOL_VERSION } from '../../core/version.js';
import { createEngine } from '../../compose.js';
import type { Engine, InitReport, SearchReport } from '../../engine/engine.js';
import type { FetchReport } from '../../engine/fetch.js';
import type { FilesReport } from '../../engine/files.js';
import type { OpenReport } from '../../engine/open.js';
import type { OutlineReport } from '../../engine/outline.js';
import type { StatusReport } from '../../engine/status.js';
import type { SyncSummary } from '../../engine/sync.js';
import { handleRequest } from '../../protocol/handlers.js';
import { type Request as ProtocolRequest, Request, describeIssues } from '../../protocol/schemas.js';
import { serveJsonl } from '../jsonl/server.js';
import { printFetch, printFiles, printInit, printOpen, printOutline, printSearch, printStatus, printSyncSummary } from './printers.js';
import { progressBar } from './progress.js';
import { styleFor } from './style.js';

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
    summary: 'create .repodex/ with a default config.json and ignore file',
    usage: 'repodex init',
    details: 'Idempotent: existing files are never overwritten.',
    options: {},
  },
  status: {
    summary: 'is there an index, and is it dirty?',
    usage: 'repodex status',
    details:
      'Dirty when an artifact is missing, .repodex/config.json changed, a file was added, removed or\nchanged (size or mtime), or git HEAD moved since the last sync.',
    options: {},
  },
  sync: {
    summary: 'build the index (written as a new generation, switched atomically)',
    usage: 'repodex sync [--force]',
    details: 'Shows a progress bar on a terminal and a summary line after.\n  --force   rebuild from scratch',
    options: { force: { type: 'boolean' } },
  },
  search: {
    summary: 'ranked candidate chunks for an English query',
    usage: 'repodex search "QUERY" [--top-k N] [--mode bm25|idf] [--glob G] [--lang L]',
    details: [
      'Builds the index on first use and refreshes it when files changed (REPODEX_INDEXING=0 turns that off).',
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
    details: '  --ids A,B,…       chunk ids from a search (or give them as arguments)\n  --max-lines N     lines per chunk (default 120, at most 120)',
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
  serve: {
    summary: 'serve the JSONL protocol on stdin/stdout for an agent',
    usage: 'repodex serve --stdio',
    details:
      'One JSON request per line in, one JSON response per line out, in order. Ops: status, sync,\nsearch, fetch, open, outline, files. See AGENTS.md for the protocol.',
    options: { stdio: { type: 'boolean' } },
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

function commandHelp(name: string, spec: CommandSpec): string {
  return [`${spec.usage}`, '', spec.summary, '', spec.details, '', 'also: --root DIR, --json, --help'].join('\n');
}

function toInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim())) throw new RepodexError('BAD_REQUEST', `${flag} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function parseRequest(input: Record<string, unknown>): ProtocolRequest {
  const parsed = Request.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new RepodexError('BAD_REQUEST', describeIssues(parsed.error));
  return parsed.data;
}

/** Output streams, injectable for tests. */
export interface CliIo {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
}

/** Run the CLI; resolves to the process exit code (0 ok, 1 user error, 2 internal error). */
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
      out(commandHelp(name, spec));
      return 0;
    }
    const engine = createEngine({ root: values.root as string | undefined });
    const style = styleFor(io.stdout);
    const onEvent = json ? undefined : progressBar(io.stderr);
    const emit = (data: unknown, human: () => string): void => out(json ? JSON.stringify(data) : human());
    switch (name) {
      case 'init': {
        const report = engine.init();
        emit(report, () => printInit(report as InitReport));
        return 0;
      }
      case 'status': {
        const report = (await handleRequest(engine, parseRequest({ op: 'status' }))) as StatusReport;
        emit(report, () => printStatus(report, style));
        return 0;
      }
      case 'sync': {
        const request = parseRequest({ op: 'sync', force: values.force === true ? true : undefined });
        const summary = (await handleRequest(engine, request, { onEvent })) as SyncSummary;
        emit(summary, () => printSyncSummary(summary));
        return 0;
      }
      case 'search': {
        const q = (values.q as string | undefined) ?? positionals.join(' ');
        if (q.trim() === '') throw new RepodexError('BAD_REQUEST', 'search needs a query: repodex search "where is the config loaded"');
        const request = parseRequest({
          op: 'search',
          q,
          top_k: toInt('--top-k', values['top-k'] as string | undefined),
          mode: values.mode,
          glob: values.glob,
          lang: values.lang,
        });
        const report = (await handleRequest(engine, request, { onEvent, refreshIfDirty: true })) as SearchReport;
        if (report.synced && !json) io.stderr.write(`${printSyncSummary(report.synced)}\n`);
        emit(report, () => printSearch(report, style));
        return 0;
      }
      case 'fetch': {
        const idText = [(values.ids as string | undefined) ?? '', ...positionals].join(',');
        const ids = idText
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((id) => toInt('--ids', id)!);
        if (ids.length === 0) throw new RepodexError('BAD_REQUEST', 'fetch needs chunk ids from a search: repodex fetch --ids 3,7');
        const request = parseRequest({ op: 'fetch', ids, max_lines: toInt('--max-lines', values['max-lines'] as string | undefined) });
        const report = (await handleRequest(engine, request)) as FetchReport;
        emit(report, () => printFetch(report, style));
        return 0;
      }
      case 'open': {
        const [path, ...extra] = positionals;
        if (path === undefined || extra.length > 0) throw new RepodexError('BAD_REQUEST', 'open needs exactly one path: repodex open src/index.ts --start 10 --end 40');
        const request = parseRequest({ op: 'open', path, start_line: toInt('--start', values.start as string | undefined), end_line: toInt('--end', values.end as string | undefined) });
        const report = (await handleRequest(engine, request)) as OpenReport;
        emit(report, () => printOpen(report, style));
        return 'error' in report ? 1 : 0;
      }
      case 'outline': {
        const [path, ...extra] = positionals;
        if (path === undefined || extra.length > 0) throw new RepodexError('BAD_REQUEST', 'outline needs exactly one path: repodex outline src/router.ts');
        const report = (await handleRequest(engine, parseRequest({ op: 'outline', path }))) as OutlineReport;
        emit(report, () => printOutline(report, style));
        return 'error' in report ? 1 : 0;
      }
      case 'files': {
        const request = parseRequest({ op: 'files', glob: values.glob, limit: toInt('--limit', values.limit as string | undefined) });
        const report = (await handleRequest(engine, request)) as FilesReport;
        emit(report, () => printFiles(report, style));
        return 0;
      }
      case 'serve': {
        if (values.stdio !== true) throw new RepodexError('BAD_REQUEST', 'serve needs a transport: repodex serve --stdio');
        await serve(engine, io);
        return 0;
      }
      case 'clean': {
        const report = engine.clean();
        emit(report, () =>
          report.removed.length === 0 ? 'nothing to remove: no index here' : `removed ${report.removed.join(', ')} from .repodex (config.json and ignore kept)`,
        );
        return 0;
      }
      default:
        throw new RepodexError('INTERNAL', `command ${name} has no handler`);
    }
  } catch (error) {
    return reportError(error, json, io);
  }
}

async function serve(engine: Engine, io: CliIo): Promise<void> {
  io.stdout.on('error', (error: NodeJS.ErrnoException) => {
    // The client closed its end: nobody is left to answer.
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  // Load the index and warm the JIT before the first request, so early queries are as fast as later ones.
  await engine.warmUp();
  await serveJsonl(engine, io.stdin, io.stdout, { log: (message) => io.stderr.write(`${message}\n`) });
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
  return user ? 1 : 2;
}

const exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
process.exitCode = exitCode;
