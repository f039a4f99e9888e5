import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { ChunkFallback } from '../chunk/tree-sitter-chunker.js';
import type { OutlineSymbol, ScopeKind } from '../lang/types.js';
import { packOutlineText, unpackOutlineText } from './symbols-codec.js';

/** A parse result: a file's chunk spans, its outline, and why it was chunked as text (null: by declarations). */
export interface ParseResult {
  readonly spans: readonly { readonly startLine: number; readonly endLine: number }[];
  readonly symbols: readonly OutlineSymbol[];
  readonly fallback: ChunkFallback;
}

/** A parse result packed for the parse cache, and the part of it a segment stores as the file's outline text. */
export interface PackedParse {
  readonly payload: Uint8Array;
  readonly outlineText: Uint8Array;
}

/** One declaration without its signature and doc (those are in the outline text). */
type PackedSymbol = [kind: string, name: string, start: number, end: number, parent: string | null, scope: ScopeKind, conditional: 0 | 1, context: string | null];

/**
 * A parse result as the parse cache stores it:
 *
 *   length of A u32 | A: deflated JSON [spans, declarations without signature and doc, fallback]
 *   | B: the outline text (signatures and docs: packOutlineText), which a segment stores as it is
 *
 * Made where the parse ran (a parse thread), so the sync's own thread neither serializes nor
 * deflates it, and a result read back from the cache gives a segment its outline text for free.
 */
export function packParse(result: ParseResult): PackedParse {
  const symbols = result.symbols.map((s): PackedSymbol => [s.kind, s.name, s.start_line, s.end_line, s.parent_symbol, s.scope_kind, s.is_conditional ? 1 : 0, s.decl_context]);
  const head = deflateRawSync(Buffer.from(JSON.stringify([result.spans.map((span) => [span.startLine, span.endLine]), symbols, result.fallback]), 'utf8'), { level: 1 });
  const outlineText = packOutlineText(result.symbols);
  const payload = new Uint8Array(4 + head.length + outlineText.length);
  new DataView(payload.buffer).setUint32(0, head.length, true);
  payload.set(head, 4);
  payload.set(outlineText, 4 + head.length);
  return { payload, outlineText: payload.subarray(4 + head.length) };
}

/** A packed parse result read back; throws when it does not decode (then the file is parsed again). */
export function unpackParse(payload: Uint8Array): ParseResult & { readonly packed: PackedParse } {
  if (payload.length < 4) throw new Error('parse record too short');
  const headLength = new DataView(payload.buffer, payload.byteOffset, 4).getUint32(0, true);
  if (4 + headLength > payload.length) throw new Error('parse record cut short');
  const [spans, symbols, fallback] = JSON.parse(inflateRawSync(payload.subarray(4, 4 + headLength)).toString('utf8')) as [[number, number][], PackedSymbol[], ChunkFallback];
  const outlineText = payload.subarray(4 + headLength);
  const text = unpackOutlineText(outlineText, symbols.length);
  if (!text) throw new Error('parse record outline does not decode');
  return {
    spans: spans.map(([startLine, endLine]) => ({ startLine, endLine })),
    symbols: symbols.map(([kind, name, start_line, end_line, parent_symbol, scope_kind, conditional, decl_context], i) => ({
      kind,
      name,
      signature: text.signatures[i]!,
      start_line,
      end_line,
      doc: text.docs[i]!,
      parent_symbol,
      scope_kind,
      is_conditional: conditional === 1,
      decl_context,
    })),
    fallback,
    packed: { payload, outlineText },
  };
}
