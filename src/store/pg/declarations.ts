import type { OutlineSymbol } from '../../lang/types.js';
import { declarationPathAt } from '../../index/symbols-codec.js';

/** One declaration as `files.declarations` holds it: start line, end line, kind, name, parent. */
type Declaration = [number, number, string, string, string | null];

/**
 * The `files.declarations` text of an outline: only what naming the declaration at some lines
 * reads (see declarationPathAt), a few percent of the whole outline, so a view keeps every file's.
 * `text` prepares each string as the outline's own column stores it.
 */
export function encodeDeclarations(symbols: readonly OutlineSymbol[], text: (value: string) => string): string {
  return JSON.stringify(symbols.map((s): Declaration => [s.start_line, s.end_line, text(s.kind), text(s.name), s.parent_symbol === null ? null : text(s.parent_symbol)]));
}

/** The declarations of one file, decoded from its `files.declarations` text. */
export class Declarations {
  private readonly rows: Declaration[];

  constructor(text: string) {
    this.rows = JSON.parse(text) as Declaration[];
  }

  /** The display path of the declaration lines `first..last` sit in, as the outline would give it. */
  pathAt(first: number, last: number): string | null {
    const rows = this.rows;
    return declarationPathAt(
      rows.length,
      { start: (i) => rows[i]![0], end: (i) => rows[i]![1], kind: (i) => rows[i]![2], name: (i) => rows[i]![3], parent: (i) => rows[i]![4] },
      first,
      last,
    );
  }
}
