import fc from 'fast-check';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, crc32Js } from './crc32.js';

describe('crc32', () => {
  it('the JavaScript fallback equals zlib on known vectors and random bytes', () => {
    expect(crc32Js(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32Js(new Uint8Array())).toBe(0);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => crc32Js(bytes) === crc32(bytes)), { seed: 7, numRuns: 200 });
    if (typeof zlib.crc32 === 'function') expect(crc32(Buffer.from('repodex'))).toBe(zlib.crc32(Buffer.from('repodex')));
  });

  it('continues from a previous value: the CRC of a whole equals the CRC of its pieces chained', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.nat(512), (bytes, cut) => {
        const at = Math.min(cut, bytes.length);
        const whole = crc32(bytes);
        expect(crc32(bytes.subarray(at), crc32(bytes.subarray(0, at)))).toBe(whole);
        expect(crc32Js(bytes.subarray(at), crc32Js(bytes.subarray(0, at)))).toBe(whole);
      }),
      { seed: 11, numRuns: 200 },
    );
  });
});
