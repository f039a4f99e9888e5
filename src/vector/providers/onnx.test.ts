import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isRepodexError } from '../../core/errors.js';
import type { Embedder } from '../embedder.js';
import { createOnnxEmbedder } from './onnx.js';
import type { OnnxOptions } from './onnx.js';
import { writeTinyOnnxModel } from './tiny-onnx-model.js';
import type { TinyOnnxModelOptions } from './tiny-onnx-model.js';

// Everything runs on a tiny model written by tiny-onnx-model.ts: a real ONNX file through the real
// transformers.js and onnxruntime-node, no network. Its "encoder" is an embedding lookup, so
// mean-pooled vectors are averages of word rows and similarity follows shared words.

const DIM = 48;
const PREFIX = 'search for: ';
let root: string;
let embedder: Embedder;
const opened: Embedder[] = [];

/** A fresh tiny model folder under the test's temp root. */
function tinyModel(name: string, options: TinyOnnxModelOptions = {}): string {
  const dir = join(root, name);
  writeTinyOnnxModel(dir, { dim: DIM, ...options });
  return dir;
}

async function open(options: OnnxOptions): Promise<Embedder> {
  const created = await createOnnxEmbedder(options);
  opened.push(created);
  return created;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

function norm(a: Float32Array): number {
  return Math.sqrt(cosine(a, a));
}

/** The error a promise rejects with (failing the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'repodex-onnx-'));
  embedder = await open({ modelPath: tinyModel('tiny-bert'), queryPrefix: PREFIX, batchSize: 4 });
});

afterAll(async () => {
  for (const e of opened) await e.close();
  rmSync(root, { recursive: true, force: true });
});

describe('onnx embedder on the tiny model', () => {
  it('names itself and reads dim from the model', () => {
    expect(embedder.engine).toBe('onnx');
    expect(embedder.metric).toBe('cosine');
    expect(embedder.dim).toBe(DIM);
    expect(embedder.batchSize).toBe(4);
    expect(embedder.model).toMatch(/^tiny-bert@[0-9a-f]{12}$/);
  });

  it('returns one unit-length vector of dim numbers per text', async () => {
    const vectors = await embedder.embed(['function parse file', 'return error', 'x'], 'document');
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(DIM);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
  });

  it('gives the same text the same vector, alone or in a padded batch', async () => {
    const [alone] = await embedder.embed(['read the config file'], 'document');
    const [inBatch] = await embedder.embed(['read the config file', 'a much longer text that forces padding of the first one in the batch'], 'document');
    expect(Array.from(inBatch!)).toEqual(Array.from(alone!).map((v) => expect.closeTo(v, 6)));
  });

  it('gives different texts different vectors, and texts sharing words higher similarity', async () => {
    const [query, sharing, disjoint] = await embedder.embed(['parse the json config file', 'load json config from a file', 'user login password token'], 'document');
    expect(Array.from(query!)).not.toEqual(Array.from(disjoint!));
    expect(cosine(query!, sharing!)).toBeGreaterThan(cosine(query!, disjoint!) + 0.2);
  });

  it('puts words of one group near each other (the tiny model’s built-in synonyms)', async () => {
    const [error, exception, folder] = await embedder.embed(['error', 'exception', 'folder'], 'document');
    expect(cosine(error!, exception!)).toBeGreaterThan(cosine(error!, folder!) + 0.2);
  });

  it('applies the query prefix to queries only', async () => {
    const [asQuery] = await embedder.embed(['open file'], 'query');
    const [asDocument, prefixedDocument] = await embedder.embed(['open file', `${PREFIX}open file`], 'document');
    expect(Array.from(asQuery!)).not.toEqual(Array.from(asDocument!));
    expect(Array.from(asQuery!)).toEqual(Array.from(prefixedDocument!).map((v) => expect.closeTo(v, 6)));
  });

  it('embeds more texts than batchSize in order, as if one at a time', async () => {
    const texts = Array.from({ length: 11 }, (_, i) => `text number ${i} about ${['files', 'errors', 'users', 'tests'][i % 4]}`);
    const together = await embedder.embed(texts, 'document');
    expect(together).toHaveLength(11);
    for (let i = 0; i < texts.length; i++) {
      const [single] = await embedder.embed([texts[i]!], 'document');
      expect(cosine(together[i]!, single!)).toBeCloseTo(1, 5);
    }
  });

  it('gives empty texts the zero vector and no texts no vectors', async () => {
    const [empty, blank, full] = await embedder.embed(['', '   \n', 'file'], 'document');
    expect(norm(empty!)).toBe(0);
    expect(norm(blank!)).toBe(0);
    expect(norm(full!)).toBeCloseTo(1, 5);
    expect(await embedder.embed([], 'document')).toEqual([]);
  });

  it('throws ABORTED for an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(embedder.embed(['file'], 'document', controller.signal));
    expect(isRepodexError(error) && error.code).toBe('ABORTED');
  });

  it('stops between batches when the signal fires mid-call', async () => {
    const controller = new AbortController();
    const pending = embedder.embed(Array.from({ length: 12 }, (_, i) => `text ${i}`), 'document', controller.signal);
    // The first batch of 4 is already running; the abort is seen before the second.
    controller.abort();
    const error = await rejection(pending);
    expect(isRepodexError(error) && error.code).toBe('ABORTED');
  });

  it('truncates texts to maxTokens', async () => {
    const short = await open({ modelPath: tinyModel('short'), maxTokens: 6 });
    // [CLS] + 5 tokens: the texts differ only after the fifth word.
    const [a, b] = await short.embed(['read write open close find user', 'read write open close find password'], 'document');
    expect(Array.from(a!)).toEqual(Array.from(b!));
    const [c, d] = await embedder.embed(['read write open close find user', 'read write open close find password'], 'document');
    expect(Array.from(c!)).not.toEqual(Array.from(d!));
    // A text far over the cap still embeds.
    const [long] = await short.embed(['word '.repeat(20_000)], 'document');
    expect(norm(long!)).toBeCloseTo(1, 5);
  });

  it('throws ABORTED after close', async () => {
    const closing = await open({ modelPath: tinyModel('closing') });
    await closing.close();
    await closing.close();
    const error = await rejection(closing.embed(['file'], 'document'));
    expect(isRepodexError(error) && error.code).toBe('ABORTED');
  });
});

describe('onnx model identity and files', () => {
  it('keeps model for the same weights and changes it for other weights or settings', async () => {
    const same = await open({ modelPath: tinyModel('same', { seed: 1 }), model: 'tiny-bert' });
    const other = await open({ modelPath: tinyModel('other', { seed: 7 }), model: 'tiny-bert' });
    const prefixed = await open({ modelPath: tinyModel('prefixed', { seed: 1 }), model: 'tiny-bert', documentPrefix: 'passage: ' });
    expect(same.model).toBe(embedder.model);
    expect(other.model).not.toBe(embedder.model);
    expect(prefixed.model).not.toBe(embedder.model);
  });

  it('prefers onnx/model_quantized.onnx when the folder has it', async () => {
    const quantized = await open({ modelPath: tinyModel('quantized', { quantized: true }), model: 'tiny-bert' });
    const [fromQuantized] = await quantized.embed(['parse file'], 'document');
    const [fromFull] = await embedder.embed(['parse file'], 'document');
    // The quantized file of the tiny model holds other weights, so the two are tellable apart.
    expect(quantized.model).not.toBe(embedder.model);
    expect(Array.from(fromQuantized!)).not.toEqual(Array.from(fromFull!));
  });

  it('takes pooling from 1_Pooling/config.json', async () => {
    const cls = await open({ modelPath: tinyModel('cls', { pooling: 'cls' }) });
    // The tiny model has no attention, so the [CLS] row is the same whatever follows it.
    const [a, b] = await cls.embed(['parse file', 'user login'], 'document');
    expect(Array.from(a!)).toEqual(Array.from(b!));
    const mean = await open({ modelPath: tinyModel('cls-overridden', { pooling: 'cls' }), pooling: 'mean' });
    const [c, d] = await mean.embed(['parse file', 'user login'], 'document');
    expect(Array.from(c!)).not.toEqual(Array.from(d!));
  });

  it('fails with EMBEDDER_FAILED naming the folder when model_path does not exist', async () => {
    const missing = join(root, 'no-such-model');
    const error = await rejection(createOnnxEmbedder({ modelPath: missing }));
    expect(isRepodexError(error) && error.code).toBe('EMBEDDER_FAILED');
    const message = error instanceof Error ? error.message : '';
    expect(message).toContain(missing);
    expect(message).toContain('does not exist');
    expect(message).toContain('embeddings.model_path');
    expect(message).toContain('config.json, tokenizer.json');
    expect(message).toContain('onnx/model.onnx');
  });

  it('names the files a model folder lacks', async () => {
    const dir = tinyModel('incomplete');
    unlinkSync(join(dir, 'onnx', 'model.onnx'));
    unlinkSync(join(dir, 'tokenizer.json'));
    const error = await rejection(createOnnxEmbedder({ modelPath: dir }));
    expect(isRepodexError(error) && error.code).toBe('EMBEDDER_FAILED');
    expect(isRepodexError(error) && error.detail).toMatch(/has no tokenizer\.json, onnx\/model\.onnx:/);
  });

  it('fails with EMBEDDER_FAILED when the ONNX file is not a model', async () => {
    const dir = tinyModel('corrupt');
    writeFileSync(join(dir, 'onnx', 'model.onnx'), 'not protobuf at all');
    const error = await rejection(createOnnxEmbedder({ modelPath: dir }));
    expect(isRepodexError(error) && error.code).toBe('EMBEDDER_FAILED');
    expect(isRepodexError(error) && error.detail).toContain('cannot load the ONNX model');
  });

  it('says how to install transformers.js when it will not load', async () => {
    vi.doMock('@huggingface/transformers', () => {
      throw new Error('Cannot find package');
    });
    try {
      const error = await rejection(createOnnxEmbedder({ modelPath: tinyModel('no-transformers') }));
      expect(isRepodexError(error) && error.code).toBe('EMBEDDER_FAILED');
      expect(isRepodexError(error) && error.detail).toContain('npm install @huggingface/transformers');
    } finally {
      vi.doUnmock('@huggingface/transformers');
    }
  });
});
