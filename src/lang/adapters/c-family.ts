import type { Node } from 'web-tree-sitter';
import type { Language } from '../../scan/language.js';
import { collapseSignature, textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { ANONYMOUS, kinds, nameField, valueHead } from './common.js';

const NAMES = kinds('identifier', 'field_identifier', 'type_identifier', 'qualified_identifier', 'destructor_name', 'operator_name', 'template_function', 'primitive_type');
const RECORDS: Readonly<Record<string, string>> = {
  struct_specifier: 'struct',
  union_specifier: 'union',
  enum_specifier: 'enum',
  class_specifier: 'class',
};

/** The name node at the bottom of a declarator chain (`*name(args)` → `name`). */
function declaratorName(declarator: Node | null): Node | null {
  let current = declarator;
  while (current && !NAMES.has(current.type)) current = current.childForFieldName('declarator') ?? current.firstNamedChild;
  return current;
}

/** True when a declarator declares a function (`f(int)`, `*f(int)`), not a pointer to one (`(*f)(int)`). */
function declaresFunction(declarator: Node | null): boolean {
  let current = declarator;
  while (current && !NAMES.has(current.type)) {
    if (current.type === 'function_declarator') {
      const inner = current.childForFieldName('declarator');
      return inner !== null && NAMES.has(inner.type);
    }
    current = current.childForFieldName('declarator') ?? current.firstNamedChild;
  }
  return false;
}

/** Template arguments are not part of an owner's name: `Router<T>` → `Router`. */
function bareName(text: string): string {
  let previous: string;
  let current = text;
  do {
    previous = current;
    current = current.replace(/<[^<>]*>/g, '');
  } while (current !== previous);
  return current.trim();
}

/** Name and owner of a possibly qualified name: `ns::Router<T>::add` → owner `ns.Router`, name `add`. */
function qualifiedName(node: Node | null, source: string): { name: string; owner?: string } {
  if (!node) return { name: ANONYMOUS };
  const owners: string[] = [];
  let current: Node | null = node;
  while (current?.type === 'qualified_identifier') {
    const scope = current.childForFieldName('scope');
    if (scope) owners.push(bareName(textOf(source, scope)));
    current = current.childForFieldName('name');
  }
  const name = current ? textOf(source, current) : ANONYMOUS;
  return owners.length > 0 ? { name, owner: owners.join('.') } : { name };
}

function functionDecl(node: Node, declarator: Node | null, source: string, headEnd?: number): Declaration {
  const { name, owner } = qualifiedName(declaratorName(declarator), source);
  const decl: Declaration = { kind: 'function', name, body: null, headEnd };
  return owner ? { ...decl, owner } : decl;
}

function cFamily(cpp: boolean) {
  function record(node: Node, source: string): Declaration | null {
    const body = node.childForFieldName('body');
    if (!body) return null; // a forward declaration (`struct foo;`) declares nothing new
    const kind = RECORDS[node.type] ?? 'struct';
    // C++ records hold methods and nested types; C structs hold only fields.
    const walk = cpp && kind !== 'enum';
    return { kind, name: nameField(source, node), body: walk ? body : null, scope: 'class', headEnd: body.startIndex };
  }

  function declare(node: Node, scope: ScopeKind, source: string): Declaration | readonly Declaration[] | null {
    const type = node.type;
    if (RECORDS[type]) return record(node, source);
    switch (type) {
      case 'function_definition':
        // Bodies are not walked: C has no nested functions and C++ local classes are rare.
        return functionDecl(node, node.childForFieldName('declarator'), source, node.childForFieldName('body')?.startIndex);
      case 'declaration':
      case 'field_declaration': {
        const declarators = node.childrenForFieldName('declarator').filter((d): d is Node => d !== null);
        if (declarators.length > 0 && declarators.every(declaresFunction)) return declarators.map((d) => ({ ...functionDecl(node, d, source), node: declarators.length === 1 ? node : d }));
        if (declarators.length === 0) {
          // `struct Node { … };` inside a C++ class body.
          const inner = node.childForFieldName('type');
          return inner && RECORDS[inner.type] ? record(inner, source) : null;
        }
        if (scope === 'function') return null;
        const kind = type === 'field_declaration' ? 'field' : 'variable';
        return declarators.map((d) => {
          const name = declaratorName(d);
          const decl: Declaration = { kind, name: name ? textOf(source, name) : ANONYMOUS, body: null, headEnd: valueHead(d.childForFieldName('value') ?? node.childForFieldName('default_value')) };
          return declarators.length === 1 ? decl : { ...decl, node: d, signature: collapseSignature(textOf(source, d)) };
        });
      }
      case 'type_definition': {
        const declarator = node.childForFieldName('declarator');
        const name = declaratorName(declarator);
        const body = node.childForFieldName('type')?.childForFieldName('body');
        const decl: Declaration = { kind: 'type', name: name ? textOf(source, name) : ANONYMOUS, body: null };
        if (!body || !declarator) return decl;
        return { ...decl, signature: collapseSignature(`${source.slice(node.startIndex, body.startIndex)} ${textOf(source, declarator)}`) };
      }
      case 'alias_declaration':
        return { kind: 'type', name: nameField(source, node), body: null };
      case 'namespace_definition':
        return { kind: 'namespace', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'module' };
      case 'preproc_def':
        return { kind: 'macro', name: nameField(source, node), body: null };
      case 'preproc_function_def':
        return { kind: 'macro', name: nameField(source, node), body: null, headEnd: node.childForFieldName('value')?.startIndex };
      default:
        return null;
    }
  }

  return declare;
}

/** An include guard (`#ifndef X_H` / `#define X_H` around the whole file) is not a condition worth reporting. */
function conditionalLabel(node: Node, source: string): string | null | undefined {
  if (node.type !== 'preproc_ifdef') return undefined;
  const negated = node.firstChild?.type === '#ifndef';
  const label = negated ? '#ifndef' : '#ifdef';
  if (!negated || node.parent?.type !== 'translation_unit') return label;
  const guard = nameField(source, node);
  const define = node.namedChildren[1];
  if (define?.type !== 'preproc_def' || nameField(source, define) !== guard) return label;
  for (const sibling of node.parent.namedChildren) {
    if (sibling && sibling.id !== node.id && sibling.type !== 'comment') return label;
  }
  return null;
}

const PREPROCESSOR: Readonly<Record<string, string>> = {
  preproc_if: '#if',
  preproc_ifdef: '#ifdef',
  preproc_else: '#else',
  preproc_elif: '#elif',
  preproc_elifdef: '#elifdef',
};

/** C and C++: functions and prototypes, records, typedefs, globals, macros; C++ adds classes, namespaces, methods (also `A::f` defined outside). */
export function cFamilyAdapter(language: Language, grammar: string, cpp: boolean, retry?: LanguageAdapter): LanguageAdapter {
  return {
    language,
    grammar,
    ...(retry ? { retry } : {}),
    comments: kinds('comment'),
    leading: kinds(),
    wrappers: cpp ? kinds('template_declaration') : kinds(),
    transparent: kinds('declaration_list', 'linkage_specification'),
    conditionals: PREPROCESSOR,
    // C and C++ have no doc-comment syntax of their own; the comment right above is the doc.
    docComment: /^/,
    declare: cFamily(cpp),
    conditionalLabel,
  };
}
