import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../core/prng.js';
import { decodeWindows1252, sniffBinary, textEncoding } from './binary.js';

describe('sniffBinary and textEncoding', () => {
  it('reads UTF-8 as UTF-8, and single-byte text that is not UTF-8 as Windows-1252', () => {
    const utf8 = Buffer.from('// café\nexport const a = 1;\n');
    expect(sniffBinary(utf8)).toBeUndefined();
    expect(textEncoding(utf8)).toBe('utf-8');
    const latin1 = Buffer.from([...Buffer.from('// caf'), 0xe9, 0x20, 0x80, ...Buffer.from('\nexport const a = 1;\n')]);
    expect(sniffBinary(latin1)).toBeUndefined();
    expect(textEncoding(latin1)).toBe('windows-1252');
  });

  it('keeps calling binary what is not text: control bytes, undefined Windows-1252 bytes, mostly non-ASCII bytes, random bytes', () => {
    const text = (...bytes: number[]): Buffer => Buffer.concat([Buffer.from('export const a = "'), Buffer.from(bytes), Buffer.from('";\n')]);
    expect(sniffBinary(text(0xe9, 0x01))).toBe('invalid-utf8');
    expect(sniffBinary(text(0xe9, 0x7f))).toBe('invalid-utf8');
    expect(sniffBinary(text(0xe9, 0x81))).toBe('invalid-utf8');
    expect(sniffBinary(Buffer.from(Array.from({ length: 64 }, (_, i) => 0xa0 + (i % 90))))).toBe('invalid-utf8');
    const rng = mulberry32(7);
    for (let round = 0; round < 200; round++) {
      const bytes = Buffer.from(Array.from({ length: 256 }, () => 1 + Math.floor(rng() * 255)));
      expect(sniffBinary(bytes), bytes.toString('hex')).toBe('invalid-utf8');
    }
  });

  it('decodes Windows-1252 with its own characters for 0x80–0x9F and Latin-1 above', () => {
    expect(decodeWindows1252(Uint8Array.from([0x80, 0x92, 0x9f, 0xe9, 0x41]))).toBe('€’Ÿ' + 'éA');
  });
});
