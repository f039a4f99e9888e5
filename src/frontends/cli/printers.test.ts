import { describe, expect, it } from 'vitest';
import { outlineSymbol } from '../../../test/helpers.js';
import type { ResponseOf } from '../../protocol/index.js';
import { namesItsKind, printOutline } from './printers.js';
import { styleFor } from './style.js';

describe('printOutline', () => {
  it('labels a declaration with its kind only when its signature does not say it already', () => {
    expect(namesItsKind('export const k = 1', 'constant', 'k')).toBe(true);
    expect(namesItsKind('def run()', 'function', 'run')).toBe(true);
    expect(namesItsKind('func (s *Server) Serve()', 'method', 'Serve')).toBe(true);
    expect(namesItsKind('macro_rules! m', 'macro', 'm')).toBe(true);
    expect(namesItsKind('export abstract class Router', 'class', 'Router')).toBe(true);
    expect(namesItsKind('abstract fetch(): void', 'method', 'fetch')).toBe(false);
    expect(namesItsKind('X = 1', 'variable', 'X')).toBe(false);
    // A keyword inside a longer word does not count, nor does one that is the declared name itself.
    expect(namesItsKind('constantly()', 'constant', 'constantly')).toBe(false);
    expect(namesItsKind('const fn = () => 1', 'function', 'fn')).toBe(false);
  });

  it('prints one line per declaration and a correctly counted summary', () => {
    const plain = styleFor({ isTTY: false }, {});
    const one = printOutline(
      { path: 'a.ts', language: 'typescript', parsed: true, source: 'parse', blocked: false, symbols: [{ ...outlineSymbol('constant', 'k', 1, 1), signature: 'export const k = 1' }] } satisfies ResponseOf<'outline'>,
      plain,
    );
    expect(one.split('\n')).toEqual(['1-1  export const k = 1', '1 declaration in a.ts (typescript, from a fresh parse)']);
    const two = printOutline(
      {
        path: 'a.ts',
        language: 'typescript',
        parsed: true,
        source: 'index',
        blocked: false,
        symbols: [
          { ...outlineSymbol('class', 'A', 1, 3), signature: 'export abstract class A' },
          { ...outlineSymbol('method', 'fetch', 2, 2, 'A'), signature: 'abstract fetch(): void' },
        ],
      } satisfies ResponseOf<'outline'>,
      plain,
    );
    expect(two.split('\n')).toEqual(['1-3  export abstract class A', '2-2    method abstract fetch(): void', '2 declarations in a.ts (typescript, from the index)']);
  });
});
