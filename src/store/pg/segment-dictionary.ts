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

/** The fixed part of a frame after its term: segment (int8), df (int4), postings length (int4). */
const FIXED = 16;

/** The segment, df and postings of the frame whose fixed part starts at `at`, and where the next frame starts. */
export function frameAt(found: Buffer, at: number): { row: SegmentRow; end: number } {
  if (at + FIXED > found.length) throw framesDamaged();
  const length = found.readInt32BE(at + 12);
  const end = at + FIXED + length;
  if (length < 0 || end > found.length) throw framesDamaged();
  return { row: { segment: found.readUInt32BE(at) * 2 ** 32 + found.readUInt32BE(at + 4), df: found.readInt32BE(at + 8), postings: found.subarray(at + FIXED, end) }, end };
}

/**
 * Every segment row of one generation, kept by a view that serves many requests (a server): its
 * searches then find their postings here instead of asking the database for them (the request's
 * generation is still proven, see PgIndexView). Read in one statement as one bytea, each row a
 * frame: the term's length in bytes (int4), the term (UTF-8), then the segment (int8), df (int4),
 * postings length (int4) and postings; integers big-endian, as int4send and int8send write them.
 * The frames stay in that one buffer; a term's frames are chained by index.
 */
export class SegmentDictionary {
  /** The first frame of each term. */
  private readonly first = new Map<string, number>();
  /** Where each frame's fixed part starts. */
  private readonly starts: Int32Array;
  /** The next frame of the same term, or -1. */
  private readonly next: Int32Array;

  constructor(private readonly found: Buffer) {
    const starts: number[] = [];
    const next: number[] = [];
    const last = new Map<string, number>();
    for (let at = 0; at < found.length; ) {
      if (at + 4 > found.length) throw framesDamaged();
      const termEnd = at + 4 + found.readInt32BE(at);
      if (termEnd < at + 4 || termEnd > found.length) throw framesDamaged();
      const term = found.toString('utf8', at + 4, termEnd);
      const frame = starts.length;
      starts.push(termEnd);
      next.push(-1);
      const previous = last.get(term);
      if (previous === undefined) this.first.set(term, frame);
      else next[previous] = frame;
      last.set(term, frame);
      at = frameAt(found, termEnd).end;
    }
    this.starts = Int32Array.from(starts);
    this.next = Int32Array.from(next);
  }

  /** The rows of `term` in every segment, or undefined when no segment holds it. */
  rows(term: string): SegmentRow[] | undefined {
    let frame = this.first.get(term);
    if (frame === undefined) return undefined;
    const rows: SegmentRow[] = [];
    for (; frame !== -1; frame = this.next[frame]!) rows.push(frameAt(this.found, this.starts[frame]!).row);
    return rows;
  }
}
