import type { Node } from 'web-tree-sitter';

/** Longest signature kept; longer heads (huge parameter lists, type literals) are cut with an ellipsis. */
export const MAX_SIGNATURE_CHARS = 200;

/** 0-based first row of a node. */
export function startRow(node: Node): number {
  return node.startPosition.row;
}

/** 0-based last row of a node: a node that ends at column 0 (it swallowed a newline) ends on the row before. */
export function endRow(node: Node): number {
  const end = node.endPosition;
  return end.column === 0 && end.row > node.startPosition.row ? end.row - 1 : end.row;
}

/** Source text of a node. Offsets are UTF-16 code units because the parser is fed a JS string. */
export function textOf(source: string, node: Node): string {
  return source.slice(node.startIndex, node.endIndex);
}

/**
 * A declaration head as one line: whitespace collapsed, no space just inside brackets, the
 * trailing body opener (`{`, `:`, `=`, `;`) dropped, cut to MAX_SIGNATURE_CHARS.
 */
export function collapseSignature(raw: string): string {
  let text = raw.replace(/\s+/g, ' ').replace(/([([]) /g, '$1').replace(/ ([)\],])/g, '$1').trim();
  text = text.replace(/\s*[{:=;,]$/, '').trimEnd();
  if (text.length > MAX_SIGNATURE_CHARS) text = `${text.slice(0, MAX_SIGNATURE_CHARS - 1).trimEnd()}…`;
  return text;
}

const COMMENT_OPEN = /^\s*(\/\*\*?!?|\/\/[/!]?|#|--|\*+(?!\/))\s?/;
const COMMENT_CLOSE = /\s*\*+\/\s*$/;
// C# XML doc tags carry no words of their own; the first line of prose is the doc.
const XML_DOC_TAG = /<\/?(summary|remarks|para|returns|value|example)\b[^>]*>/gi;

/** First line of prose in a comment, with comment markers stripped, or null when it has none. */
export function docFromComment(comment: string): string | null {
  for (const line of comment.split('\n')) {
    const text = line.replace(COMMENT_CLOSE, '').replace(COMMENT_OPEN, '').replace(XML_DOC_TAG, '').trim();
    if (text !== '' && !/^[*/#=-]+$/.test(text)) return text;
  }
  return null;
}

/** First line of prose in a string literal used as a docstring (quotes and prefixes stripped). */
export function docFromString(literal: string): string | null {
  const body = literal.replace(/^[rRbBuUfF]*("""|'''|"|')/, '').replace(/("""|'''|"|')$/, '');
  for (const line of body.split('\n')) {
    const text = line.trim();
    if (text !== '') return text;
  }
  return null;
}
