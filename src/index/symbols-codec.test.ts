import { describe, expect, it } from 'vitest';
import { WIDGET_OUTLINE, outlineSymbol } from '../../test/helpers.js';
import { Artifact, encodeArtifact } from './format.js';
import { SymbolColumns, SymbolTable, encodeSymbols } from './symbols-codec.js';

describe('symbols.bin round trip', () => {
  it('gives back every field, nulls included, per file', () => {
    const perFile = [WIDGET_OUTLINE, [], [outlineSymbol('function', 'f', 3, 9, null, { doc: 'Does f.', is_conditional: true, decl_context: 'if>else', scope_kind: 'function' })]];
    const table = new SymbolTable(Artifact.fromBuffer('symbols', 'SYMB', encodeArtifact('SYMB', encodeSymbols(perFile, [0, 1, 2]))));
    expect(table.forFile(0)).toEqual(WIDGET_OUTLINE);
    expect(table.forFile(1)).toEqual([]);
    expect(table.forFile(2)).toEqual(perFile[2]);
    expect([...table.fallbackCodes]).toEqual([0, 1, 2]);
  });

  it('a merge copies a file\'s stored signatures and docs as they are; a block that does not fit its file is damage', () => {
    const perFile = [WIDGET_OUTLINE, [outlineSymbol('function', 'f', 3, 9, null, { doc: 'Does f.' })]];
    const table = new SymbolTable(Artifact.fromBuffer('symbols', 'SYMB', encodeArtifact('SYMB', encodeSymbols(perFile, [0, 0]))));
    expect(table.check(2)).toEqual([]);
    const copy = new SymbolColumns();
    copy.addStored(table.storedOutline(0), 0);
    copy.addStored(table.storedOutline(1), 0);
    const copied = new SymbolTable(Artifact.fromBuffer('symbols', 'SYMB', encodeArtifact('SYMB', copy.sections())));
    expect([copied.forFile(0), copied.forFile(1)]).toEqual(perFile);
    // File 1's block (one symbol) stored for file 0 (several): found by verify, and refused when read.
    const wrong = new SymbolColumns();
    wrong.addStored({ ...table.storedOutline(0), text: table.storedOutline(1).text }, 0);
    const damaged = new SymbolTable(Artifact.fromBuffer('symbols', 'SYMB', encodeArtifact('SYMB', wrong.sections())));
    expect(damaged.check(1)).toEqual(['outline text of file 0 is damaged']);
    expect(() => damaged.forFile(0)).toThrow(/stored outline of file 0 is damaged/);
  });
});
