import type { Node } from 'web-tree-sitter';
import { endRow, startRow, textOf } from '../syntax.js';

/** Name used when a declaration has none in the source (`export default function () {}`). */
export const ANONYMOUS = '(anonymous)';

/** A read-only set from a list, for the adapter tables. */
export function kinds(...types: string[]): ReadonlySet<string> {
  return new Set(types);
}

/** Text of a node's `name` (or other) field, or `fallback` when it is missing. */
export function nameField(source: string, node: Node, field = 'name', fallback = ANONYMOUS): string {
  const child = node.childForFieldName(field);
  return child ? textOf(source, child) : fallback;
}

/**
 * Where a bodyless declaration's signature should stop: at a multi-line value (`const X = {…}`
 * reads `const X`), or nowhere special (undefined) when the value fits on one line.
 */
export function valueHead(value: Node | null): number | undefined {
  return value && startRow(value) !== endRow(value) ? value.startIndex : undefined;
}

/** The named children of a node that have one of the given types. */
export function childrenOfType(node: Node, types: ReadonlySet<string>): Node[] {
  const out: Node[] = [];
  for (const child of node.namedChildren) if (child && types.has(child.type)) out.push(child);
  return out;
}
