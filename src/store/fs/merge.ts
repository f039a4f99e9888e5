import { artifactInMemory } from '../../index/format.js';
import { GrowableU32 } from '../../index/growable.js';
import { decodePostings } from '../../index/postings-builder.js';
import { SEGMENT_KIND, Segment, SegmentBuilder, forEachLiveFile } from '../../index/segment.js';

/** A segment to merge and its dead local files. */
export interface MergeSource {
  readonly segment: Segment;
  readonly dead: ReadonlySet<number>;
}

/**
 * Merge segments into one: every live file, in path order, with its chunks, outline and
 * postings copied as stored (nothing is re-read from the working tree, which may have changed
 * since). `delta` holds the files of the sync being committed; it is encoded and merged like any
 * other segment. The result is what a fresh build of the same files writes, byte for byte: the
 * same files in the same order, the same sorted dictionary, postings ascending by chunk.
 */
export function mergeSegments(base: readonly MergeSource[], delta: SegmentBuilder): SegmentBuilder {
  const sources: MergeSource[] = [...base];
  if (delta.fileCount > 0) {
    const bytes = artifactInMemory(SEGMENT_KIND, (writer) => delta.write(writer));
    sources.push({ segment: Segment.fromBuffer('(this sync)', bytes), dead: new Set() });
  }
  const out = new SegmentBuilder();

  // Live files of every source in path order; each source's chunks get their new numbers.
  const newChunk = sources.map(({ segment }) => new Int32Array(segment.chunks.count).fill(-1));
  forEachLiveFile(
    sources.map((source) => source.segment),
    (s, f) => sources[s]!.dead.has(f),
    (s, f) => {
      const { segment } = sources[s]!;
      const { chunkStart } = segment.files;
      const stored = [];
      for (let c = chunkStart[f]!; c < chunkStart[f + 1]!; c++) stored.push(segment.chunks.stored(c));
      const { chunkCount: _count, ...record } = segment.files.record(f);
      const first = out.addStoredFile(record, stored, segment.symbols.storedOutline(f), segment.fallback(f));
      for (let c = chunkStart[f]!; c < chunkStart[f + 1]!; c++) newChunk[s]![c] = first + (c - chunkStart[f]!);
    },
  );

  // Postings of live chunks as (new chunk, term, tf), grouped by chunk with a stable counting
  // sort, then added in increasing chunk order: the builder's own sort by term keeps that order.
  const chunkOf = new GrowableU32(1 << 16);
  const termOf = new GrowableU32(1 << 16);
  const tfOf = new GrowableU32(1 << 16);
  sources.forEach(({ segment }, s) => {
    const terms = segment.terms;
    const remap = newChunk[s]!;
    for (let rank = 0; rank < terms.terms.count; rank++) {
      let termId = -1;
      decodePostings(terms.postings, terms.offsets, terms.df, rank, (chunk, tf) => {
        const target = remap[chunk]!;
        if (target < 0) return;
        if (termId < 0) termId = out.postings.termId(terms.terms.get(rank));
        chunkOf.push(target);
        termOf.push(termId);
        tfOf.push(tf);
      });
    }
  });
  const count = chunkOf.length;
  const chunks = chunkOf.view();
  const perChunk = new Uint32Array(out.chunkCount + 1);
  for (let i = 0; i < count; i++) perChunk[chunks[i]! + 1]!++;
  for (let c = 0; c < out.chunkCount; c++) perChunk[c + 1]! += perChunk[c]!;
  const order = new Uint32Array(count);
  const fill = perChunk.slice(0, out.chunkCount);
  for (let i = 0; i < count; i++) order[fill[chunks[i]!]!++] = i;
  for (let k = 0; k < count; k++) {
    const i = order[k]!;
    out.postings.addPosting(chunks[i]!, termOf.get(i), tfOf.get(i));
  }
  return out;
}
