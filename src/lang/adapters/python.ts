import type { Node } from 'web-tree-sitter';
import { docFromString, textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { kinds, nameField, valueHead } from './common.js';

/** The first line of a body's docstring: its first statement, when that is a bare string. */
function docstring(body: Node | null, source: string): string | null {
  const first = body?.firstNamedChild;
  if (first?.type !== 'expression_statement') return null;
  const literal = first.firstNamedChild;
  if (literal?.type !== 'string' && literal?.type !== 'concatenated_string') return null;
  return docFromString(textOf(source, literal));
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | null {
  switch (node.type) {
    case 'function_definition': {
      const body = node.childForFieldName('body');
      return { kind: 'function', name: nameField(source, node), body, doc: docstring(body, source) };
    }
    case 'class_definition': {
      // The head up to the body keeps bases and class keywords: `class A(B, metaclass=M)`.
      const body = node.childForFieldName('body');
      return { kind: 'class', name: nameField(source, node), body, scope: 'class', doc: docstring(body, source) };
    }
    case 'expression_statement': {
      // Module constants and class attributes are declarations; assignments in functions are not.
      if (scope === 'function') return null;
      const assignment = node.firstNamedChild;
      if (assignment?.type !== 'assignment') return null;
      const left = assignment.childForFieldName('left');
      if (left?.type !== 'identifier') return null;
      return {
        kind: scope === 'class' ? 'field' : 'variable',
        name: textOf(source, left),
        body: null,
        headEnd: valueHead(assignment.childForFieldName('right')),
        doc: null,
      };
    }
    default:
      return null;
  }
}

/** Python: functions, classes (with bases and keywords), methods, module variables and class attributes. */
export const pythonAdapter: LanguageAdapter = {
  language: 'python',
  grammar: 'tree-sitter-python.wasm',
  comments: kinds('comment'),
  leading: kinds('decorator'),
  wrappers: kinds('decorated_definition'),
  transparent: kinds('block'),
  conditionals: {
    if_statement: 'if',
    elif_clause: 'elif',
    else_clause: 'else',
    try_statement: 'try',
    except_clause: 'except',
    except_group_clause: 'except',
    finally_clause: 'finally',
    with_statement: 'with',
    for_statement: 'for',
    while_statement: 'while',
    match_statement: 'match',
    case_clause: 'case',
  },
  docComment: null,
  declare,
};
