import { join } from 'node:path';
import { chunkHash } from '../chunk/chunker.js';
import { RepodexError, errorMessage, isRepodexError } from '../core/errors.js';
import { readRegularFile } from '../core/open-regular.js';
import { readGitHead } from '../core/git.js';
import { DEAD_DOC, type IndexStore, type IndexView, type VectorManifest } from '../store/backend.js';
import { decodeSource } from '../scan/read-source.js';
import { splitLines } from '../text/normalize.js';
import { ANN_FROM, type Embedder, isLearning } from '../vector/embedder.js';
import { MIN_TRAINING_CHUNKS } from '../vector/learn.js';
import type { RepoContext } from './context.js';
import type { SyncEvent } from './sync.js';

/** What an embedding run did. */
export interface EmbedSummary {
  readonly engine: string;
  readonly model: string;
  readonly dim: number;
  /** Chunks embedded by this run. */
  readonly embedded: number;
  /** Live chunks whose vector was already there (by chunk hash): never embedded again. */
  readonly reused: number;
  /** Live chunks left without a vector: their file changed since the sync, or could not be read. */
  readonly skipped: number;
  /** Why no chunk got a vector, when none could (too few chunks to learn the builtin table from). */
  readonly reason?: string;
  /** Live chunks of the index, and how many have a vector now. */
  readonly chunks: number;
  readonly vectors: number;
  /** True when the builtin embedder (re)learned its table from the repository in this run. */
  readonly trained: boolean;
  readonly duration_ms: number;
}

/** Options of one embedding run. */
export interface EmbedOptions {
  readonly signal?: AbortSignal | undefined;
  /** Called before each batch: a server's run gives way here while requests are being answered (see give-way.ts). */
  readonly giveWay?: (() => Promise<void> | undefined) | undefined;
}

/**
 * The builtin embedder learns from at most this many chunks (every n-th): the dev set's repositories
 * are below it; on a 100k-chunk tree learning from all of them took 1.5 GB, over seed 003's budget.
 */
const MAX_TRAINING_CHUNKS = 30_000;

/** How many vectors one durable append carries: progress is never lost by more than this. */
const APPEND_EVERY = 2048;

/** The live docs of a view with their hashes, one doc per distinct hash. */
function liveChunks(view: IndexView): { docs: number[]; hashes: Uint8Array } {
  const hashes = view.chunkHashes();
  const docs: number[] = [];
  for (let doc = 0; doc < view.docCount; doc++) if (view.docOrder[doc] !== DEAD_DOC) docs.push(doc);
  return { docs, hashes };
}

/**
 * Bring the vectors of the current generation up to date: every live chunk whose hash has no
 * vector from this embedder is read, embedded in batches and appended. Vectors are keyed by chunk
 * hash, so an unchanged chunk is never embedded again — not after a sync, `--force`, or a branch
 * switch and back. Holds only the vectors lock: lexical syncs and searches go on meanwhile. The
 * builtin embedder first learns its table when it has none or the corpus drifted.
 */
export async function* runEmbed(ctx: RepoContext, store: IndexStore, embedder: Embedder, options: EmbedOptions = {}): AsyncGenerator<SyncEvent, EmbedSummary, undefined> {
  const started = performance.now();
  const lock = await store.vectorLock({ waitMs: 2000 });
  try {
    const view = await store.open();
    const { docs, hashes } = liveChunks(view);
    let trained = false;
    // Another process may have relearned the table since this embedder read it.
    if (isLearning(embedder)) embedder.reload();
    if (isLearning(embedder) && embedder.needsTraining(docs.length) && docs.length > 0) {
      // A spread-out sample is enough to learn co-occurrence, and bounds memory and time on huge trees.
      const step = Math.max(1, Math.ceil(docs.length / MAX_TRAINING_CHUNKS));
      const sample = docs.filter((_, i) => i % step === 0);
      yield { type: 'train', chunks: sample.length };
      const texts = await readChunkTexts(ctx, view, sample);
      const known = [...texts.values()];
      try {
        await embedder.train(known, docs.length);
        trained = true;
      } catch (error) {
        // Too small to learn from: no vectors, lexical search as before, and the summary says why.
        if (!isRepodexError(error) || error.code !== 'EMBEDDER_FAILED') throw error;
        const reason = tooSmallToEmbed(embedder, docs.length) ?? error.detail ?? error.message;
        await store.control.appendBuildLog(`embed: ${reason}`);
        return summary(embedder, { embedded: 0, reused: 0, skipped: docs.length, chunks: docs.length, vectors: 0, trained: false, reason, started });
      }
    }
    const vectors = store.vectors(embedder);
    let set = await vectors.holdings();
    const missing: number[] = [];
    const wanted = new Set<string>();
    let reused = 0;
    for (const doc of docs) {
      const hash = hashes.subarray(doc * 32, doc * 32 + 32);
      if (set.has(hash)) {
        reused++;
        continue;
      }
      const key = Buffer.from(hash).toString('latin1');
      if (wanted.has(key)) continue; // the same text twice: embedded once
      wanted.add(key);
      missing.push(doc);
    }
    let embedded = 0;
    let skipped = 0;
    if (missing.length > 0) {
      yield { type: 'embed', done: 0, total: missing.length };
      const texts = await readChunkTexts(ctx, view, missing);
      skipped = missing.length - texts.size;
      const pending: { hashes: Uint8Array[]; vectors: Float32Array[] } = { hashes: [], vectors: [] };
      const ready = missing.filter((doc) => texts.has(doc));
      for (let at = 0; at < ready.length; at += embedder.batchSize) {
        if (options.signal?.aborted) throw new RepodexError('ABORTED');
        const pause = options.giveWay?.();
        if (pause) await pause;
        const batch = ready.slice(at, at + embedder.batchSize);
        const out = await embedder.embed(
          batch.map((doc) => texts.get(doc)!),
          'document',
          options.signal,
        );
        batch.forEach((doc, i) => {
          pending.hashes.push(hashes.slice(doc * 32, doc * 32 + 32));
          pending.vectors.push(out[i]!);
        });
        embedded += batch.length;
        if (pending.hashes.length >= APPEND_EVERY) {
          await vectors.append(pending.hashes, pending.vectors);
          pending.hashes = [];
          pending.vectors = [];
        }
        yield { type: 'embed', done: embedded, total: missing.length };
      }
      await vectors.append(pending.hashes, pending.vectors);
      set = await vectors.holdings();
    }
    // Mostly dead records (files deleted or rewritten many times): keep only what the index uses.
    if (set.count > 1024 && set.count > 2 * docs.length) {
      const liveKeys = new Set<string>();
      for (const doc of docs) liveKeys.add(Buffer.from(hashes.buffer, hashes.byteOffset + doc * 32, 32).toString('latin1'));
      await vectors.compact((hash) => liveKeys.has(Buffer.from(hash.buffer, hash.byteOffset, 32).toString('latin1')));
      set = await vectors.holdings();
    }
    let graph = '';
    // Large indexes search an approximate index (the file store's saved HNSW graph): extend it by this run's vectors (or build it).
    const steps = vectors.updateIndex({ annFrom: ctx.loaded.config.embeddings.ann_from ?? ANN_FROM });
    for (let step = await steps.next(); ; step = await steps.next()) {
      if (step.done) {
        const outcome = step.value;
        graph = outcome.kind === 'current' ? `, graph over ${outcome.vectors} vectors` : outcome.kind === 'unavailable' ? ', no graph (usearch does not load here: searches scan)' : '';
        break;
      }
      yield { type: 'graph', ...step.value };
      // Not after the last batch: the graph is whole then, and saving it costs little.
      if (options.signal?.aborted && step.value.done < step.value.total) throw new RepodexError('ABORTED');
    }
    // Vectors made with a table since relearned can never be used again: free their space.
    const dropped = isLearning(embedder) ? await store.dropOtherVectors(embedder) : 0;
    let covered = 0;
    for (const doc of docs) if (set.has(hashes.subarray(doc * 32, doc * 32 + 32))) covered++;
    await writeManifest(ctx, store, view, embedder, { covered, records: set.count }, await vectors.stamp());
    const result = summary(embedder, { embedded, reused, skipped, chunks: docs.length, vectors: covered, trained, started });
    await store.control.appendBuildLog(`embed: ${embedder.engine} ${embedder.model}: ${embedded} embedded, ${reused} reused, ${skipped} skipped, ${result.duration_ms} ms${trained ? ' (table learned)' : ''}${dropped > 0 ? `, vectors of ${dropped} earlier table(s) removed` : ''}${graph}`);
    return result;
  } catch (error) {
    await store.control.appendBuildLog(`embed failed: ${errorMessage(error)}`);
    throw error;
  } finally {
    await lock.release();
  }
}

/**
 * Why `embedder` can make no vectors for an index of `chunks` live chunks, or undefined when it
 * can: the builtin embedder learns its table from the repository's own chunks and needs a minimum
 * of them (a sync cannot help until the repository grows). What the sync summary, `status` and
 * vector searches say instead of "run `repodex sync`".
 */
export function tooSmallToEmbed(embedder: Embedder, chunks: number): string | undefined {
  if (!isLearning(embedder) || chunks >= MIN_TRAINING_CHUNKS || !embedder.needsTraining(chunks)) return undefined;
  return `too few chunks for the builtin embedder to learn from: it needs at least ${MIN_TRAINING_CHUNKS}, this index has ${chunks} (vectors come once the repository has that many; bm25 search works as before)`;
}

function summary(embedder: Embedder, parts: Omit<EmbedSummary, 'engine' | 'model' | 'dim' | 'duration_ms'> & { started: number }): EmbedSummary {
  const { started, ...rest } = parts;
  return { engine: embedder.engine, model: embedder.model, dim: embedder.dim, ...rest, duration_ms: Math.round(performance.now() - started) };
}

/**
 * Record what the vectors now cover (seed 003 manifest), keeping `created_at` while the embedder is
 * the same: `covered` live chunks have a vector, from `records` distinct ones in the store
 * (identical chunks share a vector, so a fresh index of repeated code has fewer records than chunks).
 */
async function writeManifest(ctx: RepoContext, store: IndexStore, view: IndexView, embedder: Embedder, vectors: { covered: number; records: number }, vectorsStamp: string): Promise<void> {
  let previous: VectorManifest | undefined;
  try {
    previous = await store.readVectorManifest();
  } catch {
    previous = undefined; // a damaged manifest is replaced
  }
  const now = new Date().toISOString();
  const same = previous && previous.engine === embedder.engine && previous.model === embedder.model && previous.dim === embedder.dim;
  const chunk = ctx.loaded.config.chunk;
  await store.writeVectorManifest({
    engine: embedder.engine,
    model: embedder.model,
    dim: embedder.dim,
    metric: embedder.metric,
    chunk: { mode: 'auto', target_lines: chunk.target_lines, max_lines: chunk.max_lines, overlap_lines: chunk.overlap_lines },
    repo: { root: '.', git_sha: readGitHead(ctx.paths.root)?.commit ?? view.meta.git?.commit ?? null },
    counts: { files: view.stats.fileCount, chunks: view.stats.chunkCount, vectors: vectors.covered },
    generation: view.meta.generation,
    records: vectors.records,
    vectors_stamp: vectorsStamp,
    created_at: same ? previous!.created_at : now,
    last_refresh: now,
  });
}

/**
 * The text of each doc's chunk: as the store keeps it (a database), else read from its file and
 * kept only when it still hashes to the indexed chunk. Either way only text the index holds
 * (denylisted and secret-scanned at sync) is ever embedded, whatever the file holds now. One read
 * per file.
 */
async function readChunkTexts(ctx: RepoContext, view: IndexView, docs: readonly number[]): Promise<Map<number, string>> {
  const stored = await view.storedTexts(docs);
  if (stored) return stored;
  const byFile = new Map<number, number[]>();
  for (const doc of docs) {
    const slot = view.docFile[doc]!;
    let list = byFile.get(slot);
    if (!list) byFile.set(slot, (list = []));
    list.push(doc);
  }
  const out = new Map<number, string>();
  const paramsKey = view.meta.chunker.params_key;
  for (const [slot, fileDocs] of byFile) {
    const lines = readLines(ctx, view.filePath(slot));
    if (!lines) continue;
    for (const record of await view.chunks(fileDocs)) {
      const text = lines.slice(record.startLine - 1, record.endLine).join('\n');
      if (chunkHash(text, paramsKey).toString('hex') === record.hash) out.set(record.doc, text);
    }
  }
  return out;
}

/** A file's normalized lines, or undefined when it cannot be read as a regular file within the size limit. */
function readLines(ctx: RepoContext, path: string): string[] | undefined {
  // Unreadable: counted as skipped; the next sync sees the file's new state.
  const bytes = readRegularFile(join(ctx.paths.root, path), ctx.limits.max_file_bytes);
  if (!bytes) return undefined;
  // Decoded as the sync decoded it, or no chunk of a Latin-1 file would hash to what the index holds.
  const text = decodeSource(bytes);
  return text === undefined ? undefined : splitLines(text);
}
