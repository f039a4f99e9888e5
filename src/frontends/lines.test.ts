import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Line, LineSplitter } from './lines.js';

/** The naive reference: the whole stream at once, split at each newline; a line over the limit as its length and first bytes. */
function naive(stream: Buffer, max: number, head: number): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (;;) {
    const newline = stream.indexOf(10, start);
    const end = newline < 0 ? stream.length : newline;
    if (newline < 0 && end === start) return lines;
    const bytes = stream.subarray(start, end);
    lines.push(bytes.length > max ? { kind: 'oversized', length: bytes.length, head: bytes.subarray(0, head) } : { kind: 'line', bytes });
    if (newline < 0) return lines;
    start = newline + 1;
  }
}

/** The same stream cut into chunks at `cuts`, through the splitter. */
function split(stream: Buffer, cuts: readonly number[], max: number, head: number): Line[] {
  const splitter = new LineSplitter(max, head);
  const points = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
  const lines: Line[] = [];
  let from = 0;
  for (const point of [...points, stream.length]) {
    lines.push(...splitter.push(stream.subarray(from, point)));
    from = point;
  }
  return [...lines, ...splitter.end()];
}

const plain = (lines: readonly Line[]): unknown[] => lines.map((line) => (line.kind === 'line' ? { line: line.bytes.toString('hex') } : { length: line.length, head: line.head.toString('hex') }));

describe('LineSplitter', () => {
  it('gives the lines of a stream cut anywhere, as splitting it whole does; a line over the limit as its length and first bytes', () => {
    const bytes = fc.uint8Array({ maxLength: 200 }).map((array) => Buffer.from(array.map((byte) => (byte % 7 === 0 ? 10 : byte))));
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 8 }), (stream, cuts, max, head) => {
        expect(plain(split(stream, cuts, max, head))).toEqual(plain(naive(stream, max, head)));
      }),
    );
  });

  it('keeps a character cut between chunks whole, answers an empty line, and gives a last line without its newline at the end', () => {
    const splitter = new LineSplitter();
    const text = Buffer.from('é\n\nlast', 'utf8');
    expect(splitter.push(text.subarray(0, 1))).toEqual([]);
    const lines = [...splitter.push(text.subarray(1)), ...splitter.end()];
    expect(lines.map((line) => (line.kind === 'line' ? line.bytes.toString('utf8') : null))).toEqual(['é', '', 'last']);
  });

  it('says a line is over the limit as soon as it is, before its newline comes', () => {
    const splitter = new LineSplitter(4);
    expect(splitter.push('abc')).toEqual([]);
    expect(splitter.overLimit).toBe(false);
    expect(splitter.push('de')).toEqual([]);
    expect(splitter.overLimit).toBe(true);
    expect(splitter.push('f\nok\n').map((line) => line.kind)).toEqual(['oversized', 'line']);
    expect(splitter.overLimit).toBe(false);
  });
});
