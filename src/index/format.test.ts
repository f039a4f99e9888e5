import { closeSync, openSync, writeFileSync } from 'node:fs';
import { crc32 as zlibCrc } from 'node:zlib';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { isRepodexError } from '../core/errors.js';
import { FORMAT_VERSION } from '../core/version.js';
import { Artifact, ArtifactFile, ArtifactWriter, HEADER_BYTES, MAGIC, type Section, CodedStrings, StringTable, encodeArtifact, f64View, fileSink, leBytes, tag, u32View, varintLength, writeVarint } from './format.js';

// Property runs are seeded so every run is the same; FC_SEED=<n> explores (or replays) another seed.
fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20240603) });

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

const sample = (): Section[] => [
  { tag: 'AAAA', bytes: Uint8Array.from([1, 2, 3]) },
  { tag: 'BBBB', bytes: new Uint8Array(0) },
  { tag: 'CCCC', bytes: leBytes(Uint32Array.from([7, 0xffffffff, 42])) },
];

const parse = (buffer: Uint8Array, kind = 'TEST'): Artifact => Artifact.fromBuffer('t.rpdx', kind, buffer);

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
    expect(buffer.readUInt32LE(20)).toBe(buffer.length);
    // The TOC is last: its offset plus its entries end the file.
    expect(buffer.readUInt32LE(16) + 3 * TOC_ENTRY_BYTES).toBe(buffer.length);
    const artifact = parse(buffer);
    expect([...artifact.bytes('AAAA')]).toEqual([1, 2, 3]);
    expect(artifact.bytes('BBBB').length).toBe(0);
    expect([...artifact.u32('CCCC')]).toEqual([7, 0xffffffff, 42]);
    expect(artifact.has('AAAA')).toBe(true);
    expect(artifact.has('ZZZZ')).toBe(false);
  });

  it('a missing required section is INDEX_CORRUPT', () => {
    const artifact = parse(encodeArtifact('TEST', sample()));
    expect(thrownCode(() => artifact.bytes('ZZZZ'))).toBe('INDEX_CORRUPT');
  });

  it('property: any sections round-trip, 8-byte aligned, and encoding is deterministic', () => {
    fc.assert(
      fc.property(sectionsArb, (sections) => {
        const buffer = encodeArtifact('PROP', sections);
        expect(encodeArtifact('PROP', sections).equals(buffer)).toBe(true);
        const artifact = parse(buffer, 'PROP');
        for (const section of sections) {
          expect(Buffer.from(artifact.bytes(section.tag)).equals(Buffer.from(section.bytes))).toBe(true);
        }
        const tocOffset = buffer.readUInt32LE(16);
        expect(tocOffset % 8).toBe(0);
        for (let i = 0; i < sections.length; i++) expect(buffer.readUInt32LE(tocOffset + i * TOC_ENTRY_BYTES + 4) % 8).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('a file written section by section equals the in-memory encoding, and reads back lazily', () => {
    const path = join(tempDir(), 'stream.rpdx');
    const fd = openSync(path, 'w');
    const writer = new ArtifactWriter(fileSink(fd), 'TEST');
    for (const section of sample()) writer.add(section.tag, section.bytes);
    const { length, headerCrc } = writer.finish();
    closeSync(fd);
    const memory = encodeArtifact('TEST', sample());
    expect(length).toBe(memory.length);
    const file = ArtifactFile.open(path, 'stream.rpdx', 'TEST');
    try {
      expect(file.layout.headerCrc).toBe(headerCrc);
      expect([...file.read(['CCCC']).u32('CCCC')]).toEqual([7, 0xffffffff, 42]);
      expect(file.read(['CCCC']).has('AAAA')).toBe(false);
      expect([...file.readAll().bytes('AAAA')]).toEqual([1, 2, 3]);
    } finally {
      file.close();
    }
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
          const artifact = parse(encodeArtifact('TYPE', [{ tag: 'U32 ', bytes: leBytes(u32) }, { tag: 'F64 ', bytes: leBytes(f64) }]), 'TYPE');
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
    const artifact = parse(encodeArtifact('TEST', withExtra));
    expect([...artifact.bytes('AAAA')]).toEqual([1, 2, 3]);
    expect([...artifact.u32('CCCC')]).toEqual([7, 0xffffffff, 42]);
  });
});

describe('damaged artifacts', () => {
  const good = (): Buffer => encodeArtifact('TEST', sample());

  it('a flipped section byte → INDEX_CORRUPT naming the file and the section', () => {
    const buffer = good();
    buffer[HEADER_BYTES]! ^= 0xff; // first byte of section AAAA
    expect(thrownCode(() => parse(buffer))).toBe('INDEX_CORRUPT');
    expect(thrownMessage(() => parse(buffer))).toMatch(/t\.rpdx.*AAAA.*checksum/);
  });

  it('property: flipping any byte anywhere (header, sections, padding, TOC) is detected', () => {
    const length = good().length;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: length - 1 }), fc.integer({ min: 1, max: 255 }), (at, mask) => {
        const buffer = good();
        buffer[at]! ^= mask;
        expect(['INDEX_CORRUPT', 'INDEX_INCOMPATIBLE']).toContain(thrownCode(() => parse(buffer)));
      }),
      { numRuns: 400 },
    );
  });

  it('truncated or extended → INDEX_CORRUPT', () => {
    const buffer = good();
    for (const cut of [1, 8, buffer.length - HEADER_BYTES, buffer.length - 10, buffer.length]) {
      const truncated = buffer.subarray(0, buffer.length - cut);
      expect(thrownCode(() => parse(truncated))).toBe('INDEX_CORRUPT');
    }
    expect(thrownMessage(() => parse(buffer.subarray(0, buffer.length - 8)))).toMatch(/truncated/);
    expect(thrownCode(() => parse(Buffer.concat([buffer, Buffer.alloc(8)])))).toBe('INDEX_CORRUPT');
  });

  it('wrong kind → INDEX_CORRUPT', () => {
    expect(thrownCode(() => parse(good(), 'POST'))).toBe('INDEX_CORRUPT');
    expect(thrownMessage(() => parse(good(), 'POST'))).toMatch(/POST/);
  });

  it('not an artifact (bad magic, empty, text) → INDEX_CORRUPT', () => {
    const buffer = good();
    buffer.write('JUNK', 0, 'latin1');
    expect(thrownCode(() => parse(buffer))).toBe('INDEX_CORRUPT');
    expect(thrownCode(() => parse(Buffer.alloc(0)))).toBe('INDEX_CORRUPT');
    expect(thrownCode(() => parse(Buffer.from('{"not":"an artifact"}'.padEnd(64, ' '))))).toBe('INDEX_CORRUPT');
  });

  it('another format version (with a valid header checksum) → INDEX_INCOMPATIBLE (newer and older)', () => {
    for (const version of [FORMAT_VERSION + 1, FORMAT_VERSION - 1, 0xffffffff]) {
      const buffer = good();
      buffer.writeUInt32LE(version >>> 0, 8);
      buffer.writeUInt32LE(zlibCrc(buffer.subarray(0, HEADER_BYTES - 4)), HEADER_BYTES - 4);
      expect(thrownCode(() => parse(buffer))).toBe('INDEX_INCOMPATIBLE');
    }
  });

  it('a table of contents pointing outside the file → INDEX_CORRUPT, even with valid checksums', () => {
    const buffer = good();
    const tocOffset = buffer.readUInt32LE(16);
    buffer.writeUInt32LE(buffer.length, tocOffset + 4); // first section's offset
    buffer.writeUInt32LE(zlibCrc(buffer.subarray(tocOffset)), 24);
    buffer.writeUInt32LE(zlibCrc(buffer.subarray(0, HEADER_BYTES - 4)), HEADER_BYTES - 4);
    expect(thrownMessage(() => parse(buffer))).toMatch(/out of bounds/);
  });

  it('an on-disk file loses a byte: opening it says truncated', () => {
    const path = join(tempDir(), 'cut.rpdx');
    writeFileSync(path, good().subarray(0, good().length - 3));
    expect(thrownMessage(() => ArtifactFile.open(path, 'cut.rpdx', 'TEST'))).toMatch(/truncated/);
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
        const artifact = parse(encodeArtifact('STRS', [{ tag: 'PAD ', bytes: new Uint8Array(shift) }, { tag: 'STR ', bytes: encoded }]), 'STRS');
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

describe('CodedStrings', () => {
  it('property: round trip at every id width, also from unaligned bytes inside an artifact', () => {
    // Few distinct values (ids of one byte), a few hundred (two bytes), and over 65,536 (four).
    const cases = [
      fc.array(fc.constantFrom('class', 'method', '', 'é'), { maxLength: 80 }),
      fc.array(fc.integer({ min: 0, max: 700 }).map((n) => `name${n}`), { minLength: 300, maxLength: 600 }),
      fc.constant(Array.from({ length: 70_000 }, (_, i) => `v${i % 66_000}`)),
    ];
    for (const values of cases) {
      fc.assert(
        fc.property(values, fc.integer({ min: 0, max: 7 }), (list, shift) => {
          const encoded = CodedStrings.encode(list);
          const distinct = new Set(list).size;
          expect(Buffer.from(encoded).readUInt32LE(4)).toBe(distinct <= 256 ? 1 : distinct <= 65_536 ? 2 : 4);
          const artifact = parse(encodeArtifact('STRS', [{ tag: 'PAD ', bytes: new Uint8Array(shift) }, { tag: 'STR ', bytes: encoded }]), 'STRS');
          const stored = artifact.coded('STR ');
          expect(stored.count).toBe(list.length);
          expect(stored.wellFormed()).toBe(true);
          expect(Array.from({ length: stored.count }, (_, i) => stored.get(i))).toEqual(list);
          expect(stored.distinct.count).toBe(new Set(list).size);
        }),
        { numRuns: values === cases[2] ? 2 : 50 },
      );
    }
  });

  it('stores each distinct string once', () => {
    const header = 'Licensed to the Apache Software Foundation (ASF) under one or more contributor license agreements.';
    const values = Array.from({ length: 1000 }, (_, i) => (i % 10 === 0 ? `snippet ${i}` : header));
    expect(CodedStrings.encode(values).length).toBeLessThan(StringTable.encode(values).length / 20);
  });

  it('an id past the distinct strings is damage that wellFormed reports', () => {
    const encoded = Buffer.from(CodedStrings.encode(['a', 'b', 'a']));
    expect(encoded.readUInt32LE(4)).toBe(1);
    encoded[8 + 2] = 7;
    expect(new CodedStrings(encoded).wellFormed()).toBe(false);
    const widths = Buffer.from(encoded);
    widths.writeUInt32LE(3, 4);
    expect(() => new CodedStrings(widths)).toThrow(/id width 3/);
  });
});

/** A naive unsigned LEB128 decoder (the reference for writeVarint). */
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

/** Encode `values` back to back, sized by varintLength. */
function encodeVarints(values: number[]): Uint8Array {
  const bytes = new Uint8Array(values.reduce((sum, value) => sum + varintLength(value), 0));
  let at = 0;
  for (const value of values) at = writeVarint(bytes, at, value);
  expect(at).toBe(bytes.length); // varintLength agrees with what writeVarint wrote
  return bytes;
}

describe('varints', () => {
  it('use 1 to 5 bytes at the LEB128 boundaries', () => {
    const cases: [number, number][] = [
      [0, 1], [127, 1], [128, 2], [16383, 2], [16384, 3], [2 ** 21 - 1, 3], [2 ** 21, 4], [2 ** 28 - 1, 4], [2 ** 28, 5], [0xffffffff, 5],
    ];
    for (const [value, length] of cases) {
      expect(varintLength(value)).toBe(length);
      expect(decodeVarints(encodeVarints([value]))).toEqual([value]);
    }
  });

  it('property: any sequence of u32 values round-trips', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 0xffffffff })), { maxLength: 200 }), (values) => {
        expect(decodeVarints(encodeVarints(values))).toEqual(values);
      }),
      { numRuns: 300 },
    );
  });
});
