import type { Node } from 'web-tree-sitter';
import { collapseSignature } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { kinds, nameField, valueHead } from './common.js';

const TYPES: Readonly<Record<string, string>> = {
  class_declaration: 'class',
  interface_declaration: 'interface',
  enum_declaration: 'enum',
  record_declaration: 'record',
  annotation_type_declaration: 'annotation',
};

/** `private int a = 1, b;` — one field per declarator. */
function fields(node: Node, kind: string, source: string): Declaration[] {
  const declarators = node.childrenForFieldName('declarator').filter((d): d is Node => d !== null);
  return declarators.map((declarator) => {
    const decl: Declaration = { kind, name: nameField(source, declarator), body: null, headEnd: valueHead(declarator.childForFieldName('value')) };
    if (declarators.length === 1) return decl;
    const type = node.childForFieldName('type');
    const head = type ? source.slice(node.startIndex, type.endIndex) : '';
    return { ...decl, node: declarator, signature: collapseSignature(`${head} ${source.slice(declarator.startIndex, declarator.endIndex)}`) };
  });
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | readonly Declaration[] | null {
  const type = node.type;
  const typeKind = TYPES[type];
  if (typeKind) return { kind: typeKind, name: nameField(source, node), body: node.childForFieldName('body'), scope: 'class' };
  switch (type) {
    case 'method_declaration':
    case 'constructor_declaration':
    case 'compact_constructor_declaration':
      return { kind: 'method', name: nameField(source, node), body: node.childForFieldName('body') };
    case 'field_declaration':
      return scope === 'function' ? null : fields(node, 'field', source);
    case 'constant_declaration':
      return fields(node, 'constant', source);
    default:
      return null;
  }
}

/** Java: classes, interfaces, enums, records, annotations, methods and constructors (overloads each their own), fields. */
export const javaAdapter: LanguageAdapter = {
  language: 'java',
  grammar: 'tree-sitter-java.wasm',
  comments: kinds('line_comment', 'block_comment'),
  leading: kinds(),
  wrappers: kinds(),
  transparent: kinds('block', 'constructor_body', 'enum_body_declarations', 'switch_block'),
  conditionals: {
    if_statement: 'if',
    try_statement: 'try',
    try_with_resources_statement: 'try',
    catch_clause: 'catch',
    finally_clause: 'finally',
    for_statement: 'for',
    enhanced_for_statement: 'for',
    while_statement: 'while',
    do_statement: 'do',
    switch_expression: 'switch',
    switch_block_statement_group: 'case',
    switch_rule: 'case',
  },
  elseFields: { if_statement: 'alternative' },
  docComment: /^\/\*\*(?!\*)/,
  declare,
};
