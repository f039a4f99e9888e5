import { type ChildProcess, spawn } from 'node:child_process';
import { CLI, tempDir } from './helpers.js';

/** A parsed JSON answer, read loosely by tests. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers field by field
export type Json = any;

/** A team server (`repodex serve --http`) running as a real process on loopback. */
export interface TeamServer {
  readonly url: string;
  /** The web page's address as the server printed it: with its token when it made one (`/?token=…`). */
  readonly pageUrl: string;
  /** The token `request` sends: the one given, else the one the server made (none with --no-token). */
  readonly token: string | undefined;
  readonly child: ChildProcess;
  /** Everything it wrote on stderr so far (its start line, request logs). */
  stderr(): string;
  /** Send a request; JSON bodies are sent with their content type. */
  request(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string>; raw?: string }): Promise<{ status: number; body: Json; headers: Headers }>;
  /** Stop it (SIGTERM) and wait for it to exit; resolves to its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Start `repodex serve --http --port 0` with `args` (roots, flags) and wait for the line naming
 * its URL. `dataDir` defaults to a fresh folder; `'default'` gives no --data-dir (the server's
 * default folder, under the XDG_STATE_HOME or HOME of `env`). Requests send `token`, else the
 * token the server made and printed.
 */
export async function startTeamServer(args: readonly string[] = [], options: { env?: NodeJS.ProcessEnv; dataDir?: string; timeoutMs?: number; token?: string } = {}): Promise<TeamServer> {
  const dataDir = options.dataDir ?? tempDir('repodex-server-');
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', ...(dataDir === 'default' ? [] : ['--data-dir', dataDir]), ...args], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const { url, pageUrl } = await new Promise<{ url: string; pageUrl: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start within ${options.timeoutMs ?? 30_000} ms:\n${stderr}`)), options.timeoutMs ?? 30_000);
    const look = (): void => {
      const found = / at (http:\/\/[^\s]+) \(web page at (http:\/\/[^\s,]+)/.exec(stderr);
      if (found) {
        clearTimeout(timer);
        child.stderr!.off('data', look);
        resolve({ url: found[1]!, pageUrl: found[2]! });
      }
    };
    child.stderr!.on('data', look);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before it started:\n${stderr}`));
    });
  });
  const token = options.token ?? (new URL(pageUrl).searchParams.get('token') || undefined);
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  return {
    url,
    pageUrl,
    token,
    child,
    stderr: () => stderr,
    async request(path, init = {}) {
      const headers: Record<string, string> = { ...auth, ...(init.body !== undefined || init.raw !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers };
      const send = (): Promise<Response> => fetch(`${url}${path}`, { method: init.method ?? (init.body !== undefined || init.raw !== undefined ? 'POST' : 'GET'), headers, body: init.raw ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined) });
      const response = await send().catch((error: unknown) => {
        // fetch keeps idle connections for reuse; on a loaded host it can write a request on one
        // the server is closing as idle (its keep-alive timeout), which the server never read.
        // Sent again on a new connection, as HTTP clients do for that one failure.
        if (closedIdle(error)) return send();
        throw error;
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON (the page): the text
      }
      return { status: response.status, body, headers: response.headers };
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Whether fetch failed because the server closed the connection it reused before answering. */
function closedIdle(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
  return cause?.code === 'UND_ERR_SOCKET';
}

/** Options for an MCP client transport (`StreamableHTTPClientTransport`) that send the server's token. */
export function withToken(server: TeamServer): { requestInit: RequestInit } {
  return { requestInit: { headers: server.token ? { authorization: `Bearer ${server.token}` } : {} } };
}
