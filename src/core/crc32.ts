import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;

/** CRC-32 (IEEE, as zlib) in JavaScript: for Node releases before 20.15, which lack zlib.crc32. */
export function crc32Js(bytes: Uint8Array, initial = 0): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = (initial ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) crc = table[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/**
 * CRC-32 of bytes, continuing from `initial` (the CRC of the bytes before them, so a file can be
 * checksummed in pieces): zlib's native one where Node has it (20.15+), else the JavaScript one.
 */
export const crc32: (bytes: Uint8Array, initial?: number) => number = native ? (bytes, initial = 0) => native(bytes, initial) : crc32Js;
