import { createHash } from 'node:crypto';
import { RepodexError } from '../core/errors.js';
import { crc32 } from '../core/crc32.js';
import { tokenize } from '../text/tokenizer.js';
import { normalize } from './embedder.js';

/**
 * A static embedding table in the Model2Vec style: every vocabulary term has a vector and a
 * weight; a text's vector is the weighted sum of its terms' vectors (sublinear term frequency ×
 * weight), unit length. Embedding costs a tokenize and a few hundred multiply-adds per term: no
 * model runs. Terms come from the shared tokenizer, so the table speaks the index's language
 * (`parseHTTPHeader` → `parsehttpheader`, `parse`, `http`, `header`).
 */
export class StaticTable {
  private readonly rows: Map<string, number>;

  constructor(
    readonly terms: readonly string[],
    readonly weights: Float32Array,
    /** terms.length × dim, row-major. */
    readonly vectors: Float32Array,
    readonly dim: number,
  ) {
    if (weights.length !== terms.length || vectors.length !== terms.length * dim) throw new RepodexError('INTERNAL', 'static table: sizes disagree');
    this.rows = new Map(terms.map((term, i) => [term, i]));
  }

  /** How many vocabulary terms the table has. */
  get size(): number {
    return this.terms.length;
  }

  /** A text's vector: Σ (1 + ln tf) · weight · row over its known terms, unit length (zero when it has none). */
  embed(text: string): Float32Array {
    const counts = new Map<number, number>();
    for (const term of tokenize(text)) {
      const row = this.rows.get(term);
      if (row !== undefined) counts.set(row, (counts.get(row) ?? 0) + 1);
    }
    const out = new Float32Array(this.dim);
    const { dim, vectors, weights } = this;
    for (const [row, tf] of counts) {
      const w = (1 + Math.log(tf)) * weights[row]!;
      const base = row * dim;
      for (let d = 0; d < dim; d++) out[d]! += w * vectors[base + d]!;
    }
    return normalize(out);
  }

  /** A short content hash: what the embedder's model name carries, so a retrained table is a different model. */
  fingerprint(): string {
    const hash = createHash('sha256');
    hash.update(this.terms.join('\n'));
    hash.update(new Uint8Array(this.weights.buffer, this.weights.byteOffset, this.weights.byteLength));
    hash.update(new Uint8Array(this.vectors.buffer, this.vectors.byteOffset, this.vectors.byteLength));
    return hash.digest('hex').slice(0, 12);
  }

  /**
   * Bytes on disk (little-endian): magic `RPDXSTAT`, u32 version, u32 dim, u32 term count, u32
   * byte length of the terms block, u32 trained-on chunk count, the fingerprint (12 ASCII
   * characters), a CRC-32 of the header before it, the terms (UTF-8, newline separated), weights
   * (f32 × terms), vectors (f32 × terms × dim), then a CRC-32 of everything before it. The header
   * alone names the table (`peekTable`), checked by its own CRC, so a process can say which model
   * it has without reading the table, and never names a model from a damaged header.
   */
  serialize(trainedOn: number): Uint8Array {
    const termBytes = Buffer.from(this.terms.join('\n'), 'utf8');
    const headerLength = HEADER_LENGTH[TABLE_VERSION]!;
    const pad = (4 - ((headerLength + termBytes.length) % 4)) % 4;
    const total = headerLength + termBytes.length + pad + this.weights.byteLength + this.vectors.byteLength + 4;
    const out = Buffer.alloc(total);
    out.write(TABLE_MAGIC, 0, 'latin1');
    out.writeUInt32LE(TABLE_VERSION, 8);
    out.writeUInt32LE(this.dim, 12);
    out.writeUInt32LE(this.terms.length, 16);
    out.writeUInt32LE(termBytes.length, 20);
    out.writeUInt32LE(trainedOn, 24);
    out.write(this.fingerprint(), 28, FINGERPRINT_LENGTH, 'latin1');
    out.writeUInt32LE(crc32(out.subarray(0, HEADER_CRC_AT)), HEADER_CRC_AT);
    termBytes.copy(out, headerLength);
    let at = headerLength + termBytes.length + pad;
    out.set(new Uint8Array(this.weights.buffer, this.weights.byteOffset, this.weights.byteLength), at);
    at += this.weights.byteLength;
    out.set(new Uint8Array(this.vectors.buffer, this.vectors.byteOffset, this.vectors.byteLength), at);
    at += this.vectors.byteLength;
    out.writeUInt32LE(crc32(out.subarray(0, at)), at);
    return out;
  }

  /**
   * Read what `serialize` wrote (this version or an earlier one); throws INDEX_CORRUPT on any
   * damage. `fingerprint` is the one stored (checked by the CRC), computed for a version-1 table.
   */
  static deserialize(bytes: Uint8Array, name: string): { table: StaticTable; trainedOn: number; fingerprint: string; version: number } {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const damaged = (why: string) => new RepodexError('INDEX_CORRUPT', `${name}: ${why}`);
    if (buf.length < 32 || buf.toString('latin1', 0, 8) !== TABLE_MAGIC) throw damaged('not an embedding table');
    const version = buf.readUInt32LE(8);
    const headerLength = HEADER_LENGTH[version];
    if (headerLength === undefined) throw damaged(`table version ${version}, expected ${TABLE_VERSION}`);
    const end = buf.length - 4;
    if (version >= 3 && crc32(buf.subarray(0, HEADER_CRC_AT)) !== buf.readUInt32LE(HEADER_CRC_AT)) throw damaged('header checksum mismatch');
    if (crc32(buf.subarray(0, end)) !== buf.readUInt32LE(end)) throw damaged('checksum mismatch');
    const dim = buf.readUInt32LE(12);
    const count = buf.readUInt32LE(16);
    const termLength = buf.readUInt32LE(20);
    const trainedOn = buf.readUInt32LE(24);
    const pad = (4 - ((headerLength + termLength) % 4)) % 4;
    const weightsAt = headerLength + termLength + pad;
    if (weightsAt + count * 4 * (1 + dim) !== end) throw damaged('sizes disagree');
    const terms = count === 0 ? [] : buf.toString('utf8', headerLength, headerLength + termLength).split('\n');
    if (terms.length !== count) throw damaged('term list is damaged');
    const weights = new Float32Array(buf.buffer.slice(buf.byteOffset + weightsAt, buf.byteOffset + weightsAt + count * 4));
    const vectors = new Float32Array(buf.buffer.slice(buf.byteOffset + weightsAt + count * 4, buf.byteOffset + end));
    const table = new StaticTable(terms, weights, vectors, dim);
    const fingerprint = version >= 2 ? buf.toString('latin1', 28, 28 + FINGERPRINT_LENGTH) : table.fingerprint();
    return { table, trainedOn, fingerprint, version };
  }
}

/** What a table file's header says (see `peekTable`). */
export interface TableHeader {
  readonly version: number;
  readonly dim: number;
  readonly trainedOn: number;
  /** From version 2 on; undefined before. */
  readonly fingerprint: string | undefined;
}

/**
 * What a table file's header says — version, dim, trained-on count and (from version 2) the
 * fingerprint — read from its first bytes; undefined when they are not a table header, or (from
 * version 3, whose header has its own CRC) a damaged one. Nothing is checked beyond the header:
 * `deserialize` and `checkTableBytes` check the whole file.
 */
export function peekTable(header: Uint8Array): TableHeader | undefined {
  const buf = Buffer.from(header.buffer, header.byteOffset, header.byteLength);
  if (buf.length < 28 || buf.toString('latin1', 0, 8) !== TABLE_MAGIC) return undefined;
  const version = buf.readUInt32LE(8);
  const length = HEADER_LENGTH[version];
  if (length === undefined || buf.length < length) return undefined;
  if (version >= 3 && crc32(buf.subarray(0, HEADER_CRC_AT)) !== buf.readUInt32LE(HEADER_CRC_AT)) return undefined;
  const fingerprint = version >= 2 ? buf.toString('latin1', 28, 28 + FINGERPRINT_LENGTH) : undefined;
  return { version, dim: buf.readUInt32LE(12), trainedOn: buf.readUInt32LE(24), fingerprint };
}

/**
 * Check a whole table file read a block at a time (`read(offset, into)` fills `into` from `offset`
 * and returns the bytes read), without decoding it: the header, its sizes against the file's
 * length, and both checksums. Returns what is wrong, or undefined when it is sound. What
 * `verify` and `status` run: as thorough as `deserialize`, at the cost of a CRC.
 */
export function checkTableBytes(length: number, read: (offset: number, into: Buffer) => number): string | undefined {
  const head = Buffer.alloc(TABLE_HEADER_BYTES);
  const got = read(0, head);
  const header = peekTable(head.subarray(0, got));
  if (!header) return length < 28 ? 'not an embedding table' : 'its header is damaged';
  const headerLength = HEADER_LENGTH[header.version]!;
  const count = head.readUInt32LE(16);
  const termLength = head.readUInt32LE(20);
  const pad = (4 - ((headerLength + termLength) % 4)) % 4;
  if (headerLength + termLength + pad + count * 4 * (1 + header.dim) + 4 !== length) return 'sizes disagree with the file';
  const block = Buffer.allocUnsafe(1 << 20);
  let crc = 0;
  for (let at = 0; at < length - 4; ) {
    const n = read(at, block.subarray(0, Math.min(block.length, length - 4 - at)));
    if (n <= 0) return 'truncated';
    crc = crc32(block.subarray(0, n), crc);
    at += n;
  }
  const tail = Buffer.alloc(4);
  if (read(length - 4, tail) !== 4) return 'truncated';
  return crc === tail.readUInt32LE(0) ? undefined : 'checksum mismatch';
}

const TABLE_MAGIC = 'RPDXSTAT';
/**
 * Log:
 *   1 — first table: terms, weights, row-major f32 vectors, trailing CRC-32.
 *   2 — the fingerprint in the header (same value), so the model is named without loading the table.
 *   3 — a CRC-32 of the header after it, so a model is never named from a damaged header.
 */
export const TABLE_VERSION = 3;
const FINGERPRINT_LENGTH = 12;
/** Where version 3's header checksum sits (it covers the bytes before it). */
const HEADER_CRC_AT = 28 + FINGERPRINT_LENGTH;
/** Header bytes of each version (before the terms). */
const HEADER_LENGTH: Readonly<Record<number, number>> = { 1: 28, 2: 28 + FINGERPRINT_LENGTH, 3: HEADER_CRC_AT + 4 };
/** Enough bytes to peek at any version's header. */
export const TABLE_HEADER_BYTES = 64;
