import type { Language } from '../scan/language.js';

/** What happened to a candidate file at sync time; only `indexed` files have chunks. */
export const FILE_STATES = ['indexed', 'too-large', 'binary', 'unreadable', 'secret'] as const;

/** State of one catalogued file. */
export type FileState = (typeof FILE_STATES)[number];

/** One catalogued file: every candidate the walk found, indexed or skipped with a reason. */
export interface FileRecord {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly state: FileState;
  readonly language: Language;
  /** sha256 of the normalized text; zeros when the file was not read. */
  readonly contentHash: Uint8Array;
  /** First chunk id and count: a file's chunks are contiguous. */
  readonly firstChunk: number;
  readonly chunkCount: number;
}

/** One chunk's metadata (its text stays in the source file). */
export interface ChunkRecord {
  readonly id: number;
  readonly fileId: number;
  readonly path: string;
  /** 0-based position within its file (seed 001 chunk identity). */
  readonly chunkIndex: number;
  readonly startLine: number;
  readonly endLine: number;
  readonly hash: string;
  readonly snippet: string;
  /** Display path of the enclosing declaration (`class Router › match`), or null. */
  readonly symbol: string | null;
  readonly language: Language;
}

/** The corpus numbers ranking needs. */
export interface CorpusStats {
  readonly chunkCount: number;
  readonly fileCount: number;
  readonly termCount: number;
  readonly avgChunkTokens: number;
}

/** The postings of one term, decoded: parallel arrays ordered by chunk id. */
export interface PostingList {
  readonly term: string;
  readonly df: number;
  readonly chunkIds: Uint32Array;
  readonly tfs: Uint32Array;
}
