import { type Section, StringTable, VarintWriter, leBytes } from './format.js';
import { GrowableU32 } from './growable.js';
import { WordTable } from './word-table.js';

/** Chunk metadata handed to the builder; `text` is tokenized and then dropped. */
export interface BuilderChunk {
  readonly fileId: number;
  readonly startLine: number;
  readonly endLine: number;
  readonly hash: Uint8Array;
  readonly snippet: string;
  /** Display path of the declaration the chunk sits in (`class Router › match`), or null. */
  readonly symbol?: string | null;
  readonly text: string;
  /** Field terms (already tokenized): the chunk's path and the names it declares. Not counted in its length. */
  readonly fields?: { readonly path: readonly string[]; readonly names: readonly string[] };
}

/**
 * Field terms live in the same dictionary as content terms, behind a prefix no content term can
 * start with (the tokenizer never emits control characters): one index, one lookup path.
 */
export const PATH_FIELD = '\u0001';
export const NAME_FIELD = '\u0002';

/** The encoded sections of chunks.bin, terms.bin and postings.bin. */
export interface BuiltIndex {
  readonly chunks: Section[];
  readonly terms: Section[];
  readonly postings: Section[];
  readonly chunkCount: number;
  readonly termCount: number;
  readonly postingCount: number;
}

/**
 * Accumulates chunks into an inverted index. Postings are collected as (term, chunk, tf) triples
 * in flat typed arrays, then grouped per term with one stable counting sort: chunk ids are
 * appended in increasing order, so each term's postings come out sorted with no comparisons.
 */
export class IndexBuilder {
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly words = new WordTable((term) => this.termId(term));
  private lastChunkOf = new Int32Array(1 << 16).fill(-1);
  private slotOf = new Uint32Array(1 << 16);

  private readonly postTerm = new GrowableU32(1 << 16);
  private readonly postChunk = new GrowableU32(1 << 16);
  private readonly postTf = new GrowableU32(1 << 16);

  private readonly chunkFile = new GrowableU32();
  private readonly chunkLines = new GrowableU32();
  private readonly chunkTokens = new GrowableU32();
  private readonly chunkHashes: Uint8Array[] = [];
  private readonly snippets: string[] = [];
  private readonly symbols: string[] = [];

  /** Add a chunk; returns its id (ids are dense and in insertion order). */
  addChunk(chunk: BuilderChunk): number {
    const id = this.snippets.length;
    this.chunkFile.push(chunk.fileId);
    this.chunkLines.push(chunk.startLine);
    this.chunkLines.push(chunk.endLine);
    this.chunkHashes.push(chunk.hash);
    this.snippets.push(chunk.snippet);
    this.symbols.push(chunk.symbol ?? '');
    let tokens = 0;
    this.words.scan(chunk.text, (termId) => {
      tokens++;
      if (this.lastChunkOf[termId] === id) {
        const slot = this.slotOf[termId]!;
        this.postTf.set(slot, this.postTf.get(slot) + 1);
      } else {
        this.lastChunkOf[termId] = id;
        this.slotOf[termId] = this.postTf.length;
        this.postTerm.push(termId);
        this.postChunk.push(id);
        this.postTf.push(1);
      }
    });
    this.chunkTokens.push(tokens);
    if (chunk.fields) {
      for (const term of chunk.fields.path) this.addFieldPosting(PATH_FIELD + term, id);
      for (const term of chunk.fields.names) this.addFieldPosting(NAME_FIELD + term, id);
    }
    return id;
  }

  private addFieldPosting(term: string, chunkId: number): void {
    const termId = this.termId(term);
    if (this.lastChunkOf[termId] === chunkId) return; // field postings are presence only (tf 1)
    this.lastChunkOf[termId] = chunkId;
    this.slotOf[termId] = this.postTf.length;
    this.postTerm.push(termId);
    this.postChunk.push(chunkId);
    this.postTf.push(1);
  }

  get chunkCount(): number {
    return this.snippets.length;
  }

  private termId(term: string): number {
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

  /** Encode everything added so far. Deterministic: the same chunks in the same order give the same bytes. */
  finish(): BuiltIndex {
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

    const hashes = new Uint8Array(this.chunkHashes.length * 32);
    this.chunkHashes.forEach((hash, i) => hashes.set(hash, i * 32));

    return {
      chunks: [
        { tag: 'FILE', bytes: leBytes(this.chunkFile.view()) },
        { tag: 'LINE', bytes: leBytes(this.chunkLines.view()) },
        { tag: 'TLEN', bytes: leBytes(this.chunkTokens.view()) },
        { tag: 'HASH', bytes: hashes },
        { tag: 'SNIP', bytes: StringTable.encode(this.snippets) },
        { tag: 'SYMP', bytes: StringTable.encode(this.symbols) },
      ],
      terms: [
        { tag: 'TERM', bytes: StringTable.encode(order.map((termId) => terms[termId]!)) },
        { tag: 'DF  ', bytes: leBytes(df) },
        { tag: 'POFF', bytes: leBytes(postingOffsets) },
      ],
      postings: [{ tag: 'POST', bytes: varints.bytes() }],
      chunkCount: this.snippets.length,
      termCount,
      postingCount,
    };
  }
}
