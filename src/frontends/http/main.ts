import { readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import type { LimitOverrides } from '../../core/limits.js';
import { helpersInBackground } from '../../engine/give-way.js';
import { RepoHost } from '../../repo-host.js';
import type { StoreSpec } from '../../store/backend.js';
import type { McpOptions } from '../mcp/server.js';
import { type GeneratedToken, isLoopback, loadOrCreateToken, tokenIn } from './access-token.js';
import { type HttpOptions, type RunningHttpServer, startHttpServer } from './server.js';

/** `repodex serve --http`, as the CLI parsed it. */
export interface TeamServerOptions extends Omit<HttpOptions, 'token' | 'log' | 'naming'> {
  readonly tokenFile?: string | undefined;
  /** `--no-token`: on loopback, ask for no token (every local user and process may use the server). */
  readonly noToken?: boolean;
  readonly store: StoreSpec;
  readonly folder: string;
  readonly allowRoots?: readonly string[];
  readonly syncThreads?: number;
  /** Threads answering reads (default: DEFAULT_ANSWER_THREADS). */
  readonly answerThreads?: number;
  /** Quiet period before a watched repository re-indexes (default: each one's config). */
  readonly debounceMs?: number;
  readonly limits?: LimitOverrides;
  readonly autoIndex?: boolean;
  readonly naming?: McpOptions['naming'];
  /** Roots to register at start (`serve --http PATH…`). */
  readonly roots: readonly string[];
  /** Where the server says it started, request logs and problems go (stderr). */
  readonly log: (line: string) => void;
}

/**
 * Answer threads by default: one core is left to the thread talking to clients (HTTP, freshness
 * checks, the audit log), the others answer, up to four (past that the main thread is the limit).
 */
export function defaultAnswerThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** The bearer token in `path`: its first line, at least MIN_TOKEN_CHARS characters. */
export function readToken(path: string): string {
  let text: string;
  try {
    if (!statSync(path).isFile()) throw new RepodexError('BAD_REQUEST', `--token-file ${path} is not a file`);
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof RepodexError) throw error;
    throw new RepodexError('BAD_REQUEST', `--token-file ${path} cannot be read: ${isErrnoException(error, 'ENOENT') ? 'no such file' : errorMessage(error)}`, { selfContained: true });
  }
  return tokenIn(text, path, '--token-file');
}

/** Who may use a server: the token every request must carry and where it came from, or none. */
type Access = { readonly token: string; readonly from: 'file'; readonly path: string } | ({ readonly from: 'made' } & GeneratedToken) | { readonly token?: undefined; readonly from: 'none' };

/**
 * The server's access, from its flags: --token-file's token; else, on loopback, the token it keeps
 * in its folder (made on first start), unless --no-token; beyond loopback a token is required.
 */
function accessOf(options: TeamServerOptions): Access {
  if (options.noToken && options.tokenFile !== undefined) throw new RepodexError('BAD_REQUEST', '--no-token and --token-file contradict each other: give one of them', { selfContained: true });
  if (options.noToken && !isLoopback(options.host)) {
    throw new RepodexError('BAD_REQUEST', `--no-token would open the server to everyone who can reach ${options.host}: it is allowed on 127.0.0.1 only; give --token-file FILE instead`, { selfContained: true });
  }
  if (options.tokenFile !== undefined) return { token: readToken(options.tokenFile), from: 'file', path: options.tokenFile };
  if (options.noToken || !isLoopback(options.host)) return { from: 'none' }; // beyond loopback, startHttpServer refuses it
  return { from: 'made', ...loadOrCreateToken(options.folder) };
}

/** What the start line says of access: where the page is and what a client must send. */
function accessNote(access: Access, url: string): string {
  switch (access.from) {
    case 'made':
      return `web page at ${url}/?token=${access.token}, MCP at ${url}/mcp; every request but the page's own files needs the token in ${access.path}`;
    case 'file':
      return `web page at ${url}/, MCP at ${url}/mcp; every request but the page's own files needs the token in ${access.path}`;
    case 'none':
      return `web page at ${url}/, MCP at ${url}/mcp; no token asked for (--no-token): every user and process on this machine may use it`;
  }
}

/** Start the team server and serve until `stop` aborts; then stop taking requests, stop watching, stop the workers. */
export async function runTeamServer(options: TeamServerOptions, stop: AbortSignal): Promise<void> {
  helpersInBackground();
  const access = accessOf(options);
  const token = access.token;
  const host = await RepoHost.open({
    store: options.store,
    folder: options.folder,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.autoIndex !== undefined ? { autoIndex: options.autoIndex } : {}),
    ...(options.allowRoots ? { allowRoots: options.allowRoots.map((folder) => resolve(folder)) } : {}),
    ...(options.syncThreads !== undefined ? { syncThreads: options.syncThreads } : {}),
    answerThreads: options.answerThreads ?? defaultAnswerThreads(),
    ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
    log: options.log,
  });
  let server: RunningHttpServer | undefined;
  try {
    // The store must answer before the server says it is up: a wrong --store fails here, by name.
    await host.registry.list();
    for (const root of options.roots) {
      const { repo, created } = await host.add(resolve(root));
      options.log(`repodex: ${created ? 'registered' : 'serving'} ${repo.name} (${repo.root}) as ${repo.repo_id}`);
    }
    server = await startHttpServer(host, { ...options, token, log: options.log });
    const where = options.store.kind === 'fs' ? `repositories listed in ${host.registry.where}` : host.registry.where;
    options.log(`repodex: serving ${where} at ${server.url} (${accessNote(access, server.url)}); Ctrl-C stops`);
    await new Promise<void>((resolveStop) => {
      if (stop.aborted) resolveStop();
      else stop.addEventListener('abort', () => resolveStop(), { once: true });
    });
  } finally {
    await server?.close();
    await host.close();
  }
}
