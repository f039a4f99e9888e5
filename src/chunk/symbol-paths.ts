import type { OutlineSymbol } from '../lang/types.js';

/**
 * The symbol path a chunk sits in, for search results (`class Router › match`): the innermost
 * declaration enclosing the whole chunk, else the first declaration starting inside it, shown with
 * its enclosing declarations. Null when the chunk touches no declaration.
 */
export function chunkSymbolPath(symbols: readonly OutlineSymbol[], startLine: number, endLine: number, lines?: readonly string[]): string | null {
  // A chunk starts with the doc comment of the declaration it holds, but the declaration's range
  // starts below the comment: enclosure is judged from the chunk's first line of code.
  let codeStart = startLine;
  if (lines) while (codeStart < endLine && LEADING_COMMENT.test(lines[codeStart - 1] ?? '')) codeStart++;
  let best: OutlineSymbol | undefined;
  for (const symbol of symbols) {
    if (symbol.start_line <= codeStart && symbol.end_line >= endLine) {
      if (!best || symbol.start_line >= best.start_line) best = symbol;
    }
  }
  if (!best) best = symbols.find((symbol) => symbol.start_line >= startLine && symbol.start_line <= endLine);
  if (!best) return null;
  const chain: OutlineSymbol[] = [best];
  for (let parent = best.parent_symbol; parent !== null; ) {
    const found = symbols.find((symbol) => qualifiedName(symbol) === parent);
    if (!found || chain.includes(found)) break;
    chain.unshift(found);
    parent = found.parent_symbol;
  }
  const [outer, ...inner] = chain;
  return [`${outer!.kind} ${outer!.name}`, ...inner.map((symbol) => symbol.name)].join(' › ');
}

/** Blank lines and lines that read as comments (//, /*, *, #, --, docstring quotes). */
const LEADING_COMMENT = /^\s*($|\/\/|\/\*|\*|#(?!\s*(include|define|if|import|pragma|\[))|--|"""|''')/;

/** `Outer.Inner.name`: how parent_symbol refers to a declaration. */
export function qualifiedName(symbol: OutlineSymbol): string {
  return symbol.parent_symbol ? `${symbol.parent_symbol}.${symbol.name}` : symbol.name;
}

/** Names a chunk declares or sits inside: the name field that bm25 boosts. */
export function chunkDeclaredNames(symbols: readonly OutlineSymbol[], startLine: number, endLine: number): string[] {
  const names = new Set<string>();
  for (const symbol of symbols) {
    const declaredHere = symbol.start_line >= startLine && symbol.start_line <= endLine;
    const encloses = symbol.start_line <= startLine && symbol.end_line >= endLine;
    if (declaredHere || encloses) names.add(symbol.name);
  }
  return [...names];
}
