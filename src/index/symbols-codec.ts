import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import type { OutlineSymbol, ScopeKind } from '../lang/types.js';
import { type Artifact, type Section, StringTable, leBytes } from './format.js';

/** Stored per file in symbols.bin (`SFBK`): how its chunks were cut; 0 = declarations. */
export const FALLBACK_CODES: readonly ChunkFallback[] = [null, 'no-adapter', 'parse-error', 'too-large'];

const SCOPES: readonly ScopeKind[] = ['module', 'class', 'function'];
const NULL_MARK = '\u0000';

/**
 * Sections of symbols.bin: every indexed file's outline, stored so `outline` of an unchanged
 * file needs no parse. Symbols are grouped by file id (`SFIL` holds each file's first symbol);
 * nullable strings store a NUL mark for null.
 */
export function encodeSymbols(perFile: readonly (readonly OutlineSymbol[])[], fallbackCodes: readonly number[]): Section[] {
  const all = perFile.flat();
  const first = new Uint32Array(perFile.length + 1);
  let at = 0;
  perFile.forEach((symbols, i) => {
    first[i] = at;
    at += symbols.length;
  });
  first[perFile.length] = at;
  const lines = new Uint32Array(all.length * 2);
  const flags = new Uint8Array(all.length);
  all.forEach((symbol, i) => {
    lines[i * 2] = symbol.start_line;
    lines[i * 2 + 1] = symbol.end_line;
    flags[i] = SCOPES.indexOf(symbol.scope_kind) | (symbol.is_conditional ? 0x80 : 0);
  });
  const nullable = (value: string | null): string => value ?? NULL_MARK;
  return [
    { tag: 'SFIL', bytes: leBytes(first) },
    // How each file was chunked: 0 = declarations (its outline is complete), else why text was used.
    { tag: 'SFBK', bytes: Uint8Array.from(fallbackCodes) },
    { tag: 'SLIN', bytes: leBytes(lines) },
    { tag: 'SFLG', bytes: flags },
    { tag: 'KIND', bytes: StringTable.encode(all.map((symbol) => symbol.kind)) },
    { tag: 'NAME', bytes: StringTable.encode(all.map((symbol) => symbol.name)) },
    { tag: 'SIGN', bytes: StringTable.encode(all.map((symbol) => symbol.signature)) },
    { tag: 'DOCS', bytes: StringTable.encode(all.map((symbol) => nullable(symbol.doc))) },
    { tag: 'PRNT', bytes: StringTable.encode(all.map((symbol) => nullable(symbol.parent_symbol))) },
    { tag: 'CTXT', bytes: StringTable.encode(all.map((symbol) => nullable(symbol.decl_context))) },
  ];
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
