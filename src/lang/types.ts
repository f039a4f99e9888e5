import type { Node } from 'web-tree-sitter';
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

/** What an adapter recognised in one syntax node: a declaration and where its members live. */
export interface Declaration {
  /** Symbol kind; `function` becomes `method` when declared directly in a class scope. */
  readonly kind: string;
  readonly name: string;
  /** The node whose lines the symbol spans; defaults to the node the adapter was shown. */
  readonly node?: Node;
  /** Container of nested declarations, walked with `scope`; null when there is nothing to walk. */
  readonly body: Node | null;
  /** Kind of scope `body` opens (default `function`). */
  readonly scope?: ScopeKind;
  /** Where the signature stops (a UTF-16 offset); defaults to the start of `body`, else the node's end. */
  readonly headEnd?: number;
  /**
   * Owner named by the declaration itself rather than by nesting (a Go receiver, C++ `Router::add`):
   * it becomes the parent symbol and the scope is `class`.
   */
  readonly owner?: string;
  /** First line of documentation found inside the declaration (a Python docstring), overriding comments. */
  readonly doc?: string | null;
  /** The signature, when the source text from the head to `headEnd` would not read right (one of several declarators). */
  readonly signature?: string;
}

/**
 * A tree-sitter language adapter (seed 002 §10.1): one per language, registered in a table, so
 * adding a language never changes the core. It owns the grammar file and the node kinds; the
 * shared walker (lang/extract.ts) turns its answers into outline symbols and chunk boundaries.
 */
export interface LanguageAdapter {
  /** The repodex language id it serves (see scan/language.ts). */
  readonly language: Language;
  /** The grammar's .wasm file name inside the grammar package. */
  readonly grammar: string;
  /** Node types of comments (never declarations; doc candidates; they stay with the next declaration). */
  readonly comments: ReadonlySet<string>;
  /** Sibling node types that belong to the next declaration: decorators, attributes. */
  readonly leading: ReadonlySet<string>;
  /** Node types wrapping one declaration, whose start they move up (Python `decorated_definition`, TS `export_statement`). */
  readonly wrappers: ReadonlySet<string>;
  /** Node types whose named children are walked in the same scope (blocks, `extern "C"`, …). */
  readonly transparent: ReadonlySet<string>;
  /** Control-flow node types (statements and their clauses) → decl_context label. */
  readonly conditionals: Readonly<Record<string, string>>;
  /** Control-flow node types whose else branch is only a field (Go/Java/C `if`): type → field name; labelled `else`. */
  readonly elseFields?: Readonly<Record<string, string>>;
  /** Which comments are documentation (tested on the comment text), or null when docs come from `Declaration.doc`. */
  readonly docComment: RegExp | null;
  /** An adapter to try when this one cannot parse a file (`.h` files are often C++, not C). */
  readonly retry?: LanguageAdapter;
  /**
   * Syntax the grammar does not know yet, blanked for a second parse of a file the first parse
   * rejected: the source with those characters replaced by spaces (same length, same lines, so
   * every position stays true), or undefined when there is nothing to blank. Only syntax that
   * declares nothing may be blanked (TypeScript's `export type * from`, variance annotations).
   */
  mask?(source: string): string | undefined;
  /** Classifies a node as zero or more declarations; `scope` is the kind of scope the node sits in. */
  declare(node: Node, scope: ScopeKind, source: string): Declaration | readonly Declaration[] | null;
  /** A decl_context label that a leading sibling adds (Rust `#[cfg(…)]` → `cfg`), or null. */
  leadingContext?(node: Node, source: string): string | null;
  /**
   * The label of a control-flow node when the type alone does not decide it (`#ifdef` vs `#ifndef`):
   * a string, null to walk the node as transparent (a C include guard), or undefined for the table's label.
   */
  conditionalLabel?(node: Node, source: string): string | null | undefined;
}
