import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChunkParams, ChunkSpan } from '../chunk/chunker.js';
import { type ChunkFallback, chunkWithTreeSitter } from '../chunk/tree-sitter-chunker.js';
import { errorMessage } from '../core/errors.js';
import type { FileState } from '../index/model.js';
import { hasAdapter, isLanguageLoaded, loadLanguages } from '../lang/index.js';
import type { OutlineSymbol } from '../lang/types.js';
import { containsPrivateKey } from '../safety/denylist.js';
import { sniffBinary } from '../scan/binary.js';
import type { Language } from '../scan/language.js';
import { decodeText, splitLines } from '../text/normalize.js';

/** One file to prepare for indexing (a walk candidate with its language). */
export interface PrepareTask {
  readonly path: string;
  readonly size: number;
  readonly language: Language;
}

/** What indexing needs from one file; plain data, so it crosses worker threads as is. */
export type PreparedFile =
  | { readonly state: Exclude<FileState, 'indexed'>; readonly error?: string }
  | {
      readonly state: 'indexed';
      /** The decoded text: BOM dropped, newlines normalized to LF. */
      readonly text: string;
      /** sha256 of `text`, hex. */
      readonly contentHash: string;
      readonly spans: ChunkSpan[];
      readonly symbols: OutlineSymbol[];
      /** Why the file was chunked as text (null when declarations were used). */
      readonly fallback: ChunkFallback;
    };

/** Limits that decide how a file is read. */
export interface PrepareOptions {
  readonly root: string;
  readonly maxFileBytes: number;
  readonly chunk: ChunkParams;
}

/** sha256 of normalized text, hex: a file's content identity. */
export function contentHashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Read one file and cut it into chunks: skips (with the reason) oversized, binary, unreadable
 * and private-key-bearing files; parses the rest with tree-sitter where an adapter exists (the
 * grammar is loaded on first use) and falls back to the text chunker otherwise.
 */
export async function prepareFile(task: PrepareTask, options: PrepareOptions): Promise<PreparedFile> {
  if (task.size > options.maxFileBytes) return { state: 'too-large' };
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(options.root, task.path));
  } catch (error) {
    return { state: 'unreadable', error: `cannot read: ${errorMessage(error)}` };
  }
  if (bytes.length > options.maxFileBytes) return { state: 'too-large' };
  if (sniffBinary(bytes) !== undefined) return { state: 'binary' };
  const text = decodeText(bytes);
  if (containsPrivateKey(text)) return { state: 'secret' };
  if (hasAdapter(task.language) && !isLanguageLoaded(task.language)) await loadLanguages([task.language]);
  const lines = splitLines(text);
  const { spans, symbols, fallback } = chunkWithTreeSitter(lines, task.language, options.chunk);
  return { state: 'indexed', text, contentHash: contentHashOf(text), spans, symbols, fallback };
}
