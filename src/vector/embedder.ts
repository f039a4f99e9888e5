/**
 * The semantic layer's one seam: something that turns text into fixed-length unit vectors. The
 * engine, the vector store and search see only this interface; compose.ts picks the provider
 * (builtin, onnx, openai) from config `embeddings`.
 */

/** What a text is, for providers whose models embed queries and documents differently (bge's query prefix). */
export type EmbedKind = 'document' | 'query';

/** A provider's identity: what the vectors on disk were made with (seed 003 manifest `engine`, `model`, `dim`). */
export interface EmbedderIdentity {
  /** The provider: `builtin`, `onnx`, `openai`. */
  readonly engine: string;
  /** The model, as precise as the provider can name it (a changed model must change this). */
  readonly model: string;
  readonly dim: number;
  /** Vectors are L2-normalised, so cosine similarity is a dot product. */
  readonly metric: 'cosine';
}

/** Turns text into vectors. Implementations are safe to call concurrently and never throw for one bad text. */
export interface Embedder extends EmbedderIdentity {
  /** How many texts one `embed` call should carry (what a batch costs the provider). */
  readonly batchSize: number;
  /**
   * One unit-length Float32Array of `dim` numbers per text, in order. Throws EMBEDDER_FAILED with
   * a message naming the fix when the provider cannot run at all (model missing, endpoint down).
   */
  embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]>;
  /** Release threads, sessions and sockets. */
  close(): Promise<void>;
  /**
   * Why what this embedder keeps on disk (the builtin one's learned table) cannot be used, as far
   * as it has read it, naming the fix; undefined when sound. Searches then answer with bm25.
   */
  readonly damage?: string | undefined;
  /** Check all of what it keeps on disk (for `verify` and `status`): the files checked and what is damaged. */
  check?(): { checked: string[]; problems: string[] };
}

/** Scale a vector to unit length in place (a zero vector stays zero: it matches nothing). */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i]! *= scale;
  return vector;
}

/** What a remote or model embedder is given for a call, and where its answers go. */
export interface EmbedInputs {
  /** One vector per text, in order: zero vectors until filled (an empty text keeps its zero vector). */
  readonly out: Float32Array[];
  /** The non-empty texts, prefixed and cut to the provider's length cap: what is sent. */
  readonly inputs: string[];
  /** The index in `out` of each input. */
  readonly slots: number[];
}

/**
 * Prepare a call: an empty text means nothing, so it gets the zero vector (which matches nothing)
 * and is not sent (OpenAI refuses a whole batch for one empty input); the rest get `prefix` and
 * are cut to `maxChars`.
 */
export function embedInputs(texts: readonly string[], dim: number, prefix: string, maxChars: number): EmbedInputs {
  const out: Float32Array[] = [];
  const inputs: string[] = [];
  const slots: number[] = [];
  texts.forEach((text, i) => {
    out.push(new Float32Array(dim));
    if (text.trim() === '') return;
    inputs.push(prefix + truncate(text, maxChars));
    slots.push(i);
  });
  return { out, inputs, slots };
}

/** At most `max` characters of `text`, never ending between the two halves of a surrogate pair. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * An embedder that learns from the repository itself (the builtin one): it must be trained on the
 * live chunks before its first use, and again when the corpus has drifted far from what it learned.
 * Training changes `model`, so vectors made before it are never mixed with vectors made after.
 */
export interface LearningEmbedder extends Embedder {
  /** Whether training is due for an index of `chunks` live chunks (none yet, or the corpus doubled or halved). */
  needsTraining(chunks: number): boolean;
  /**
   * Learn from these chunk texts and keep what was learned. `chunks` is the size of the index they
   * were sampled from: what `needsTraining` compares later indexes against.
   */
  train(texts: readonly string[], chunks: number): Promise<void>;
  /** Pick up what another thread or process learned since (changes `model` when it did). */
  reload(): void;
}

/** Whether an embedder learns from the repository. */
export function isLearning(embedder: Embedder): embedder is LearningEmbedder {
  return typeof (embedder as Partial<LearningEmbedder>).train === 'function';
}

/**
 * From this many vectors on (config `embeddings.ann_from`), nearest neighbours come from a store's
 * approximate index instead of a comparison with every vector: on the file store, the saved HNSW
 * graph (`ann-graph.ts`). Measured (docs/benchmarks.md, "Semantic layer"): the scan of
 * 128-D vectors costs ~7 ms at 25k and ~28 ms at 125k; the graph answers in under a millisecond at
 * recall@10 ≥ 0.95, but costs its build in every embedding run that crosses this size and a second
 * copy of the vectors on disk, so small indexes scan.
 */
export const ANN_FROM = 50_000;
