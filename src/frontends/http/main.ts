import { readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import type { LimitOverrides } from '../../core/limits.js';
import { helpersInBackground } from '../../engine/give-way.js';
import { RepoHost } from '../../repo-host.js';
import type { StoreSpec } from '../../store/backend.js';
import type { McpOptions } from '../mcp/server.js';
import { type HttpOptions, type RunningHttpServer, startHttpServer } from './server.js';

/** `repodex serve --http`, as the CLI parsed it. */
export interface TeamServerOptions extends Omit<HttpOptions, 'token' | 'log' | 'naming'> {
  readonly tokenFile?: string | undefined;
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

/** Shortest token a server accepts: anything shorter is guessable. */
const MIN_TOKEN_CHARS = 16;

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
  const token = text.split(/\r?\n/)[0]!.trim();
  if (token.length < MIN_TOKEN_CHARS) {
    throw new RepodexError('BAD_REQUEST', `--token-file ${path} holds a token of ${token.length} characters; use at least ${MIN_TOKEN_CHARS} random ones (e.g. \`openssl rand -hex 32 > ${path}\`)`, { selfContained: true });
  }
  return token;
}

/** Start the team server and serve until `stop` aborts; then stop taking requests, stop watching, stop the workers. */
export async function runTeamServer(options: TeamServerOptions, stop: AbortSignal): Promise<void> {
  helpersInBackground();
  const token = options.tokenFile !== undefined ? readToken(options.tokenFile) : undefined;
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
    options.log(`repodex: serving ${where} at ${server.url} (web page at ${server.url}/, MCP at ${server.url}/mcp${token ? '; bearer token required' : ''}); Ctrl-C stops`);
    await new Promise<void>((resolveStop) => {
      if (stop.aborted) resolveStop();
      else stop.addEventListener('abort', () => resolveStop(), { once: true });
    });
  } finally {
    await server?.close();
    await host.close();
  }
}
