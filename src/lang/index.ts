import type { Language } from '../scan/language.js';
import { extractSymbols } from './extract.js';
import { isGrammarLoaded, loadGrammar } from './loader.js';
import { withParsedFile } from './parse.js';
import { ADAPTERS, adapterFor, adapterLanguages } from './registry.js';
import type { OutlineSymbol } from './types.js';

export type { OutlineSymbol, ScopeKind } from './types.js';

/** Result of outlining one file: `ok` is false only when the file failed to parse. */
export interface Analysis {
  readonly ok: boolean;
  readonly symbols: OutlineSymbol[];
}

/**
 * Loads the tree-sitter runtime and the grammars of `languages` (default: every adapter
 * language), once per process; afterwards `outline`, `analyze` and the chunker are synchronous.
 * Languages without an adapter are ignored.
 */
export async function loadLanguages(languages: readonly Language[] = adapterLanguages()): Promise<void> {
  const grammars = new Set<string>();
  for (const language of languages) {
    const adapter = ADAPTERS[language];
    if (adapter) grammars.add(adapter.grammar);
    if (adapter?.retry) grammars.add(adapter.retry.grammar);
  }
  await Promise.all([...grammars].map((grammar) => loadGrammar(grammar)));
}

/** The grammar files parsing `language` may load (its own, and its retry's); none without an adapter. */
export function grammarsOf(language: Language): string[] {
  const adapter = ADAPTERS[language];
  if (!adapter) return [];
  return adapter.retry ? [adapter.grammar, adapter.retry.grammar] : [adapter.grammar];
}

/** True when the language has a tree-sitter adapter (outline and declaration chunks). */
export function hasAdapter(language: Language): boolean {
  return adapterFor(language) !== undefined;
}

/**
 * True when the language has an adapter whose grammars are all loaded — its own and its retry's
 * (C retries with the C++ grammar) — so parsing it is synchronous.
 */
export function isLanguageLoaded(language: Language): boolean {
  const adapter = adapterFor(language);
  return adapter !== undefined && grammarsOf(language).every((grammar) => isGrammarLoaded(grammar));
}

/**
 * Declarations of a file (outline v2). Unparseable input gives `{ ok: false, symbols: [] }`,
 * never partial content; a language without an adapter has nothing to outline (`ok: true`, no
 * symbols). `text` must be LF-normalized like everything else that reports line numbers.
 * Throws when the language's grammar was not loaded with `loadLanguages` first.
 */
export function analyze(language: Language, text: string): Analysis {
  const result = withParsedFile(language, text, ({ adapter, tree }) =>
    tree ? { ok: true, symbols: extractSymbols(adapter, tree.rootNode, text) } : { ok: false, symbols: [] },
  );
  return result ?? { ok: true, symbols: [] };
}

/** The outline of a file: its declarations, or [] when it is unparseable or has no adapter. */
export function outline(language: Language, text: string): OutlineSymbol[] {
  return analyze(language, text).symbols;
}
