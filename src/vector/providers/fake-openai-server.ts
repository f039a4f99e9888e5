/**
 * A local stand-in for an OpenAI-compatible `/v1/embeddings` server, for tests of the `openai`
 * provider and end-to-end tests of semantic search. Its "model" is feature hashing over words, so
 * it is deterministic, needs no weights, and still ranks texts that share words as similar.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake server should behave. */
export interface FakeEmbeddingServerOptions {
  /** Width of the vectors it returns (default 64). */
  readonly dim?: number;
  /** Answer 500 to the first N requests (after the key check). */
  readonly failFirst?: number;
  /** Wait this long before answering each request. */
  readonly delayMs?: number;
  /** Answer every request with this status and an OpenAI-style error body (after `failFirst`). */
  readonly status?: number;
  /** Require `Authorization: Bearer <apiKey>`; answer 401 otherwise. */
  readonly apiKey?: string;
  /** Return `data` in reverse order (with correct `index` fields), as servers may. */
  readonly shuffle?: boolean;
}

/** One request body the fake server answered with embeddings. */
export interface FakeEmbeddingRequest {
  readonly model: string;
  readonly encodingFormat: unknown;
  readonly input: readonly string[];
}

/** A running fake server; counters are live. */
export interface FakeEmbeddingServer {
  /** `http://127.0.0.1:<port>`, without `/v1`: clients add it. */
  readonly url: string;
  /** Every HTTP request received, answered or not. */
  readonly requests: number;
  /** Every text of every request answered with embeddings, in arrival order. */
  readonly inputs: string[];
  /** The bodies of the requests answered with embeddings, in arrival order. */
  readonly bodies: FakeEmbeddingRequest[];
  /** The most requests it was holding at once. */
  readonly peakConcurrency: number;
  close(): Promise<void>;
}

/** The words the fake model sees: alphanumeric runs, split at camelCase and letter/digit changes, lower-cased, two characters or more. */
export function fakeWords(text: string): string[] {
  const parts = text.match(/\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\p{N}+|\p{L}+/gu) ?? [];
  return parts.map((part) => part.toLowerCase()).filter((word) => word.length >= 2);
}

/**
 * The fake model: each word adds ±1 to one of `dim` buckets (both chosen by its hash), not
 * normalised, so clients must normalise. A text with no words hashes as a whole, so it still gets
 * a non-zero vector, as a real model would give it.
 */
export function fakeEmbedding(text: string, dim: number): number[] {
  const vector = new Array<number>(dim).fill(0);
  const words = fakeWords(text);
  for (const word of words.length > 0 ? words : [text.trim()]) {
    const hash = fnv1a(word);
    vector[hash % dim]! += hash >>> 31 === 1 ? -1 : 1;
  }
  return vector;
}

/** Start the fake server on 127.0.0.1 and a free port. */
export async function startFakeEmbeddingServer(options: FakeEmbeddingServerOptions = {}): Promise<FakeEmbeddingServer> {
  const dim = options.dim ?? 64;
  const inputs: string[] = [];
  const bodies: FakeEmbeddingRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let requests = 0;
  let active = 0;
  let peak = 0;
  let failuresLeft = options.failFirst ?? 0;

  const answer = (res: ServerResponse, status: number, payload: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  };
  const fail = (res: ServerResponse, status: number, message: string): void => answer(res, status, { error: { message, type: 'invalid_request_error' } });

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string): void => {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/embeddings') return fail(res, 404, `no route ${req.method ?? ''} ${req.url ?? ''}`);
    if (options.apiKey !== undefined) {
      const sent = req.headers.authorization ?? '';
      // Echo the key, as OpenAI does (partly masked): the client must not repeat it to the user.
      if (sent !== `Bearer ${options.apiKey}`) return fail(res, 401, `Incorrect API key provided: ${sent.replace(/^Bearer /, '')}`);
    }
    if (failuresLeft > 0) {
      failuresLeft--;
      return fail(res, 500, 'the fake server failed on purpose');
    }
    if (options.status !== undefined) return fail(res, options.status, `the fake server answers ${options.status}`);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (error) {
      return fail(res, 400, `body is not JSON: ${String(error)}`);
    }
    const { model, input, encoding_format: encodingFormat } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const texts = typeof input === 'string' ? [input] : input;
    if (typeof model !== 'string' || model === '') return fail(res, 400, "'model' is required");
    // OpenAI refuses empty strings, so the fake does too: a client must not send them.
    if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text): text is string => typeof text === 'string' && text !== '')) {
      return fail(res, 400, "'$.input' is invalid: expected non-empty strings");
    }
    inputs.push(...texts);
    bodies.push({ model, encodingFormat, input: texts });
    const data = texts.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, dim) }));
    if (options.shuffle) data.reverse();
    const tokens = texts.reduce((sum, text) => sum + fakeWords(text).length, 0);
    answer(res, 200, { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  };

  const server = createServer((req, res) => {
    requests++;
    active++;
    peak = Math.max(peak, active);
    let done = false;
    res.on('close', () => {
      done = true;
      active--;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const timer = setTimeout(() => {
        timers.delete(timer);
        // The client gave up (timeout, abort) while we waited: nothing to answer, nothing to record.
        if (!done) handle(req, res, raw);
      }, options.delayMs ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    inputs,
    bodies,
    get peakConcurrency() {
      return peak;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      // Clients keep connections alive; without this, close() would wait for them to time out.
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** 32-bit FNV-1a over UTF-16 code units: small, stable, and good enough to spread words over buckets. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
