import { describe, expect, it } from 'vitest';
import type { OutlineSymbol } from '../lang/types.js';
import { chunkDeclaredNames, chunkSymbolPath } from './symbol-paths.js';

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

describe('chunkSymbolPath', () => {
  it('names the innermost declaration enclosing the chunk, with its parents', () => {
    expect(chunkSymbolPath(widget, 10, 80)).toBe('class Widget › layout');
    expect(chunkSymbolPath(widget, 20, 40)).toBe('class Widget › layout');
    expect(chunkSymbolPath(widget, 85, 104)).toBe('class Widget');
    expect(chunkSymbolPath(widget, 205, 225)).toBe('function helper');
    expect(chunkSymbolPath(widget, 300, 310)).toBeNull();
  });

  it('regression: a chunk that starts with the doc comment of a method still names the method', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `    statement${i + 1}();`);
    lines[103] = '';
    lines[104] = '  /** Paint. */';
    expect(chunkSymbolPath(widget, 104, 155, lines)).toBe('class Widget › paint');
    // Without the text the comment cannot be told from code: the class is all that encloses the chunk.
    expect(chunkSymbolPath(widget, 104, 155)).toBe('class Widget');
  });
});

describe('chunkDeclaredNames', () => {
  it('lists names declared in the chunk and the declarations around it', () => {
    expect(chunkDeclaredNames(widget, 100, 160).sort()).toEqual(['Widget', 'paint']);
    expect(chunkDeclaredNames(widget, 205, 225)).toEqual(['helper']);
  });
});
