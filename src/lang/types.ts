import type { Language } from '../scan/language.js';

/** Where a declaration lives (seed 002 §10.3). */
export type ScopeKind = 'module' | 'class' | 'function';

/**
 * One declaration of a file (outline v2, seed 002 §10.3 / SPEC §4). Lines are 1-based and
 * inclusive, on LF-normalized text. Everything is a syntactic fact: nothing is executed and no
 * branch condition is evaluated.
 */
export interface OutlineSymbol {
  /** function, method, class, interface, type, enum, namespace, module, variable, constant, struct, trait, impl, … */
  readonly kind: string;
  readonly name: string;
  /** The declaration head as written (best effort), whitespace collapsed, without the body. */
  readonly signature: string;
  readonly start_line: number;
  readonly end_line: number;
  /** First line of the doc comment / docstring, or null. */
  readonly doc: string | null;
  /** Fully-qualified name of the enclosing declaration (`Outer.Inner`), or null at top level. */
  readonly parent_symbol: string | null;
  /** Kind of the scope the declaration is in. */
  readonly scope_kind: ScopeKind;
  /** True when the declaration sits under control flow (if/else, try/except, with, for, while, match/switch, …). */
  readonly is_conditional: boolean;
  /** Compact, deterministic label of that control flow, e.g. `if`, `try>except`, `if>else`; null when not conditional. */
  readonly decl_context: string | null;
}

/**
 * A tree-sitter language adapter (seed 002 §10.1): one per language, registered in a table, so
 * adding a language never changes the core. It owns the grammar file and the node kinds.
 */
export interface LanguageAdapter {
  /** The repodex language id it serves (see scan/language.ts). */
  readonly language: Language;
  /** The grammar's .wasm file name inside the grammar package. */
  readonly grammar: string;
}
