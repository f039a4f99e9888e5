/**
 * The `onnx` embedding provider: a sentence-embedding model (bge-small-en-v1.5, all-MiniLM-L6-v2, …)
 * exported to ONNX, run on this machine by transformers.js over onnxruntime-node. The model comes
 * from a folder on disk and nothing else: remote loading is switched off, so a missing file is an
 * error naming the file, never a download. transformers.js is an optional dependency loaded with
 * `import()` on first use, so repodex without it (or with another provider) never pays for it.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import { type EmbedKind, type Embedder, embedInputs } from '../embedder.js';

/** How to find and run a local ONNX embedding model (config `embeddings` with provider `onnx`). */
export interface OnnxOptions {
  /** A folder holding config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx (or onnx/model_quantized.onnx). */
  readonly modelPath: string;
  /** The name shown in `model` (default: the folder's name). */
  readonly model?: string;
  /** Prepended to queries (bge: `Represent this sentence for searching relevant passages: `). */
  readonly queryPrefix?: string;
  /** Prepended to documents (e5: `passage: `). */
  readonly documentPrefix?: string;
  /** How token vectors become one vector (default: the model's 1_Pooling/config.json, else its family's, else mean). */
  readonly pooling?: OnnxPooling;
  /** Texts per inference run (default 16). */
  readonly batchSize?: number;
  /** Tokens of one text the model sees at most (default 512, never more than the model's positions). */
  readonly maxTokens?: number;
}

/** The poolings the provider supports: what sentence-transformers calls mean_tokens and cls_token. */
export type OnnxPooling = 'mean' | 'cls';

/** Texts per inference run when config does not say. */
export const DEFAULT_ONNX_BATCH_SIZE = 16;
/** Tokens per text when config does not say: the context of BERT-sized embedding models. */
export const DEFAULT_ONNX_MAX_TOKENS = 512;

/**
 * Characters per token above which a text is cut before tokenizing. Tokenizing is plain JS on the
 * main thread and a minified line can be megabytes long; a token is rarely more than a few
 * characters, so this only drops text the model would have truncated away anyway.
 */
const MAX_CHARS_PER_TOKEN = 64;

const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];
const QUANTIZED_FILE = join('onnx', 'model_quantized.onnx');
const FULL_FILE = join('onnx', 'model.onnx');
const LAYOUT_HINT =
  '`embeddings.model_path` must point at a folder holding config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx ' +
  '(an ONNX export such as Xenova/bge-small-en-v1.5, copied to this machine)';

/**
 * What model families want when their folder does not say: ONNX exports (the Xenova/… copies)
 * often leave out sentence-transformers' 1_Pooling/config.json, and bge pooled by mean would embed
 * quietly worse. Options and 1_Pooling always win over this table.
 */
const FAMILIES: readonly { readonly pattern: RegExp; readonly pooling: OnnxPooling; readonly queryPrefix: string; readonly documentPrefix: string }[] = [
  { pattern: /\bbge-(small|base|large)-en\b/i, pooling: 'cls', queryPrefix: 'Represent this sentence for searching relevant passages: ', documentPrefix: '' },
  { pattern: /\be5-(small|base|large)\b/i, pooling: 'mean', queryPrefix: 'query: ', documentPrefix: 'passage: ' },
  { pattern: /\bnomic-embed-text\b/i, pooling: 'mean', queryPrefix: 'search_query: ', documentPrefix: 'search_document: ' },
];

// --- the part of transformers.js this file uses ---------------------------------------------------
// Typed here rather than imported: the package is optional, and these few members are the whole
// contract (checked against @huggingface/transformers 4.3).

interface TransformersTensor {
  readonly data: unknown;
  readonly dims: readonly number[];
  dispose?(): void;
}

interface FeatureExtractor {
  (texts: string[], options: { pooling: OnnxPooling; normalize: boolean }): Promise<TransformersTensor>;
  readonly tokenizer: { readonly model_max_length: number };
  dispose(): Promise<void>;
}

interface PipelineOptions {
  readonly dtype: 'q8' | 'fp32';
  readonly device: 'cpu';
  readonly local_files_only: boolean;
}

interface TransformersModule {
  readonly env: { allowRemoteModels: boolean; allowLocalModels: boolean; useFSCache: boolean; useBrowserCache: boolean };
  pipeline(task: 'feature-extraction', model: string, options: PipelineOptions): Promise<FeatureExtractor>;
}

/** The `onnx` provider: load the model folder, embed one probe text to learn `dim`, and return the Embedder. */
export async function createOnnxEmbedder(options: OnnxOptions): Promise<Embedder> {
  const batchSize = positiveInteger(options.batchSize ?? DEFAULT_ONNX_BATCH_SIZE, 'embeddings.batch_size');
  const requestedMaxTokens = positiveInteger(options.maxTokens ?? DEFAULT_ONNX_MAX_TOKENS, 'the onnx token cap (maxTokens)');
  // Absolute on purpose: transformers.js reads a path that looks like a hub id (`models/bge`) as
  // relative to env.localModelPath, and any absolute path as itself.
  const dir = resolve(options.modelPath);
  const onnxFile = await checkLayout(dir);
  const config = await readJson(join(dir, 'config.json'));

  const name = options.model ?? basename(dir);
  const family = FAMILIES.find((f) => f.pattern.test(`${name} ${basename(dir)} ${stringField(config, '_name_or_path')}`));
  const pooling = options.pooling ?? (await sentenceTransformersPooling(dir)) ?? family?.pooling ?? 'mean';
  const queryPrefix = options.queryPrefix ?? family?.queryPrefix ?? '';
  const documentPrefix = options.documentPrefix ?? family?.documentPrefix ?? '';
  const positions = numberField(config, 'max_position_embeddings');
  const maxTokens = Math.min(requestedMaxTokens, positions ?? Infinity);

  const transformers = await loadTransformers();
  // Process-wide switches; repodex is the only user of transformers.js in its process.
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  // The file cache is for downloads, and transformers.js consults it *before* the local folder, so
  // a stale cached copy could shadow the model on disk; with no downloads it has nothing to offer.
  transformers.env.useFSCache = false;
  transformers.env.useBrowserCache = false;

  let extractor: FeatureExtractor;
  try {
    // Threads: no session_options, so onnxruntime sizes its intra-op pool itself (one thread per
    // physical core). onnxruntime-node 1.30's `run` is synchronous on the JS thread (its binding is
    // "a simple synchronized inference session"), so the caller waits for each batch anyway and
    // every core should work on it; logical cores (os.availableParallelism()) add hyperthreads,
    // which mostly contend for the same units in matrix products. batchSize bounds how long one
    // run holds the event loop.
    extractor = await transformers.pipeline('feature-extraction', dir, {
      dtype: onnxFile === QUANTIZED_FILE ? 'q8' : 'fp32',
      device: 'cpu',
      local_files_only: true,
    });
  } catch (error) {
    throw new RepodexError('EMBEDDER_FAILED', `cannot load the ONNX model in ${dir} (${errorMessage(error)}): ${LAYOUT_HINT}`, { cause: error });
  }
  // The pipeline truncates to the tokenizer's model_max_length and takes no max_length of its own,
  // so the cap goes there (an own property over the prototype's getter).
  const tokenizerMax = extractor.tokenizer.model_max_length;
  Object.defineProperty(extractor.tokenizer, 'model_max_length', { value: Math.min(maxTokens, tokenizerMax), configurable: true });
  const charCap = maxTokens * MAX_CHARS_PER_TOKEN;

  let closed = false;
  let closing: Promise<void> | undefined;

  /** Vectors for non-empty, already prefixed texts, one inference run per batch. */
  async function run(inputs: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < inputs.length; start += batchSize) {
      // Each run already starts in its own macrotask (onnxruntime-node defers it with
      // setImmediate), so other work gets the event loop between batches without a yield here.
      if (closed || signal?.aborted) throw new RepodexError('ABORTED');
      const batch = inputs.slice(start, start + batchSize);
      let output: TransformersTensor;
      try {
        output = await extractor(batch, { pooling, normalize: true });
      } catch (error) {
        if (closed) throw new RepodexError('ABORTED', undefined, { cause: error });
        throw new RepodexError('EMBEDDER_FAILED', `the ONNX model in ${dir} failed on a batch of ${batch.length} texts: ${errorMessage(error)}`, { cause: error });
      }
      out.push(...rowsOf(output, batch.length));
    }
    return out;
  }

  /** Copy each row out of the pooled [rows, width] tensor, then free it. */
  function rowsOf(output: TransformersTensor, rows: number): Float32Array[] {
    const data = output.data;
    const [count, width] = output.dims;
    if (!(data instanceof Float32Array) || output.dims.length !== 2 || count !== rows || width === undefined || width < 1) {
      throw new RepodexError('EMBEDDER_FAILED', `the ONNX model in ${dir} returned a tensor of shape [${output.dims.join(', ')}] for ${rows} texts; is it a feature-extraction (sentence embedding) model?`);
    }
    const vectors: Float32Array[] = [];
    for (let i = 0; i < rows; i++) {
      const vector = data.slice(i * width, (i + 1) * width);
      // normalize divides by the norm: an all-zero row comes back NaN. Zero matches nothing, as elsewhere.
      if (!vector.every(Number.isFinite)) vector.fill(0);
      vectors.push(vector);
    }
    output.dispose?.();
    return vectors;
  }

  let fingerprint: string;
  let probe: Float32Array[];
  try {
    // One probe run checks that the model runs at all and tells its width (config.json's
    // hidden_size is not the output width of every architecture).
    [fingerprint, probe] = await Promise.all([modelFingerprint(dir, onnxFile, { pooling, maxTokens, documentPrefix }), run(['repodex'], undefined)]);
  } catch (error) {
    // The probe's failure is the story; a dispose failing after it would only hide it.
    await extractor.dispose().catch(() => undefined);
    throw error;
  }
  // rowsOf checked the probe's shape: one row, at least one number wide.
  const width = probe[0]!.length;

  return {
    engine: 'onnx',
    // The name for people, and a fingerprint of everything that shapes a document vector (weights,
    // vocabulary, pooling, token cap, document prefix): change any and stored vectors must be redone.
    model: `${name}@${fingerprint}`,
    dim: width,
    metric: 'cosine',
    batchSize,
    async embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
      if (closed || signal?.aborted) throw new RepodexError('ABORTED');
      const { out, inputs, slots } = embedInputs(texts, width, kind === 'query' ? queryPrefix : documentPrefix, charCap);
      const vectors = await run(inputs, signal);
      vectors.forEach((vector, k) => (out[slots[k]!] = vector));
      return out;
    },
    close(): Promise<void> {
      closed = true;
      closing ??= extractor.dispose();
      return closing;
    },
  };
}

/** The ONNX file to run (quantized first: about 4× smaller and faster on CPU, for a small loss), or EMBEDDER_FAILED naming what is missing. */
async function checkLayout(dir: string): Promise<string> {
  let isDir: boolean;
  try {
    isDir = (await stat(dir)).isDirectory();
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) throw new RepodexError('EMBEDDER_FAILED', `the model folder ${dir} does not exist: ${LAYOUT_HINT}`, { cause: error });
    throw new RepodexError('EMBEDDER_FAILED', `cannot read the model folder ${dir} (${errorMessage(error)}): ${LAYOUT_HINT}`, { cause: error });
  }
  if (!isDir) throw new RepodexError('EMBEDDER_FAILED', `${dir} is a file, not a folder: ${LAYOUT_HINT}`);
  const missing: string[] = [];
  for (const file of REQUIRED_FILES) if (!(await isFile(join(dir, file)))) missing.push(file);
  let onnxFile: string | undefined;
  if (await isFile(join(dir, QUANTIZED_FILE))) onnxFile = QUANTIZED_FILE;
  else if (await isFile(join(dir, FULL_FILE))) onnxFile = FULL_FILE;
  else missing.push('onnx/model.onnx');
  if (missing.length > 0 || onnxFile === undefined) {
    throw new RepodexError('EMBEDDER_FAILED', `the model folder ${dir} has no ${missing.join(', ')}: ${LAYOUT_HINT}`);
  }
  return onnxFile;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return false;
    throw new RepodexError('EMBEDDER_FAILED', `cannot read ${path}: ${errorMessage(error)}`, { cause: error });
  }
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new RepodexError('EMBEDDER_FAILED', `cannot read ${path} as JSON (${errorMessage(error)}): is the model folder complete?`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RepodexError('EMBEDDER_FAILED', `${path} is not a JSON object: is the model folder complete?`);
  return value as Record<string, unknown>;
}

/** The pooling a sentence-transformers folder declares in 1_Pooling/config.json, or undefined when it has none. */
async function sentenceTransformersPooling(dir: string): Promise<OnnxPooling | undefined> {
  const path = join(dir, '1_Pooling', 'config.json');
  if (!(await isFile(path))) return undefined;
  const config = await readJson(path);
  if (config.pooling_mode_cls_token === true) return 'cls';
  if (config.pooling_mode_mean_tokens === true) return 'mean';
  const declared = Object.keys(config).filter((key) => key.startsWith('pooling_mode_') && config[key] === true);
  throw new RepodexError(
    'EMBEDDER_FAILED',
    `${path} asks for ${declared.join(', ') || 'no pooling'}; the onnx provider pools by mean or cls only: choose a model that uses one of them`,
  );
}

/** First 12 hex digits of a SHA-256 over the ONNX file, the tokenizer and the settings that shape a document vector. */
async function modelFingerprint(dir: string, onnxFile: string, settings: { pooling: OnnxPooling; maxTokens: number; documentPrefix: string }): Promise<string> {
  const hash = createHash('sha256');
  // Streamed: an fp32 model is hundreds of megabytes.
  for await (const chunk of createReadStream(join(dir, onnxFile))) hash.update(chunk as Buffer);
  hash.update('\0');
  hash.update(await readFile(join(dir, 'tokenizer.json')));
  hash.update('\0');
  hash.update(JSON.stringify(settings));
  return hash.digest('hex').slice(0, 12);
}

/** transformers.js, loaded on first use; EMBEDDER_FAILED saying how to install it when it will not load. */
async function loadTransformers(): Promise<TransformersModule> {
  let loaded: unknown;
  try {
    loaded = await import('@huggingface/transformers');
  } catch (error) {
    throw new RepodexError(
      'EMBEDDER_FAILED',
      `the onnx provider needs the optional package @huggingface/transformers with onnxruntime-node, which did not load (${errorMessage(error)}): ` +
        'install @huggingface/transformers next to repodex (`npm install @huggingface/transformers`), or choose another embeddings provider',
      { cause: error },
    );
  }
  const candidate = loaded as Partial<TransformersModule>;
  if (typeof candidate.pipeline !== 'function' || typeof candidate.env !== 'object') {
    throw new RepodexError('EMBEDDER_FAILED', '@huggingface/transformers loaded but has no `pipeline`/`env`: install version 4 (`npm install @huggingface/transformers@4`)');
  }
  return candidate as TransformersModule;
}

function stringField(record: Record<string, unknown>, key: string): string {
  const value = record[key];
  return typeof value === 'string' ? value : '';
}

function numberField(record: Record<string, unknown>, key: string): number | undefined {
  const value = record[key];
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RepodexError('EMBEDDER_FAILED', `${name} must be a positive whole number (got ${value})`);
  return value;
}
