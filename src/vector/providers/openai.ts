/**
 * The `openai` embedding provider: any server that speaks OpenAI's `POST /v1/embeddings` (OpenAI
 * itself, Ollama, LM Studio, vLLM, llama.cpp, hosted gateways). Texts go out in batches, two in
 * flight; transient failures (network, timeout, 429, 5xx) are retried with backoff; everything
 * that comes back is checked against `dim` before it can reach the vector store.
 */
import { RepodexError, errorMessage } from '../../core/errors.js';
import { embedInputs, normalize } from '../embedder.js';
import type { EmbedKind, Embedder } from '../embedder.js';

/** How to reach and use an OpenAI-compatible embeddings endpoint (config `embeddings` plus the key from the environment). */
export interface OpenAiOptions {
  /** `http://host:port`, `http://host:port/v1` or the full `…/v1/embeddings`. */
  readonly url: string;
  readonly model: string;
  /** What the model returns; a different answer fails instead of mixing widths in one store. */
  readonly dim: number;
  /** Sent as `Authorization: Bearer …`; never echoed in errors. */
  readonly apiKey?: string;
  /** The environment variable the key came from, for messages (default REPODEX_EMBEDDINGS_API_KEY). */
  readonly apiKeyVariable?: string;
  /** Texts per request (default 64). */
  readonly batchSize?: number;
  /** Per request, including reading the answer (default 30 000). */
  readonly timeoutMs?: number;
  /** Extra attempts after a transient failure (default 3). */
  readonly retries?: number;
  /** Prepended to queries, for models trained with one (`search_query: ` for nomic-embed-text). */
  readonly queryPrefix?: string;
  /** Prepended to documents (`search_document: ` for nomic-embed-text). */
  readonly documentPrefix?: string;
  /** Characters of one text sent at most (default 8000); the prefix comes on top. */
  readonly maxInputChars?: number;
  /** First backoff step; doubles per retry (default 250; tests pass 1). */
  readonly retryBaseMs?: number;
  /** Replaces the global fetch (tests). */
  readonly fetch?: typeof fetch;
}

/** Texts per request when config does not say. */
export const DEFAULT_BATCH_SIZE = 64;
/** Per-request time limit when config does not say. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Retries after a transient failure when config does not say. */
export const DEFAULT_RETRIES = 3;
/**
 * The character cap per text. Servers refuse a whole batch when one input exceeds the model's
 * context (OpenAI answers 400, some local servers fail or crash), so one huge chunk (a minified
 * file, a data table) would fail the sync. 8000 characters is about 2000–3000 tokens of code:
 * under OpenAI's 8191-token limit, and the start of a chunk carries its meaning anyway.
 */
export const DEFAULT_MAX_INPUT_CHARS = 8000;

const DEFAULT_RETRY_BASE_MS = 250;
const MAX_RETRY_DELAY_MS = 5000;
/** Two requests in flight keep a local server busy (one is encoding while the other is on the wire) without queueing dozens on it. */
const CONCURRENCY = 2;
const EXCERPT_CHARS = 200;
/** The variable the key comes from unless the config names another (`embeddings.api_key_env`). */
export const DEFAULT_KEY_ENV = 'REPODEX_EMBEDDINGS_API_KEY';

/** The embeddings endpoint for a configured URL: `/v1/embeddings` is added unless the path already ends in it (or in `/v1`). */
export function resolveEmbeddingsUrl(raw: string, keyVariable = DEFAULT_KEY_ENV): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch (error) {
    throw new RepodexError('EMBEDDER_FAILED', `embeddings.url ${JSON.stringify(raw)} is not a URL: write it as http://host:port`, { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    // `localhost:11434` parses with the protocol `localhost:`, hence the example.
    throw new RepodexError('EMBEDDER_FAILED', `embeddings.url must start with http:// or https:// (got ${JSON.stringify(url.protocol)}); for example http://localhost:11434`);
  }
  if (url.username !== '' || url.password !== '') {
    // The URL shows up in messages and config files; a secret belongs in the environment.
    throw new RepodexError('EMBEDDER_FAILED', `embeddings.url must not carry a user or password: put the key in ${keyVariable}`);
  }
  url.hash = '';
  const path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/embeddings')) url.pathname = path;
  else if (path.endsWith('/v1')) url.pathname = `${path}/embeddings`;
  else url.pathname = `${path}/v1/embeddings`;
  return url.href;
}

/**
 * How long to wait before retry number `attempt` (0-based): the server's `Retry-After` (seconds or
 * an HTTP date) when it sent one, else `baseMs × 2^attempt`; never more than 5 s, so a sync stalls
 * visibly rather than silently.
 */
export function retryDelayMs(attempt: number, retryAfter: string | null | undefined, baseMs: number, now: number = Date.now()): number {
  let wait = baseMs * 2 ** attempt;
  const header = retryAfter?.trim() ?? '';
  if (header !== '') {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) wait = seconds * 1000;
    else {
      const at = Date.parse(header);
      if (!Number.isNaN(at)) wait = Math.max(0, at - now);
    }
  }
  return Math.min(MAX_RETRY_DELAY_MS, wait);
}

/** A failure worth another attempt, and what to say if none is left. */
interface Transient {
  readonly message: string;
  readonly retryAfter?: string | null;
  readonly cause?: unknown;
}

/** The `openai` provider: an Embedder over an OpenAI-compatible `/v1/embeddings` endpoint. */
export function createOpenAiEmbedder(options: OpenAiOptions): Embedder {
  const keyVariable = options.apiKeyVariable ?? DEFAULT_KEY_ENV;
  const endpoint = resolveEmbeddingsUrl(options.url, keyVariable);
  // Messages name the endpoint without its query string: some gateways take a key there.
  const parsed = new URL(endpoint);
  const label = `${parsed.origin}${parsed.pathname}`;
  const model = options.model;
  const dim = positiveInteger(options.dim, 'embeddings.dim');
  const batchSize = positiveInteger(options.batchSize ?? DEFAULT_BATCH_SIZE, 'embeddings.batch_size');
  const timeoutMs = positiveInteger(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'embeddings.timeout_ms');
  const retries = nonNegativeInteger(options.retries ?? DEFAULT_RETRIES, 'retries');
  const maxInputChars = positiveInteger(options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS, 'the input character cap');
  const retryBaseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
  const doFetch = options.fetch ?? fetch;
  if (model.trim() === '') throw new RepodexError('EMBEDDER_FAILED', 'embeddings.model is empty: name the model the server should run');

  const apiKey = options.apiKey?.trim() ?? '';
  // fetch would reject such a key with a message that quotes it; refuse it here without doing so.
  if (/[^\x20-\x7e]/.test(apiKey)) throw new RepodexError('EMBEDDER_FAILED', `${keyVariable} contains characters that cannot go in an HTTP header: set it to the bare key`);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey !== '') headers.authorization = `Bearer ${apiKey}`;

  /** Foreign text (a response body, a network error) with the key blanked out: some servers echo what they were sent. */
  const redact = (text: string): string => (apiKey === '' ? text : text.split(apiKey).join('***'));

  /** Cancellers of the embed calls in flight, so close() can stop them. */
  const inflight = new Set<AbortController>();
  let closed = false;

  /** One attempt at one batch: its vectors, a Transient worth retrying, or a thrown fatal error. */
  async function attempt(inputs: readonly string[], cancel: AbortSignal): Promise<Float32Array[] | Transient> {
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    let body: string;
    try {
      response = await doFetch(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model, input: inputs, encoding_format: 'float' }),
        signal: AbortSignal.any([cancel, timeout]),
      });
      body = await response.text();
    } catch (error) {
      if (cancel.aborted) throw new RepodexError('ABORTED', undefined, { cause: error });
      if (timeout.aborted) return { message: `${label} did not answer within ${timeoutMs} ms: raise embeddings.timeout_ms or lower embeddings.batch_size` };
      return { message: `cannot reach ${label} (${redact(networkReason(error))}): is the server running?`, cause: error };
    }
    const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    if (response.ok) return parseEmbeddings(body, inputs.length);
    const excerpt = redact(bodyExcerpt(body));
    const said = excerpt === '' ? '' : `: ${excerpt}`;
    // 408 is the server's own timeout and 429 its rate limit: both say "later", like a 5xx.
    if (response.status === 408 || response.status === 429 || response.status >= 500) {
      return { message: `${label} answered ${status}${said}`, retryAfter: response.headers.get('retry-after') };
    }
    if (response.status === 401 || response.status === 403) {
      const fix = apiKey === '' ? `no API key was sent: set ${keyVariable}` : `the key in ${keyVariable} was refused: check it`;
      throw new RepodexError('EMBEDDER_FAILED', `${label} answered ${status}${said}; ${fix}`);
    }
    const hint = response.status === 404 ? '; check embeddings.url and that the server has embeddings.model' : '';
    throw new RepodexError('EMBEDDER_FAILED', `${label} answered ${status}${said}${hint}`);
  }

  /** Check an answer against what was asked (count, width, finite numbers) and return it in input order, unit length. */
  function parseEmbeddings(body: string, count: number): Float32Array[] {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (error) {
      throw new RepodexError('EMBEDDER_FAILED', `${label} did not answer with JSON (${redact(bodyExcerpt(body)) || 'empty body'}): is embeddings.url an OpenAI-compatible server?`, { cause: error });
    }
    const data = isRecord(json) ? json.data : undefined;
    if (!Array.isArray(data)) throw new RepodexError('EMBEDDER_FAILED', `${label} answered without a \`data\` list (${redact(bodyExcerpt(body))}): is embeddings.url an OpenAI-compatible embeddings endpoint?`);
    if (data.length !== count) throw new RepodexError('EMBEDDER_FAILED', `${label} returned ${data.length} embeddings for ${count} inputs`);
    const out: (Float32Array | undefined)[] = new Array<Float32Array | undefined>(count).fill(undefined);
    data.forEach((item: unknown, position) => {
      const embedding = isRecord(item) ? item.embedding : undefined;
      // `index` is optional in some servers' answers; they answer in order.
      const index = isRecord(item) && item.index !== undefined ? item.index : position;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || out[index] !== undefined) {
        throw new RepodexError('EMBEDDER_FAILED', `${label} returned an embedding with a bad or repeated index (${JSON.stringify(index)}) for ${count} inputs`);
      }
      if (!Array.isArray(embedding)) throw new RepodexError('EMBEDDER_FAILED', `${label} returned an embedding that is not a list of numbers (is encoding_format "float" supported?)`);
      if (embedding.length !== dim) {
        throw new RepodexError('EMBEDDER_FAILED', `${label} returned ${embedding.length}-dimensional vectors for model ${model}, but embeddings.dim is ${dim}: set embeddings.dim to ${embedding.length} and run \`repodex sync --force\``);
      }
      const vector = new Float32Array(dim);
      for (let i = 0; i < dim; i++) {
        const value: unknown = embedding[i];
        // Checked after the Float32 conversion: a finite double beyond ±3.4e38 still becomes Infinity.
        vector[i] = typeof value === 'number' ? value : Number.NaN;
        if (!Number.isFinite(vector[i])) throw new RepodexError('EMBEDDER_FAILED', `${label} returned a vector with a non-finite number (${JSON.stringify(value)}) for input ${index}`);
      }
      out[index] = normalize(vector);
    });
    return out as Float32Array[];
  }

  /** One batch with retries; a caller abort ends it at once, whatever it was doing. */
  async function requestBatch(inputs: readonly string[], cancel: AbortSignal): Promise<Float32Array[]> {
    for (let n = 0; ; n++) {
      if (cancel.aborted) throw new RepodexError('ABORTED');
      const result = await attempt(inputs, cancel);
      if (Array.isArray(result)) return result;
      if (n >= retries) {
        const tries = n + 1;
        throw new RepodexError('EMBEDDER_FAILED', `${result.message}${tries > 1 ? ` (gave up after ${tries} attempts)` : ''}`, { cause: result.cause });
      }
      await sleep(retryDelayMs(n, result.retryAfter, retryBaseMs), cancel);
    }
  }

  async function embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    if (closed || signal?.aborted) throw new RepodexError('ABORTED');
    const { out, inputs, slots } = embedInputs(texts, dim, (kind === 'query' ? options.queryPrefix : options.documentPrefix) ?? '', maxInputChars);
    if (inputs.length === 0) return out;

    // One canceller for the call: the caller's signal, close(), or the first fatal batch (whose
    // siblings would only add load) all stop every request of this call. A listener removed in
    // `finally` instead of AbortSignal.any over the caller's signal, which a sync reuses for
    // thousands of calls.
    const cancel = new AbortController();
    const onAbort = (): void => cancel.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    inflight.add(cancel);
    let failure: { error: unknown } | undefined;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (failure === undefined && next * batchSize < inputs.length) {
        const start = next++ * batchSize;
        try {
          const vectors = await requestBatch(inputs.slice(start, start + batchSize), cancel.signal);
          vectors.forEach((vector, k) => (out[slots[start + k]!] = vector));
        } catch (error) {
          // The first failure is the story; the siblings it cancels only report ABORTED.
          if (failure === undefined) failure = { error };
          cancel.abort();
        }
      }
    };
    try {
      const workers = Math.min(CONCURRENCY, Math.ceil(inputs.length / batchSize));
      await Promise.all(Array.from({ length: workers }, worker));
    } finally {
      signal?.removeEventListener('abort', onAbort);
      inflight.delete(cancel);
    }
    if (failure !== undefined) throw failure.error;
    return out;
  }

  return {
    engine: 'openai',
    // The model name alone, not the host: moving the same model to another port, host or proxy
    // must not force a re-embed, and the names servers use (`nomic-embed-text`,
    // `text-embedding-3-small`) already say which weights they run. A server that answers a
    // different width under the same name is still caught by the `dim` check.
    model,
    dim,
    metric: 'cosine',
    batchSize,
    embed,
    async close(): Promise<void> {
      closed = true;
      for (const cancel of inflight) cancel.abort();
    },
  };
}

/** Wait `ms`, or throw ABORTED as soon as `signal` fires. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new RepodexError('ABORTED'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Why fetch failed, in a few words: undici hides the useful part (ECONNREFUSED, ENOTFOUND) in `cause`. */
function networkReason(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (isRecord(cause) && typeof cause.code === 'string') return cause.code;
  if (cause instanceof Error) return cause.message;
  return errorMessage(error);
}

/** The useful part of an error body: OpenAI's `error.message` (or a bare `error`/`detail` string), else the text, shortened. */
function bodyExcerpt(body: string): string {
  let text = body;
  try {
    const json: unknown = JSON.parse(body);
    if (isRecord(json)) {
      const error = json.error;
      if (isRecord(error) && typeof error.message === 'string') text = error.message;
      else if (typeof error === 'string') text = error;
      else if (typeof json.detail === 'string') text = json.detail;
    }
  } catch {
    // Not JSON (an HTML error page, a proxy's text): the raw text is the best excerpt there is.
  }
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RepodexError('EMBEDDER_FAILED', `${name} must be a positive whole number (got ${value})`);
  return value;
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0) throw new RepodexError('EMBEDDER_FAILED', `${name} must be zero or a positive whole number (got ${value})`);
  return value;
}
