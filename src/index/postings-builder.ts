import { type Section, StringTable, VarintWriter, leBytes } from './format.js';
import { GrowableU32 } from './growable.js';
import { WordTable } from './word-table.js';

/** The encoded term dictionary and postings of one segment, plus counts. */
export interface BuiltPostings {
  /** `TERM` sorted terms, `DF  ` postings per term, `POFF` offsets into `POST`. */
  readonly terms: Section[];
  readonly postings: Section;
  readonly termCount: number;
  readonly postingCount: number;
}

/**
 * Accumulates an inverted index over a segment's chunks, numbered 0, 1, 2, … in the order they
 * are added. Postings are collected as (term, chunk, tf) triples in flat typed arrays, then
 * grouped per term with one stable counting sort: as long as chunks are added in increasing order,
 * each term's postings come out sorted with no comparisons.
 */
export class PostingsBuilder {
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly words = new WordTable((term) => this.termId(term));
  private lastChunkOf = new Int32Array(1 << 16).fill(-1);
  private slotOf = new Uint32Array(1 << 16);

  private readonly postTerm = new GrowableU32(1 << 16);
  private readonly postChunk = new GrowableU32(1 << 16);
  private readonly postTf = new GrowableU32(1 << 16);

  /** Index the words of `text` under `chunk` (tf counted); returns how many terms it had (its BM25 length). */
  addText(chunk: number, text: string): number {
    let tokens = 0;
    this.words.scan(text, (termId) => {
      tokens++;
      if (this.lastChunkOf[termId] === chunk) {
        const slot = this.slotOf[termId]!;
        this.postTf.set(slot, this.postTf.get(slot) + 1);
      } else {
        this.push(termId, chunk, 1);
      }
    });
    return tokens;
  }

  /** A field term (path or declared name): presence only, tf 1, however often it is added. */
  addPresence(chunk: number, term: string): void {
    const termId = this.termId(term);
    if (this.lastChunkOf[termId] !== chunk) this.push(termId, chunk, 1);
  }

  /** One posting as another segment stored it (merging), by `termId(term)`: the caller adds them in increasing chunk order. */
  addPosting(chunk: number, termId: number, tf: number): void {
    this.push(termId, chunk, tf);
  }

  private push(termId: number, chunk: number, tf: number): void {
    this.lastChunkOf[termId] = chunk;
    this.slotOf[termId] = this.postTf.length;
    this.postTerm.push(termId);
    this.postChunk.push(chunk);
    this.postTf.push(tf);
  }

  /** This builder's number for a term (assigned on first use). */
  termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.termIds.set(term, id);
      this.terms.push(term);
      if (id >= this.lastChunkOf.length) {
        const last = new Int32Array(this.lastChunkOf.length * 2).fill(-1);
        last.set(this.lastChunkOf);
        this.lastChunkOf = last;
        const slot = new Uint32Array(this.slotOf.length * 2);
        slot.set(this.slotOf);
        this.slotOf = slot;
      }
    }
    return id;
  }

  /** Encode everything added (once: the builder is spent after). Deterministic: the same postings in the same order give the same bytes. */
  finish(): BuiltPostings {
    const termCount = this.terms.length;
    const order = Array.from({ length: termCount }, (_, i) => i);
    const terms = this.terms;
    order.sort((a, b) => (terms[a]! < terms[b]! ? -1 : terms[a]! > terms[b]! ? 1 : 0));
    const rank = new Uint32Array(termCount);
    order.forEach((termId, r) => {
      rank[termId] = r;
    });

    const postTerm = this.postTerm.view();
    const postChunk = this.postChunk.view();
    const postTf = this.postTf.view();
    const postingCount = postTerm.length;
    const df = new Uint32Array(termCount);
    for (let i = 0; i < postingCount; i++) df[rank[postTerm[i]!]!]!++;
    const start = new Uint32Array(termCount + 1);
    for (let r = 0; r < termCount; r++) start[r + 1] = start[r]! + df[r]!;
    const fill = start.slice(0, termCount);
    const sortedChunk = new Uint32Array(postingCount);
    const sortedTf = new Uint32Array(postingCount);
    for (let i = 0; i < postingCount; i++) {
      const r = rank[postTerm[i]!]!;
      const at = fill[r]!++;
      sortedChunk[at] = postChunk[i]!;
      sortedTf[at] = postTf[i]!;
    }
    // The unsorted triples are the largest thing a build holds: give them back before encoding.
    this.postTerm.release();
    this.postChunk.release();
    this.postTf.release();

    const varints = new VarintWriter();
    const postingOffsets = new Uint32Array(termCount + 1);
    for (let r = 0; r < termCount; r++) {
      postingOffsets[r] = varints.length;
      let previous = 0;
      for (let at = start[r]!; at < start[r + 1]!; at++) {
        const chunk = sortedChunk[at]!;
        varints.write(chunk - previous);
        varints.write(sortedTf[at]!);
        previous = chunk;
      }
    }
    postingOffsets[termCount] = varints.length;
    return {
      terms: [
        { tag: 'TERM', bytes: StringTable.encode(order.map((termId) => terms[termId]!)) },
        { tag: 'DF  ', bytes: leBytes(df) },
        { tag: 'POFF', bytes: leBytes(postingOffsets) },
      ],
      postings: { tag: 'POST', bytes: varints.bytes() },
      termCount,
      postingCount,
    };
  }
}

/**
 * Decode the postings of term rank `rank` (see PostingsBuilder): calls `visit(chunk, tf)` in
 * increasing chunk order. Returns false when the bytes run past the section (damage).
 */
export function decodePostings(bytes: Uint8Array, offsets: Uint32Array, df: Uint32Array, rank: number, visit: (chunk: number, tf: number) => void): boolean {
  let at = offsets[rank]!;
  const end = offsets[rank + 1]!;
  let previous = 0;
  const count = df[rank]!;
  for (let i = 0; i < count; i++) {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      if (at >= end) return false;
      byte = bytes[at++]!;
      value |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    previous += value >>> 0;
    let tf = 0;
    shift = 0;
    do {
      if (at >= end) return false;
      byte = bytes[at++]!;
      tf |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    visit(previous, tf >>> 0);
  }
  return at === end;
}
