import { RepodexError } from '../../core/errors.js';

/** One (term, segment) row of `segment_postings`: the term's postings in that segment (posting-blob.ts). */
export interface SegmentRow {
  readonly segment: number;
  readonly df: number;
  readonly postings: Uint8Array;
}

/** Segment rows that a statement sent back framed in one bytea, cut short or otherwise not as framed. */
export function framesDamaged(): RepodexError {
  return new RepodexError('INDEX_CORRUPT', 'the postings read from the database are cut short: run `repodex sync --force`');
}

/** The fixed part of a postings statement's frame (see PgIndexView): segment (int8), df (int4), postings length (int4). */
const FIXED = 16;

/** The segment, df and postings of the frame whose fixed part starts at `at`, and where the next frame starts. */
export function frameAt(found: Buffer, at: number): { row: SegmentRow; end: number } {
  if (at + FIXED > found.length) throw framesDamaged();
  const length = found.readInt32BE(at + 12);
  const end = at + FIXED + length;
  if (length < 0 || end > found.length) throw framesDamaged();
  return { row: { segment: found.readUInt32BE(at) * 2 ** 32 + found.readUInt32BE(at + 4), df: found.readInt32BE(at + 8), postings: found.subarray(at + FIXED, end) }, end };
}

/** What starts every `COPY … TO STDOUT (FORMAT binary)` stream, before its flags and header extension. */
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** FNV-1a over bytes `from..to` of `bytes`. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

/** The big-endian int32 at `at` (read here: Buffer's readers cost a call each, and this loop reads four per row). */
function int32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
}

/** The length of the COPY field at `at`, checked to fit in `copied` (and to be `size` unless it is -1). */
function fieldLength(copied: Buffer, at: number, size: number): number {
  if (at + 4 > copied.length) throw framesDamaged();
  const length = int32(copied, at);
  if (length < 0 || at + 4 + length > copied.length || (size >= 0 && length !== size)) throw framesDamaged();
  return length;
}

/** An array twice as long, holding `array`. */
function grown<A extends Int32Array | Float64Array>(array: A): A {
  const bigger = new (array.constructor as new (length: number) => A)(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** Rows a dictionary being built handles per turn of the event loop: a few milliseconds of work. */
const ROWS_PER_TURN = 8192;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Where each row's fields are in a COPY buffer. */
interface RowIndex {
  readonly count: number;
  readonly termStart: Int32Array;
  readonly termEnd: Int32Array;
  readonly segments: Float64Array;
  readonly dfs: Int32Array;
  readonly postingsStart: Int32Array;
  readonly postingsEnd: Int32Array;
}

/** Find every row of a COPY buffer, giving way to other work every ROWS_PER_TURN rows. */
async function indexRows(copied: Buffer): Promise<RowIndex> {
  if (copied.length < COPY_SIGNATURE.length + 8 || !copied.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE)) throw framesDamaged();
  let at = COPY_SIGNATURE.length + 8 + int32(copied, COPY_SIGNATURE.length + 4);
  let capacity = 1024;
  let termStart = new Int32Array(capacity);
  let termEnd = new Int32Array(capacity);
  let segments = new Float64Array(capacity);
  let dfs = new Int32Array(capacity);
  let postingsStart = new Int32Array(capacity);
  let postingsEnd = new Int32Array(capacity);
  let rows = 0;
  for (;;) {
    if (at + 2 > copied.length) throw framesDamaged();
    const fields = (copied[at]! << 8) | copied[at + 1]!;
    at += 2;
    if (fields === 0xffff) break;
    if (fields !== 4) throw framesDamaged();
    if (rows === capacity) {
      capacity *= 2;
      termStart = grown(termStart);
      termEnd = grown(termEnd);
      segments = grown(segments);
      dfs = grown(dfs);
      postingsStart = grown(postingsStart);
      postingsEnd = grown(postingsEnd);
    }
    // Each field: its length (int4), then its bytes; term and postings of any length, segment and df of 8 and 4.
    const termLength = fieldLength(copied, at, -1);
    termStart[rows] = at += 4;
    termEnd[rows] = at += termLength;
    fieldLength(copied, at, 8);
    segments[rows] = (int32(copied, at + 4) >>> 0) * 2 ** 32 + (int32(copied, at + 8) >>> 0);
    at += 12;
    fieldLength(copied, at, 4);
    dfs[rows] = int32(copied, at + 4);
    at += 8;
    const postingsLength = fieldLength(copied, at, -1);
    postingsStart[rows] = at += 4;
    postingsEnd[rows] = at += postingsLength;
    if (++rows % ROWS_PER_TURN === 0) await nextTurn();
  }
  if (at !== copied.length) throw framesDamaged();
  return { count: rows, termStart, termEnd, segments, dfs, postingsStart, postingsEnd };
}

/**
 * Every segment row of one generation, kept by a view that serves many requests (a server): its
 * searches then find their postings here instead of asking the database for them (the request's
 * generation is still proven, see PgIndexView). Read with one `COPY (SELECT term, segment, df,
 * postings …) TO STDOUT (FORMAT binary)`: each row a tuple of four fields, each field its length
 * (int4) and its bytes; integers big-endian.
 *
 * Everything stays in that one buffer, found through typed arrays: rows by a hash table over
 * their terms' bytes, a term's rows chained. No term becomes a string and no row an object until
 * a search asks for it, and the building gives way to other work every few thousand rows: on
 * playwright (115,000 rows) a dictionary of strings, built at once, held the thread that built it
 * for about 200 ms, every request on that thread waiting.
 */
export class SegmentDictionary {
  /** The next row of the same term, or -1. */
  private readonly next: Int32Array;
  /** Open addressing over distinct terms: the first row of a term + 1 in its slot, 0 in a free one. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  /** The dictionary of a COPY buffer (see the class), built a slice at a time. */
  static async build(copied: Buffer): Promise<SegmentDictionary> {
    const dictionary = new SegmentDictionary(copied, await indexRows(copied));
    /** The last row chained so far of the term whose first row is the index. */
    const last = new Int32Array(dictionary.rowIndex.count);
    for (let row = 0; row < dictionary.rowIndex.count; row++) {
      dictionary.chain(row, last);
      if ((row + 1) % ROWS_PER_TURN === 0) await nextTurn();
    }
    return dictionary;
  }

  private constructor(
    private readonly copied: Buffer,
    private readonly rowIndex: RowIndex,
  ) {
    let size = 16;
    while (size < rowIndex.count * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    this.next = new Int32Array(rowIndex.count).fill(-1);
  }

  /** Put `row` in the table: first of its term, or chained after the term's last row so far. */
  private chain(row: number, last: Int32Array): void {
    const slot = this.slotOf(this.copied, this.rowIndex.termStart[row]!, this.rowIndex.termEnd[row]!);
    const first = this.slots[slot]! - 1;
    if (first < 0) {
      this.slots[slot] = row + 1;
      last[row] = row;
    } else {
      this.next[last[first]!] = row;
      last[first] = row;
    }
  }

  /** The slot of the term whose UTF-8 bytes are `bytes[from..to]`: where it is, or the free slot where it would go. */
  private slotOf(bytes: Uint8Array, from: number, to: number): number {
    const length = to - from;
    const copied = this.copied;
    const { termStart, termEnd } = this.rowIndex;
    probing: for (let slot = hashBytes(bytes, from, to) & this.mask; ; slot = (slot + 1) & this.mask) {
      const row = this.slots[slot]! - 1;
      if (row < 0) return slot;
      const start = termStart[row]!;
      if (termEnd[row]! - start !== length) continue;
      // Terms are a few bytes: compared here, not through a call into the runtime.
      for (let i = 0; i < length; i++) if (copied[start + i] !== bytes[from + i]) continue probing;
      return slot;
    }
  }

  /** The rows of `term` in every segment, or undefined when no segment holds it. */
  rows(term: string): SegmentRow[] | undefined {
    const key = Buffer.from(term, 'utf8');
    let row = this.slots[this.slotOf(key, 0, key.length)]! - 1;
    if (row < 0) return undefined;
    const { segments, dfs, postingsStart, postingsEnd } = this.rowIndex;
    const rows: SegmentRow[] = [];
    for (; row !== -1; row = this.next[row]!) rows.push({ segment: segments[row]!, df: dfs[row]!, postings: this.copied.subarray(postingsStart[row]!, postingsEnd[row]!) });
    return rows;
  }
}
