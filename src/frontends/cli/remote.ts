import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ErrorCode, RepodexError, errorMessage, isErrorCode } from '../../core/errors.js';
import { type CallError, OPS, type Op, type RequestOf, type ResponseOf, flagOf, opsOn, partition, serves, toSurface, withheldOn } from '../../protocol/index.js';
import { defaultServerFolder, generatedTokenPath, isLoopback, readGeneratedToken } from '../http/access-token.js';
import { listenerIsMine } from './listener-owner.js';

/** Where the CLI finds a team server: --server, else REPODEX_SERVER, else the default address. */
export const DEFAULT_SERVER = 'http://127.0.0.1:7800';

/** The answer of a server request: its status and body. */
interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** The bearer token a client sends, and where it was found (messages name it); or why none is sent. */
export interface ClientToken {
  readonly token?: string;
  /** Where the token was found (`--token-file F`, REPODEX_TOKEN, the server's token file). */
  readonly from?: string;
  /** Why a token that was found is not sent. */
  readonly withheld?: string;
}

/** A server's URL, checked. */
function serverAddress(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RepodexError('BAD_REQUEST', `--server ${JSON.stringify(url)} is not a URL: give one such as ${DEFAULT_SERVER}`, { selfContained: true });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new RepodexError('BAD_REQUEST', `--server ${url} must be an http:// or https:// URL`, { selfContained: true });
  return parsed;
}

/** A team server, as the CLI talks to it (`--server URL`; the bearer token of `clientToken`). */
export class ServerClient {
  private readonly base: string;

  constructor(
    url: string,
    private readonly credentials: ClientToken = {},
  ) {
    serverAddress(url);
    this.base = url.replace(/\/+$/, '');
  }

  /** The client of the server at `url`, with the token `clientToken` finds for it. */
  static for(url: string, tokenFile: string | undefined, env: NodeJS.ProcessEnv = process.env): ServerClient {
    return new ServerClient(url, clientToken(tokenFile, url, env));
  }

  async send(method: 'GET' | 'POST' | 'DELETE', path: string, body?: Record<string, unknown>): Promise<Answer> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(this.credentials.token ? { authorization: `Bearer ${this.credentials.token}` } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? errorMessage(error);
      throw new RepodexError('SERVER_UNAVAILABLE', `no repodex server answers at ${this.base} (${cause})`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RepodexError('SERVER_UNAVAILABLE', `${this.base} answered ${response.status} with something that is not a repodex answer: is it a repodex server?`, { selfContained: true });
    }
    if (response.status === 401) throw this.refused();
    return { status: response.status, body: parsed };
  }

  /** A 401 as what to do about it: which token was sent (or why none), and where the right one is. */
  private refused(): RepodexError {
    const { token, from, withheld } = this.credentials;
    const what = token ? `refused the token from ${from}` : `needs a bearer token and none was sent${withheld ? ` (${withheld})` : ''}`;
    const where = `a server started without --token-file keeps its own in DATA-DIR/token (by default ${generatedTokenPath(defaultServerFolder())})`;
    return new RepodexError('UNAUTHORIZED', `${this.base} ${what}: pass --token-file F or set REPODEX_TOKEN; ${where}`, { selfContained: true });
  }

  /** The body of a successful answer; a failure `{ok:false, code, error}` becomes the error it names. */
  async call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: Record<string, unknown>): Promise<unknown> {
    const answer = await this.send(method, path, body);
    const failure = failureOf(answer);
    if (failure) throw failure;
    return answer.body;
  }

  /** A repository id for `--repo`: an id as it is, or a name or root looked up in the server's list. */
  async repoId(asked: string): Promise<string> {
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(asked)) return asked;
    const { repos } = (await this.call('GET', '/repos')) as { repos: { repo_id: string; name: string; root: string }[] };
    const root = resolve(asked);
    const matches = repos.filter((repo) => repo.name === asked || repo.root === root);
    if (matches.length === 1) return matches[0]!.repo_id;
    if (matches.length > 1) throw new RepodexError('BAD_REQUEST', `${matches.length} repositories are named ${asked}: give an id (repodex repo list)`, { selfContained: true });
    throw new RepodexError('REPO_UNKNOWN', `no repository named ${JSON.stringify(asked)} on ${this.base}: repodex repo list shows them, repodex repo add PATH adds one`, { selfContained: true });
  }
}

/**
 * What a refused read answers, as the local command has it: the failure body less the failure's
 * own fields (`ok`, `code`, `request_id`; a fetch's answer has no `error`, `hint` or `blocked` of its own).
 */
function refusedAnswer(body: Record<string, unknown>): Record<string, unknown> {
  const { ok: _ok, code: _code, request_id: _id, ...answer } = body;
  if (!Array.isArray(answer.chunks)) return answer;
  const { error: _error, hint: _hint, blocked: _blocked, ...fetched } = answer;
  return fetched;
}

/**
 * A server's failure answer as the error it names, with the error table's exit code; or undefined
 * for a success or a refused read. A code this build does not know (a newer server's) is named in
 * the message, under the code of its status's class.
 */
function failureOf(answer: Answer): RepodexError | undefined {
  const body = answer.body as { ok?: unknown; code?: unknown; error?: unknown; hint?: unknown; blocked?: unknown };
  if (answer.status < 400 || body === null || typeof body !== 'object' || body.ok !== false || typeof body.blocked === 'boolean') return undefined;
  const code = typeof body.code === 'string' ? body.code : '';
  const message = `${String(body.error ?? `the server answered ${answer.status}`)}${typeof body.hint === 'string' ? ` (${body.hint})` : ''}`;
  const known: ErrorCode = isErrorCode(code) ? code : answer.status >= 500 ? 'SERVER_UNAVAILABLE' : 'BAD_REQUEST';
  return new RepodexError(known, isErrorCode(code) || code === '' ? message : `${message} [${code}]`, { selfContained: true });
}

/**
 * The bearer token for the server at `url`: --token-file, else REPODEX_TOKEN, else (a server on
 * this machine) the token a server keeps in the default folder, when the server listening there
 * is this user's; else none.
 */
export function clientToken(tokenFile: string | undefined, url: string, env: NodeJS.ProcessEnv = process.env): ClientToken {
  if (tokenFile !== undefined) {
    try {
      return { token: readFileSync(tokenFile, 'utf8').split(/\r?\n/)[0]!.trim(), from: `--token-file ${tokenFile}` };
    } catch (error) {
      throw new RepodexError('BAD_REQUEST', `--token-file ${tokenFile} cannot be read: ${errorMessage(error)}`, { selfContained: true });
    }
  }
  const fromEnv = env.REPODEX_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, from: 'REPODEX_TOKEN' };
  const address = serverAddress(url);
  if (!isLoopback(address.hostname)) return {};
  const folder = defaultServerFolder(env);
  const token = readGeneratedToken(folder);
  if (token === undefined) return {};
  const from = generatedTokenPath(folder);
  const port = Number(address.port || (address.protocol === 'https:' ? 443 : 80));
  if (listenerIsMine(port) === false) return { withheld: `the token in ${from} goes only to a server run by you, and what listens on port ${port} is not` };
  return { token, from };
}

/** What a `repo` command prints, and its exit code. */
export interface RemoteOutput {
  readonly stdout?: string;
  readonly code: number;
}

/** The HTTP request for one op on a server. */
export interface RemoteRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: Record<string, unknown>;
}

/**
 * The request `repodex <op> --repo ID …` sends: the op's route, with the request's fields under
 * the route's names (in the query of a GET). A field the server does not take is refused here,
 * never dropped.
 */
export function remoteRequest<O extends Op>(op: O, repoId: string, request: RequestOf<O>): RemoteRequest {
  const fields = remoteFields(op, request);
  const params = { repo_id: repoId, ...toSurface('http', op, fields) };
  const { method, path } = OPS[op].http!;
  if (method === 'POST') return { method, path, body: params };
  const query = new URLSearchParams(Object.entries(params).map(([name, value]): [string, string] => [name, String(value)]));
  return { method, path: `${path}?${query.toString()}` };
}

/** The request's fields, once checked to be ones a server takes: an op or a field it does not take is refused here, never dropped. */
function remoteFields<O extends Op>(op: O, request: RequestOf<O>): Record<string, unknown> {
  if (!serves('http', op)) throw new RepodexError('BAD_REQUEST', `${op} runs here only, not on a server: leave out --repo (commands with --repo: ${opsOn('http').join(', ')})`, { selfContained: true });
  const fields = request as unknown as Record<string, unknown>;
  for (const [field, why] of Object.entries(withheldOn('http', op))) {
    if (fields[field] !== undefined) throw new RepodexError('BAD_REQUEST', `${flagOf(op, field) ?? field} runs here only, not on a server (${why}): leave out --repo`, { selfContained: true });
  }
  return fields;
}

/** The outcome of one op on a server, as the local call's: the answer, what of it was served and what refused, and the error. */
export interface RemoteOutcome<O extends Op = Op> {
  readonly data: ResponseOf<O>;
  readonly served: ResponseOf<O> | undefined;
  readonly refused: ResponseOf<O> | undefined;
  readonly error: CallError | undefined;
  readonly warnings: string[];
}

/**
 * Run one request on a server, for the repository `repo` names (an id, a name or a root). A refused read comes back as the local call's would (the answer,
 * split by the op's refusal rule, the same one `call` applies); any other failure throws the error
 * the server named.
 */
export async function runRemote<O extends Op>(client: ServerClient, op: O, repo: string, request: RequestOf<O>): Promise<RemoteOutcome<O>> {
  remoteFields(op, request); // before the server is asked which repository `repo` names
  const sent = remoteRequest(op, await client.repoId(repo), request);
  const answer = await client.send(sent.method, sent.path, sent.body);
  const failure = failureOf(answer);
  if (failure) throw failure;
  const data = (answer.status >= 400 ? refusedAnswer(answer.body as Record<string, unknown>) : answer.body) as ResponseOf<O>;
  const split = partition(op, data);
  const refusal = split.refusal;
  const error: CallError | undefined = refusal ? { code: refusal.blocked ? 'BLOCKED' : 'REFUSED', message: refusal.error, hint: refusal.hint } : undefined;
  const own = (data as { warnings?: unknown }).warnings;
  return { data, served: split.served, refused: split.refused, error, warnings: Array.isArray(own) ? (own as string[]) : [] };
}

/** `repodex repo …`: the repositories of a server. */
export async function runRepoCommand(client: ServerClient, sub: string | undefined, args: readonly string[], options: { name?: string | undefined; json: boolean }): Promise<RemoteOutput> {
  const out = (data: unknown, human: string): RemoteOutput => ({ stdout: options.json ? JSON.stringify(data) : human, code: 0 });
  const one = (what: string): string => {
    if (args.length !== 1) throw new RepodexError('BAD_REQUEST', `repo ${what} needs exactly one ${what === 'add' ? 'path' : 'repository (an id or a name)'}: repodex repo ${what} ${what === 'add' ? '~/code/app' : 'ID'}`, { selfContained: true });
    return args[0]!;
  };
  switch (sub) {
    case 'add': {
      const data = (await client.call('POST', '/repos', { root: resolve(one('add')), ...(options.name !== undefined ? { name: options.name } : {}) })) as { repo_id: string; created: boolean; repo: { name: string; root: string } };
      return out(data, `${data.created ? 'registered' : 'already registered'}: ${data.repo.name} ${data.repo_id} (${data.repo.root})`);
    }
    case 'list': {
      const data = (await client.call('GET', '/repos')) as { repos: { repo_id: string; name: string; root: string; index_status: string; watch: boolean; progress: { phase: string; done: number | null; total: number | null } | null }[] };
      if (data.repos.length === 0) return out(data, 'no repositories registered: repodex repo add PATH');
      const width = Math.max(...data.repos.map((repo) => repo.name.length));
      const lines = data.repos.map((repo) => {
        const lexical = repo.progress !== null && ['scan', 'index', 'write'].includes(repo.progress.phase);
        const counted = repo.progress && repo.progress.total ? `${repo.progress.done ?? 0}/${repo.progress.total}` : '';
        const progress = !repo.progress ? '' : lexical ? (counted ? ` ${counted}` : '') : `, vectors${counted ? ` ${counted}` : ''}`;
        return `${repo.repo_id}  ${repo.name.padEnd(width)}  ${`${repo.index_status}${progress}`.padEnd(20)}${repo.watch ? ' watched' : '        '}  ${repo.root}`;
      });
      return out(data, lines.join('\n'));
    }
    case 'remove': {
      const id = await client.repoId(one('remove'));
      const data = (await client.call('DELETE', `/repos/${encodeURIComponent(id)}`)) as { repo: { name: string; root: string } };
      return out(data, `removed ${data.repo.name} (${data.repo.root}) from the server; its index stays (repodex clean --root ${data.repo.root} removes it)`);
    }
    case 'watch':
    case 'unwatch': {
      const id = await client.repoId(one(sub));
      const data = (await client.call('POST', `/repo/${sub}`, { repo_id: id })) as { name: string; watcher_active: boolean; index_status: string };
      return out(data, `${data.name}: ${data.watcher_active ? 're-indexed as files change' : 'no longer watched (re-indexed when asked)'}; index ${data.index_status}`);
    }
    case 'status': {
      const id = await client.repoId(one('status'));
      const data = (await client.call('GET', `/index/status/${encodeURIComponent(id)}`)) as Record<string, unknown>;
      const lines = Object.entries(data).map(([key, value]) => `${key.padEnd(24)} ${typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}`);
      return out(data, lines.join('\n'));
    }
    default:
      throw new RepodexError('BAD_REQUEST', `${sub === undefined ? 'repo needs a subcommand' : `unknown repo command ${JSON.stringify(sub)}`}: repodex repo add PATH | list | remove ID | watch ID | unwatch ID | status ID`, { selfContained: true });
  }
}
