import { resolve } from 'node:path';
import { createServerEngine, parseStoreSetting } from '../../compose.js';
import { bundledScript } from '../../core/bundled.js';
import { RepodexError, errorMessage } from '../../core/errors.js';
import { importModule } from '../../core/import-module.js';
import { LIMITS, LIMIT_NAMES, limitProblem } from '../../core/limits.js';
import { helpersInBackground } from '../../engine/give-way.js';
import type { ResponseOf } from '../../protocol/index.js';
import { defaultServerFolder } from '../http/access-token.js';
import type * as HttpServerModule from '../http/main.js';
import { serveJsonl } from '../jsonl/server.js';
import type * as McpServerModule from '../mcp/server.js';
import type { ToolNaming } from '../mcp/server.js';
import { type FlagValues, boundedInt, indexingFlag, optional, toInt } from './flags.js';
import type { CliIo } from './main.js';
import { printWatchSync } from './printers.js';

type McpModule = typeof McpServerModule;
type HttpModule = typeof HttpServerModule;

/** `watch` and `serve`: long-running, on a server engine (worker-thread syncs, a file watcher). */
export async function runServer(name: 'watch' | 'serve', values: FlagValues, root: string | undefined, io: CliIo, stop: AbortSignal, json: boolean, positionals: readonly string[]): Promise<number> {
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


/** `serve --http`: the team server, from its own bundle (the HTTP and MCP libraries load only here). */
async function runTeamServerCommand(
  values: FlagValues,
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

