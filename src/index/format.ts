import { endianness } from 'node:os';
import { crc32 } from '../core/crc32.js';
import { RepodexError } from '../core/errors.js';
import { FORMAT_VERSION } from '../core/version.js';

/**
 * Every `.bin` artifact is one sectioned file (little-endian throughout):
 *
 *   header (32 bytes): magic "RPDX" | kind (4 ASCII) | format version u32 | section count u32 |
 *                      payload length u32 | payload crc32 u32 | reserved 8 bytes
 *   payload:           TOC (count × [tag u32 | offset u32 | length u32 | reserved u32])
 *                      then each section, 8-byte aligned; offsets count from the file start.
 *
 * Readers look sections up by tag and skip tags they do not know, so a section can be added
 * without breaking older readers; anything else bumps FORMAT_VERSION (see core/version.ts).
 */
export const MAGIC = 0x58445052; // "RPDX" read as little-endian u32
const HEADER_BYTES = 32;
const TOC_ENTRY_BYTES = 16;
const LITTLE_ENDIAN = endianness() === 'LE';

/** A four-character tag as a little-endian u32. */
export function tag(name: string): number {
  if (name.length !== 4) throw new Error(`section tag must be 4 characters: ${name}`);
  return (name.charCodeAt(0) | (name.charCodeAt(1) << 8) | (name.charCodeAt(2) << 16) | (name.charCodeAt(3) << 24)) >>> 0;
}

/** One named block of an artifact. */
export interface Section {
  readonly tag: string;
  readonly bytes: Uint8Array;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Serialize sections into one artifact file. */
export function encodeArtifact(kind: string, sections: readonly Section[]): Buffer {
  const tocBytes = sections.length * TOC_ENTRY_BYTES;
  let offset = align8(HEADER_BYTES + tocBytes);
  const offsets: number[] = [];
  for (const section of sections) {
    offsets.push(offset);
    offset = align8(offset + section.bytes.length);
  }
  const total = offset;
  if (total > 0xffffffff) throw new RepodexError('INTERNAL', `artifact ${kind} exceeds 4 GiB`);
  const out = Buffer.alloc(total);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(tag(kind), 4);
  out.writeUInt32LE(FORMAT_VERSION, 8);
  out.writeUInt32LE(sections.length, 12);
  out.writeUInt32LE(total - HEADER_BYTES, 16);
  sections.forEach((section, i) => {
    const entry = HEADER_BYTES + i * TOC_ENTRY_BYTES;
    out.writeUInt32LE(tag(section.tag), entry);
    out.writeUInt32LE(offsets[i]!, entry + 4);
    out.writeUInt32LE(section.bytes.length, entry + 8);
    out.set(section.bytes, offsets[i]!);
  });
  out.writeUInt32LE(crc32(out.subarray(HEADER_BYTES)), 20);
  return out;
}

/** A decoded artifact: its sections by tag, as views into one buffer. */
export class Artifact {
  private readonly sections = new Map<number, Uint8Array>();

  constructor(
    readonly name: string,
    readonly buffer: Buffer,
    kind: string,
    verifyChecksum: boolean,
  ) {
    const damaged = (why: string): RepodexError => new RepodexError('INDEX_CORRUPT', `${name}: ${why}`);
    if (buffer.length < HEADER_BYTES || buffer.readUInt32LE(0) !== MAGIC) throw damaged('not a repodex artifact');
    if (buffer.readUInt32LE(4) !== tag(kind)) throw damaged(`expected a ${kind} artifact`);
    const version = buffer.readUInt32LE(8);
    if (version !== FORMAT_VERSION) {
      throw new RepodexError('INDEX_INCOMPATIBLE', `${name} has format version ${version}, this repodex reads ${FORMAT_VERSION}`);
    }
    const count = buffer.readUInt32LE(12);
    if (buffer.readUInt32LE(16) !== buffer.length - HEADER_BYTES) throw damaged('truncated');
    if (verifyChecksum && crc32(buffer.subarray(HEADER_BYTES)) !== buffer.readUInt32LE(20)) throw damaged('checksum mismatch');
    if (HEADER_BYTES + count * TOC_ENTRY_BYTES > buffer.length) throw damaged('bad table of contents');
    for (let i = 0; i < count; i++) {
      const entry = HEADER_BYTES + i * TOC_ENTRY_BYTES;
      const offset = buffer.readUInt32LE(entry + 4);
      const length = buffer.readUInt32LE(entry + 8);
      if (offset + length > buffer.length) throw damaged('section out of bounds');
      this.sections.set(buffer.readUInt32LE(entry), buffer.subarray(offset, offset + length));
    }
  }

  /** A section's bytes; a missing required section means a damaged file. */
  bytes(name: string): Uint8Array {
    const found = this.sections.get(tag(name));
    if (!found) throw new RepodexError('INDEX_CORRUPT', `${this.name}: missing section ${name}`);
    return found;
  }

  /** True when the artifact has the section (optional sections added by later versions). */
  has(name: string): boolean {
    return this.sections.has(tag(name));
  }

  u32(name: string): Uint32Array {
    return u32View(this.bytes(name));
  }

  f64(name: string): Float64Array {
    return f64View(this.bytes(name));
  }

  strings(name: string): StringTable {
    return new StringTable(this.bytes(name));
  }
}

/** A Uint32Array over little-endian bytes, zero-copy when alignment and byte order allow. */
export function u32View(bytes: Uint8Array): Uint32Array {
  const count = bytes.length >>> 2;
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

/** A Float64Array over little-endian bytes, zero-copy when alignment and byte order allow. */
export function f64View(bytes: Uint8Array): Float64Array {
  const count = bytes.length >>> 3;
  if (LITTLE_ENDIAN && bytes.byteOffset % 8 === 0) return new Float64Array(bytes.buffer, bytes.byteOffset, count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getFloat64(i * 8, true);
  return out;
}

/** Little-endian bytes of a typed array, for writing. */
export function leBytes(array: Uint32Array | Float64Array | Uint8Array): Uint8Array {
  if (array instanceof Uint8Array) return array;
  if (LITTLE_ENDIAN) return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  const out = new DataView(new ArrayBuffer(array.byteLength));
  const f64 = array instanceof Float64Array;
  for (let i = 0; i < array.length; i++) {
    if (f64) out.setFloat64(i * 8, array[i]!, true);
    else out.setUint32(i * 4, array[i]!, true);
  }
  return new Uint8Array(out.buffer);
}

/**
 * Strings stored as `count u32 | offsets u32 × (count + 1) | UTF-8 blob`; decoded one at a time,
 * so a reader never pays for strings it does not look at.
 */
export class StringTable {
  readonly count: number;
  private readonly offsets: Uint32Array;
  private readonly blob: Buffer;

  constructor(bytes: Uint8Array) {
    const all = u32View(bytes.subarray(0, bytes.length - (bytes.length % 4)));
    this.count = all[0] ?? 0;
    this.offsets = all.subarray(1, this.count + 2);
    const blobStart = 4 * (this.count + 2);
    this.blob = Buffer.from(bytes.buffer, bytes.byteOffset + blobStart, bytes.length - blobStart);
  }

  get(i: number): string {
    return this.blob.toString('utf8', this.offsets[i]!, this.offsets[i + 1]!);
  }

  /** Index of `value` in a table sorted by JS string order, or -1. */
  find(value: string): number {
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const probe = this.get(mid);
      if (probe === value) return mid;
      if (probe < value) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  static encode(values: readonly string[]): Uint8Array {
    const encoded = values.map((value) => Buffer.from(value, 'utf8'));
    const blobLength = encoded.reduce((sum, b) => sum + b.length, 0);
    const header = new Uint32Array(values.length + 2);
    header[0] = values.length;
    let offset = 0;
    encoded.forEach((b, i) => {
      header[i + 1] = offset;
      offset += b.length;
    });
    header[values.length + 1] = offset;
    const out = Buffer.alloc(header.byteLength + blobLength);
    out.set(leBytes(header), 0);
    let at = header.byteLength;
    for (const b of encoded) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  }
}

/** An append-only byte buffer with unsigned LEB128 varints, for postings. */
export class VarintWriter {
  private buffer = new Uint8Array(1 << 16);
  length = 0;

  write(value: number): void {
    if (this.length + 5 > this.buffer.length) {
      const grown = new Uint8Array(this.buffer.length * 2);
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    let v = value >>> 0;
    while (v >= 0x80) {
      this.buffer[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buffer[this.length++] = v;
  }

  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}
