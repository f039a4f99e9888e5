import { describe, expect, it } from 'vitest';
import { WIDGET_OUTLINE } from '../../test/helpers.js';
import { chunkDeclaredNames, chunkSymbolPath } from './symbol-paths.js';

describe('chunkSymbolPath', () => {
  it('names the innermost declaration enclosing the chunk, with its parents', () => {
    expect(chunkSymbolPath(WIDGET_OUTLINE, 10, 80)).toBe('class Widget › layout');
    expect(chunkSymbolPath(WIDGET_OUTLINE, 20, 40)).toBe('class Widget › layout');
    expect(chunkSymbolPath(WIDGET_OUTLINE, 85, 104)).toBe('class Widget');
    expect(chunkSymbolPath(WIDGET_OUTLINE, 205, 225)).toBe('function helper');
    expect(chunkSymbolPath(WIDGET_OUTLINE, 300, 310)).toBeNull();
  });

  it('regression: a chunk that starts with the doc comment of a method still names the method', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `    statement${i + 1}();`);
    lines[103] = '';
    lines[104] = '  /** Paint. */';
    expect(chunkSymbolPath(WIDGET_OUTLINE, 104, 155, lines)).toBe('class Widget › paint');
    // Without the text the comment cannot be told from code: the class is all that encloses the chunk.
    expect(chunkSymbolPath(WIDGET_OUTLINE, 104, 155)).toBe('class Widget');
  });
});

describe('chunkDeclaredNames', () => {
  it('lists names declared in the chunk and the declarations around it', () => {
    expect(chunkDeclaredNames(WIDGET_OUTLINE, 100, 160).sort()).toEqual(['Widget', 'paint']);
    expect(chunkDeclaredNames(WIDGET_OUTLINE, 205, 225)).toEqual(['helper']);
  });
});
