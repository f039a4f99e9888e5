import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChunkParams, type ChunkStrategy, chunkHash, chunkParamsKey, makeSnippet } from '../chunk/chunker.js';
import { textChunker } from '../chunk/text-chunker.js';
import { errorMessage, isRepodexError } from '../core/errors.js';
import { readGitHead } from '../core/git.js';
import { FORMAT_VERSION, TOKENIZER_VERSION, TOOL_VERSION } from '../core/version.js';
import { IndexBuilder } from '../index/builder.js';
import { encodeFiles } from '../index/files-codec.js';
import { encodeArtifact } from '../index/format.js';
import type { IndexMeta } from '../index/meta.js';
import type { FileRecord, FileState } from '../index/model.js';
import { containsPrivateKey } from '../safety/denylist.js';
import { sniffBinary } from '../scan/binary.js';
import { languageOf } from '../scan/language.js';
import { type SoftError, walkRepository } from '../scan/walker.js';
import type { IndexStore } from '../store/backend.js';
import { normalizeNewlines, splitLines } from '../text/normalize.js';
import { queryTerms } from '../text/tokenizer.js';
import type { RepoContext } from './context.js';

/** A step of a sync, for progress bars; servers ignore them. */
export type SyncEvent =
  | { readonly type: 'scan'; readonly files: number }
  | { readonly type: 'index'; readonly done: number; readonly total: number; readonly path: string }
  | { readonly type: 'write' }
  | { readonly type: 'done'; readonly summary: SyncSummary };

/** What a sync did (seed 001 §2.5 fields, plus what was skipped and why). */
export interface SyncSummary {
  readonly files_scanned: number;
  readonly files_indexed: number;
  readonly files_skipped: number;
  readonly skipped_by_reason: Record<string, number>;
  readonly chunks_created: number;
  readonly chunks_unchanged: number;
  readonly chunks_deleted: number;
  readonly chunks_total: number;
  readonly terms: number;
  readonly generation: number;
  readonly duration_ms: number;
  /** Per-file problems that did not stop the sync (first 50). */
  readonly errors: SoftError[];
}

const EMPTY_HASH = new Uint8Array(32);
const PROGRESS_EVERY = 64;
const MAX_REPORTED_ERRORS = 50;
const utf8 = new TextDecoder('utf-8');

/** The chunking strategy in use; tree-sitter strategies slot in here. */
export function chunkStrategy(): ChunkStrategy {
  return textChunker;
}

/**
 * Rebuild the index from the working tree and commit it as a new generation. Reads each
 * candidate once, skips (and records) oversized, binary, unreadable and secret-bearing files,
 * chunks, tokenizes and writes; the store makes the switch atomic.
 */
export async function* runSync(ctx: RepoContext, store: IndexStore): AsyncGenerator<SyncEvent, void, undefined> {
  const started = performance.now();
  const { config } = ctx.loaded;
  const strategy = chunkStrategy();
  const params: ChunkParams = config.chunk;
  const paramsKey = chunkParamsKey(strategy, params);
  const previous = await previousIdentities(store);

  const walk = walkRepository(ctx.paths.root, config, ctx.denylist);
  const errors: SoftError[] = [...walk.errors];
  yield { type: 'scan', files: walk.files.length };

  const builder = new IndexBuilder();
  const records: FileRecord[] = [];
  const skipped: Record<string, number> = {};
  let created = 0;
  let unchanged = 0;
  let sourceBytes = 0;

  for (let fileId = 0; fileId < walk.files.length; fileId++) {
    const candidate = walk.files[fileId]!;
    if (fileId % PROGRESS_EVERY === 0) yield { type: 'index', done: fileId, total: walk.files.length, path: candidate.path };
    const language = languageOf(candidate.path);
    const firstChunk = builder.chunkCount;
    const record = (state: FileState, contentHash: Uint8Array = EMPTY_HASH): void => {
      if (state !== 'indexed') skipped[state] = (skipped[state] ?? 0) + 1;
      records.push({ ...candidate, state, language, contentHash, firstChunk, chunkCount: builder.chunkCount - firstChunk });
    };
    if (candidate.size > config.max_file_bytes) {
      record('too-large');
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(ctx.paths.root, candidate.path));
    } catch (error) {
      errors.push({ path: candidate.path, reason: `cannot read: ${errorMessage(error)}` });
      record('unreadable');
      continue;
    }
    if (bytes.length > config.max_file_bytes) {
      record('too-large');
      continue;
    }
    if (sniffBinary(bytes) !== undefined) {
      record('binary');
      continue;
    }
    let text = utf8.decode(bytes);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    text = normalizeNewlines(text);
    if (containsPrivateKey(text)) {
      record('secret');
      continue;
    }
    const lines = splitLines(text);
    const pathTerms = queryTerms(candidate.path);
    const spans = strategy.chunk(lines, language, params);
    spans.forEach((span, chunkIndex) => {
      const content = lines.slice(span.startLine - 1, span.endLine).join('\n');
      const hash = chunkHash(content, paramsKey);
      if (previous.has(identityKey(candidate.path, chunkIndex, hash))) unchanged++;
      else created++;
      builder.addChunk({
        fileId,
        startLine: span.startLine,
        endLine: span.endLine,
        hash,
        snippet: makeSnippet(lines, span.startLine, span.endLine),
        text: content,
        fields: { path: pathTerms, names: [] },
      });
    });
    sourceBytes += bytes.length;
    record('indexed', createHash('sha256').update(text).digest());
  }

  yield { type: 'write' };
  const built = builder.finish();
  const data = {
    files: encodeArtifact('FILE', encodeFiles(records, walk.dirs, walk.controls)),
    chunks: encodeArtifact('CHNK', built.chunks),
    terms: encodeArtifact('TERM', built.terms),
    postings: encodeArtifact('POST', built.postings),
  };
  const filesIndexed = records.filter((file) => file.state === 'indexed').length;
  const draft: Omit<IndexMeta, 'generation' | 'generation_dir' | 'artifacts'> = {
    format_version: FORMAT_VERSION,
    tool_version: TOOL_VERSION,
    config_hash: ctx.loaded.hash,
    project_type: config.project_type,
    tokenizer_version: TOKENIZER_VERSION,
    chunker: { name: strategy.name, version: strategy.version, params_key: paramsKey },
    counts: {
      files: records.length,
      files_indexed: filesIndexed,
      files_skipped: records.length - filesIndexed,
      chunks: built.chunkCount,
      terms: built.termCount,
      postings: built.postingCount,
    },
    source_bytes: sourceBytes,
    git: readGitHead(ctx.paths.root) ?? null,
    synced_at: new Date().toISOString(),
    duration_ms: 0,
  };
  const durationMs = Math.round(performance.now() - started);
  const meta = await store.commit(data, { ...draft, duration_ms: durationMs });
  yield {
    type: 'done',
    summary: {
      files_scanned: walk.files.length,
      files_indexed: filesIndexed,
      files_skipped: records.length - filesIndexed,
      skipped_by_reason: skipped,
      chunks_created: created,
      chunks_unchanged: unchanged,
      chunks_deleted: previous.size - unchanged,
      chunks_total: built.chunkCount,
      terms: built.termCount,
      generation: meta.generation,
      duration_ms: durationMs,
      errors: errors.slice(0, MAX_REPORTED_ERRORS),
    },
  };
}

function identityKey(path: string, chunkIndex: number, hash: Uint8Array): string {
  return `${path}\0${chunkIndex}\0${Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('hex')}`;
}

/** Chunk identities `(path, chunk_index, chunk_hash)` of the current generation, to count what changed. */
async function previousIdentities(store: IndexStore): Promise<Set<string>> {
  const identities = new Set<string>();
  let view;
  try {
    if (!store.readMeta()) return identities;
    view = await store.open({ verify: false });
  } catch (error) {
    // A damaged or older-format previous index is replaced by this sync: every chunk counts as new.
    if (isRepodexError(error)) return identities;
    throw error;
  }
  const ids = Array.from({ length: view.stats.chunkCount }, (_, i) => i);
  for (const record of await view.chunks(ids)) {
    if (record) identities.add(`${record.path}\0${record.chunkIndex}\0${record.hash}`);
  }
  return identities;
}
