import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { crc32 } from '../core/crc32.js';
import { RepodexError, errorMessage } from '../core/errors.js';
import { FORMAT_VERSION } from '../core/version.js';
import { GrowableU32 } from './growable.js';

/**
 * Every artifact is one sectioned file (little-endian throughout):
 *
 *   header (40 bytes): magic "RPDX" | kind (4 ASCII) | format version u32 | section count u32 |
 *                      TOC offset u32 | file length u32 | TOC crc32 u32 | reserved 2 × u32 |
 *                      header crc32 u32 (of the 36 bytes before it)
 *   sections:          each at an 8-byte-aligned offset, zero padding between them
 *   TOC (at the end):  count × [tag u32 | offset u32 | length u32 | crc32 u32]
 *
 * The TOC is written last, so a writer streams sections to disk as it produces them and never
 * assembles the whole file in memory. Every byte is covered by a checksum: the header by its own
 * CRC, the TOC by the CRC in the header, each section by its TOC entry, and padding must be zero.
 * A reader loads only the sections it needs and checks just those; `verify` checks them all.
 * Readers look sections up by tag and skip tags they do not know, so a section can be added
 * without breaking older readers; anything else bumps FORMAT_VERSION (see core/version.ts).
 */
export const MAGIC = 0x58445052; // "RPDX" read as little-endian u32
export const HEADER_BYTES = 40;
const TOC_ENTRY_BYTES = 16;
const LITTLE_ENDIAN = endianness() === 'LE';
const ZEROS = new Uint8Array(8);

/** A four-character tag as a little-endian u32. */
export function tag(name: string): number {
  if (name.length !== 4) throw new Error(`section tag must be 4 characters: ${name}`);
  return (name.charCodeAt(0) | (name.charCodeAt(1) << 8) | (name.charCodeAt(2) << 16) | (name.charCodeAt(3) << 24)) >>> 0;
}

function tagName(value: number): string {
  return String.fromCharCode(value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24);
}

/** One named block of an artifact. */
export interface Section {
  readonly tag: string;
  readonly bytes: Uint8Array;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Where an artifact's bytes go as they are produced: a file descriptor or memory. */
interface ByteSink {
  write(bytes: Uint8Array, position: number): void;
}

/**
 * Writes one artifact section by section. Sections go to the sink as they are added (8-byte
 * aligned, checksummed); `finish` appends the TOC and writes the header over the placeholder.
 */
export class ArtifactWriter {
  private offset = HEADER_BYTES;
  private readonly toc: { tag: number; offset: number; length: number; crc: number }[] = [];

  constructor(
    private readonly sink: ByteSink,
    private readonly kind: string,
  ) {
    tag(kind);
    sink.write(new Uint8Array(HEADER_BYTES), 0);
  }

  /** Append a section (its bytes are not kept). */
  add(name: string, bytes: Uint8Array): void {
    const at = this.offset;
    if (bytes.length > 0) this.sink.write(bytes, at);
    this.toc.push({ tag: tag(name), offset: at, length: bytes.length, crc: crc32(bytes) });
    const end = at + bytes.length;
    this.offset = align8(end);
    if (this.offset > end) this.sink.write(ZEROS.subarray(0, this.offset - end), end);
  }

  /** Write the TOC and the header; returns the file length and the header's checksum (what a manifest records). */
  finish(): { length: number; headerCrc: number } {
    const toc = Buffer.alloc(this.toc.length * TOC_ENTRY_BYTES);
    this.toc.forEach((entry, i) => {
      toc.writeUInt32LE(entry.tag, i * TOC_ENTRY_BYTES);
      toc.writeUInt32LE(entry.offset, i * TOC_ENTRY_BYTES + 4);
      toc.writeUInt32LE(entry.length, i * TOC_ENTRY_BYTES + 8);
      toc.writeUInt32LE(entry.crc, i * TOC_ENTRY_BYTES + 12);
    });
    const tocOffset = this.offset;
    const length = tocOffset + toc.length;
    if (length > 0xffffffff) throw new RepodexError('INTERNAL', `artifact ${this.kind} exceeds 4 GiB`);
    if (toc.length > 0) this.sink.write(toc, tocOffset);
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(tag(this.kind), 4);
    header.writeUInt32LE(FORMAT_VERSION, 8);
    header.writeUInt32LE(this.toc.length, 12);
    header.writeUInt32LE(tocOffset, 16);
    header.writeUInt32LE(length, 20);
    header.writeUInt32LE(crc32(toc), 24);
    const headerCrc = crc32(header.subarray(0, HEADER_BYTES - 4));
    header.writeUInt32LE(headerCrc, HEADER_BYTES - 4);
    this.sink.write(header, 0);
    return { length, headerCrc };
  }
}

/** Write an artifact in memory: `write` adds its sections; returns the whole file. */
export function artifactInMemory(kind: string, write: (writer: ArtifactWriter) => void): Buffer {
  const parts: { bytes: Uint8Array; at: number }[] = [];
  const writer = new ArtifactWriter({ write: (bytes, at) => parts.push({ bytes: Uint8Array.from(bytes), at }) }, kind);
  write(writer);
  const out = Buffer.alloc(writer.finish().length);
  for (const { bytes, at } of parts) out.set(bytes, at);
  return out;
}

/** Serialize sections into one artifact in memory (small artifacts and tests). */
export function encodeArtifact(kind: string, sections: readonly Section[]): Buffer {
  return artifactInMemory(kind, (writer) => {
    for (const section of sections) writer.add(section.tag, section.bytes);
  });
}

/** A sink writing at positions of an open file descriptor. */
export function fileSink(fd: number): ByteSink {
  return {
    write(bytes, position) {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
    },
  };
}

/** One TOC entry as read back. */
export interface TocEntry {
  readonly tag: string;
  readonly offset: number;
  readonly length: number;
  readonly crc: number;
}

/** The checked header and table of contents of an artifact. */
export interface ArtifactLayout {
  readonly kind: string;
  readonly headerCrc: number;
  readonly length: number;
  readonly tocOffset: number;
  readonly entries: readonly TocEntry[];
}

/**
 * Check an artifact's header and TOC (read through `read(offset, length)`) and return its layout.
 * Throws INDEX_CORRUPT naming `name` and what is wrong, or INDEX_INCOMPATIBLE for another format
 * version; `actualLength` is the file's size, so truncation and extension are caught here.
 */
export function readLayout(name: string, kind: string, actualLength: number, read: (offset: number, length: number) => Uint8Array): ArtifactLayout {
  const damaged = (why: string): RepodexError => new RepodexError('INDEX_CORRUPT', `${name}: ${why}`);
  if (actualLength < HEADER_BYTES) throw damaged(actualLength === 0 ? 'empty file' : 'truncated header');
  const header = Buffer.from(read(0, HEADER_BYTES));
  if (header.readUInt32LE(0) !== MAGIC) throw damaged('not a repodex artifact');
  if (crc32(header.subarray(0, HEADER_BYTES - 4)) !== header.readUInt32LE(HEADER_BYTES - 4)) throw damaged('header checksum mismatch');
  const version = header.readUInt32LE(8);
  if (version !== FORMAT_VERSION) {
    throw new RepodexError('INDEX_INCOMPATIBLE', `${name} has format version ${version}, this repodex reads ${FORMAT_VERSION}`);
  }
  const actualKind = tagName(header.readUInt32LE(4));
  if (actualKind !== kind) throw damaged(`expected a ${kind} artifact, found ${JSON.stringify(actualKind)}`);
  const count = header.readUInt32LE(12);
  const tocOffset = header.readUInt32LE(16);
  const length = header.readUInt32LE(20);
  if (length !== actualLength) throw damaged(length > actualLength ? `truncated (${actualLength} of ${length} bytes)` : `${actualLength - length} unexpected bytes after the end`);
  if (tocOffset < HEADER_BYTES || tocOffset + count * TOC_ENTRY_BYTES !== length) throw damaged('bad table of contents');
  const toc = Buffer.from(read(tocOffset, count * TOC_ENTRY_BYTES));
  if (crc32(toc) !== header.readUInt32LE(24)) throw damaged('table of contents checksum mismatch');
  const entries: TocEntry[] = [];
  let previousEnd = HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const at = i * TOC_ENTRY_BYTES;
    const entry = { tag: tagName(toc.readUInt32LE(at)), offset: toc.readUInt32LE(at + 4), length: toc.readUInt32LE(at + 8), crc: toc.readUInt32LE(at + 12) };
    if (entry.offset % 8 !== 0 || entry.offset < previousEnd || entry.offset + entry.length > tocOffset) throw damaged(`section ${entry.tag} out of bounds`);
    previousEnd = entry.offset + entry.length;
    entries.push(entry);
  }
  return { kind, headerCrc: header.readUInt32LE(HEADER_BYTES - 4), length, tocOffset, entries };
}

/** A decoded artifact: its sections by tag, as checked views into memory. */
export class Artifact {
  private readonly sections = new Map<string, Uint8Array>();

  constructor(
    readonly name: string,
    sections: Iterable<[string, Uint8Array]>,
  ) {
    for (const [key, bytes] of sections) this.sections.set(key, bytes);
  }

  /** Parse and check a whole artifact held in memory (every section's checksum and the padding). */
  static fromBuffer(name: string, kind: string, buffer: Uint8Array): Artifact {
    const layout = readLayout(name, kind, buffer.length, (offset, length) => buffer.subarray(offset, offset + length));
    checkPadding(name, layout, (offset, length) => buffer.subarray(offset, offset + length));
    return new Artifact(
      name,
      layout.entries.map((entry) => [entry.tag, checkedSection(name, entry, buffer.subarray(entry.offset, entry.offset + entry.length))]),
    );
  }

  /** A section's bytes; a missing required section means a damaged file. */
  bytes(name: string): Uint8Array {
    const found = this.sections.get(name);
    if (!found) throw new RepodexError('INDEX_CORRUPT', `${this.name}: missing section ${name}`);
    return found;
  }

  /** True when the artifact has the section (optional sections added by later versions). */
  has(name: string): boolean {
    return this.sections.has(name);
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

  coded(name: string): CodedStrings {
    return new CodedStrings(this.bytes(name));
  }
}

function checkedSection(name: string, entry: TocEntry, bytes: Uint8Array): Uint8Array {
  if (crc32(bytes) !== entry.crc) throw new RepodexError('INDEX_CORRUPT', `${name}: section ${entry.tag} checksum mismatch`);
  return bytes;
}

function checkPadding(name: string, layout: ArtifactLayout, read: (offset: number, length: number) => Uint8Array): void {
  let at = HEADER_BYTES;
  const gaps: [number, number][] = [];
  for (const entry of layout.entries) {
    if (entry.offset > at) gaps.push([at, entry.offset - at]);
    at = entry.offset + entry.length;
  }
  if (layout.tocOffset > at) gaps.push([at, layout.tocOffset - at]);
  for (const [offset, length] of gaps) {
    if (read(offset, length).some((byte) => byte !== 0)) throw new RepodexError('INDEX_CORRUPT', `${name}: damaged bytes between sections at offset ${offset}`);
  }
}

/** An artifact whose sections can be read on demand: a file (ArtifactFile) or a buffer (ArtifactBuffer). */
export interface ArtifactSource {
  readonly name: string;
  readonly layout: ArtifactLayout;
  /** The sections with these tags (those present), each checked against its checksum. */
  read(tags: readonly string[]): Artifact;
  /** Every section, every checksum and the padding. */
  readAll(): Artifact;
  close(): void;
}

/** An artifact held in memory (a segment built for a merge, tests). */
export class ArtifactBuffer implements ArtifactSource {
  readonly layout: ArtifactLayout;

  constructor(
    readonly name: string,
    kind: string,
    private readonly buffer: Uint8Array,
  ) {
    this.layout = readLayout(name, kind, buffer.length, (offset, length) => buffer.subarray(offset, offset + length));
  }

  read(tags: readonly string[]): Artifact {
    const wanted = new Set(tags);
    return new Artifact(
      this.name,
      this.layout.entries.filter((entry) => wanted.has(entry.tag)).map((entry) => [entry.tag, checkedSection(this.name, entry, this.buffer.subarray(entry.offset, entry.offset + entry.length))]),
    );
  }

  readAll(): Artifact {
    return Artifact.fromBuffer(this.name, this.layout.kind, this.buffer);
  }

  close(): void {}
}

/**
 * An artifact file opened for reading: the header and TOC are read and checked on open; sections
 * are read on demand with positional reads and checked against their own checksum, so a reader
 * pays only for what it uses. `readAll` reads the whole file once and checks every byte.
 */
export class ArtifactFile implements ArtifactSource {
  private constructor(
    readonly path: string,
    readonly name: string,
    private readonly fd: number,
    readonly layout: ArtifactLayout,
  ) {}

  /** Open and check header and TOC. ENOENT surfaces as the system error (callers retry on it). */
  static open(path: string, name: string, kind: string): ArtifactFile {
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      const layout = readLayout(name, kind, size, (offset, length) => preadExact(fd, name, offset, length));
      return new ArtifactFile(path, name, fd, layout);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** The sections with these tags (those present), read in one positional read per contiguous run. */
  read(tags: readonly string[]): Artifact {
    const wanted = new Set(tags);
    const entries = this.layout.entries.filter((entry) => wanted.has(entry.tag));
    if (entries.length === 0) return new Artifact(this.name, []);
    const from = entries[0]!.offset;
    const last = entries[entries.length - 1]!;
    const bytes = preadExact(this.fd, this.name, from, last.offset + last.length - from);
    return new Artifact(
      this.name,
      entries.map((entry) => [entry.tag, checkedSection(this.name, entry, bytes.subarray(entry.offset - from, entry.offset - from + entry.length))]),
    );
  }

  /** Every section, every checksum and the padding: what `verify` runs. */
  readAll(): Artifact {
    const whole = preadExact(this.fd, this.name, 0, this.layout.length);
    checkPadding(this.name, this.layout, (offset, length) => whole.subarray(offset, offset + length));
    return new Artifact(
      this.name,
      this.layout.entries.map((entry) => [entry.tag, checkedSection(this.name, entry, whole.subarray(entry.offset, entry.offset + entry.length))]),
    );
  }

  close(): void {
    closeSync(this.fd);
  }
}

function preadExact(fd: number, name: string, offset: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    let n: number;
    try {
      n = readSync(fd, out, done, length - done, offset + done);
    } catch (error) {
      throw new RepodexError('INDEX_CORRUPT', `${name}: cannot read: ${errorMessage(error)}`);
    }
    if (n === 0) throw new RepodexError('INDEX_CORRUPT', `${name}: truncated`);
    done += n;
  }
  return out;
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
  private readonly blobBytes: Buffer;

  constructor(bytes: Uint8Array) {
    const all = u32View(bytes.subarray(0, bytes.length - (bytes.length % 4)));
    this.count = all[0] ?? 0;
    if (4 * (this.count + 2) > bytes.length) throw new RepodexError('INDEX_CORRUPT', 'string table: offsets run past the section');
    this.offsets = all.subarray(1, this.count + 2);
    const blobStart = 4 * (this.count + 2);
    this.blobBytes = Buffer.from(bytes.buffer, bytes.byteOffset + blobStart, bytes.length - blobStart);
  }

  get(i: number): string {
    return this.blobBytes.toString('utf8', this.offsets[i]!, this.offsets[i + 1]!);
  }

  /** Entry `i` as bytes (a table of binary blobs: see encodeBlobs). */
  blob(i: number): Uint8Array {
    return this.blobBytes.subarray(this.offsets[i]!, this.offsets[i + 1]!);
  }

  /** Offsets within the blob never decrease and end inside it (what `verify` checks). */
  wellFormed(): boolean {
    let previous = 0;
    for (let i = 0; i <= this.count; i++) {
      const offset = this.offsets[i]!;
      if (offset < previous) return false;
      previous = offset;
    }
    return previous <= this.blobBytes.length;
  }

  /**
   * Index of `value` in a table sorted by JS string order, or -1. Probes compare UTF-8 bytes in
   * place, without decoding: for a value with no code unit from U+D800 up (every term the
   * tokenizer makes), byte order and JS string order agree against any probe. (They differ only
   * where a surrogate pair meets a code unit from U+E000 up.) Other values compare decoded.
   */
  find(value: string): number {
    if (HAS_SURROGATE_OR_ABOVE.test(value)) return this.findDecoded(value);
    const key = Buffer.from(value, 'utf8');
    const blob = this.blobBytes;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const start = this.offsets[mid]!;
      const length = this.offsets[mid + 1]! - start;
      const shared = Math.min(length, key.length);
      let order = 0;
      for (let i = 0; i < shared && order === 0; i++) order = blob[start + i]! - key[i]!;
      if (order === 0) order = length - key.length;
      if (order === 0) return mid;
      if (order < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  private findDecoded(value: string): number {
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
    // Two passes (lengths, then writes into one buffer): no per-string Buffer, so encoding
    // hundreds of thousands of short strings allocates one block instead of as many objects.
    const out = StringTable.allocate(values.length, (i) => Buffer.byteLength(values[i]!, 'utf8'));
    let at = 4 * (values.length + 2);
    for (const value of values) at += out.write(value, at, 'utf8');
    return out;
  }

  /** The same layout over binary blobs. */
  static encodeBlobs(values: readonly Uint8Array[]): Uint8Array {
    const out = StringTable.allocate(values.length, (i) => values[i]!.length);
    let at = 4 * (values.length + 2);
    for (const value of values) {
      out.set(value, at);
      at += value.length;
    }
    return out;
  }

  /** A table's bytes with its count and offsets written, for entries of these byte lengths; the caller writes the blob. */
  private static allocate(count: number, lengthOf: (i: number) => number): Buffer {
    const header = new Uint32Array(count + 2);
    header[0] = count;
    let offset = 0;
    for (let i = 0; i < count; i++) {
      header[i + 1] = offset;
      offset += lengthOf(i);
    }
    header[count + 1] = offset;
    const out = Buffer.allocUnsafe(header.byteLength + offset);
    out.set(leBytes(header), 0);
    return out;
  }
}

/**
 * A column of strings with many repeats (declaration kinds, enclosing names, snippets that are
 * the same license header), each distinct string stored once:
 *
 *   count u32 | id width u32 (1, 2 or 4) | ids (count × width, little-endian, zero padding to 4 bytes)
 *   | a StringTable of the distinct strings, in order of first use
 */
export class CodedStrings {
  readonly count: number;
  private readonly width: number;
  private readonly ids: Uint8Array;
  private readonly wide: Uint32Array | undefined;
  readonly distinct: StringTable;
  /** Decoded strings of a small table (kinds, contexts), kept: they are asked for again and again. */
  private readonly decoded: (string | undefined)[] | undefined;

  constructor(bytes: Uint8Array) {
    if (bytes.length < 8) throw new RepodexError('INDEX_CORRUPT', 'coded strings: section too short');
    const head = u32View(bytes.subarray(0, 8));
    this.count = head[0]!;
    this.width = head[1]!;
    if (this.width !== 1 && this.width !== 2 && this.width !== 4) throw new RepodexError('INDEX_CORRUPT', `coded strings: id width ${this.width}`);
    const idBytes = this.count * this.width;
    const tableAt = 8 + ((idBytes + 3) & ~3);
    if (tableAt > bytes.length) throw new RepodexError('INDEX_CORRUPT', 'coded strings: ids run past the section');
    this.ids = bytes.subarray(8, 8 + idBytes);
    this.wide = this.width === 4 ? u32View(this.ids) : undefined;
    this.distinct = new StringTable(bytes.subarray(tableAt));
    this.decoded = this.distinct.count <= SMALL_TABLE ? [] : undefined;
  }

  /** The id of entry `i` in `distinct`. */
  private id(i: number): number {
    if (this.width === 1) return this.ids[i]!;
    if (this.width === 2) return this.ids[2 * i]! | (this.ids[2 * i + 1]! << 8);
    return this.wide![i]!;
  }

  get(i: number): string {
    const id = this.id(i);
    if (!this.decoded) return this.distinct.get(id);
    return (this.decoded[id] ??= this.distinct.get(id));
  }

  /** Every id names a distinct string, and the distinct strings' table is sound (what `verify` checks). */
  wellFormed(): boolean {
    if (!this.distinct.wellFormed()) return false;
    for (let i = 0; i < this.count; i++) if (this.id(i) >= this.distinct.count) return false;
    return true;
  }

  static encode(values: readonly string[]): Uint8Array {
    const builder = new CodedStringsBuilder();
    for (const value of values) builder.push(value);
    return builder.encode();
  }
}

/**
 * A CodedStrings column built one value at a time: each distinct string is kept once as it
 * arrives, and each value as its id (a sync adds hundreds of thousands of kinds, names and
 * snippets, most of them repeats, and holds them until the segment is written).
 */
export class CodedStringsBuilder {
  private readonly idOf = new Map<string, number>();
  private readonly distinct: string[] = [];
  private readonly ids = new GrowableU32();

  get length(): number {
    return this.ids.length;
  }

  push(value: string): void {
    let id = this.idOf.get(value);
    if (id === undefined) {
      id = this.distinct.length;
      this.idOf.set(value, id);
      this.distinct.push(value);
    }
    this.ids.push(id);
  }

  encode(): Uint8Array {
    const count = this.ids.length;
    const width = this.distinct.length <= 0x100 ? 1 : this.distinct.length <= 0x10000 ? 2 : 4;
    const idBytes = count * width;
    const table = StringTable.encode(this.distinct);
    const tableAt = 8 + ((idBytes + 3) & ~3);
    const out = Buffer.alloc(tableAt + table.length);
    out.writeUInt32LE(count, 0);
    out.writeUInt32LE(width, 4);
    for (let i = 0; i < count; i++) {
      const id = this.ids.get(i);
      if (width === 1) out[8 + i] = id;
      else if (width === 2) out.writeUInt16LE(id, 8 + 2 * i);
      else out.writeUInt32LE(id, 8 + 4 * i);
    }
    out.set(table, tableAt);
    return out;
  }
}

/** Any code unit from U+D800 up. */
const HAS_SURROGATE_OR_ABOVE = /[\ud800-\uffff]/;

/** Distinct strings up to this many are kept decoded by a reader. */
const SMALL_TABLE = 1024;

/** How many bytes `value` takes as an unsigned LEB128 varint (1 to 5 for a u32). */
export function varintLength(value: number): number {
  let v = value >>> 0;
  let n = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

/** Write `value` as an unsigned LEB128 varint at `at`; returns the position after it. */
export function writeVarint(bytes: Uint8Array, at: number, value: number): number {
  let v = value >>> 0;
  while (v >= 0x80) {
    bytes[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  bytes[at++] = v;
  return at;
}
