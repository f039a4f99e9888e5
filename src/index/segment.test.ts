import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OutlineSymbol } from '../lang/types.js';
import { tokenize } from '../text/tokenizer.js';
import { NAME_FIELD, PATH_FIELD } from './fields.js';
import { artifactInMemory } from './format.js';
import { NO_CONTENT_HASH, type NewFile } from './model.js';
import { decodePostings } from './postings-builder.js';
import { SEGMENT_KIND, Segment, SegmentBuilder } from './segment.js';

fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20240611) });

const WORDS = ['alpha', 'Beta', 'gammaRay', 'delta_value', 'HTTPServer', 'x', 'the', 'v2', 'epsilon-zeta', 'alpha', 'Ω'];
const chunkText = fc.array(fc.constantFrom(...WORDS), { maxLength: 30 }).map((words) => words.join(' '));

function symbol(name: string, start: number, end: number): OutlineSymbol {
  return { kind: 'function', name, signature: `function ${name}()`, start_line: start, end_line: end, doc: null, parent_symbol: null, scope_kind: 'module', is_conditional: false, decl_context: null };
}

/** A file of `texts.length` chunks, one line each. */
function file(path: string, texts: readonly string[], firstId: number): NewFile {
  return {
    record: { path, size: 100, mtimeMs: 1_700_000_000_000.5, ctimeMs: 1_700_000_000_001.25, ino: 4242, state: 'indexed', language: 'typescript', contentHash: 'ab'.repeat(32) },
    chunks: texts.map((text, i) => ({
      id: firstId + i,
      startLine: i + 1,
      endLine: i + 1,
      hash: new Uint8Array(32).fill(i),
      snippet: text.slice(0, 20),
      symbol: i % 2 === 0 ? `function f${i}` : null,
      text,
      fields: { path: ['src'], names: [`f${i}`] },
    })),
    symbols: texts.map((_, i) => symbol(`f${i}`, i + 1, i + 1)),
    fallback: null,
  };
}

function build(files: readonly NewFile[]): Segment {
  const builder = new SegmentBuilder();
  for (const f of files) builder.addFile(f);
  return Segment.fromBuffer('test', artifactInMemory(SEGMENT_KIND, (writer) => builder.write(writer)));
}

describe('segments', () => {
  it('round-trip files, chunks, stable ids, outlines and skipped files', () => {
    const skipped: NewFile = {
      record: { path: 'b/big.bin.ts', size: 9, mtimeMs: 2, ctimeMs: 3, ino: 7, state: 'too-large', language: 'typescript', contentHash: NO_CONTENT_HASH },
      chunks: [],
      symbols: [],
      fallback: 'no-adapter',
    };
    const segment = build([file('a.ts', ['alpha beta', 'gamma'], 4_000_000_000), skipped]);
    expect(segment.files.count).toBe(2);
    expect(segment.files.record(0)).toEqual({ path: 'a.ts', size: 100, mtimeMs: 1_700_000_000_000.5, ctimeMs: 1_700_000_000_001.25, ino: 4242, state: 'indexed', language: 'typescript', contentHash: 'ab'.repeat(32), chunkCount: 2 });
    expect(segment.files.record(1)).toMatchObject({ path: 'b/big.bin.ts', state: 'too-large', chunkCount: 0, contentHash: NO_CONTENT_HASH });
    expect([...segment.chunks.ids]).toEqual([4_000_000_000, 4_000_000_001]);
    expect(segment.chunks.stored(1)).toMatchObject({ startLine: 2, endLine: 2, tokens: 1, snippet: 'gamma', symbol: '' });
    expect(segment.symbols.forFile(0).map((s) => s.name)).toEqual(['f0', 'f1']);
    expect(segment.fallback(0)).toBeNull();
    expect(segment.fallback(1)).toBe('no-adapter');
    expect(segment.verify()).toEqual([]);
  });

  it('refuses files out of path order', () => {
    const builder = new SegmentBuilder();
    builder.addFile(file('b.ts', ['x'], 1));
    expect(() => builder.addFile(file('a.ts', ['y'], 2))).toThrow(/path order/);
  });

  it('property: postings equal a naive inverted index over the chunk texts, with path and name fields', () => {
    fc.assert(
      fc.property(fc.array(chunkText, { minLength: 1, maxLength: 25 }), (texts) => {
        const segment = build([file('src/f.ts', texts, 10)]);
        const naive = new Map<string, Map<number, number>>();
        texts.forEach((text, chunk) => {
          const terms = tokenize(text);
          expect(segment.chunks.tokens[chunk]).toBe(terms.length);
          for (const term of terms) {
            const byChunk = naive.get(term) ?? new Map<number, number>();
            byChunk.set(chunk, (byChunk.get(chunk) ?? 0) + 1);
            naive.set(term, byChunk);
          }
          for (const field of [`${PATH_FIELD}src`, `${NAME_FIELD}f${chunk}`]) {
            const byChunk = naive.get(field) ?? new Map<number, number>();
            byChunk.set(chunk, 1);
            naive.set(field, byChunk);
          }
        });
        const { terms } = segment;
        expect(terms.terms.count).toBe(naive.size);
        for (const [term, byChunk] of naive) {
          const rank = terms.terms.find(term);
          expect(rank).toBeGreaterThanOrEqual(0);
          const seen: [number, number][] = [];
          expect(decodePostings(terms.postings, terms.offsets, terms.df, rank, (chunk, tf) => seen.push([chunk, tf]))).toBe(true);
          expect(seen).toEqual([...byChunk.entries()].sort((a, b) => a[0] - b[0]));
        }
        expect(terms.terms.find('the')).toBe(-1); // a stopword is never indexed
        expect(segment.verify()).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
