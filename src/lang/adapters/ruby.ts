import type { Node } from 'web-tree-sitter';
import { textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { kinds, nameField, valueHead } from './common.js';

/** Where a Ruby head ends: after the parameters, else the name (Ruby bodies have no opening token). */
function headEnd(node: Node, ...fields: string[]): number | undefined {
  for (const field of fields) {
    const child = node.childForFieldName(field);
    if (child) return child.endIndex;
  }
  return undefined;
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | null {
  switch (node.type) {
    case 'class':
      return { kind: 'class', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'class', headEnd: headEnd(node, 'superclass', 'name') };
    case 'module':
      // Module bodies hold methods and mixin code, so they are class-like scopes.
      return { kind: 'module', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'class', headEnd: headEnd(node, 'name') };
    case 'method':
    case 'singleton_method': {
      const body = node.childForFieldName('body');
      return { kind: 'function', name: nameField(source, node), body: body?.type === 'body_statement' ? body : null, headEnd: headEnd(node, 'parameters', 'name') };
    }
    case 'assignment': {
      if (scope === 'function') return null;
      const left = node.childForFieldName('left');
      if (left?.type !== 'constant') return null;
      return { kind: 'constant', name: textOf(source, left), body: null, headEnd: valueHead(node.childForFieldName('right')) };
    }
    default:
      return null;
  }
}

/** Ruby: modules, classes, methods (`def self.x` too), constants; `class << self` bodies stay in the class scope. */
export const rubyAdapter: LanguageAdapter = {
  language: 'ruby',
  grammar: 'tree-sitter-ruby.wasm',
  comments: kinds('comment'),
  leading: kinds(),
  wrappers: kinds(),
  transparent: kinds('body_statement', 'singleton_class', 'then', 'do', 'begin_block', 'end_block'),
  conditionals: {
    if: 'if',
    unless: 'unless',
    if_modifier: 'if',
    unless_modifier: 'unless',
    elsif: 'elsif',
    else: 'else',
    case: 'case',
    case_match: 'case',
    when: 'when',
    in_clause: 'in',
    while: 'while',
    until: 'until',
    while_modifier: 'while',
    until_modifier: 'until',
    for: 'for',
    begin: 'begin',
    rescue: 'rescue',
    ensure: 'ensure',
  },
  docComment: /^#/,
  declare,
};
