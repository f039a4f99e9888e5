import type { Node } from 'web-tree-sitter';
import { collapseSignature, textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { childrenOfType, kinds, nameField, valueHead } from './common.js';

const TYPES: Readonly<Record<string, string>> = {
  class_declaration: 'class',
  interface_declaration: 'interface',
  trait_declaration: 'trait',
  enum_declaration: 'enum',
};
const PROPERTY_ELEMENTS = kinds('property_element');
const CONST_ELEMENTS = kinds('const_element');

/** One symbol per element of `private $a = 1, $b;` or `const A = 1, B = 2;`. */
function elements(node: Node, kind: string, types: ReadonlySet<string>, source: string): Declaration[] {
  const list = childrenOfType(node, types);
  return list.map((element) => {
    const nameNode = element.firstNamedChild;
    const decl: Declaration = { kind, name: nameNode ? textOf(source, nameNode) : textOf(source, element), body: null, headEnd: valueHead(element.namedChildren[1] ?? null) };
    if (list.length === 1) return decl;
    const head = source.slice(node.startIndex, list[0]!.startIndex);
    return { ...decl, node: element, signature: collapseSignature(`${head}${textOf(source, element)}`) };
  });
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | readonly Declaration[] | null {
  const type = node.type;
  const typeKind = TYPES[type];
  if (typeKind) return { kind: typeKind, name: nameField(source, node), body: node.childForFieldName('body'), scope: 'class' };
  switch (type) {
    case 'namespace_definition':
      return { kind: 'namespace', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'module' };
    case 'function_definition':
      return { kind: 'function', name: nameField(source, node), body: node.childForFieldName('body') };
    case 'method_declaration':
      return { kind: 'method', name: nameField(source, node), body: node.childForFieldName('body') };
    case 'property_declaration':
      return elements(node, 'field', PROPERTY_ELEMENTS, source);
    case 'const_declaration':
      return scope === 'function' ? null : elements(node, 'constant', CONST_ELEMENTS, source);
    default:
      return null;
  }
}

/** PHP: namespaces, classes, interfaces, traits, enums, functions (also inside `if (!function_exists(…))`), methods, properties, constants. */
export const phpAdapter: LanguageAdapter = {
  language: 'php',
  grammar: 'tree-sitter-php.wasm',
  comments: kinds('comment'),
  leading: kinds('attribute_list'),
  wrappers: kinds(),
  transparent: kinds('compound_statement', 'switch_block', 'colon_block', 'declaration_list', 'enum_declaration_list'),
  conditionals: {
    if_statement: 'if',
    else_if_clause: 'elseif',
    else_clause: 'else',
    try_statement: 'try',
    catch_clause: 'catch',
    finally_clause: 'finally',
    for_statement: 'for',
    foreach_statement: 'foreach',
    while_statement: 'while',
    do_statement: 'do',
    switch_statement: 'switch',
    case_statement: 'case',
    default_statement: 'default',
  },
  docComment: /^\/\*\*(?!\*)/,
  declare,
};
