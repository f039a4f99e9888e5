import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isRepodexError } from '../../src/core/errors.js';
import { hasAdapter, isLanguageLoaded, loadLanguages, outline } from '../../src/lang/index.js';
import { grammarPath } from '../../src/lang/loader.js';
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
