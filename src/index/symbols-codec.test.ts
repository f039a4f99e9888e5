import { describe, expect, it } from 'vitest';
import type { OutlineSymbol } from '../lang/types.js';
import { Artifact, encodeArtifact } from './format.js';
import { SymbolTable, encodeSymbols } from './symbols-codec.js';

function symbol(kind: string, name: string, start: number, end: number, parent: string | null = null, extra: Partial<OutlineSymbol> = {}): OutlineSymbol {
  return {
    kind,
    name,
    signature: `${kind} ${name}`,
    start_line: start,
    end_line: end,
    doc: null,
    parent_symbol: parent,
    scope_kind: parent ? 'class' : 'module',
    is_conditional: false,
    decl_context: null,
    ...extra,
  };
}

const widget = [symbol('class', 'Widget', 1, 200), symbol('method', 'layout', 10, 80, 'Widget'), symbol('method', 'paint', 106, 155, 'Widget'), symbol('function', 'helper', 210, 220)];


describe('symbols.bin round trip', () => {
  it('gives back every field, nulls included, per file', () => {
    const perFile = [widget, [], [symbol('function', 'f', 3, 9, null, { doc: 'Does f.', is_conditional: true, decl_context: 'if>else', scope_kind: 'function' })]];
    const table = new SymbolTable(Artifact.fromBuffer('symbols', 'SYMB', encodeArtifact('SYMB', encodeSymbols(perFile, [0, 1, 2]))));
    expect(table.forFile(0)).toEqual(widget);
    expect(table.forFile(1)).toEqual([]);
    expect(table.forFile(2)).toEqual(perFile[2]);
    expect([...table.fallbackCodes]).toEqual([0, 1, 2]);
  });
});
