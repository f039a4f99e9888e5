/** Turn CRLF and lone CR into LF so line numbers are the same on every platform (seed 000 §3.3). */
export function normalizeNewlines(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/** Lines of normalized text; a final newline does not start an extra line. */
export function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const utf8 = new TextDecoder('utf-8');

/**
 * Decoded, normalized text of a file's bytes (BOM dropped, CRLF/CR → LF): the one rule for indexing
 * and serving. `decodeLegacy` decodes a file that is not UTF-8 (scan/binary.ts decides which).
 */
export function decodeText(bytes: Uint8Array, decodeLegacy?: (bytes: Uint8Array) => string): string {
  let text = decodeLegacy ? decodeLegacy(bytes) : utf8.decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return normalizeNewlines(text);
}
