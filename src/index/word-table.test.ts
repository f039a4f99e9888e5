import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenize } from '../text/tokenizer.js';
import { WordTable } from './word-table.js';

function scanTerms(texts: readonly string[]): string[][] {
  const terms: string[] = [];
  const ids = new Map<string, number>();
  const table = new WordTable((term) => {
    let id = ids.get(term);
    if (id === undefined) {
      id = terms.length;
      ids.set(term, id);
      terms.push(term);
    }
    return id;
  });
  return texts.map((text) => {
    const out: string[] = [];
    table.scan(text, (id) => out.push(terms[id]!));
    return out;
  });
}

describe('WordTable (the indexing fast path)', () => {
  it('emits exactly the terms of the shared tokenizer, in order', () => {
    const text = 'export function parseURL(input: string) { return http_server-v2 + base64Encode(x) } // Ünïcödé wörds';
    expect(scanTerms([text])[0]).toEqual(tokenize(text));
  });

  it('agrees with tokenize() on arbitrary text, across many texts sharing one table', () => {
    const alphabet = fc.constantFrom(...'aZ_-09 .\n\tHTTPServer getUserName snake_case kebab-case Ωμέγα 名前 😀'.split(''));
    fc.assert(
      fc.property(fc.array(fc.array(alphabet, { maxLength: 80 }).map((chars) => chars.join('')), { minLength: 1, maxLength: 8 }), (texts) => {
        expect(scanTerms(texts)).toEqual(texts.map((text) => tokenize(text)));
      }),
      { numRuns: 300 },
    );
  });

  it('survives table growth (many distinct words)', () => {
    const text = Array.from({ length: 50_000 }, (_, i) => `identifier${i}Name`).join(' ');
    expect(scanTerms([text])[0]).toEqual(tokenize(text));
  });
});
