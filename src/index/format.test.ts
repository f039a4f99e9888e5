import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRepodexError } from '../core/errors.js';
import { FORMAT_VERSION } from '../core/version.js';
import { encodeSymbols } from './symbols-codec.js';
import { FsIndexView } from '../store/fs/fs-view.js';
import { tokenize } from '../text/tokenizer.js';
import { IndexBuilder } from './builder.js';
import { FileTable, encodeFiles } from './files-codec.js';
import { Artifact, MAGIC, type Section, StringTable, VarintWriter, encodeArtifact, f64View, leBytes, tag, u32View } from './format.js';
import type { IndexMeta } from './meta.js';
import type { FileRecord } from './model.js';

// Property runs are seeded so every run is the same; FC_SEED=<n> explores (or replays) another seed.
fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20240603) });

const HEADER_BYTES = 32;
const TOC_ENTRY_BYTES = 16;

/** The error code a call throws (`undefined` when it does not throw); errors are matched on code, never on class. */
function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isRepodexError(error) ? error.code : `not a RepodexError: ${String(error)}`;
  }
  return undefined;
}

function thrownMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return '';
}

/** Fix the header checksum after deliberately editing the payload, so a later check is what fails. */
function reseal(buffer: Buffer): Buffer {
  buffer.writeUInt32LE(crc32(buffer.subarray(HEADER_BYTES)), 20);
  return buffer;
}

const sample = (): Section[] => [
  { tag: 'AAAA', bytes: Uint8Array.from([1, 2, 3]) },
  { tag: 'BBBB', bytes: new Uint8Array(0) },
  { tag: 'CCCC', bytes: leBytes(Uint32Array.from([7, 0xffffffff, 42])) },
];

/** Four distinct printable-ASCII tags. */
const tagArb = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 '.split('')), minLength: 4, maxLength: 4 });
const sectionsArb = fc.uniqueArray(fc.record({ tag: tagArb, bytes: fc.uint8Array({ maxLength: 300 }) }), {
  selector: (section) => section.tag,
  maxLength: 8,
});

describe('artifact round trip', () => {
  it('reads back every section by tag, with the header it promises', () => {
    const buffer = encodeArtifact('TEST', sample());
    expect(buffer.readUInt32LE(0)).toBe(MAGIC);
    expect(buffer.subarray(0, 4).toString('latin1')).toBe('RPDX');
    expect(buffer.subarray(4, 8).toString('latin1')).toBe('TEST');
    expect(buffer.readUInt32LE(8)).toBe(FORMAT_VERSION);
    expect(buffer.readUInt32LE(12)).toBe(3);
    expect(buffer.readUInt32LE(16)).toBe(buffer.length - HEADER_BYTES);
    const artifact = new Artifact('test.bin', buffer, 'TEST', true);
    expect([...artifact.bytes('AAAA')]).toEqual([1, 2, 3]);
    expect(artifact.bytes('BBBB').length).toBe(0);
    expect([...artifact.u32('CCCC')]).toEqual([7, 0xffffffff, 42]);
    expect(artifact.has('AAAA')).toBe(true);
    expect(artifact.has('ZZZZ')).toBe(false);
  });

  it('a missing required section is INDEX_CORRUPT', () => {
    const artifact = new Artifact('test.bin', encodeArtifact('TEST', sample()), 'TEST', true);
    expect(thrownCode(() => artifact.bytes('ZZZZ'))).toBe('INDEX_CORRUPT');
  });

  it('property: any sections round-trip, 8-byte aligned, and encoding is deterministic', () => {
    fc.assert(
      fc.property(sectionsArb, (sections) => {
        const buffer = encodeArtifact('PROP', sections);
        expect(encodeArtifact('PROP', sections).equals(buffer)).toBe(true);
        expect(buffer.length % 8).toBe(0);
        const artifact = new Artifact('prop.bin', buffer, 'PROP', true);
        for (const section of sections) {
          expect(Buffer.from(artifact.bytes(section.tag)).equals(Buffer.from(section.bytes))).toBe(true);
        }
        for (let i = 0; i < sections.length; i++) {
          expect(buffer.readUInt32LE(HEADER_BYTES + i * TOC_ENTRY_BYTES + 4) % 8).toBe(0);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('typed columns read back through u32/f64 views, also from unaligned bytes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 64 }),
        fc.array(fc.double({ noNaN: true }), { maxLength: 32 }),
        fc.integer({ min: 1, max: 7 }),
        (u32s, f64s, shift) => {
          const u32 = Uint32Array.from(u32s);
          const f64 = Float64Array.from(f64s);
          const artifact = new Artifact('t.bin', encodeArtifact('TYPE', [{ tag: 'U32 ', bytes: leBytes(u32) }, { tag: 'F64 ', bytes: leBytes(f64) }]), 'TYPE', true);
          expect([...artifact.u32('U32 ')]).toEqual(u32s);
          expect([...artifact.f64('F64 ')]).toEqual([...f64]);
          // Copies at an odd offset force the slow, byte-by-byte path.
          const unalignedU32 = new Uint8Array(u32.byteLength + shift).subarray(shift);
          unalignedU32.set(leBytes(u32));
          expect([...u32View(unalignedU32)]).toEqual(u32s);
          const unalignedF64 = new Uint8Array(f64.byteLength + shift).subarray(shift);
          unalignedF64.set(leBytes(f64));
          expect([...f64View(unalignedF64)]).toEqual([...f64]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('section tags are exactly four characters', () => {
    expect(() => tag('ABC')).toThrow();
    expect(() => tag('ABCDE')).toThrow();
    expect(tag('RPDX')).toBe(MAGIC);
  });
});

describe('unknown sections', () => {
  it('are skipped by readers that do not know them', () => {
    const withExtra = [sample()[0]!, { tag: 'NEW1', bytes: Uint8Array.from([9, 9, 9, 9, 9]) }, ...sample().slice(1)];
    const artifact = new Artifact('test.bin', encodeArtifact('TEST', withExtra), 'TEST', true);
    expect([...artifact.bytes('AAAA')]).toEqual([1, 2, 3]);
    expect([...artifact.u32('CCCC')]).toEqual([7, 0xffffffff, 42]);
  });

  it('files.bin with a section from a newer writer still loads as a catalog', () => {
    const records: FileRecord[] = [
      { path: 'a.ts', size: 10, mtimeMs: 1_700_000_000_123.5, state: 'indexed', language: 'typescript', contentHash: new Uint8Array(32).fill(7), firstChunk: 0, chunkCount: 2 },
      { path: 'b/c.md', size: 3, mtimeMs: 5, state: 'binary', language: 'markdown', contentHash: new Uint8Array(32), firstChunk: 2, chunkCount: 0 },
    ];
    const sections = encodeFiles(records, [{ path: '', mtimeMs: 1 }, { path: 'b', mtimeMs: 2 }], [{ path: '.repodex/ignore', size: -1, mtimeMs: 0 }]);
    sections.splice(3, 0, { tag: 'XTRA', bytes: Uint8Array.from({ length: 13 }, (_, i) => i) });
    const table = new FileTable(new Artifact('files.bin', encodeArtifact('FILE', sections), 'FILE', true));
    expect(table.count).toBe(2);
    records.forEach((expected, i) => {
      const { contentHash, ...rest } = table.record(i);
      const { contentHash: expectedHash, ...expectedRest } = expected;
      expect(rest).toEqual(expectedRest);
      expect([...contentHash]).toEqual([...expectedHash]);
    });
    expect(table.dirs).toEqual([{ path: '', mtimeMs: 1 }, { path: 'b', mtimeMs: 2 }]);
    expect(table.controls).toEqual([{ path: '.repodex/ignore', size: -1, mtimeMs: 0 }]);
  });
});

describe('damaged artifacts', () => {
  const good = (): Buffer => encodeArtifact('TEST', sample());

  it('checksum mismatch → INDEX_CORRUPT (and readable when verification is off)', () => {
    const buffer = good();
    buffer[buffer.length - 40]! ^= 0xff;
    expect(thrownCode(() => new Artifact('t.bin', buffer, 'TEST', true))).toBe('INDEX_CORRUPT');
    expect(thrownMessage(() => new Artifact('t.bin', buffer, 'TEST', true))).toMatch(/t\.bin.*checksum/);
    expect(thrownCode(() => new Artifact('t.bin', buffer, 'TEST', false))).toBeUndefined();
  });

  it('property: flipping any payload byte is detected', () => {
    const length = good().length;
    fc.assert(
      fc.property(fc.integer({ min: HEADER_BYTES, max: length - 1 }), fc.integer({ min: 1, max: 255 }), (at, mask) => {
        const buffer = good();
        buffer[at]! ^= mask;
        expect(thrownCode(() => new Artifact('t.bin', buffer, 'TEST', true))).toBe('INDEX_CORRUPT');
      }),
    );
  });

  it('truncated → INDEX_CORRUPT', () => {
    const buffer = good();
    for (const cut of [1, 8, buffer.length - HEADER_BYTES, buffer.length - 10, buffer.length]) {
      const truncated = buffer.subarray(0, buffer.length - cut);
      expect(thrownCode(() => new Artifact('t.bin', truncated, 'TEST', true))).toBe('INDEX_CORRUPT');
    }
    expect(thrownMessage(() => new Artifact('t.bin', buffer.subarray(0, buffer.length - 8), 'TEST', true))).toMatch(/truncated/);
    // Extra bytes after the declared payload are damage too.
    expect(thrownCode(() => new Artifact('t.bin', Buffer.concat([buffer, Buffer.alloc(8)]), 'TEST', true))).toBe('INDEX_CORRUPT');
  });

  it('wrong kind → INDEX_CORRUPT', () => {
    expect(thrownCode(() => new Artifact('t.bin', good(), 'POST', true))).toBe('INDEX_CORRUPT');
    expect(thrownMessage(() => new Artifact('t.bin', good(), 'POST', true))).toMatch(/POST/);
  });

  it('not an artifact (bad magic, empty, text) → INDEX_CORRUPT', () => {
    const buffer = good();
    buffer.write('JUNK', 0, 'latin1');
    expect(thrownCode(() => new Artifact('t.bin', buffer, 'TEST', true))).toBe('INDEX_CORRUPT');
    expect(thrownCode(() => new Artifact('t.bin', Buffer.alloc(0), 'TEST', true))).toBe('INDEX_CORRUPT');
    expect(thrownCode(() => new Artifact('t.bin', Buffer.from('{"not":"an artifact"}'), 'TEST', true))).toBe('INDEX_CORRUPT');
  });

  it('wrong format version → INDEX_INCOMPATIBLE (newer and older)', () => {
    for (const version of [FORMAT_VERSION + 1, FORMAT_VERSION - 1, 0xffffffff]) {
      const buffer = good();
      buffer.writeUInt32LE(version >>> 0, 8);
      expect(thrownCode(() => new Artifact('t.bin', buffer, 'TEST', true))).toBe('INDEX_INCOMPATIBLE');
      expect(thrownCode(() => new Artifact('t.bin', buffer, 'TEST', false))).toBe('INDEX_INCOMPATIBLE');
    }
  });

  it('a table of contents pointing outside the file → INDEX_CORRUPT, even with a valid checksum', () => {
    const pastEnd = good();
    pastEnd.writeUInt32LE(pastEnd.length, HEADER_BYTES + 4); // first section's offset
    expect(thrownCode(() => new Artifact('t.bin', reseal(pastEnd), 'TEST', true))).toBe('INDEX_CORRUPT');
    const tooLong = good();
    tooLong.writeUInt32LE(0xfffffff0, HEADER_BYTES + 8); // first section's length
    expect(thrownCode(() => new Artifact('t.bin', reseal(tooLong), 'TEST', true))).toBe('INDEX_CORRUPT');
    const tooMany = good();
    tooMany.writeUInt32LE(1_000_000, 12); // section count (header, not covered by the checksum)
    expect(thrownCode(() => new Artifact('t.bin', tooMany, 'TEST', true))).toBe('INDEX_CORRUPT');
  });
});

describe('StringTable', () => {
  const stringsArb = fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { maxLength: 60 });

  it('round-trips strings, including empty and non-ASCII ones', () => {
    const values = ['', 'a', 'héllo', '日本語', '😀 emoji', 'tab\there', ''];
    const table = new StringTable(StringTable.encode(values));
    expect(table.count).toBe(values.length);
    expect(values.map((_, i) => table.get(i))).toEqual(values);
    const empty = new StringTable(StringTable.encode([]));
    expect(empty.count).toBe(0);
    expect(empty.find('')).toBe(-1);
  });

  it('property: round trip, also from unaligned bytes inside an artifact', () => {
    fc.assert(
      fc.property(stringsArb, fc.integer({ min: 0, max: 7 }), (values, shift) => {
        const encoded = StringTable.encode(values);
        const direct = new StringTable(encoded);
        expect(Array.from({ length: direct.count }, (_, i) => direct.get(i))).toEqual(values);
        const shifted = new Uint8Array(encoded.length + shift).subarray(shift);
        shifted.set(encoded);
        const fromShifted = new StringTable(shifted);
        expect(Array.from({ length: fromShifted.count }, (_, i) => fromShifted.get(i))).toEqual(values);
        const artifact = new Artifact('s.bin', encodeArtifact('STRS', [{ tag: 'PAD ', bytes: new Uint8Array(shift) }, { tag: 'STR ', bytes: encoded }]), 'STRS', true);
        const stored = artifact.strings('STR ');
        expect(Array.from({ length: stored.count }, (_, i) => stored.get(i))).toEqual(values);
      }),
      { numRuns: 200 },
    );
  });

  it('property: find on a sorted table agrees with Array.indexOf', () => {
    fc.assert(
      fc.property(stringsArb, fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { maxLength: 20 }), (raw, probes) => {
        const sorted = [...new Set(raw)].sort();
        const table = new StringTable(StringTable.encode(sorted));
        for (const value of [...sorted, ...probes, '', '\uffff']) expect(table.find(value)).toBe(sorted.indexOf(value));
      }),
      { numRuns: 300 },
    );
  });

  it('find uses JS string (UTF-16 code unit) order, as the index sorts its terms', () => {
    const sorted = ['Zeta', 'alpha', 'zz', 'é', '日', '😀', '\uffff'].sort();
    const table = new StringTable(StringTable.encode(sorted));
    sorted.forEach((value, i) => expect(table.find(value)).toBe(i));
  });
});

/** A naive unsigned LEB128 decoder (the reference for VarintWriter). */
function decodeVarints(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let value = 0;
  let scale = 1;
  for (const byte of bytes) {
    value += (byte & 0x7f) * scale;
    if (byte & 0x80) scale *= 128;
    else {
      out.push(value);
      value = 0;
      scale = 1;
    }
  }
  expect(scale).toBe(1); // no dangling continuation byte
  return out;
}

describe('varints', () => {
  it('use 1 to 5 bytes at the LEB128 boundaries', () => {
    const cases: [number, number][] = [
      [0, 1], [127, 1], [128, 2], [16383, 2], [16384, 3], [2 ** 21 - 1, 3], [2 ** 21, 4], [2 ** 28 - 1, 4], [2 ** 28, 5], [0xffffffff, 5],
    ];
    for (const [value, length] of cases) {
      const writer = new VarintWriter();
      writer.write(value);
      expect(writer.length).toBe(length);
      expect(decodeVarints(writer.bytes())).toEqual([value]);
    }
  });

  it('property: any sequence of u32 values round-trips', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 0xffffffff })), { maxLength: 200 }), (values) => {
        const writer = new VarintWriter();
        for (const value of values) writer.write(value);
        expect(decodeVarints(writer.bytes())).toEqual(values);
      }),
      { numRuns: 300 },
    );
  });

  it('grows past its initial buffer without losing bytes', () => {
    const writer = new VarintWriter();
    const values = Array.from({ length: 40_000 }, (_, i) => (i % 3 === 0 ? 0xffffffff : i * 7919));
    for (const value of values) writer.write(value);
    expect(writer.length).toBeGreaterThan(1 << 16);
    expect(decodeVarints(writer.bytes())).toEqual(values);
  });
});

describe('postings written by the builder, read back through the format (property)', () => {
  const WORDS = ['alpha', 'Beta', 'gammaRay', 'delta_value', 'HTTPServer', 'x', 'the', 'v2', 'epsilon-zeta', 'alpha', 'Ω'];
  const chunkText = fc.array(fc.constantFrom(...WORDS), { maxLength: 30 }).map((words) => words.join(' '));

  it('df, chunk ids, tfs and document lengths equal a naive inverted index', () => {
    fc.assert(
      fc.property(fc.array(chunkText, { minLength: 1, maxLength: 25 }), (texts) => {
        const builder = new IndexBuilder();
        texts.forEach((text, i) => builder.addChunk({ fileId: 0, startLine: i + 1, endLine: i + 1, hash: new Uint8Array(32), snippet: text, text }));
        const built = builder.finish();
        const record: FileRecord = { path: 'f.ts', size: 1, mtimeMs: 1, state: 'indexed', language: 'typescript', contentHash: new Uint8Array(32), firstChunk: 0, chunkCount: texts.length };
        const view = new FsIndexView(
          {} as unknown as IndexMeta,
          new Artifact('files.bin', encodeArtifact('FILE', encodeFiles([record], [], [])), 'FILE', true),
          new Artifact('chunks.bin', encodeArtifact('CHNK', built.chunks), 'CHNK', true),
          new Artifact('terms.bin', encodeArtifact('TERM', built.terms), 'TERM', true),
          new Artifact('postings.bin', encodeArtifact('POST', built.postings), 'POST', true),
          () => new Artifact('symbols.bin', encodeArtifact('SYMB', encodeSymbols([[]], [0])), 'SYMB', true),
        );
        const naive = new Map<string, Map<number, number>>();
        texts.forEach((text, chunk) => {
          const terms = tokenize(text);
          expect(view.chunkTokens[chunk]).toBe(terms.length);
          for (const term of terms) {
            const byChunk = naive.get(term) ?? new Map<number, number>();
            byChunk.set(chunk, (byChunk.get(chunk) ?? 0) + 1);
            naive.set(term, byChunk);
          }
        });
        expect(view.stats.termCount).toBe(naive.size);
        expect(view.stats.chunkCount).toBe(texts.length);
        for (const [term, byChunk] of naive) {
          const list = view.postingsOf(term);
          expect(list?.df).toBe(byChunk.size);
          expect([...list!.chunkIds]).toEqual([...byChunk.keys()]);
          expect([...list!.tfs]).toEqual([...byChunk.values()]);
        }
        expect(view.postingsOf('nosuchterm')).toBeUndefined();
        expect(view.postingsOf('the')).toBeUndefined();
      }),
      { numRuns: 150 },
    );
  });
});
