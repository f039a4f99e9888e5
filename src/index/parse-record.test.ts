import { describe, expect, it } from 'vitest';
import { WIDGET_OUTLINE, outlineSymbol } from '../../test/helpers.js';
import { packParse, unpackParse } from './parse-record.js';
import { packOutlineText } from './symbols-codec.js';

describe('a parse result packed for the parse cache', () => {
  it('gives back every field, nulls and conditionals included, and carries the outline text a segment stores', () => {
    const result = {
      spans: [
        { startLine: 1, endLine: 12 },
        { startLine: 13, endLine: 40 },
      ],
      symbols: [...WIDGET_OUTLINE, outlineSymbol('function', 'f', 3, 9, 'Widget', { doc: 'Does f.', is_conditional: true, decl_context: 'if>else', scope_kind: 'function' })],
      fallback: null,
    };
    const packed = packParse(result);
    const back = unpackParse(packed.payload);
    expect({ spans: back.spans, symbols: back.symbols, fallback: back.fallback }).toEqual(result);
    // Field order as an outline answer prints it.
    expect(Object.keys(back.symbols[0]!)).toEqual(Object.keys(WIDGET_OUTLINE[0]!));
    expect(Buffer.from(back.packed.outlineText).equals(Buffer.from(packOutlineText(result.symbols)))).toBe(true);
    expect(Buffer.from(packed.outlineText).equals(Buffer.from(packOutlineText(result.symbols)))).toBe(true);
  });

  it('a text fallback with no outline packs to an empty outline text', () => {
    const packed = packParse({ spans: [{ startLine: 1, endLine: 3 }], symbols: [], fallback: 'parse-error' });
    expect(packed.outlineText.length).toBe(0);
    expect(unpackParse(packed.payload)).toMatchObject({ symbols: [], fallback: 'parse-error' });
  });

  it('a payload that does not decode throws (the file is then parsed again)', () => {
    const { payload } = packParse({ spans: [{ startLine: 1, endLine: 3 }], symbols: WIDGET_OUTLINE, fallback: null });
    expect(() => unpackParse(payload.subarray(0, 3))).toThrow();
    expect(() => unpackParse(payload.subarray(0, payload.length - 2))).toThrow();
    const bent = Uint8Array.from(payload);
    bent[6] = bent[6]! ^ 0xff;
    expect(() => unpackParse(bent)).toThrow();
  });
});
