import { parentPort, workerData } from 'node:worker_threads';
import type { ChunkParams } from '../chunk/chunker.js';
import { packParse } from '../index/parse-record.js';
import type { Language } from '../scan/language.js';
import { type ParseOutcome, parseText, warmUp } from './prepare-file.js';
import { type Analysis, analyze, loadLanguages } from '../lang/index.js';

/** A batch of texts for one worker to chunk, and its answer. */
export interface ParseRequest {
  readonly params: ChunkParams;
  readonly batch: readonly { readonly index: number; readonly text: string; readonly language: Language; readonly path: string }[];
}

/** Load the grammars of `warm` now, before the first batch comes (no answer is sent). */
export interface WarmRequest {
  readonly warm: readonly Language[];
}

/** One file to outline (a server's answer thread hands over large ones), and its answer. */
export interface OutlineRequest {
  readonly outline: { readonly id: number; readonly language: Language; readonly text: string };
}
export type OutlineResponse = { readonly id: number; readonly analysis: Analysis } | { readonly id: number; readonly error: string };

/** Parse outcomes by task index. */
export interface ParseResponse {
  readonly results: readonly { readonly index: number; readonly outcome: ParseOutcome }[];
}

// Runs in a worker thread: parses and chunks batches of texts for a sync, or outlines files for a
// server's answer thread (see outline-thread.ts). Each worker loads its own grammars: tree-sitter
// state lives per thread.
const port = parentPort;
/**
 * Shared with the pool (see PoolParser.close): slot 0 is set when the pool closes, and this
 * worker's `slot` is set while it packs an outcome. Node aborts the whole process when a thread is
 * terminated inside a zlib call (it cleans up a stream the termination caught half made), so a
 * worker never starts packing once the pool closes, and the pool waits for any packing under way
 * before it terminates the threads. The store-then-load on both sides (sequentially consistent
 * atomics) means one of them always sees the other.
 */
const { signals, slot } = (workerData ?? {}) as { signals?: Int32Array; slot?: number };
if (port) {
  port.on('message', (request: ParseRequest | WarmRequest | OutlineRequest) => {
    if ('outline' in request) {
      const { id, language, text } = request.outline;
      loadLanguages([language])
        .then(() => port.postMessage({ id, analysis: analyze(language, text) } satisfies OutlineResponse))
        .catch((error: unknown) => port.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies OutlineResponse));
      return;
    }
    if ('warm' in request) {
      // A failure here shows again, and is reported, when a batch needs the same grammar.
      warmUp(request.warm).catch(() => undefined);
      return;
    }
    void (async () => {
      const results: { index: number; outcome: ParseOutcome }[] = [];
      const transfer: ArrayBuffer[] = [];
      for (const task of request.batch) {
        if (signals && Atomics.load(signals, 0) !== 0) break;
        const outcome = await parseText(task.text, task.language, request.params, task.path);
        if (outcome.secret) {
          results.push({ index: task.index, outcome });
          continue;
        }
        if (signals && slot !== undefined) {
          Atomics.store(signals, slot, 1);
          if (Atomics.load(signals, 0) !== 0) {
            Atomics.store(signals, slot, 0);
            break;
          }
        }
        // Packed here, on this thread: the sync's own thread stores it as it is.
        let packed;
        try {
          packed = packParse(outcome);
        } finally {
          if (signals && slot !== undefined) Atomics.store(signals, slot, 0);
        }
        transfer.push(packed.payload.buffer as ArrayBuffer);
        results.push({ index: task.index, outcome: { ...outcome, packed } });
      }
      port.postMessage({ results } satisfies ParseResponse, transfer);
    })();
  });
}
