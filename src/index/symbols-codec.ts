import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import { RepodexError } from '../core/errors.js';
import type { OutlineSymbol, ScopeKind } from '../lang/types.js';
import { type Artifact, type CodedStrings, CodedStringsBuilder, type Section, StringTable, leBytes } from './format.js';
import { GrowableU32 } from './growable.js';

/** Stored per file in symbols.bin (`SFBK`): how its chunks were cut; 0 = declarations. */
export const FALLBACK_CODES: readonly ChunkFallback[] = [null, 'no-adapter', 'parse-error', 'too-large'];

const SCOPES: readonly ScopeKind[] = ['module', 'class', 'function'];
const NULL_MARK = '\u0000';

/**
 * The outline sections of a segment, accumulated file by file into columns (no symbol objects are
 * kept): every indexed file's outline, stored so `outline` of an unchanged file needs no parse.
 * Symbols are grouped by file (`SFIL` holds each file's first symbol); nullable strings store a
 * NUL mark for null. Kinds, names, enclosing names and contexts repeat a lot and are stored once
 * each (CodedStrings); signatures and doc comments, the bulk of an outline, are read only to
 * show a whole file's outline, so each file's are one deflated block (`SOTX`).
 */
export class SymbolColumns {
  private readonly first = new GrowableU32();
  private readonly fallbacks: number[] = [];
  private readonly lines = new GrowableU32();
  private readonly flags: number[] = [];
  private readonly kinds = new CodedStringsBuilder();
  private readonly names = new CodedStringsBuilder();
  private readonly texts: Uint8Array[] = [];
  private readonly parents = new CodedStringsBuilder();
  private readonly contexts = new CodedStringsBuilder();

  /**
   * Add the next file's outline and its fallback code (see FALLBACK_CODES). `text`: its
   * signatures and docs block when made already (packOutlineText, by the parse thread).
   */
  add(symbols: readonly OutlineSymbol[], fallbackCode: number, text?: Uint8Array): void {
    this.startFile(fallbackCode);
    const nullable = (value: string | null): string => value ?? NULL_MARK;
    for (const symbol of symbols) {
      const flag = SCOPES.indexOf(symbol.scope_kind) | (symbol.is_conditional ? 0x80 : 0);
      this.declare(symbol.start_line, symbol.end_line, flag, symbol.kind, symbol.name, nullable(symbol.parent_symbol), nullable(symbol.decl_context));
    }
    this.texts.push(text ?? packOutlineText(symbols));
  }

  /** Add the next file's outline as another segment stores it (a merge copies it without decoding its text). */
  addStored(outline: StoredOutline, fallbackCode: number): void {
    this.startFile(fallbackCode);
    for (const d of outline.declarations) this.declare(d.start, d.end, d.flag, d.kind, d.name, d.parent, d.context);
    this.texts.push(outline.text);
  }

  private startFile(fallbackCode: number): void {
    this.first.push(this.kinds.length);
    this.fallbacks.push(fallbackCode);
  }

  private declare(start: number, end: number, flag: number, kind: string, name: string, parent: string, context: string): void {
    this.lines.push(start);
    this.lines.push(end);
    this.flags.push(flag);
    this.kinds.push(kind);
    this.names.push(name);
    this.parents.push(parent);
    this.contexts.push(context);
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
      { tag: 'KIND', bytes: this.kinds.encode() },
      { tag: 'NAME', bytes: this.names.encode() },
      { tag: 'PRNT', bytes: this.parents.encode() },
      { tag: 'CTXT', bytes: this.contexts.encode() },
      { tag: 'SOTX', bytes: StringTable.encodeBlobs(this.texts) },
    ];
  }
}

/**
 * One file's outline as a segment stores it: each declaration's columns (enclosing name and
 * context with the NUL mark for null, scope and condition in one flag byte) and the signatures
 * and docs block, still deflated.
 */
export interface StoredOutline {
  readonly declarations: readonly { readonly start: number; readonly end: number; readonly flag: number; readonly kind: string; readonly name: string; readonly parent: string; readonly context: string }[];
  readonly text: Uint8Array;
}

/** A file's signatures and docs as one deflated block (empty when it declares nothing): what `SOTX` holds per file. */
export function packOutlineText(symbols: readonly OutlineSymbol[]): Uint8Array {
  if (symbols.length === 0) return EMPTY;
  const json = JSON.stringify([symbols.map((symbol) => symbol.signature), symbols.map((symbol) => symbol.doc)]);
  return deflateRawSync(Buffer.from(json, 'utf8'), { level: 1 });
}

const EMPTY = new Uint8Array(0);

/** A file's outline text read back: its `count` signatures and docs, or undefined when damaged. */
export function unpackOutlineText(block: Uint8Array, count: number): { signatures: string[]; docs: (string | null)[] } | undefined {
  if (count === 0) return block.length === 0 ? { signatures: [], docs: [] } : undefined;
  try {
    const [signatures, docs] = JSON.parse(inflateRawSync(block).toString('utf8')) as unknown[];
    const strings = (value: unknown, nullable: boolean): boolean => Array.isArray(value) && value.length === count && value.every((x) => typeof x === 'string' || (nullable && x === null));
    if (!strings(signatures, false) || !strings(docs, true)) return undefined;
    return { signatures: signatures as string[], docs: docs as (string | null)[] };
  } catch {
    return undefined;
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
  private readonly kinds: CodedStrings;
  private readonly names: CodedStrings;
  private readonly parents: CodedStrings;
  private readonly contexts: CodedStrings;
  private readonly texts: StringTable;

  constructor(artifact: Artifact) {
    this.first = artifact.u32('SFIL');
    this.fallbackCodes = artifact.bytes('SFBK');
    this.lines = artifact.u32('SLIN');
    this.flags = artifact.bytes('SFLG');
    this.kinds = artifact.coded('KIND');
    this.names = artifact.coded('NAME');
    this.parents = artifact.coded('PRNT');
    this.contexts = artifact.coded('CTXT');
    this.texts = artifact.strings('SOTX');
  }

  /** File `fileId`'s outline as stored, its text not decoded (what a merge copies). */
  storedOutline(fileId: number): StoredOutline {
    const from = this.first[fileId] ?? 0;
    const to = this.first[fileId + 1] ?? from;
    const declarations = [];
    for (let i = from; i < to; i++) {
      declarations.push({ start: this.lines[i * 2]!, end: this.lines[i * 2 + 1]!, flag: this.flags[i]!, kind: this.kinds.get(i), name: this.names.get(i), parent: this.parents.get(i), context: this.contexts.get(i) });
    }
    return { declarations, text: this.texts.blob(fileId) };
  }

  /** Problems with the outline columns of `files` files (what `verify` checks): each file's block decodes. */
  check(files: number): string[] {
    const problems: string[] = [];
    const symbols = this.kinds.count;
    if (this.first.length !== files + 1 || this.fallbackCodes.length !== files || this.texts.count !== files) return ['outline table disagrees on the file count'];
    if ([this.names, this.parents, this.contexts].some((column) => column.count !== symbols) || this.lines.length !== 2 * symbols || this.flags.length !== symbols) return ['outline columns disagree on the symbol count'];
    if (![this.kinds, this.names, this.parents, this.contexts].every((column) => column.wellFormed()) || !this.texts.wellFormed()) return ['an outline string table is damaged'];
    for (let f = 0; f < files && problems.length < 20; f++) {
      const from = this.first[f]!;
      const to = this.first[f + 1]!;
      if (to < from || to > symbols) problems.push(`outline of file ${f} has a bad symbol range`);
      else if (!unpackOutlineText(this.texts.blob(f), to - from)) problems.push(`outline text of file ${f} is damaged`);
    }
    return problems;
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
    const text = unpackOutlineText(this.texts.blob(fileId), to - from);
    if (!text) throw new RepodexError('INDEX_CORRUPT', `the stored outline of file ${fileId} is damaged`);
    for (let i = from; i < to; i++) {
      const flag = this.flags[i]!;
      out.push({
        kind: this.kinds.get(i),
        name: this.names.get(i),
        signature: text.signatures[i - from]!,
        start_line: this.lines[i * 2]!,
        end_line: this.lines[i * 2 + 1]!,
        doc: text.docs[i - from]!,
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
