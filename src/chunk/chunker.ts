import { createHash } from 'node:crypto';
import type { Language } from '../scan/language.js';

/** Chunking parameters; part of every chunk hash, so changing them re-identifies every chunk (seed 001 §2.4). */
export interface ChunkParams {
  readonly target_lines: number;
  readonly max_lines: number;
  readonly overlap_lines: number;
}

/** A chunk as a 1-based, inclusive line range of a normalized file. */
export interface ChunkSpan {
  readonly startLine: number;
  readonly endLine: number;
}

/**
 * A pluggable way to cut a file into chunks. Strategies must be deterministic, keep every span
 * within `max_lines`, and return spans in ascending order.
 */
export interface ChunkStrategy {
  /** Stable name recorded in meta.json and mixed into chunk hashes. */
  readonly name: string;
  /** Bumped whenever the same input could produce different spans. */
  readonly version: number;
  chunk(lines: readonly string[], language: Language, params: ChunkParams): ChunkSpan[];
}

/** `chunk_hash = sha256(content + chunking params + version)` (SPEC §2), as raw bytes. */
export function chunkHash(content: string, paramsKey: string): Buffer {
  return createHash('sha256').update(content).update('\0').update(paramsKey).digest();
}

/** The part of a chunk hash that is not content: strategy, its version and the params. */
export function chunkParamsKey(strategy: ChunkStrategy, params: ChunkParams): string {
  return JSON.stringify({
    strategy: strategy.name,
    version: strategy.version,
    target_lines: params.target_lines,
    max_lines: params.max_lines,
    overlap_lines: params.overlap_lines,
  });
}

export const SNIPPET_LINES = 3;
const SNIPPET_LINE_CHARS = 160;

/** The preview stored with a chunk: its first few non-blank lines, trimmed to a readable width. */
export function makeSnippet(lines: readonly string[], startLine: number, endLine: number): string {
  const out: string[] = [];
  for (let i = startLine - 1; i < endLine && out.length < SNIPPET_LINES; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    const trimmed = line.trimEnd();
    out.push(trimmed.length > SNIPPET_LINE_CHARS ? `${trimmed.slice(0, SNIPPET_LINE_CHARS)}…` : trimmed);
  }
  return out.join('\n');
}
