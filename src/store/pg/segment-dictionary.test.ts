import { describe, expect, it } from 'vitest';
import { SegmentDictionary } from './segment-dictionary.js';

/** What `COPY (SELECT term, segment, df, postings …) TO STDOUT (FORMAT binary)` sends for `rows`. */
function copied(rows: readonly { term: string; segment: number; df: number; postings: number[] }[]): Buffer {
  const parts: Buffer[] = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), int32(0), int32(0)];
  for (const row of rows) {
    const term = Buffer.from(row.term, 'utf8');
    const segment = Buffer.alloc(8);
    segment.writeBigInt64BE(BigInt(row.segment));
    parts.push(int16(4), int32(term.length), term, int32(8), segment, int32(4), int32(row.df), int32(row.postings.length), Buffer.from(row.postings));
  }
  parts.push(int16(-1));
  return Buffer.concat(parts);
}

function int32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value);
  return buffer;
}

function int16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeInt16BE(value);
  return buffer;
}

const simplified = (rows: ReturnType<SegmentDictionary['rows']>): unknown => rows?.map((row) => ({ segment: row.segment, df: row.df, postings: [...row.postings] }));

describe('SegmentDictionary', () => {
  it("finds every segment's row of a term, in the order copied, and nothing for a term no row has", async () => {
    const dictionary = await SegmentDictionary.build(
      copied([
        { term: 'router', segment: 1, df: 2, postings: [1, 1, 2, 3] },
        { term: 'match', segment: 1, df: 1, postings: [5, 1] },
        { term: 'größe', segment: 2, df: 1, postings: [9, 2] },
        { term: 'router', segment: 2 ** 33 + 5, df: 1, postings: [7, 1] },
        { term: '', segment: 3, df: 1, postings: [] },
      ]),
    );
    expect(simplified(dictionary.rows('router'))).toEqual([
      { segment: 1, df: 2, postings: [1, 1, 2, 3] },
      { segment: 2 ** 33 + 5, df: 1, postings: [7, 1] },
    ]);
    expect(simplified(dictionary.rows('größe'))).toEqual([{ segment: 2, df: 1, postings: [9, 2] }]);
    expect(simplified(dictionary.rows(''))).toEqual([{ segment: 3, df: 1, postings: [] }]);
    expect(dictionary.rows('routers')).toBeUndefined();
    expect(dictionary.rows('grösse')).toBeUndefined();
  });

  it('builds a few thousand rows at a time, letting other work run in between, and finds every one', async () => {
    const rows = Array.from({ length: 30_000 }, (_, i) => ({ term: `term${i % 12_000}`, segment: Math.floor(i / 12_000) + 1, df: 1, postings: [i % 128] }));
    let turns = 0;
    let counting = true;
    const count = (): void => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const dictionary = await SegmentDictionary.build(copied(rows));
    counting = false;
    expect(turns).toBeGreaterThan(3);
    for (const i of [0, 1, 11_999, 4_321]) expect(dictionary.rows(`term${i}`)?.map((row) => row.segment)).toEqual(i < 6_000 ? [1, 2, 3] : [1, 2]);
  });

  it('an empty copy is an empty dictionary', async () => {
    expect((await SegmentDictionary.build(copied([]))).rows('router')).toBeUndefined();
  });

  it('a copy cut short, of other columns, or not a binary copy at all is damage that names its repair', async () => {
    const whole = copied([{ term: 'router', segment: 1, df: 2, postings: [1, 1, 2, 3] }]);
    const otherColumns = Buffer.concat([whole.subarray(0, 19), int16(3), whole.subarray(21)]);
    const wideDf = copied([{ term: 'router', segment: 1, df: 2, postings: [] }]);
    wideDf.writeInt32BE(5, 19 + 2 + 4 + 6 + 4 + 8);
    for (const damaged of [whole.subarray(0, whole.length - 3), whole.subarray(0, whole.length - 2), Buffer.from('router'), otherColumns, wideDf, Buffer.concat([whole, Buffer.from([0])])]) {
      await expect(SegmentDictionary.build(damaged)).rejects.toMatchObject({ code: 'INDEX_CORRUPT', message: expect.stringContaining('repodex sync --force') });
    }
  });
});
