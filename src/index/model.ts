import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import type { OutlineSymbol } from '../lang/types.js';
import type { Language } from '../scan/language.js';
import type { FileStamp } from '../core/stat.js';
import type { ControlFile, WalkedDir } from '../scan/walker.js';

/** What happened to a candidate file at sync time; only `indexed` files have chunks. */
export const FILE_STATES = ['indexed', 'too-large', 'binary', 'unreadable', 'secret', 'hard-link'] as const;

/** State of one catalogued file. */
export type FileState = (typeof FILE_STATES)[number];

/** sha256 of nothing-read: the content hash of a file that was not read (skipped before reading). */
export const NO_CONTENT_HASH = '0'.repeat(64);

/** One catalogued file: every candidate the walk found, indexed or skipped with a reason, with the stat change detection compares. */
export interface FileRecord extends FileStamp {
  readonly path: string;
  readonly state: FileState;
  readonly language: Language;
  /** sha256 of the normalized text, hex; NO_CONTENT_HASH when the file was not read. */
  readonly contentHash: string;
  /** How many chunks the file has. */
  readonly chunkCount: number;
}

/** One chunk's metadata (its text stays in the source file). */
export interface ChunkRecord {
  /** Stable id (seed 000: uint32): names this chunk for as long as it is unchanged. */
  readonly id: number;
  /** The chunk's position in the loaded index (dense, per view): what search scores. */
  readonly doc: number;
  readonly path: string;
  /** 0-based position within its file (seed 001 chunk identity). */
  readonly chunkIndex: number;
  readonly startLine: number;
  readonly endLine: number;
  /** sha256(content ‖ chunking params), hex. */
  readonly hash: string;
  readonly snippet: string;
  /** Display path of the enclosing declaration (`class Router › match`), or null. */
  readonly symbol: string | null;
  readonly language: Language;
}

/** The corpus numbers ranking needs, over live chunks only. */
export interface CorpusStats {
  readonly chunkCount: number;
  readonly fileCount: number;
  readonly avgChunkTokens: number;
}

/** The postings of one term over live chunks, decoded: parallel arrays ordered by doc. */
export interface PostingList {
  readonly term: string;
  /** Live chunks holding the term (what BM25's idf counts). */
  readonly df: number;
  readonly docs: Uint32Array;
  readonly tfs: Uint32Array;
}

/** A chunk as a sync hands it to a store: its identity, where it is, and its text to index. */
export interface NewChunk {
  readonly id: number;
  readonly startLine: number;
  readonly endLine: number;
  /** sha256(content ‖ chunking params): 32 bytes. */
  readonly hash: Uint8Array;
  readonly snippet: string;
  readonly symbol: string | null;
  /** Tokenized by the store (the shared tokenizer) and then dropped. */
  readonly text: string;
  /**
   * Field terms (already tokenized): the file's path, the names the chunk declares, and (on a
   * file's first chunk) the terms of the file's recent commit subjects.
   */
  readonly fields: { readonly path: readonly string[]; readonly names: readonly string[]; readonly history?: readonly string[] };
}

/** A file as a sync hands it to a store: its catalog record, chunks (in order) and outline. */
export interface NewFile {
  readonly record: Omit<FileRecord, 'chunkCount'>;
  readonly chunks: readonly NewChunk[];
  readonly symbols: readonly OutlineSymbol[];
  /** How the file was chunked: null = declarations (its outline is complete), else why text was used. */
  readonly fallback: ChunkFallback;
  /** The outline's signatures and docs as a segment stores them (packOutlineText), when made already. */
  readonly outlineText?: Uint8Array;
}

/** The shape of the walk behind a generation: what proves "nothing changed" from stats alone. */
export interface Tree {
  readonly dirs: readonly WalkedDir[];
  readonly controls: readonly ControlFile[];
}
