import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isRepodexError } from '../../src/core/errors.js';
import { hasAdapter, isLanguageLoaded, loadLanguages, outline } from '../../src/lang/index.js';
import { grammarPath, isGrammarLoaded, loadGrammar } from '../../src/lang/loader.js';
import { ADAPTERS } from '../../src/lang/registry.js';

// Vitest isolates test files, so this file starts with a fresh loader: nothing is loaded yet.

describe('grammar loading', () => {
  it('finds every adapter grammar in the installed package', () => {
    for (const adapter of Object.values(ADAPTERS)) expect(existsSync(grammarPath(adapter!.grammar)), adapter!.grammar).toBe(true);
  });

  it('refuses to parse before loadLanguages, with an internal error that says what to do', () => {
    expect(hasAdapter('go')).toBe(true);
    expect(isLanguageLoaded('go')).toBe(false);
    let caught: unknown;
    try {
      outline('go', 'package p\n');
    } catch (error) {
      caught = error;
    }
    expect(isRepodexError(caught) && caught.code === 'INTERNAL' && /loadLanguages/.test(caught.message)).toBe(true);
  });

  it('regression: a language counts as loaded only when its retry grammar is too (C retries with C++)', async () => {
    await loadGrammar('tree-sitter-c.wasm');
    // Parsing C could fall back to the C++ grammar mid-parse: with only the C grammar loaded, a
    // parse worker failed the whole sync ("tree-sitter-cpp.wasm is not loaded").
    expect(isLanguageLoaded('c')).toBe(isGrammarLoaded('tree-sitter-cpp.wasm'));
    await loadLanguages(['c']);
    expect(isLanguageLoaded('c')).toBe(true);
    // A C file that only the C++ grammar parses: the retry runs, nothing throws.
    expect(() => outline('c', 'class Widget { public: int size() const; };\n')).not.toThrow();
  });

  it('loads only what is asked, once, even when calls overlap', async () => {
    await Promise.all([loadLanguages(['python', 'markdown']), loadLanguages(['python']), loadLanguages(['c'])]);
    expect(isLanguageLoaded('python')).toBe(true);
    expect(isLanguageLoaded('c')).toBe(true);
    // C's retry grammar (C++) comes with it.
    expect(isLanguageLoaded('cpp')).toBe(true);
    expect(isLanguageLoaded('go')).toBe(false);
    expect(isLanguageLoaded('markdown')).toBe(false);
    expect(outline('python', 'def f(): ...\n').map((s) => s.name)).toEqual(['f']);
    expect(() => outline('go', 'package p\n')).toThrow(/loadLanguages/);
  });
});
