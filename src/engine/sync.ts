import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChunkParams, type ChunkStrategy, chunkHash, chunkParamsKey, makeSnippet } from '../chunk/chunker.js';
import { type ChunkFallback, treeSitterChunker } from '../chunk/tree-sitter-chunker.js';
import { isErrnoException, isRepodexError } from '../core/errors.js';
import { readGitHead } from '../core/git.js';
import { FORMAT_VERSION, TOKENIZER_VERSION, TOOL_VERSION } from '../core/version.js';
import { IndexBuilder } from '../index/builder.js';
import { encodeFiles } from '../index/files-codec.js';
import { encodeArtifact } from '../index/format.js';
import type { IndexMeta } from '../index/meta.js';
import type { FileRecord, FileState } from '../index/model.js';
import { FALLBACK_CODES, chunkDeclaredNames, chunkSymbolPath, encodeSymbols } from '../index/symbols-codec.js';
import { hasAdapter } from '../lang/index.js';
import type { OutlineSymbol } from '../lang/types.js';
import { languageOf } from '../scan/language.js';
import { type Candidate, type SoftError, walkRepository } from '../scan/walker.js';
import type { IndexStore, IndexView } from '../store/backend.js';
import { decodeText, splitLines } from '../text/normalize.js';
import { queryTerms } from '../text/tokenizer.js';
import type { RepoContext } from './context.js';
import { createPreparer } from './prepare-pool.js';
import { type PrepareOptions, type PrepareTask, type PreparedFile, contentHashOf, prepareFile } from './prepare-file.js';

/** A step of a sync, for progress bars; servers ignore them. */
export type SyncEvent =
  | { readonly type: 'scan'; readonly files: number }
  | { readonly type: 'index'; readonly done: number; readonly total: number; readonly path: string }
  | { readonly type: 'write' }
  | { readonly type: 'done'; readonly summary: SyncSummary };

/** What a sync did (seed 001 §2.5 fields, plus what was skipped, reused and chunked as text). */
export interface SyncSummary {
  readonly files_scanned: number;
  readonly files_indexed: number;
  readonly files_skipped: number;
  readonly skipped_by_reason: Record<string, number>;
  /** Unchanged files whose chunks and outline were taken from the previous index without parsing. */
  readonly files_reused: number;
  /** Files with a language adapter that were chunked as text instead: parse errors and files too large to parse. */
  readonly text_fallbacks: Record<string, number>;
  readonly chunks_created: number;
  readonly chunks_unchanged: number;
  readonly chunks_deleted: number;
  readonly chunks_total: number;
  readonly terms: number;
  readonly generation: number;
  readonly duration_ms: number;
  /** Per-file problems that did not stop the sync, including text fallbacks (first 50). */
  readonly errors: SoftError[];
}

const EMPTY_HASH = new Uint8Array(32);
const PROGRESS_EVERY = 64;
const MAX_REPORTED_ERRORS = 50;

/** The chunking strategy recorded in meta.json and mixed into chunk hashes. */
export function chunkStrategy(): ChunkStrategy {
  return treeSitterChunker;
}


/**
 * Build the index from the working tree and commit it as a new generation. Every file is read;
 * files unchanged since the previous generation (same content hash) reuse its chunk boundaries
 * and outline instead of being parsed again, unless `force`. Parsing runs in worker
 * threads when there is enough of it. The store makes the switch atomic.
 */
export async function* runSync(ctx: RepoContext, store: IndexStore, options: { force?: boolean | undefined } = {}): AsyncGenerator<SyncEvent, void, undefined> {
  const started = performance.now();
  const { config } = ctx.loaded;
  const strategy = chunkStrategy();
  const params: ChunkParams = config.chunk;
  const paramsKey = chunkParamsKey(strategy, params);
  const previous = await openPrevious(store);
  const previousIdentities = await identitiesOf(previous);

  const walk = walkRepository(ctx.paths.root, config, ctx.denylist);
  const errors: SoftError[] = [...walk.errors];
  yield { type: 'scan', files: walk.files.length };

  const reuseFrom = !options.force && previous && previous.meta.chunker.params_key === paramsKey ? previous : undefined;
  const plans = walk.files.map((file) => planReuse(reuseFrom, ctx.paths.root, file));
  const allTasks = walk.files.map((file): PrepareTask => ({ path: file.path, size: file.size, language: languageOf(file.path) }));
  const tasks = allTasks.map((task, i) => (plans[i] ? undefined : task));
  const parseCount = tasks.filter((task) => task && hasAdapter(task.language)).length;
  const prepareOptions: PrepareOptions = { root: ctx.paths.root, maxFileBytes: config.max_file_bytes, chunk: params };
  const preparer = await createPreparer(tasks, prepareOptions, parseCount);

  const builder = new IndexBuilder();
  const records: FileRecord[] = [];
  const outlines: OutlineSymbol[][] = [];
  const fallbacks: number[] = [];
  const skipped: Record<string, number> = {};
  const textFallbacks: Record<string, number> = {};
  let created = 0;
  let unchanged = 0;
  let reused = 0;
  let sourceBytes = 0;

  try {
    for (let fileId = 0; fileId < walk.files.length; fileId++) {
      const candidate = walk.files[fileId]!;
      if (fileId % PROGRESS_EVERY === 0) yield { type: 'index', done: fileId, total: walk.files.length, path: candidate.path };
      const language = languageOf(candidate.path);
      const firstChunk = builder.chunkCount;
      const record = (state: FileState, contentHash: Uint8Array = EMPTY_HASH, symbols: OutlineSymbol[] = [], fallback: ChunkFallback = 'no-adapter'): void => {
        if (state !== 'indexed') skipped[state] = (skipped[state] ?? 0) + 1;
        records.push({ ...candidate, state, language, contentHash, firstChunk, chunkCount: builder.chunkCount - firstChunk });
        outlines.push(symbols);
        fallbacks.push(FALLBACK_CODES.indexOf(fallback));
      };
      const plan = plans[fileId];
      let prepared: PreparedFile;
      if (plan && reuseFrom) {
        const outcome = await reuse(reuseFrom, plan, allTasks[fileId]!, prepareOptions);
        prepared = outcome.file;
        if (outcome.reused) reused++;
      } else {
        prepared = await preparer.get(fileId);
      }
      if (prepared.state !== 'indexed') {
        if ('error' in prepared && prepared.error) errors.push({ path: candidate.path, reason: prepared.error });
        record(prepared.state);
        continue;
      }
      if (prepared.fallback === 'parse-error' || prepared.fallback === 'too-large') {
        textFallbacks[prepared.fallback] = (textFallbacks[prepared.fallback] ?? 0) + 1;
        errors.push({ path: candidate.path, reason: prepared.fallback === 'parse-error' ? 'parse error: chunked as text, no outline' : 'too large to parse: chunked as text' });
      }
      const lines = splitLines(prepared.text);
      const pathTerms = queryTerms(candidate.path);
      prepared.spans.forEach((span, chunkIndex) => {
        const content = lines.slice(span.startLine - 1, span.endLine).join('\n');
        const hash = chunkHash(content, paramsKey);
        if (previousIdentities.has(identityKey(candidate.path, chunkIndex, hash))) unchanged++;
        else created++;
        builder.addChunk({
          fileId,
          startLine: span.startLine,
          endLine: span.endLine,
          hash,
          snippet: makeSnippet(lines, span.startLine, span.endLine),
          symbol: chunkSymbolPath(prepared.symbols, span.startLine, span.endLine, lines),
          text: content,
          fields: { path: pathTerms, names: queryTerms(chunkDeclaredNames(prepared.symbols, span.startLine, span.endLine).join(' ')) },
        });
      });
      sourceBytes += candidate.size;
      record('indexed', Buffer.from(prepared.contentHash, 'hex'), prepared.symbols, prepared.fallback);
    }
  } finally {
    await preparer.close();
  }

  yield { type: 'write' };
  const built = builder.finish();
  const data = {
    files: encodeArtifact('FILE', encodeFiles(records, walk.dirs, walk.controls)),
    chunks: encodeArtifact('CHNK', built.chunks),
    terms: encodeArtifact('TERM', built.terms),
    postings: encodeArtifact('POST', built.postings),
    symbols: encodeArtifact('SYMB', encodeSymbols(outlines, fallbacks)),
  };
  const filesIndexed = records.filter((file) => file.state === 'indexed').length;
  const durationMs = Math.round(performance.now() - started);
  const meta = await store.commit(data, {
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
    duration_ms: durationMs,
  } satisfies Omit<IndexMeta, 'generation' | 'generation_dir' | 'artifacts'>);
  yield {
    type: 'done',
    summary: {
      files_scanned: walk.files.length,
      files_indexed: filesIndexed,
      files_skipped: records.length - filesIndexed,
      skipped_by_reason: skipped,
      files_reused: reused,
      text_fallbacks: textFallbacks,
      chunks_created: created,
      chunks_unchanged: unchanged,
      chunks_deleted: previousIdentities.size - unchanged,
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

/** The current generation, or undefined when there is none this version can read. */
async function openPrevious(store: IndexStore): Promise<IndexView | undefined> {
  try {
    if (!store.readMeta()) return undefined;
    return await store.open({ verify: false });
  } catch (error) {
    // A damaged or older-format previous index is simply replaced: every chunk counts as new.
    if (isRepodexError(error)) return undefined;
    throw error;
  }
}

/** Chunk identities `(path, chunk_index, chunk_hash)` of a generation, to count what changed. */
async function identitiesOf(view: IndexView | undefined): Promise<Set<string>> {
  const identities = new Set<string>();
  if (!view) return identities;
  const ids = Array.from({ length: view.stats.chunkCount }, (_, i) => i);
  for (const record of await view.chunks(ids)) {
    if (record) identities.add(`${record.path}\0${record.chunkIndex}\0${record.hash}`);
  }
  return identities;
}

/** A file the previous generation already chunked and outlined, with the content hash it had then. */
interface ReusePlan {
  readonly previousId: number;
  readonly contentHash: string;
}

/**
 * Whether a file can reuse the previous generation's chunks and outline: read now, it has the
 * content hash the previous generation recorded (its stat may differ: a checkout or a touch
 * changes mtimes, not content). Only the hash is kept, so planning holds no file text in memory.
 */
function planReuse(previous: IndexView | undefined, root: string, file: Candidate): ReusePlan | undefined {
  if (!previous) return undefined;
  const previousId = previous.findFile(file.path);
  if (previousId < 0) return undefined;
  const record = previous.fileRecord(previousId);
  if (record.state !== 'indexed' || record.size !== file.size) return undefined;
  const text = readText(root, file.path);
  const contentHash = Buffer.from(record.contentHash).toString('hex');
  return text !== undefined && contentHashOf(text) === contentHash ? { previousId, contentHash } : undefined;
}

/**
 * The reused file, read again for its postings. When it changed since planning (edited during
 * the sync), it is prepared afresh instead, so the index always matches the text it was built from.
 */
async function reuse(previous: IndexView, plan: ReusePlan, task: PrepareTask, options: PrepareOptions): Promise<{ file: PreparedFile; reused: boolean }> {
  const text = readText(options.root, task.path);
  if (text === undefined || contentHashOf(text) !== plan.contentHash) return { file: await prepareFile(task, options), reused: false };
  const record = previous.fileRecord(plan.previousId);
  const ids = Array.from({ length: record.chunkCount }, (_, i) => record.firstChunk + i);
  const spans = (await previous.chunks(ids)).map((chunk) => ({ startLine: chunk!.startLine, endLine: chunk!.endLine }));
  const outline = await previous.outline(plan.previousId);
  return { file: { state: 'indexed', text, contentHash: plan.contentHash, spans, symbols: outline.symbols, fallback: outline.fallback }, reused: true };
}

/** A file's normalized text, or undefined when it cannot be read now (preparing it records why). */
function readText(root: string, path: string): string | undefined {
  try {
    return decodeText(readFileSync(join(root, path)));
  } catch (error) {
    if (isErrnoException(error)) return undefined;
    throw error;
  }
}
