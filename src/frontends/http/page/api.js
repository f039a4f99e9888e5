/* global sessionStorage, fetch, URLSearchParams, location, history -- browser globals (eslint's shared config lists Node's) */
/**
 * Calls to the server's JSON API: the token (when the server asks for one) and one error shape.
 * The address the server prints carries its token (`/?token=…`): taken from there, kept for the
 * tab, and taken out of the address bar before anything else runs (so it is not in the history,
 * a bookmark or a copied permalink). A 401 asks for the token once — however many calls were
 * waiting on it — and retries them.
 */

const TOKEN_KEY = 'repodex.token';

takeTokenFromAddress();

/** Keep a `token` query parameter of the page's address as the tab's token, and remove it from the address. */
function takeTokenFromAddress() {
  const params = new URLSearchParams(location.search);
  const given = params.get('token');
  if (given === null) return;
  if (given.trim() !== '') sessionStorage.setItem(TOKEN_KEY, given.trim());
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
}

/** An answer that was not a success: the server's code, message and hint, with the HTTP status. */
export class ApiError extends Error {
  constructor(status, body) {
    super(typeof body?.error === 'string' ? body.error : `the server answered ${status}`);
    this.status = status;
    this.code = typeof body?.code === 'string' ? body.code : body?.blocked ? 'BLOCKED' : statusCode(status);
    this.hint = typeof body?.hint === 'string' ? body.hint : undefined;
    this.blocked = body?.blocked === true;
    this.requestId = typeof body?.request_id === 'string' ? body.request_id : undefined;
  }
}

function statusCode(status) {
  if (status === 0) return 'OFFLINE';
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'BLOCKED';
  if (status === 404) return 'NOT_FOUND';
  return `HTTP_${status}`;
}

let askToken = async () => {
  throw new ApiError(401, { error: 'this server needs a token' });
};
let asking;

/** Set how the page asks for a token: `ask(message)` resolves to the token typed. */
export function onTokenNeeded(ask) {
  askToken = ask;
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Ask for the token once for every call that got a 401 meanwhile. */
async function newToken(rejected, message) {
  if (token() !== rejected) return; // another call already has a new one
  if (!asking) {
    asking = askToken(message).then((value) => {
      sessionStorage.setItem(TOKEN_KEY, value);
    });
    asking.finally(() => (asking = undefined)).catch(() => undefined);
  }
  await asking;
}

/** GET (no body) or POST (a JSON body) `path`; resolves to the JSON answer, rejects with ApiError. */
export async function api(path, { body, signal } = {}) {
  for (;;) {
    const sent = token();
    const headers = { Accept: 'application/json' };
    if (sent) headers.Authorization = `Bearer ${sent}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(path, { method: body === undefined ? 'GET' : 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body), signal, cache: 'no-store' });
    } catch (error) {
      if (error?.name === 'AbortError') throw error;
      throw new ApiError(0, { error: 'the server cannot be reached', hint: 'check that repodex serve --http is still running' });
    }
    let answer;
    try {
      answer = await response.json();
    } catch {
      answer = undefined;
    }
    if (response.status === 401) {
      await newToken(sent, answer?.error);
      continue;
    }
    if (!response.ok) throw new ApiError(response.status, answer);
    return answer;
  }
}

/** GET `path` with query parameters. */
export function get(path, params = {}, options = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  const text = query.toString();
  return api(text ? `${path}?${text}` : path, options);
}
