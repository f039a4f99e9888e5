import { RepodexError } from '../core/errors.js';
import { type Section, StringTable, leBytes, varintLength, writeVarint } from './format.js';
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

/** Postings per storage block (a power of two): blocks are filled in turn, never copied to grow. */
const BLOCK_BITS = 16;
const BLOCK = 1 << BLOCK_BITS;
const MASK = BLOCK - 1;
/** A term frequency byte of this value means "255 or more": the real count is in `bigTf`. */
const TF_SPILL = 255;

/**
 * Accumulates an inverted index over a segment's chunks, numbered 0, 1, 2, … in the order they
 * are added (postings must come in nondecreasing chunk order). Postings are kept compact, in
 * insertion order: a term id (u32) and a term frequency (u8, larger counts spilled to a map) per
 * posting, in fixed blocks, and the chunk once per run of postings of one chunk. `finish` encodes
 * them grouped by term in two passes (sizes, then bytes), so the grouped copy is never
 * materialized: each term's postings come out in chunk order with no sorting.
 */
export class PostingsBuilder {
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly words = new WordTable((term) => this.termId(term));
  private lastChunkOf = new Int32Array(1 << 16).fill(-1);
  private slotOf = new Uint32Array(1 << 16);

  private termBlocks: Uint32Array[] = [];
  private tfBlocks: Uint8Array[] = [];
  private readonly bigTf = new Map<number, number>();
  private count = 0;
  /** Runs of postings of one chunk: the chunk, and its first posting. */
  private readonly runChunk = new GrowableU32();
  private readonly runStart = new GrowableU32();

  /** Index the words of `text` under `chunk` (tf counted); returns how many terms it had (its BM25 length). */
  addText(chunk: number, text: string): number {
    let tokens = 0;
    this.words.scan(text, (termId) => {
      tokens++;
      if (this.lastChunkOf[termId] === chunk) this.incrementTf(this.slotOf[termId]!);
      else this.push(termId, chunk, 1);
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
    const runs = this.runChunk.length;
    if (runs === 0 || this.runChunk.get(runs - 1) !== chunk) {
      if (runs > 0 && chunk < this.runChunk.get(runs - 1)) throw new RepodexError('INTERNAL', `postings must be added in chunk order: ${chunk} after ${this.runChunk.get(runs - 1)}`);
      this.runChunk.push(chunk);
      this.runStart.push(this.count);
    }
    const at = this.count++;
    if (at >>> BLOCK_BITS === this.termBlocks.length) {
      this.termBlocks.push(new Uint32Array(BLOCK));
      this.tfBlocks.push(new Uint8Array(BLOCK));
    }
    this.termBlocks[at >>> BLOCK_BITS]![at & MASK] = termId;
    if (tf < TF_SPILL) {
      this.tfBlocks[at >>> BLOCK_BITS]![at & MASK] = tf;
    } else {
      this.tfBlocks[at >>> BLOCK_BITS]![at & MASK] = TF_SPILL;
      this.bigTf.set(at, tf);
    }
    this.lastChunkOf[termId] = chunk;
    this.slotOf[termId] = at;
  }

  private incrementTf(at: number): void {
    const block = this.tfBlocks[at >>> BLOCK_BITS]!;
    const tf = block[at & MASK]!;
    if (tf < TF_SPILL - 1) {
      block[at & MASK] = tf + 1;
    } else if (tf === TF_SPILL - 1) {
      block[at & MASK] = TF_SPILL;
      this.bigTf.set(at, TF_SPILL);
    } else {
      this.bigTf.set(at, this.bigTf.get(at)! + 1);
    }
  }

  /** This builder's number for a term (assigned on first use). */
  termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      // The dictionary outlives the texts: keep a copy of its own, not a slice of a chunk's text.
      const own = ownString(term);
      this.termIds.set(own, id);
      this.terms.push(own);
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

  /** Call `visit(termId, chunk, tf)` for every posting, in insertion (chunk) order. */
  private forEachPosting(visit: (termId: number, chunk: number, tf: number) => void): void {
    const runs = this.runChunk.length;
    for (let r = 0; r < runs; r++) {
      const chunk = this.runChunk.get(r);
      const end = r + 1 < runs ? this.runStart.get(r + 1) : this.count;
      for (let at = this.runStart.get(r); at < end; at++) {
        const tf = this.tfBlocks[at >>> BLOCK_BITS]![at & MASK]!;
        visit(this.termBlocks[at >>> BLOCK_BITS]![at & MASK]!, chunk, tf < TF_SPILL ? tf : this.bigTf.get(at)!);
      }
    }
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

    // Pass 1: postings and encoded bytes per term (by rank); each term's chunks are delta-coded.
    const postingCount = this.count;
    const df = new Uint32Array(termCount);
    const cursor = new Uint32Array(termCount);
    const previous = new Uint32Array(termCount);
    this.forEachPosting((termId, chunk, tf) => {
      const r = rank[termId]!;
      df[r]!++;
      cursor[r]! += varintLength(chunk - previous[termId]!) + varintLength(tf);
      previous[termId] = chunk;
    });
    const postingOffsets = new Uint32Array(termCount + 1);
    for (let r = 0; r < termCount; r++) {
      const size = cursor[r]!;
      cursor[r] = postingOffsets[r]!;
      postingOffsets[r + 1] = postingOffsets[r]! + size;
    }
    // Pass 2: write each posting at its term's cursor.
    const bytes = new Uint8Array(postingOffsets[termCount]!);
    previous.fill(0);
    this.forEachPosting((termId, chunk, tf) => {
      const r = rank[termId]!;
      let at = writeVarint(bytes, cursor[r]!, chunk - previous[termId]!);
      at = writeVarint(bytes, at, tf);
      cursor[r] = at;
      previous[termId] = chunk;
    });
    this.termBlocks = [];
    this.tfBlocks = [];
    this.bigTf.clear();
    return {
      terms: [
        { tag: 'TERM', bytes: StringTable.encode(order.map((termId) => terms[termId]!)) },
        { tag: 'DF  ', bytes: leBytes(df) },
        { tag: 'POFF', bytes: leBytes(postingOffsets) },
      ],
      postings: { tag: 'POST', bytes },
      termCount,
      postingCount,
    };
  }
}

/**
 * A copy of `text` that shares no memory with another string. V8 represents a slice of 13 or more
 * characters as a view of the whole string it was cut from, so a term sliced from a chunk's text
 * would keep that text alive for as long as the dictionary lives (measured: ~17 MB of chunk texts
 * on playwright). Concatenating and slicing again makes V8 flatten the term into a string of its own.
 */
function ownString(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

/**
 * Decode the postings of term rank `rank` into `docs` and `tfs` from index `count` on, as
 * `base + chunk`, keeping only chunks whose `live[base + chunk]` is 1 (every chunk when `live` is
 * undefined): what a search reads, without a call per posting. Returns the new count, or -1
 * when the bytes run past the section (damage). The arrays must have room for the term's df.
 */
export function decodePostingsInto(
  bytes: Uint8Array,
  offsets: Uint32Array,
  df: Uint32Array,
  rank: number,
  base: number,
  live: Uint8Array | undefined,
  docs: Uint32Array,
  tfs: Uint32Array,
  count: number,
): number {
  let at = offsets[rank]!;
  const end = offsets[rank + 1]!;
  let previous = 0;
  const n = df[rank]!;
  let out = count;
  for (let i = 0; i < n; i++) {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      if (at >= end) return -1;
      byte = bytes[at++]!;
      value |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    previous += value >>> 0;
    let tf = 0;
    shift = 0;
    do {
      if (at >= end) return -1;
      byte = bytes[at++]!;
      tf |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    const doc = base + previous;
    if (live !== undefined && live[doc] !== 1) continue;
    docs[out] = doc;
    tfs[out] = tf >>> 0;
    out++;
  }
  return at === end ? out : -1;
}

/**
 * Decode the postings of term rank `rank` (see PostingsBuilder): calls `visit(chunk, tf)` in
 * increasing chunk order. Returns false, visiting nothing, when the bytes run past the section
 * (damage).
 */
export function decodePostings(bytes: Uint8Array, offsets: Uint32Array, df: Uint32Array, rank: number, visit: (chunk: number, tf: number) => void): boolean {
  const n = df[rank]!;
  // Every posting takes at least two bytes: a damaged count larger than that is no reason to allocate.
  if (n > (offsets[rank + 1]! - offsets[rank]!) / 2) return false;
  if (scratchDocs.length < n) {
    scratchDocs = new Uint32Array(Math.max(n, scratchDocs.length * 2));
    scratchTfs = new Uint32Array(scratchDocs.length);
  }
  const docs = scratchDocs;
  const tfs = scratchTfs;
  const count = decodePostingsInto(bytes, offsets, df, rank, 0, undefined, docs, tfs, 0);
  if (count < 0) return false;
  for (let i = 0; i < count; i++) visit(docs[i]!, tfs[i]!);
  return true;
}

/** Reused by `decodePostings` (which never runs inside one of its own visits). */
let scratchDocs = new Uint32Array(1024);
let scratchTfs = new Uint32Array(1024);
