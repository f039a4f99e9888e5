import type { Node } from 'web-tree-sitter';
import { collapseSignature, docFromComment, endRow, startRow, textOf } from './syntax.js';
import type { Declaration, LanguageAdapter, OutlineSymbol, ScopeKind } from './types.js';

/** The scope a node is walked in: its kind, the qualified name of its owner, and the control flow above it. */
interface Scope {
  readonly kind: ScopeKind;
  readonly parent: string | null;
  readonly context: readonly string[];
}

/** What precedes a declaration and belongs to it: wrappers and decorators (start row), comments (doc). */
interface Lead {
  /** Earliest row of a wrapper or leading sibling, or -1. */
  readonly startRow: number;
  /** Where the signature starts when a wrapper decides it (its first non-decorator token), or -1. */
  readonly sigStart: number;
  /** The run of adjacent comments just above, or null. */
  readonly comments: readonly Node[] | null;
  /** Labels added by leading siblings (Rust `#[cfg]`). */
  readonly labels: readonly string[];
}

const NO_LEAD: Lead = { startRow: -1, sigStart: -1, comments: null, labels: [] };

/**
 * Outline symbols of a parsed file (seed 002 §10.3): the adapter classifies nodes, this walker
 * supplies nesting, parent names, scope kinds and control-flow context. Only declaration bodies,
 * blocks, wrappers and control flow are descended into, never expressions, so callbacks passed to
 * calls (`describe(() => …)`) are not scopes. Sorted as `sortSymbols` says.
 */
export function extractSymbols(adapter: LanguageAdapter, root: Node, source: string): OutlineSymbol[] {
  const out: OutlineSymbol[] = [];
  walkChildren(adapter, root, { kind: 'module', parent: null, context: [] }, NO_LEAD, source, out);
  return sortSymbols(out);
}

/**
 * The one ordering rule for outlines: start_line ascending, then end_line descending (an enclosing
 * declaration before what it encloses), then kind, then name, then parent and signature, all by
 * UTF-16 code units (never locale order), so equal input gives identical output on every machine.
 */
export function sortSymbols(symbols: OutlineSymbol[]): OutlineSymbol[] {
  return symbols.sort(
    (a, b) =>
      a.start_line - b.start_line ||
      b.end_line - a.end_line ||
      compare(a.kind, b.kind) ||
      compare(a.name, b.name) ||
      compare(a.parent_symbol ?? '', b.parent_symbol ?? '') ||
      compare(a.signature, b.signature),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function walkChildren(adapter: LanguageAdapter, container: Node, scope: Scope, initial: Lead, source: string, out: OutlineSymbol[], wrapped = false): void {
  let lead = initial;
  for (const child of container.namedChildren) {
    if (!child) continue;
    const type = child.type;
    if (adapter.comments.has(type)) {
      const run = lead.comments;
      const last = run?.[run.length - 1];
      // Only an unbroken run of comments can document what follows it.
      const comments = last && startRow(child) <= endRow(last) + 1 ? [...run!, child] : [child];
      lead = { ...lead, comments };
      continue;
    }
    if (adapter.leading.has(type)) {
      const label = adapter.leadingContext?.(child, source) ?? null;
      lead = {
        startRow: lead.startRow === -1 ? startRow(child) : Math.min(lead.startRow, startRow(child)),
        sigStart: lead.sigStart,
        comments: lead.comments,
        labels: label ? [...lead.labels, label] : lead.labels,
      };
      continue;
    }
    const before = out.length;
    visit(adapter, child, scope, lead, source, out);
    // Inside a wrapper, the parts before the declaration (`template <…>`) do not use up its lead.
    if (!wrapped || out.length > before) lead = NO_LEAD;
  }
}

function visit(adapter: LanguageAdapter, node: Node, scope: Scope, lead: Lead, source: string, out: OutlineSymbol[]): void {
  const type = node.type;
  const declared = adapter.declare(node, scope.kind, source);
  if (declared) {
    const list: readonly Declaration[] = Array.isArray(declared) ? declared : [declared as Declaration];
    for (const decl of list) emit(adapter, decl, node, list.length === 1, scope, lead, source, out);
    return;
  }
  if (adapter.wrappers.has(type)) {
    const sigStart = lead.sigStart !== -1 ? lead.sigStart : firstOwnToken(adapter, node);
    const start = lead.startRow === -1 ? startRow(node) : Math.min(lead.startRow, startRow(node));
    walkChildren(adapter, node, scope, { ...lead, startRow: start, sigStart }, source, out, true);
    return;
  }
  const mapped = adapter.conditionals[type];
  if (mapped !== undefined) {
    const label = adapter.conditionalLabel ? adapter.conditionalLabel(node, source) : mapped;
    if (label === null) {
      walkChildren(adapter, node, scope, NO_LEAD, source, out);
      return;
    }
    const inner: Scope = { ...scope, context: [...scope.context, label ?? mapped] };
    const elseField = adapter.elseFields?.[type];
    const alternative = elseField ? node.childForFieldName(elseField) : null;
    if (!alternative) {
      walkChildren(adapter, node, inner, NO_LEAD, source, out);
      return;
    }
    const otherwise: Scope = { ...inner, context: [...inner.context, 'else'] };
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.id === alternative.id) visit(adapter, child, otherwise, NO_LEAD, source, out);
      else visit(adapter, child, inner, NO_LEAD, source, out);
    }
    return;
  }
  if (adapter.transparent.has(type)) walkChildren(adapter, node, scope, NO_LEAD, source, out);
}

function emit(
  adapter: LanguageAdapter,
  decl: Declaration,
  visited: Node,
  alone: boolean,
  scope: Scope,
  lead: Lead,
  source: string,
  out: OutlineSymbol[],
): void {
  const target = decl.node ?? visited;
  // Wrappers and decorators belong to the declaration only when the statement declares one thing.
  const owned = alone || target.id === visited.id;
  const first = startRow(target);
  const start = owned && lead.startRow !== -1 ? Math.min(lead.startRow, first) : first;
  const sigStart = owned && lead.sigStart !== -1 ? lead.sigStart : firstOwnToken(adapter, target);
  const headEnd = decl.headEnd ?? decl.body?.startIndex ?? target.endIndex;
  const signature = decl.signature ?? collapseSignature(source.slice(sigStart, Math.max(sigStart, headEnd)));
  const context = owned ? [...scope.context, ...lead.labels] : scope.context;
  const parent = decl.owner ? joinName(scope.parent, decl.owner) : scope.parent;
  const scopeKind: ScopeKind = decl.owner ? 'class' : scope.kind;
  const kind = decl.kind === 'function' && scopeKind === 'class' ? 'method' : decl.kind;
  const doc = decl.doc !== undefined ? decl.doc : owned ? commentDoc(adapter, lead.comments, start, source) : null;
  out.push({
    kind,
    name: decl.name,
    signature,
    start_line: start + 1,
    end_line: Math.max(endRow(target), start) + 1,
    doc,
    parent_symbol: parent,
    scope_kind: scopeKind,
    is_conditional: context.length > 0,
    decl_context: context.length > 0 ? context.join('>') : null,
  });
  if (decl.body) {
    const inner: Scope = { kind: decl.scope ?? 'function', parent: joinName(parent, decl.name), context: [] };
    walkChildren(adapter, decl.body, inner, NO_LEAD, source, out);
  }
}

function joinName(parent: string | null, name: string): string {
  return parent ? `${parent}.${name}` : name;
}

/** Offset of a node's first token that is not a decorator, attribute or comment (where its head starts). */
function firstOwnToken(adapter: LanguageAdapter, node: Node): number {
  const first = node.firstChild;
  if (!first || (!adapter.leading.has(first.type) && !adapter.comments.has(first.type))) return node.startIndex;
  for (const child of node.children) {
    if (child && !adapter.leading.has(child.type) && !adapter.comments.has(child.type)) return child.startIndex;
  }
  return node.startIndex;
}

/** The doc line of the comment run that ends right above (or on) the declaration's first line. */
function commentDoc(adapter: LanguageAdapter, comments: readonly Node[] | null, start: number, source: string): string | null {
  if (!comments || !adapter.docComment) return null;
  const last = comments[comments.length - 1]!;
  if (endRow(last) < start - 1) return null;
  for (const comment of comments) {
    const text = textOf(source, comment);
    if (!adapter.docComment.test(text)) continue;
    const doc = docFromComment(text);
    if (doc !== null) return doc;
  }
  return null;
}
