import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import type { OutlineSymbol, ScopeKind } from '../lang/types.js';
import { type Artifact, type Section, StringTable, leBytes } from './format.js';
import { GrowableU32 } from './growable.js';

/** Stored per file in symbols.bin (`SFBK`): how its chunks were cut; 0 = declarations. */
export const FALLBACK_CODES: readonly ChunkFallback[] = [null, 'no-adapter', 'parse-error', 'too-large'];

const SCOPES: readonly ScopeKind[] = ['module', 'class', 'function'];
const NULL_MARK = '\u0000';

/**
 * The outline sections of a segment, accumulated file by file into columns (no symbol objects are
 * kept): every indexed file's outline, stored so `outline` of an unchanged file needs no parse.
 * Symbols are grouped by file (`SFIL` holds each file's first symbol); nullable strings store a
 * NUL mark for null.
 */
export class SymbolColumns {
  private readonly first = new GrowableU32();
  private readonly fallbacks: number[] = [];
  private readonly lines = new GrowableU32();
  private readonly flags: number[] = [];
  private readonly kinds: string[] = [];
  private readonly names: string[] = [];
  private readonly signatures: string[] = [];
  private readonly docs: string[] = [];
  private readonly parents: string[] = [];
  private readonly contexts: string[] = [];

  /** Add the next file's outline and its fallback code (see FALLBACK_CODES). */
  add(symbols: readonly OutlineSymbol[], fallbackCode: number): void {
    this.first.push(this.kinds.length);
    this.fallbacks.push(fallbackCode);
    const nullable = (value: string | null): string => value ?? NULL_MARK;
    for (const symbol of symbols) {
      this.lines.push(symbol.start_line);
      this.lines.push(symbol.end_line);
      this.flags.push(SCOPES.indexOf(symbol.scope_kind) | (symbol.is_conditional ? 0x80 : 0));
      this.kinds.push(symbol.kind);
      this.names.push(symbol.name);
      this.signatures.push(symbol.signature);
      this.docs.push(nullable(symbol.doc));
      this.parents.push(nullable(symbol.parent_symbol));
      this.contexts.push(nullable(symbol.decl_context));
    }
  }

  sections(): Section[] {
    const first = new Uint32Array(this.first.length + 1);
    first.set(this.first.view());
    first[this.first.length] = this.kinds.length;
    return [
      { tag: 'SFIL', bytes: leBytes(first) },
      // How each file was chunked: 0 = declarations (its outline is complete), else why text was used.
      { tag: 'SFBK', bytes: Uint8Array.from(this.fallbacks) },
      { tag: 'SLIN', bytes: leBytes(this.lines.view()) },
      { tag: 'SFLG', bytes: Uint8Array.from(this.flags) },
      { tag: 'KIND', bytes: StringTable.encode(this.kinds) },
      { tag: 'NAME', bytes: StringTable.encode(this.names) },
      { tag: 'SIGN', bytes: StringTable.encode(this.signatures) },
      { tag: 'DOCS', bytes: StringTable.encode(this.docs) },
      { tag: 'PRNT', bytes: StringTable.encode(this.parents) },
      { tag: 'CTXT', bytes: StringTable.encode(this.contexts) },
    ];
  }
}

/** The outline sections for whole files at once (tests and small tools). */
export function encodeSymbols(perFile: readonly (readonly OutlineSymbol[])[], fallbackCodes: readonly number[]): Section[] {
  const columns = new SymbolColumns();
  perFile.forEach((symbols, i) => columns.add(symbols, fallbackCodes[i] ?? 0));
  return columns.sections();
}

/** Outlines read back from symbols.bin, decoded per file on demand. */
export class SymbolTable {
  private readonly first: Uint32Array;
  /** Per file: 0 when parsed (outline complete), else the text-fallback code (see FALLBACK_CODES). */
  readonly fallbackCodes: Uint8Array;
  private readonly lines: Uint32Array;
  private readonly flags: Uint8Array;
  private readonly kinds: StringTable;
  private readonly names: StringTable;
  private readonly signatures: StringTable;
  private readonly docs: StringTable;
  private readonly parents: StringTable;
  private readonly contexts: StringTable;

  constructor(artifact: Artifact) {
    this.first = artifact.u32('SFIL');
    this.fallbackCodes = artifact.bytes('SFBK');
    this.lines = artifact.u32('SLIN');
    this.flags = artifact.bytes('SFLG');
    this.kinds = artifact.strings('KIND');
    this.names = artifact.strings('NAME');
    this.signatures = artifact.strings('SIGN');
    this.docs = artifact.strings('DOCS');
    this.parents = artifact.strings('PRNT');
    this.contexts = artifact.strings('CTXT');
  }

  /**
   * The display path (`class Router › match`) of the declaration lines `first..last` of a file sit
   * in: the innermost one enclosing `first`, else the first one starting within the lines (a doc
   * comment above a function names the function), or null. Reads only lines, kinds, names and
   * parents.
   */
  pathAt(fileId: number, first: number, last: number): string | null {
    const from = this.first[fileId] ?? 0;
    const to = this.first[fileId + 1] ?? from;
    return declarationPathAt(
      to - from,
      {
        start: (i) => this.lines[(from + i) * 2]!,
        end: (i) => this.lines[(from + i) * 2 + 1]!,
        kind: (i) => this.kinds.get(from + i),
        name: (i) => this.names.get(from + i),
        parent: (i) => {
          const parent = this.parents.get(from + i);
          return parent === NULL_MARK ? null : parent;
        },
      },
      first,
      last,
    );
  }

  /** The outline of one file, in stored (deterministic) order. */
  forFile(fileId: number): OutlineSymbol[] {
    const from = this.first[fileId] ?? 0;
    const to = this.first[fileId + 1] ?? from;
    const out: OutlineSymbol[] = [];
    const nullable = (value: string): string | null => (value === NULL_MARK ? null : value);
    for (let i = from; i < to; i++) {
      const flag = this.flags[i]!;
      out.push({
        kind: this.kinds.get(i),
        name: this.names.get(i),
        signature: this.signatures.get(i),
        start_line: this.lines[i * 2]!,
        end_line: this.lines[i * 2 + 1]!,
        doc: nullable(this.docs.get(i)),
        parent_symbol: nullable(this.parents.get(i)),
        scope_kind: SCOPES[flag & 0x7f] ?? 'module',
        is_conditional: (flag & 0x80) !== 0,
        decl_context: nullable(this.contexts.get(i)),
      });
    }
    return out;
  }
}

/** Read access to a file's declarations, by position: what `declarationPathAt` needs of any encoding. */
export interface DeclarationColumns {
  start(i: number): number;
  end(i: number): number;
  kind(i: number): string;
  name(i: number): string;
  parent(i: number): string | null;
}

/**
 * The display path (`class Router › match`) of the declaration lines `first..last` of a file sit
 * in, among its `count` declarations: the innermost one enclosing `first`, else the first one
 * starting within the lines; or null.
 */
export function declarationPathAt(count: number, at: DeclarationColumns, first: number, last: number): string | null {
  let best = -1;
  for (let i = 0; i < count; i++) {
    if (at.start(i) <= first && at.end(i) >= first && (best < 0 || at.start(i) >= at.start(best))) best = i;
  }
  if (best < 0) {
    for (let i = 0; i < count; i++) {
      const start = at.start(i);
      if (start >= first && start <= last && (best < 0 || start < at.start(best))) best = i;
    }
  } else if (first > at.start(best)) {
    // Lines that start inside a container's body but in none of its members (a doc comment above a method) and run into one: the member they lead to.
    let member = -1;
    for (let i = 0; i < count; i++) {
      const start = at.start(i);
      if (i !== best && start > first && start <= last && start >= at.start(best) && at.end(i) <= at.end(best) && (member < 0 || start < at.start(member))) member = i;
    }
    if (member >= 0) best = member;
  }
  if (best < 0) return null;
  const parent = at.parent(best);
  const names = [at.name(best)];
  let outer = best;
  if (parent !== null) {
    // parent_symbol is the qualified name of the enclosing declarations: find the outermost for its kind.
    const chain = parent.split('.');
    names.unshift(...chain);
    for (let i = 0; i < count; i++) {
      if (at.name(i) === chain[0] && at.parent(i) === null) {
        outer = i;
        break;
      }
    }
    if (outer === best) return null;
  }
  return [`${at.kind(outer)} ${names[0]}`, ...names.slice(1)].join(' › ');
}
