import type { Node } from 'web-tree-sitter';
import { collapseSignature, textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { ANONYMOUS, childrenOfType, kinds, nameField, valueHead } from './common.js';

const TYPES: Readonly<Record<string, string>> = {
  class_declaration: 'class',
  struct_declaration: 'struct',
  interface_declaration: 'interface',
  record_declaration: 'record',
  record_struct_declaration: 'record',
};
const DECLARATORS = kinds('variable_declarator');

/** `private int a = 1, b;` — one symbol per declarator of the inner variable_declaration. */
function fields(node: Node, kind: string, source: string): Declaration[] {
  const declaration = node.namedChildren.find((child) => child?.type === 'variable_declaration');
  if (!declaration) return [];
  const declarators = childrenOfType(declaration, DECLARATORS);
  return declarators.map((declarator) => {
    const nameNode = declarator.childForFieldName('name') ?? declarator.firstNamedChild;
    const name = nameNode ? textOf(source, nameNode) : ANONYMOUS;
    const value = declarator.namedChildren[1] ?? null;
    const decl: Declaration = { kind, name, body: null, headEnd: valueHead(value) };
    if (declarators.length === 1) return decl;
    // One of several declarators: the shared head (modifiers and type) plus this declarator.
    const type = declaration.childForFieldName('type');
    const head = source.slice(node.startIndex, type ? type.endIndex : declaration.startIndex);
    return { ...decl, node: declarator, signature: collapseSignature(`${head} ${textOf(source, declarator)}`) };
  });
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | readonly Declaration[] | null {
  const type = node.type;
  const typeKind = TYPES[type];
  if (typeKind) return { kind: typeKind, name: nameField(source, node), body: node.childForFieldName('body'), scope: 'class' };
  switch (type) {
    case 'namespace_declaration':
    case 'file_scoped_namespace_declaration':
      return { kind: 'namespace', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'module' };
    case 'enum_declaration':
      return { kind: 'enum', name: nameField(source, node), body: null, headEnd: node.childForFieldName('body')?.startIndex };
    case 'method_declaration':
    case 'constructor_declaration':
    case 'destructor_declaration':
    case 'operator_declaration': {
      const body = node.childForFieldName('body');
      const name = type === 'operator_declaration' ? `operator ${nameField(source, node, 'operator')}` : nameField(source, node);
      return { kind: 'method', name, body: body?.type === 'block' ? body : null, headEnd: body?.startIndex };
    }
    case 'local_function_statement': {
      const body = node.childForFieldName('body');
      return { kind: 'function', name: nameField(source, node), body: body?.type === 'block' ? body : null, headEnd: body?.startIndex };
    }
    case 'property_declaration':
      return { kind: 'property', name: nameField(source, node), body: null, headEnd: node.childForFieldName('accessors')?.startIndex ?? node.childForFieldName('value')?.startIndex };
    case 'indexer_declaration':
      return { kind: 'property', name: 'this[]', body: null, headEnd: node.childForFieldName('accessors')?.startIndex };
    case 'event_declaration':
      return { kind: 'event', name: nameField(source, node), body: null, headEnd: node.childForFieldName('accessors')?.startIndex };
    case 'delegate_declaration':
      return { kind: 'delegate', name: nameField(source, node), body: null };
    case 'field_declaration':
      return scope === 'function' ? null : fields(node, 'field', source);
    case 'event_field_declaration':
      return fields(node, 'event', source);
    default:
      return null;
  }
}

/** C#: namespaces, classes, structs, interfaces, records, enums, methods, properties, fields, events, delegates, local functions. */
export const csharpAdapter: LanguageAdapter = {
  language: 'csharp',
  grammar: 'tree-sitter-c_sharp.wasm',
  comments: kinds('comment'),
  leading: kinds('attribute_list'),
  wrappers: kinds(),
  transparent: kinds('block', 'switch_body', 'global_statement', 'declaration_list'),
  conditionals: {
    if_statement: 'if',
    try_statement: 'try',
    catch_clause: 'catch',
    finally_clause: 'finally',
    for_statement: 'for',
    for_each_statement: 'foreach',
    foreach_statement: 'foreach',
    while_statement: 'while',
    do_statement: 'do',
    switch_statement: 'switch',
    switch_section: 'case',
  },
  elseFields: { if_statement: 'alternative' },
  docComment: /^(\/\/\/|\/\*\*)/,
  declare,
};
