import type { Node } from 'web-tree-sitter';
import type { Language } from '../../scan/language.js';
import { collapseSignature, textOf } from '../syntax.js';
import type { Declaration, LanguageAdapter, ScopeKind } from '../types.js';
import { kinds, nameField, valueHead } from './common.js';

const FUNCTION_VALUES = kinds('arrow_function', 'function_expression', 'function', 'generator_function');
const CLASS_VALUES = kinds('class');

/** A function-valued initializer (`const f = () => {…}`) declares a function: its body is a scope. */
function functionValue(kind: string, name: string, value: Node): Declaration {
  const body = value.childForFieldName('body');
  return {
    kind,
    name,
    body: body?.type === 'statement_block' ? body : null,
    headEnd: body?.startIndex ?? value.endIndex,
  };
}

function classValue(name: string, value: Node): Declaration {
  const body = value.childForFieldName('body');
  return { kind: 'class', name, body, scope: 'class', headEnd: body?.startIndex ?? value.endIndex };
}

/** `const a = 1, f = () => …` — one symbol per declarator; plain values only outside functions. */
function variables(node: Node, scope: ScopeKind, source: string): Declaration[] | null {
  const declarators = node.namedChildren.filter((child): child is Node => child?.type === 'variable_declarator');
  const keyword = node.firstChild?.type ?? 'var';
  const alone = declarators.length === 1;
  const out: Declaration[] = [];
  for (const declarator of declarators) {
    const nameNode = declarator.childForFieldName('name');
    // Destructuring (`const { a, b } = …`) binds names but declares nothing worth outlining.
    if (!nameNode || nameNode.type !== 'identifier') continue;
    const name = textOf(source, nameNode);
    const value = declarator.childForFieldName('value');
    let decl: Declaration | null = null;
    if (value && FUNCTION_VALUES.has(value.type)) decl = functionValue('function', name, value);
    else if (value && CLASS_VALUES.has(value.type)) decl = classValue(name, value);
    else if (scope !== 'function') decl = { kind: keyword === 'const' ? 'constant' : 'variable', name, body: null, headEnd: valueHead(value) ?? declarator.endIndex };
    if (!decl) continue;
    if (alone) {
      out.push(decl);
    } else {
      const head = source.slice(declarator.startIndex, decl.headEnd ?? declarator.endIndex);
      out.push({ ...decl, node: declarator, signature: collapseSignature(`${keyword} ${head}`) });
    }
  }
  return out.length > 0 ? out : null;
}

function declare(node: Node, scope: ScopeKind, source: string): Declaration | readonly Declaration[] | null {
  switch (node.type) {
    case 'function_declaration':
    case 'generator_function_declaration':
    case 'function_expression':
    case 'function':
    case 'generator_function':
    case 'arrow_function': {
      // Expressions only reach here as the value of `export default`.
      const body = node.childForFieldName('body');
      return { kind: 'function', name: nameField(source, node, 'name', 'default'), body: body?.type === 'statement_block' ? body : null, headEnd: body?.startIndex };
    }
    case 'function_signature':
      return { kind: 'function', name: nameField(source, node), body: null };
    case 'class_declaration':
    case 'abstract_class_declaration':
    case 'class': {
      const body = node.childForFieldName('body');
      return { kind: 'class', name: nameField(source, node, 'name', 'default'), body, scope: 'class' };
    }
    case 'method_definition':
    case 'method_signature':
    case 'abstract_method_signature': {
      const body = node.childForFieldName('body');
      return { kind: 'method', name: nameField(source, node), body };
    }
    case 'public_field_definition':
    case 'field_definition': {
      const name = nameField(source, node, node.type === 'field_definition' ? 'property' : 'name');
      const value = node.childForFieldName('value');
      if (value && FUNCTION_VALUES.has(value.type)) return functionValue('method', name, value);
      return { kind: 'field', name, body: null, headEnd: valueHead(value) };
    }
    case 'lexical_declaration':
    case 'variable_declaration':
      return variables(node, scope, source);
    case 'interface_declaration':
      return { kind: 'interface', name: nameField(source, node), body: null, headEnd: node.childForFieldName('body')?.startIndex };
    case 'type_alias_declaration':
      return { kind: 'type', name: nameField(source, node), body: null, headEnd: valueHead(node.childForFieldName('value')) };
    case 'enum_declaration':
      return { kind: 'enum', name: nameField(source, node), body: null, headEnd: node.childForFieldName('body')?.startIndex };
    case 'internal_module':
      return { kind: 'namespace', name: nameField(source, node), body: node.childForFieldName('body'), scope: 'module' };
    case 'module': {
      const name = nameField(source, node).replace(/^['"`]|['"`]$/g, '');
      return { kind: 'module', name, body: node.childForFieldName('body'), scope: 'module' };
    }
    case 'expression_statement': {
      // `namespace A {}` parses as an expression statement; namespaces never sit inside functions.
      if (scope === 'function') return null;
      const inner = node.firstNamedChild;
      if (inner?.type !== 'internal_module') return null;
      const decl = declare(inner, scope, source) as Declaration;
      return { ...decl, node };
    }
    default:
      return null;
  }
}

/** `export type * from '…'` and `export type * as NS from '…'` (TypeScript 5.0): re-exports, no declarations. */
const EXPORT_TYPE_STAR = /^[ \t]*export\s+type\s+\*(?:\s+as\s+[\w$]+)?\s+from\s+(['"])[^'"\n]*\1[ \t]*;?/gm;
/** `in` / `out` / `in out` before a type parameter (TypeScript 4.7 variance annotations). */
const VARIANCE = /([<,]\s*)(in\s+out|in|out)(\s+)(?=[A-Za-z_$][\w$]*\s*(?:extends\b|=|,|>))/g;
/**
 * A generic call signature (`<T>(key: string): T`) starting an indented line after a member that
 * ends without `;`: the grammars read it as a continuation of the type before it (`T < T > (…)`).
 * The last indentation character becomes the `;` that ends the member before.
 */
const GENERIC_CALL_SIGNATURE = /([\w$)\]>][ \t]*\n(?:[ \t]*\n)*[ \t]*)[ \t](?=<[A-Za-z_$][^\n]*?>\s*\()/g;

const blank = (text: string): string => text.replace(/[^\n]/g, ' ');

/**
 * TypeScript syntax the bundled grammars do not parse (none of tree-sitter-wasms, @vscode's build
 * or tree-sitter-typescript 0.23.2 does), rewritten in place (same length, same lines) for a
 * second parse: blanked, or a member-ending `;` put in the indentation. None declares anything.
 */
export function maskTypeScript(source: string): string | undefined {
  if (!source.includes('export type') && !/\b(in|out)\s/.test(source) && !/\n[ \t]+<[A-Za-z_$]/.test(source)) return undefined;
  const masked = source
    .replace(EXPORT_TYPE_STAR, blank)
    .replace(VARIANCE, (_all, before: string, keyword: string, space: string) => before + blank(keyword) + space)
    .replace(GENERIC_CALL_SIGNATURE, '$1;');
  return masked === source ? undefined : masked;
}

/** TypeScript, TSX and JavaScript share node kinds; they differ only in the grammar file. */
export function ecmascriptAdapter(language: Language, grammar: string): LanguageAdapter {
  return {
    language,
    grammar,
    ...(language === 'javascript' ? {} : { mask: maskTypeScript }),
    comments: kinds('comment', 'html_comment'),
    leading: kinds('decorator'),
    wrappers: kinds('export_statement', 'ambient_declaration'),
    transparent: kinds('statement_block', 'switch_body', 'labeled_statement'),
    conditionals: {
      if_statement: 'if',
      else_clause: 'else',
      try_statement: 'try',
      catch_clause: 'catch',
      finally_clause: 'finally',
      for_statement: 'for',
      for_in_statement: 'for',
      while_statement: 'while',
      do_statement: 'do',
      with_statement: 'with',
      switch_statement: 'switch',
      switch_case: 'case',
      switch_default: 'default',
    },
    docComment: /^\/\*\*(?!\*)/,
    declare,
  };
}
