import type { Node } from 'web-tree-sitter';
import { collapseSignature, textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { childrenOfType, kinds, nameField, valueHead } from './common.js';

const TYPE_SPECS = kinds('type_spec', 'type_alias');
const CONST_SPECS = kinds('const_spec');
const VAR_SPECS = kinds('var_spec');

/** The receiver's type name without pointer or type arguments: `(r *Router[T])` → `Router`. */
function receiverType(method: Node, source: string): string | undefined {
  const parameter = method.childForFieldName('receiver')?.firstNamedChild;
  const type = parameter?.childForFieldName('type');
  if (!type) return undefined;
  return textOf(source, type).replace(/^[*\s]+/, '').replace(/\[.*$/s, '').trim() || undefined;
}

/** `type ( A int; B struct{…} )` — one symbol per spec, struct and interface kinds told apart. */
function types(node: Node, source: string): Declaration[] {
  const specs = childrenOfType(node, TYPE_SPECS);
  return specs.map((spec) => {
    const type = spec.childForFieldName('type');
    const kind = type?.type === 'struct_type' ? 'struct' : type?.type === 'interface_type' ? 'interface' : 'type';
    const brace = type && kind !== 'type' ? source.indexOf('{', type.startIndex) : -1;
    const headEnd = brace !== -1 && brace < spec.endIndex ? brace : valueHead(type) ?? spec.endIndex;
    const decl: Declaration = { kind, name: nameField(source, spec), body: null, headEnd };
    return specs.length === 1 ? decl : { ...decl, node: spec, signature: collapseSignature(`type ${source.slice(spec.startIndex, headEnd)}`) };
  });
}

/** `const ( A = 1; B, C = 2, 3 )` — one symbol per declared name. */
function values(node: Node, source: string, keyword: 'const' | 'var'): Declaration[] {
  const specs = childrenOfType(node, keyword === 'const' ? CONST_SPECS : VAR_SPECS);
  const out: Declaration[] = [];
  for (const spec of specs) {
    const names = spec.childrenForFieldName('name').filter((name): name is Node => name !== null);
    const headEnd = valueHead(spec.childForFieldName('value')) ?? spec.endIndex;
    const alone = specs.length === 1 && names.length === 1;
    for (const name of names) {
      const decl: Declaration = { kind: keyword === 'const' ? 'constant' : 'variable', name: textOf(source, name), body: null, headEnd };
      out.push(alone ? decl : { ...decl, node: spec, signature: collapseSignature(`${keyword} ${source.slice(spec.startIndex, headEnd)}`) });
    }
  }
  return out;
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | readonly Declaration[] | null {
  switch (node.type) {
    case 'function_declaration':
      return { kind: 'function', name: nameField(source, node), body: node.childForFieldName('body') };
    case 'method_declaration': {
      // Go methods sit at top level; their receiver type is the owner an agent thinks in.
      const owner = receiverType(node, source);
      const decl: Declaration = { kind: 'method', name: nameField(source, node), body: node.childForFieldName('body') };
      return owner ? { ...decl, owner } : decl;
    }
    case 'type_declaration':
      return types(node, source);
    case 'const_declaration':
      return scope === 'function' ? null : values(node, source, 'const');
    case 'var_declaration':
      return scope === 'function' ? null : values(node, source, 'var');
    default:
      return null;
  }
}

/** Go: functions, methods (owned by their receiver type), types, structs, interfaces, package constants and variables. */
export const goAdapter: LanguageAdapter = {
  language: 'go',
  grammar: 'tree-sitter-go.wasm',
  comments: kinds('comment'),
  leading: kinds(),
  wrappers: kinds(),
  transparent: kinds('block'),
  conditionals: {
    if_statement: 'if',
    for_statement: 'for',
    expression_switch_statement: 'switch',
    type_switch_statement: 'switch',
    select_statement: 'select',
    expression_case: 'case',
    type_case: 'case',
    communication_case: 'case',
    default_case: 'default',
  },
  elseFields: { if_statement: 'alternative' },
  // Go documents a declaration with the ordinary comments right above it.
  docComment: /^/,
  declare,
};
