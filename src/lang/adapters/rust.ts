import type { Node } from 'web-tree-sitter';
import { textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { kinds, nameField, valueHead } from './common.js';

/** `impl<T> fmt::Display for Router<T>` is named after the type it implements for: `Router`. */
function implName(node: Node, source: string): string {
  const type = node.childForFieldName('type');
  if (!type) return 'impl';
  return textOf(source, type).replace(/<.*$/s, '').replace(/^.*::/, '').trim() || 'impl';
}

function item(kind: string, node: Node, source: string): Declaration {
  const body = node.childForFieldName('body');
  return { kind, name: nameField(source, node), body: null, headEnd: body?.startIndex ?? valueHead(node.childForFieldName('type')) };
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | null {
  switch (node.type) {
    case 'function_item':
      return { kind: 'function', name: nameField(source, node), body: node.childForFieldName('body') };
    case 'function_signature_item':
      return { kind: 'function', name: nameField(source, node), body: null };
    case 'struct_item':
      return item('struct', node, source);
    case 'union_item':
      return item('union', node, source);
    case 'enum_item':
      return item('enum', node, source);
    case 'type_item':
      return item('type', node, source);
    case 'trait_item':
      return { kind: 'trait', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'class' };
    case 'impl_item':
      return { kind: 'impl', name: implName(node, source), body: node.childForFieldName('body'), scope: 'class' };
    case 'mod_item':
      return { kind: 'module', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'module' };
    case 'macro_definition':
      return { kind: 'macro', name: nameField(source, node), body: null, headEnd: node.namedChildren[1]?.startIndex };
    case 'const_item':
    case 'static_item':
      if (scope === 'function') return null;
      return { kind: node.type === 'const_item' ? 'constant' : 'variable', name: nameField(source, node), body: null, headEnd: valueHead(node.childForFieldName('value')) };
    default:
      return null;
  }
}

/** Rust: items at every level (functions, structs, enums, traits, impls, modules, macros); `#[cfg]` marks them conditional. */
export const rustAdapter: LanguageAdapter = {
  language: 'rust',
  grammar: 'tree-sitter-rust.wasm',
  comments: kinds('line_comment', 'block_comment'),
  leading: kinds('attribute_item'),
  wrappers: kinds(),
  transparent: kinds('block', 'expression_statement', 'match_block', 'declaration_list', 'foreign_mod_item'),
  conditionals: {
    if_expression: 'if',
    else_clause: 'else',
    match_expression: 'match',
    match_arm: 'case',
    for_expression: 'for',
    while_expression: 'while',
    loop_expression: 'loop',
  },
  // `///` and `/**` document the next item; `//!` documents the enclosing module, not an item.
  docComment: /^(\/\/\/(?!\/)|\/\*\*(?!\*))/,
  declare,
  leadingContext(node: Node, source: string): string | null {
    // Conditional compilation is the Rust form of a declaration under control flow.
    return /^#\[\s*cfg\s*\(/.test(textOf(source, node)) ? 'cfg' : null;
  },
};
