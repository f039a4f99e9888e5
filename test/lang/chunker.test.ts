import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChunkParams, ChunkSpan } from '../../src/chunk/chunker.js';
import { textChunker } from '../../src/chunk/text-chunker.js';
import { MAX_PARSE_CHARS, chunkWithTreeSitter, treeSitterChunker } from '../../src/chunk/tree-sitter-chunker.js';
import { loadLanguages } from '../../src/lang/index.js';
import { type Language, languageOf } from '../../src/scan/language.js';
import { normalizeNewlines, splitLines } from '../../src/text/normalize.js';

const DEFAULTS: ChunkParams = { target_lines: 60, max_lines: 120, overlap_lines: 10 };
const SMALL: ChunkParams = { target_lines: 30, max_lines: 60, overlap_lines: 5 };
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'fixtures');

beforeAll(async () => {
  await loadLanguages();
});

/** The chunker contract: ascending, within max_lines, and every non-blank line in some chunk. */
function expectContract(lines: readonly string[], spans: readonly ChunkSpan[], params: ChunkParams): void {
  const covered = new Uint8Array(lines.length);
  let previous = 0;
  for (const span of spans) {
    expect(span.startLine).toBeGreaterThanOrEqual(1);
    expect(span.endLine).toBeLessThanOrEqual(lines.length);
    expect(span.endLine - span.startLine + 1).toBeLessThanOrEqual(params.max_lines);
    expect(span.startLine).toBeGreaterThan(previous);
    expect(lines[span.startLine - 1]!.trim()).not.toBe('');
    expect(lines[span.endLine - 1]!.trim()).not.toBe('');
    previous = span.startLine;
    for (let i = span.startLine - 1; i < span.endLine; i++) covered[i] = 1;
  }
  const missed = lines.map((line, i) => (line.trim() !== '' && !covered[i] ? i + 1 : 0)).filter((n) => n > 0);
  expect(missed, 'non-blank lines outside every chunk').toEqual([]);
}

/** A TypeScript function of exactly `size` lines (size ≥ 3). */
function tsFunction(name: string, size: number): string[] {
  const body = Array.from({ length: size - 2 }, (_, i) => `  total += ${i};`);
  return [`export function ${name}(total: number): number {`, ...body, '}'];
}

function ranges(spans: readonly ChunkSpan[]): [number, number][] {
  return spans.map((span) => [span.startLine, span.endLine]);
}

describe('tree-sitter chunker', () => {
  it('is a ChunkStrategy named tree-sitter, version 1, returning the same spans', () => {
    expect(treeSitterChunker.name).toBe('tree-sitter');
    expect(treeSitterChunker.version).toBe(1);
    const lines = [...tsFunction('a', 20), '', ...tsFunction('b', 20)];
    expect(treeSitterChunker.chunk(lines, 'typescript', SMALL)).toEqual(chunkWithTreeSitter(lines, 'typescript', SMALL).spans);
  });

  it('gives each mid-sized top-level declaration its own chunk, doc comment included', () => {
    const lines = ['/** First. */', ...tsFunction('first', 20), '', '// Second.', ...tsFunction('second', 20), '', ...tsFunction('third', 20)];
    const result = chunkWithTreeSitter(lines, 'typescript', SMALL);
    expect(result.fallback).toBeNull();
    expect(ranges(result.spans)).toEqual([
      [1, 21],
      [23, 43],
      [45, 64],
    ]);
  });

  it('merges small neighbours (imports, constants, tiny functions) up to the target', () => {
    const lines = [
      "import { a } from './a';",
      "import { b } from './b';",
      '',
      'export const LIMIT = 3;',
      '',
      'function tiny() { return a + b; }',
      '',
      ...tsFunction('big', 20),
      '',
      ...tsFunction('other', 20),
    ];
    const result = chunkWithTreeSitter(lines, 'typescript', SMALL);
    // The 6 small lines join the next function (27 lines together ≤ 30); two 20-line functions do not merge.
    expect(ranges(result.spans)).toEqual([
      [1, 27],
      [29, 48],
    ]);
  });

  it('splits a declaration longer than max_lines at its members, keeping decorators and comments with them', () => {
    const members: string[] = [];
    for (let m = 0; m < 6; m++) {
      members.push('', `  /** Method ${m}. */`, '  @traced()', `  method${m}(): number {`);
      for (let i = 0; i < 15; i++) members.push(`    const v${i} = ${i};`);
      members.push('    return 0;', '  }');
    }
    const lines = ['export class Service {', '  private count = 0;', ...members, '}'];
    const result = chunkWithTreeSitter(lines, 'typescript', SMALL);
    expectContract(lines, result.spans, SMALL);
    expect(result.spans.length).toBeGreaterThan(1);
    // Every chunk after the first starts at a member's doc comment.
    for (const span of result.spans.slice(1)) expect(lines[span.startLine - 1]!.trim()).toMatch(/^\/\*\* Method \d\. \*\/$/);
    // And no chunk ends between a doc comment and its method.
    for (const span of result.spans) expect(lines[span.endLine - 1]!.trim()).not.toMatch(/^(\/\*\*|@traced)/);
  });

  it('recurses into nested members when one member alone is too long', () => {
    const inner = Array.from({ length: 150 }, (_, i) => `        x${i} = ${i}`);
    const lines = ['class Outer:', '    class Inner:', '        """Many attributes."""', ...inner, '    def after(self):', '        return 1'];
    const result = chunkWithTreeSitter(lines, 'python', DEFAULTS);
    expectContract(lines, result.spans, DEFAULTS);
    expect(result.spans.length).toBeGreaterThanOrEqual(2);
  });

  it('keeps the hard cap inside structureless stretches (a giant template literal) with line windows', () => {
    const literal = Array.from({ length: 300 }, (_, i) => `row ${i}`);
    const lines = ['export const TEMPLATE = `', ...literal, '`;'];
    const result = chunkWithTreeSitter(lines, 'typescript', DEFAULTS);
    expect(result.fallback).toBeNull();
    expectContract(lines, result.spans, DEFAULTS);
    expect(result.spans.length).toBeGreaterThanOrEqual(3);
  });

  it('covers code between declarations (top-level statements, trailing comments)', () => {
    const lines = [...tsFunction('a', 20), 'console.log("between");', 'setup();', ...tsFunction('b', 20), '// trailing note'];
    expectContract(lines, chunkWithTreeSitter(lines, 'typescript', SMALL).spans, SMALL);
  });

  it('returns the outline from the same parse', () => {
    const lines = [...tsFunction('a', 5), 'class K { m() {} }'];
    expect(chunkWithTreeSitter(lines, 'typescript', SMALL).symbols.map((s) => s.name)).toEqual(['a', 'K', 'm']);
  });

  it('returns nothing for empty and blank files', () => {
    expect(chunkWithTreeSitter([], 'python', DEFAULTS)).toEqual({ spans: [], symbols: [], fallback: null });
    expect(chunkWithTreeSitter(['', '   ', ''], 'python', DEFAULTS).spans).toEqual([]);
  });
});

describe('fallbacks to the text chunker', () => {
  it('languages without an adapter', () => {
    const lines = ['# Title', '', 'Some prose.', '', '## Section', 'More.'];
    const result = chunkWithTreeSitter(lines, 'markdown', DEFAULTS);
    expect(result).toEqual({ spans: textChunker.chunk(lines, 'markdown', DEFAULTS), symbols: [], fallback: 'no-adapter' });
  });

  it('files that fail to parse', () => {
    const lines = ['export function ok() {}', 'export function broken( {', '  return 1;'];
    const result = chunkWithTreeSitter(lines, 'typescript', DEFAULTS);
    expect(result).toEqual({ spans: textChunker.chunk(lines, 'typescript', DEFAULTS), symbols: [], fallback: 'parse-error' });
  });

  it('files too large to parse', () => {
    const line = `export const data = ${JSON.stringify('x'.repeat(1000))};`;
    const lines = Array.from({ length: Math.ceil(MAX_PARSE_CHARS / line.length) + 1 }, () => line);
    const result = chunkWithTreeSitter(lines, 'typescript', DEFAULTS);
    expect(result.fallback).toBe('too-large');
    expect(result.spans).toEqual(textChunker.chunk(lines, 'typescript', DEFAULTS));
  });
});

describe('chunker contract on every golden fixture', () => {
  const dirs = readdirSync(FIXTURES).sort();
  for (const dir of dirs) {
    for (const file of readdirSync(join(FIXTURES, dir)).filter((name) => !name.endsWith('.json'))) {
      it(`${dir}/${file}`, () => {
        const lines = splitLines(normalizeNewlines(readFileSync(join(FIXTURES, dir, file), 'utf8')));
        const language: Language = languageOf(file);
        for (const params of [DEFAULTS, SMALL, { target_lines: 8, max_lines: 12, overlap_lines: 2 }]) {
          const first = chunkWithTreeSitter(lines, language, params);
          expect(first.fallback).toBeNull();
          expectContract(lines, first.spans, params);
          expect(chunkWithTreeSitter(lines, language, params)).toEqual(first);
        }
      });
    }
  }
});
