import type { Language } from '../scan/language.js';
import { cFamilyAdapter } from './adapters/c-family.js';
import { csharpAdapter } from './adapters/csharp.js';
import { ecmascriptAdapter } from './adapters/ecmascript.js';
import { goAdapter } from './adapters/go.js';
import { javaAdapter } from './adapters/java.js';
import { phpAdapter } from './adapters/php.js';
import { pythonAdapter } from './adapters/python.js';
import { rubyAdapter } from './adapters/ruby.js';
import { rustAdapter } from './adapters/rust.js';
import type { LanguageAdapter } from './types.js';

const cppAdapter = cFamilyAdapter('cpp', 'tree-sitter-cpp.wasm', true);

/**
 * The adapter table (seed 002 §10.1): a language gains outlines and declaration chunks by adding
 * one line here and one adapter file; nothing in the walker, the chunker or the engine changes.
 */
export const ADAPTERS: Readonly<Partial<Record<Language, LanguageAdapter>>> = {
  typescript: ecmascriptAdapter('typescript', 'tree-sitter-typescript.wasm'),
  tsx: ecmascriptAdapter('tsx', 'tree-sitter-tsx.wasm'),
  javascript: ecmascriptAdapter('javascript', 'tree-sitter-javascript.wasm'),
  python: pythonAdapter,
  go: goAdapter,
  rust: rustAdapter,
  java: javaAdapter,
  // `.h` maps to C, but many headers are C++: what the C grammar rejects is retried as C++.
  c: cFamilyAdapter('c', 'tree-sitter-c.wasm', false, cppAdapter),
  cpp: cppAdapter,
  csharp: csharpAdapter,
  ruby: rubyAdapter,
  php: phpAdapter,
};

/** The adapter for a language, or undefined when it has none. */
export function adapterFor(language: Language): LanguageAdapter | undefined {
  return ADAPTERS[language];
}

/** Every language with an adapter, in table order. */
export function adapterLanguages(): Language[] {
  return Object.keys(ADAPTERS) as Language[];
}
