/** BM25 parameters (SPEC §3). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** The `idf` mode's weight, exactly as seed 000 §4.1: `log(1 + N/df)`. */
export function idfWeight(chunkCount: number, df: number): number {
  return Math.log(1 + chunkCount / df);
}

/** BM25's inverse document frequency (the Lucene form, never negative). */
export function bm25Idf(chunkCount: number, df: number): number {
  return Math.log(1 + (chunkCount - df + 0.5) / (df + 0.5));
}

/** The length part of BM25's denominator for a chunk of `length` tokens: the same for every term, so a search works it out once per chunk. */
export function bm25Norm(length: number, avgLength: number): number {
  return BM25_K1 * (1 - BM25_B + (BM25_B * length) / (avgLength || 1));
}

/** BM25 term weight for one chunk, from its `bm25Norm`. */
export function bm25Weight(idf: number, tf: number, norm: number): number {
  return (idf * (tf * (BM25_K1 + 1))) / (tf + norm);
}
