import type { Node } from 'web-tree-sitter';
import { extractSymbols } from '../lang/extract.js';
import { withParsedFile } from '../lang/parse.js';
import { adapterFor } from '../lang/registry.js';
import { endRow, startRow } from '../lang/syntax.js';
import type { LanguageAdapter, OutlineSymbol } from '../lang/types.js';
import type { Language } from '../scan/language.js';
import type { ChunkParams, ChunkSpan, ChunkStrategy } from './chunker.js';
import { textChunker } from './text-chunker.js';

/**
 * Files longer than this are chunked as text without parsing. Above it sit vendored bundles and
 * generated code (react-dom.development.js, minified libraries), where parsing costs the most
 * time and declaration boundaries help retrieval the least.
 */
export const MAX_PARSE_CHARS = 256 * 1024;

/** Why a file was chunked as text: no adapter for its language, a parse error, or too large to parse. */
export type ChunkFallback = null | 'no-adapter' | 'parse-error' | 'too-large';

/** Spans of one file, its outline from the same parse, and the fallback taken (null when none). */
export interface TreeSitterChunks {
  readonly spans: ChunkSpan[];
  readonly symbols: OutlineSymbol[];
  readonly fallback: ChunkFallback;
}

/**
 * Declaration chunking (SPEC §2): one chunk per top-level declaration; a declaration longer than
 * `max_lines` is split at its members, recursively; runs of small neighbours are merged up to
 * `target_lines`; comments and decorators stay with the declaration below them; every non-blank
 * line is in a chunk. Languages without an adapter, unparseable files and files over
 * MAX_PARSE_CHARS fall back to the text chunker. The grammar must already be loaded
 * (`loadLanguages`); parsing is then synchronous.
 */
export function chunkWithTreeSitter(lines: readonly string[], language: Language, params: ChunkParams): TreeSitterChunks {
  const fallback = (reason: Exclude<ChunkFallback, null>): TreeSitterChunks => ({ spans: textChunker.chunk(lines, language, params), symbols: [], fallback: reason });
  if (!adapterFor(language)) return fallback('no-adapter');
  const text = lines.join('\n');
  if (text.length > MAX_PARSE_CHARS) return fallback('too-large');
  const result = withParsedFile(language, text, ({ adapter, tree }) => {
    if (!tree) return fallback('parse-error');
    const root = tree.rootNode;
    return { spans: declarationSpans(adapter, root, lines, params, language), symbols: extractSymbols(adapter, root, text), fallback: null };
  });
  return result ?? fallback('no-adapter');
}

/** The tree-sitter chunking strategy; its name and version are part of every chunk hash. */
export const treeSitterChunker: ChunkStrategy = {
  name: 'tree-sitter',
  version: 1,
  chunk(lines: readonly string[], language: Language, params: ChunkParams): ChunkSpan[] {
    return chunkWithTreeSitter(lines, language, params).spans;
  },
};

/** A run of sibling nodes that must stay together, as 0-based inclusive rows; `main` is its widest non-comment node. */
interface Unit {
  start: number;
  end: number;
  main: Node | null;
  /** True while the unit holds only comments and decorators, which belong to what follows. */
  leadingOnly: boolean;
}

/** A 0-based inclusive row range. */
interface Piece {
  readonly start: number;
  readonly end: number;
}

function declarationSpans(adapter: LanguageAdapter, root: Node, lines: readonly string[], params: ChunkParams, language: Language): ChunkSpan[] {
  const blank = lines.map((line) => line.trim() === '');
  let first = 0;
  while (first < lines.length && blank[first]) first++;
  if (first >= lines.length) return [];
  let last = lines.length - 1;
  while (blank[last]) last--;

  const max = params.max_lines;
  const target = Math.min(params.target_lines, max);
  const pieces: Piece[] = [];

  /** Non-blank extent of a row range, as a line count (0 when all blank). */
  const size = (start: number, end: number): number => {
    let a = start;
    let b = end;
    while (a <= b && blank[a]) a++;
    while (b >= a && blank[b]) b--;
    return b - a + 1;
  };

  /** Line windows for a stretch with no usable structure (a giant literal or comment). */
  const windows = (start: number, end: number): void => {
    for (const span of textChunker.chunk(lines.slice(start, end + 1), language, params)) {
      pieces.push({ start: start + span.startLine - 1, end: start + span.endLine - 1 });
    }
  };

  /**
   * Partition rows [lo, hi] by a node's named children: siblings sharing a line stay together,
   * comments and decorators join the next sibling, and the lines between two units (blank lines,
   * the container's head and closing brace) go to the neighbouring unit, so nothing is left out.
   */
  const unitsOf = (node: Node, lo: number, hi: number): Unit[] => {
    const units: Unit[] = [];
    let current: Unit | null = null;
    let widest = -1;
    for (const child of node.namedChildren) {
      if (!child) continue;
      const type = child.type;
      const leading = adapter.comments.has(type) || adapter.leading.has(type);
      const start = startRow(child);
      const end = endRow(child);
      if (current && (start <= current.end || current.leadingOnly)) {
        current.end = Math.max(current.end, end);
        if (!leading && end - start > widest) {
          current.main = child;
          widest = end - start;
        }
        if (!leading) current.leadingOnly = false;
        continue;
      }
      if (current) units.push(current);
      current = { start, end, main: leading ? null : child, leadingOnly: leading };
      widest = leading ? -1 : end - start;
    }
    if (current) units.push(current);
    if (units.length === 0) return units;
    units[0]!.start = lo;
    for (let i = 1; i < units.length; i++) units[i]!.start = units[i - 1]!.end + 1;
    units[units.length - 1]!.end = hi;
    return units.filter((unit) => unit.start <= unit.end);
  };

  const place = (unit: Unit): void => {
    if (size(unit.start, unit.end) <= max) pieces.push({ start: unit.start, end: unit.end });
    else if (unit.main) split(unit.main, unit.start, unit.end);
    else windows(unit.start, unit.end);
  };

  /** Cut rows [lo, hi], which hold `node`, at its members; descend while all members share lines. */
  const split = (node: Node, lo: number, hi: number): void => {
    let current = node;
    for (;;) {
      const units = unitsOf(current, lo, hi);
      if (units.length === 0) return windows(lo, hi);
      if (units.length > 1) {
        for (const unit of units) place(unit);
        return;
      }
      const main = units[0]!.main;
      if (!main) return windows(lo, hi);
      current = main;
    }
  };

  // Top-level declarations are placed whole when they fit; only bigger ones are split.
  const top = unitsOf(root, first, last);
  if (top.length === 0) windows(first, last);
  for (const unit of top) place(unit);

  // Merge small neighbours: a run grows while it stays within the target and one side is small.
  const small = Math.max(1, Math.floor(target / 4));
  const spans: ChunkSpan[] = [];
  const flush = (piece: Piece): void => {
    let a = piece.start;
    let b = piece.end;
    while (a <= b && blank[a]) a++;
    while (b >= a && blank[b]) b--;
    if (a <= b) spans.push({ startLine: a + 1, endLine: b + 1 });
  };
  let run: Piece | undefined;
  for (const piece of pieces) {
    if (run && size(run.start, piece.end) <= target && (size(run.start, run.end) <= small || size(piece.start, piece.end) <= small)) {
      run = { start: run.start, end: piece.end };
      continue;
    }
    if (run) flush(run);
    run = piece;
  }
  if (run) flush(run);
  return spans;
}
