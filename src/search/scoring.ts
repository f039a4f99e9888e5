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

/** BM25 term weight for one chunk. */
export function bm25TermScore(idf: number, tf: number, length: number, avgLength: number): number {
  const norm = BM25_K1 * (1 - BM25_B + (BM25_B * length) / (avgLength || 1));
  return (idf * (tf * (BM25_K1 + 1))) / (tf + norm);
}
