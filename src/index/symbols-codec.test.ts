import { describe, expect, it } from 'vitest';
import { WIDGET_OUTLINE, outlineSymbol } from '../../test/helpers.js';
import { Artifact, encodeArtifact } from './format.js';
import { SymbolTable, encodeSymbols } from './symbols-codec.js';

describe('symbols.bin round trip', () => {
  it('gives back every field, nulls included, per file', () => {
    const perFile = [WIDGET_OUTLINE, [], [outlineSymbol('function', 'f', 3, 9, null, { doc: 'Does f.', is_conditional: true, decl_context: 'if>else', scope_kind: 'function' })]];
    const table = new SymbolTable(Artifact.fromBuffer('symbols', 'SYMB', encodeArtifact('SYMB', encodeSymbols(perFile, [0, 1, 2]))));
    expect(table.forFile(0)).toEqual(WIDGET_OUTLINE);
    expect(table.forFile(1)).toEqual([]);
    expect(table.forFile(2)).toEqual(perFile[2]);
    expect([...table.fallbackCodes]).toEqual([0, 1, 2]);
  });
});
