import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRepodexError } from '../../core/errors.js';
import type { ErrorCode } from '../../core/errors.js';
import { normalize } from '../embedder.js';
import { fakeEmbedding, startFakeEmbeddingServer } from './fake-openai-server.js';
import type { FakeEmbeddingServer, FakeEmbeddingServerOptions } from './fake-openai-server.js';
import { createOpenAiEmbedder, resolveEmbeddingsUrl, retryDelayMs } from './openai.js';
import type { OpenAiOptions } from './openai.js';

/** A delay no test outlives (vitest.config.ts gives a test two minutes). */
const LONGER_THAN_THE_TEST = 10 * 60_000;

const servers: FakeEmbeddingServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A fake server (32-wide, like embedderFor's default) that afterEach closes. */
async function serve(options: FakeEmbeddingServerOptions = {}): Promise<FakeEmbeddingServer> {
  const server = await startFakeEmbeddingServer({ dim: 32, ...options });
  servers.push(server);
  return server;
}

/** An embedder for `server` with test-sized backoff; `options` override. */
function embedderFor(server: { url: string }, options: Partial<OpenAiOptions> = {}): ReturnType<typeof createOpenAiEmbedder> {
  return createOpenAiEmbedder({ url: server.url, model: 'fake-model', dim: 32, retryBaseMs: 1, ...options });
}

/** The RepodexError `promise` rejects with, after checking its code. */
async function rejection(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isRepodexError(error)) throw new Error(`expected a RepodexError ${code}, got ${String(error)}`);
  expect(error.code).toBe(code);
  return error;
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

describe('openai embedder', () => {
  it('names itself by engine and model, with the defaults', () => {
    const embedder = createOpenAiEmbedder({ url: 'http://localhost:11434', model: 'nomic-embed-text', dim: 768 });
    expect({ ...embedder, embed: undefined, close: undefined }).toEqual({
      engine: 'openai',
      model: 'nomic-embed-text',
      dim: 768,
      metric: 'cosine',
      batchSize: 64,
      embed: undefined,
      close: undefined,
    });
  });

  it('returns unit vectors of dim, in input order, when the server answers out of order', async () => {
    const server = await serve({ dim: 32, shuffle: true });
    const texts = ['parse the HTTP header', 'renderButton', 'open a database connection', 'sort an array', 'x = 1'];
    const vectors = await embedderFor(server, { batchSize: 2 }).embed(texts, 'document');
    expect(vectors).toHaveLength(texts.length);
    vectors.forEach((vector, i) => {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector.length).toBe(32);
      expect(dot(vector, vector)).toBeCloseTo(1, 5);
      const expected = normalize(Float32Array.from(fakeEmbedding(texts[i]!, 32)));
      expect(dot(vector, expected)).toBeCloseTo(1, 5);
    });
  });

  it('sends model, encoding_format and the bearer key', async () => {
    const server = await serve({ apiKey: 'sk-test' });
    await embedderFor(server, { apiKey: 'sk-test' }).embed(['hello world'], 'document');
    expect(server.bodies).toEqual([{ model: 'fake-model', encodingFormat: 'float', input: ['hello world'] }]);
  });

  it('splits texts into batches of batchSize, at most two in flight', async () => {
    const server = await serve({ delayMs: 30 });
    const texts = Array.from({ length: 10 }, (_, i) => `text number ${i}`);
    const vectors = await embedderFor(server, { batchSize: 3 }).embed(texts, 'document');
    expect(vectors).toHaveLength(10);
    expect(server.requests).toBe(Math.ceil(10 / 3));
    expect(server.bodies.map((body) => body.input.length).sort()).toEqual([1, 3, 3, 3]);
    expect([...server.inputs].sort()).toEqual([...texts].sort());
    expect(server.peakConcurrency).toBe(2);
  });

  it('sends nothing for no texts, and gives empty texts the zero vector without sending them', async () => {
    const server = await serve();
    const embedder = embedderFor(server);
    expect(await embedder.embed([], 'document')).toEqual([]);
    const vectors = await embedder.embed(['', 'real words', '  \n'], 'document');
    expect(server.inputs).toEqual(['real words']);
    expect(dot(vectors[1]!, vectors[1]!)).toBeCloseTo(1, 5);
    expect([...vectors[0]!].every((x) => x === 0)).toBe(true);
    expect([...vectors[2]!].every((x) => x === 0)).toBe(true);
    expect(await embedder.embed([''], 'query')).toHaveLength(1);
    expect(server.requests).toBe(1);
  });

  it('adds the query or document prefix and cuts long texts to the character cap', async () => {
    const server = await serve();
    const embedder = embedderFor(server, { queryPrefix: 'search_query: ', documentPrefix: 'search_document: ' });
    await embedder.embed(['find me'], 'query');
    await embedder.embed(['a'.repeat(20_000)], 'document');
    expect(server.inputs[0]).toBe('search_query: find me');
    expect(server.inputs[1]).toBe(`search_document: ${'a'.repeat(8000)}`);

    const capped = embedderFor(server, { maxInputChars: 4 });
    await capped.embed(['abc😀def'], 'document'); // the emoji straddles the cap: it goes whole or not at all
    expect(server.inputs[2]).toBe('abc');
  });

  it('retries after 500s and then succeeds', async () => {
    const server = await serve({ failFirst: 2 });
    const vectors = await embedderFor(server, { retries: 3 }).embed(['retry me'], 'document');
    expect(vectors).toHaveLength(1);
    expect(server.requests).toBe(3);
  });

  it('gives up with EMBEDDER_FAILED after its retries', async () => {
    const server = await serve({ failFirst: 100 });
    const error = await rejection(embedderFor(server, { retries: 2 }).embed(['never'], 'document'), 'EMBEDDER_FAILED');
    expect(server.requests).toBe(3);
    expect(error.message).toContain('500');
    expect(error.message).toContain('the fake server failed on purpose');
    expect(error.message).toContain('3 attempts');
  });

  it('retries a 429, honouring Retry-After', async () => {
    const server = await serve();
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls++;
      if (calls === 1) return new Response(JSON.stringify({ error: { message: 'slow down' } }), { status: 429, headers: { 'retry-after': '0' } });
      return fetch(input, init);
    };
    // A base of 60 s would time the test out: only Retry-After: 0 makes the retry immediate.
    const vectors = await embedderFor(server, { fetch: flaky, retryBaseMs: 60_000 }).embed(['rate limited'], 'document');
    expect(vectors).toHaveLength(1);
    expect(calls).toBe(2);
  });

  it('fails at once on a 401, naming REPODEX_EMBEDDINGS_API_KEY and never the key', async () => {
    const server = await serve({ apiKey: 'sk-right' });
    const secret = 'sk-wrong-secret-123';
    const error = await rejection(embedderFor(server, { apiKey: secret }).embed(['hi there'], 'document'), 'EMBEDDER_FAILED');
    expect(server.requests).toBe(1);
    expect(error.message).toContain('401');
    expect(error.message).toContain('REPODEX_EMBEDDINGS_API_KEY');
    expect(error.message).not.toContain(secret);
    expect(JSON.stringify(error)).not.toContain(secret);

    const keyless = await rejection(embedderFor(server).embed(['hi there'], 'document'), 'EMBEDDER_FAILED');
    expect(keyless.message).toContain('no API key was sent: set REPODEX_EMBEDDINGS_API_KEY');
  });

  it('fails at once on another 4xx, with the status and the server’s words', async () => {
    const server = await serve({ status: 404 });
    const error = await rejection(embedderFor(server).embed(['hi there'], 'document'), 'EMBEDDER_FAILED');
    expect(server.requests).toBe(1);
    expect(error.message).toContain('404');
    expect(error.message).toContain('the fake server answers 404');
  });

  it('fails when the vectors are not dim wide, saying which embeddings.dim to set', async () => {
    const server = await serve({ dim: 48 });
    const error = await rejection(embedderFor(server, { dim: 32 }).embed(['wide'], 'document'), 'EMBEDDER_FAILED');
    expect(error.message).toContain('48-dimensional');
    expect(error.message).toContain('set embeddings.dim to 48');
    expect(error.message).toContain('repodex sync --force');
  });

  it('fails on a wrong count, a repeated index or a non-finite number', async () => {
    const answering =
      (body: unknown): typeof fetch =>
      async () =>
        new Response(JSON.stringify(body), { status: 200 });
    const row = (index: number, embedding: unknown = [1, 0]): unknown => ({ index, embedding });
    const cases: [unknown, string][] = [
      [{ data: [row(0)] }, 'returned 1 embeddings for 2 inputs'],
      [{ data: [row(0), row(0)] }, 'bad or repeated index'],
      [{ data: [row(0), row(1, [1, null])] }, 'non-finite'],
      [{ data: [row(0), row(1, [1, 1e300])] }, 'non-finite'],
      [{ data: [row(0), row(1, 'AAAA')] }, 'not a list of numbers'],
      [{ object: 'list' }, 'without a `data` list'],
    ];
    for (const [body, message] of cases) {
      const embedder = createOpenAiEmbedder({ url: 'http://fake', model: 'm', dim: 2, fetch: answering(body) });
      const error = await rejection(embedder.embed(['a', 'b'], 'document'), 'EMBEDDER_FAILED');
      expect(error.message).toContain(message);
    }
    const html: typeof fetch = async () => new Response('<html>proxy login</html>', { status: 200 });
    const error = await rejection(createOpenAiEmbedder({ url: 'http://fake', model: 'm', dim: 2, fetch: html }).embed(['a'], 'document'), 'EMBEDDER_FAILED');
    expect(error.message).toContain('did not answer with JSON (<html>proxy login</html>)');
  });

  it('retries a request that times out, then fails with EMBEDDER_FAILED', async () => {
    // The server never answers within the test: each attempt ends at its own timeout or not at all.
    const server = await serve({ delayMs: LONGER_THAN_THE_TEST });
    const error = await rejection(embedderFor(server, { timeoutMs: 50, retries: 1 }).embed(['slow'], 'document'), 'EMBEDDER_FAILED');
    expect(server.requests).toBe(2);
    expect(error.message).toContain('did not answer within 50 ms');
    expect(error.message).toContain('embeddings.timeout_ms');
  });

  it('retries when nothing listens, then says it cannot reach the server', async () => {
    const server = await startFakeEmbeddingServer();
    await server.close();
    const error = await rejection(embedderFor(server, { retries: 1 }).embed(['anyone?'], 'document'), 'EMBEDDER_FAILED');
    expect(error.message).toContain('cannot reach');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('2 attempts');
  });

  it('throws ABORTED at once when the caller aborts, without retrying', async () => {
    // The server never answers within the test: only the abort can end the call.
    const server = await serve({ delayMs: LONGER_THAN_THE_TEST });
    const embedder = embedderFor(server);
    const controller = new AbortController();
    const call = embedder.embed(['wait'], 'document', controller.signal);
    await vi.waitFor(() => expect(server.requests).toBe(1), { timeout: 10_000 });
    controller.abort();
    await rejection(call, 'ABORTED');
    expect(server.requests).toBe(1);

    await rejection(embedder.embed(['wait'], 'document', AbortSignal.abort()), 'ABORTED');
    expect(server.requests).toBe(1);
  });

  it('throws ABORTED when the caller aborts during a backoff', async () => {
    // The backoff's timer is on a fake clock that never moves: only the abort can end the wait.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let requests = 0;
      const busy: typeof fetch = async () => {
        requests++;
        return new Response('busy', { status: 503 });
      };
      const controller = new AbortController();
      const call = createOpenAiEmbedder({ url: 'http://fake', model: 'm', dim: 2, fetch: busy }).embed(['wait'], 'document', controller.signal);
      // In its backoff: the first answer was a 503, and the wait before the retry is set.
      await vi.waitFor(() => expect(vi.getTimerCount()).toBe(1), { timeout: 10_000 });
      controller.abort();
      await rejection(call, 'ABORTED');
      expect(requests).toBe(1);
      expect(vi.getTimerCount()).toBe(0); // the wait was cancelled, not left to run out
    } finally {
      vi.useRealTimers();
    }
  });

  it('close() stops the calls in flight', async () => {
    const server = await serve({ delayMs: 2000 });
    const embedder = embedderFor(server);
    const pending = embedder.embed(['wait'], 'document');
    await vi.waitFor(() => expect(server.requests).toBe(1), { timeout: 10_000 });
    await embedder.close();
    await rejection(pending, 'ABORTED');
  });

  it('refuses bad options when it is created', () => {
    const bad: Partial<OpenAiOptions>[] = [{ dim: 0 }, { batchSize: 1.5 }, { retries: -1 }, { model: ' ' }, { apiKey: 'sk-a\nb' }];
    for (const options of bad) {
      const error = thrown(() => createOpenAiEmbedder({ url: 'http://localhost:1', model: 'm', dim: 8, ...options }));
      expect(isRepodexError(error) && error.code).toBe('EMBEDDER_FAILED');
      expect(String(error)).not.toContain('sk-a');
    }
  });
});

describe('resolveEmbeddingsUrl', () => {
  it.each([
    ['http://localhost:11434', 'http://localhost:11434/v1/embeddings'],
    ['http://localhost:11434/', 'http://localhost:11434/v1/embeddings'],
    ['http://localhost:1234/v1', 'http://localhost:1234/v1/embeddings'],
    ['http://localhost:1234/v1/', 'http://localhost:1234/v1/embeddings'],
    ['https://api.openai.com/v1/embeddings', 'https://api.openai.com/v1/embeddings'],
    ['https://gateway.example/openai/v1', 'https://gateway.example/openai/v1/embeddings'],
    ['https://gateway.example/proxy', 'https://gateway.example/proxy/v1/embeddings'],
    ['https://gateway.example/v1/embeddings?api-version=1#x', 'https://gateway.example/v1/embeddings?api-version=1'],
    ['  http://127.0.0.1:8000  ', 'http://127.0.0.1:8000/v1/embeddings'],
  ])('%s → %s', (url, expected) => {
    expect(resolveEmbeddingsUrl(url)).toBe(expected);
  });

  it.each([
    ['ftp://host/v1', 'http:// or https://'],
    ['localhost:11434', 'http://localhost:11434'],
    ['not a url', 'is not a URL'],
    ['http://user:hunter2@host', 'REPODEX_EMBEDDINGS_API_KEY'],
  ])('refuses %s', (url, message) => {
    const error = thrown(() => resolveEmbeddingsUrl(url));
    expect(isRepodexError(error) && error.code).toBe('EMBEDDER_FAILED');
    expect(String(error)).toContain(message);
    expect(String(error)).not.toContain('hunter2');
  });
});

describe('retryDelayMs', () => {
  it('doubles from the base and stops at 5 s', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, null, 250))).toEqual([250, 500, 1000, 2000, 4000, 5000]);
  });

  it('takes Retry-After in seconds or as a date, capped, and ignores garbage', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryDelayMs(0, '2', 250, now)).toBe(2000);
    expect(retryDelayMs(3, '0', 250, now)).toBe(0);
    expect(retryDelayMs(0, '120', 250, now)).toBe(5000);
    expect(retryDelayMs(0, 'Wed, 01 Jan 2025 00:00:03 GMT', 250, now)).toBe(3000);
    expect(retryDelayMs(0, 'Tue, 31 Dec 2024 00:00:00 GMT', 250, now)).toBe(0);
    expect(retryDelayMs(1, 'soon', 250, now)).toBe(500);
  });
});

describe('fake embedding server', () => {
  it('ranks texts that share words above texts that do not', async () => {
    const server = await serve({ dim: 256 });
    const [query, near, far] = await embedderFor(server, { dim: 256 }).embed(['parseHttpHeader', 'parse the HTTP header of a request', 'render a button in the toolbar'], 'document');
    expect(dot(query!, near!)).toBeGreaterThan(0.5);
    expect(dot(query!, near!)).toBeGreaterThan(dot(query!, far!));
  });
});

describe('the key of each repository', () => {
  it('comes from the variable its config names: two repositories in one process send their own keys, and a missing one is named', async () => {
    const { createEmbedder } = await import('../../compose.js');
    const { ConfigSchema } = await import('../../core/config.js');
    const [alpha, beta] = [await serve({ apiKey: 'sk-alpha' }), await serve({ apiKey: 'sk-beta' })];
    const env = { ALPHA_KEY: 'sk-alpha', REPODEX_EMBEDDINGS_API_KEY: 'sk-beta' };
    const configFor = (url: string, extra: Record<string, unknown>) => ConfigSchema.parse({ embeddings: { provider: 'openai', url, model: 'fake-model', dim: 32, ...extra } });
    const first = await createEmbedder('/nowhere', configFor(alpha.url, { api_key_env: 'ALPHA_KEY' }), env);
    const second = await createEmbedder('/nowhere', configFor(beta.url, {}), env);
    expect(await first!.embed(['hello'], 'document')).toHaveLength(1);
    expect(await second!.embed(['hello'], 'document')).toHaveLength(1);
    const unset = await createEmbedder('/nowhere', configFor(alpha.url, { api_key_env: 'GAMMA_KEY' }), env);
    const error = await rejection(unset!.embed(['hello'], 'document'), 'EMBEDDER_FAILED');
    expect(error.message).toContain('no API key was sent: set GAMMA_KEY');
    expect(() => configFor(alpha.url, { api_key_env: 'not a name' })).toThrow(/environment variable name/);
  });
});
