/**
 * bm25 scores that are mathematically equal can differ in their last bits (the order terms were
 * added in); rounding far below any meaningful difference lets them tie, and ties go to path.
 */
export function roundScore(score: number): number {
  return Math.round(score * 1e9) / 1e9;
}

/**
 * Order of results everywhere (SPEC §3): score descending, then path, then start line. `order`
 * ranks docs in (path, start line) order, so it is the whole tie-break.
 */
export function before(scores: Float64Array, order: Uint32Array, a: number, b: number): boolean {
  const sa = scores[a]!;
  const sb = scores[b]!;
  return sa > sb || (sa === sb && order[a]! < order[b]!);
}

/**
 * The best `limit` candidates in result order, without sorting all of them (a bounded heap).
 * With `rounded`, scores are compared as `roundScore` leaves them, and those of the candidates
 * that could rank are rounded in place: the rest of a large candidate set (a common word in a
 * large repository) is turned away by one comparison of its raw score, unrounded.
 */
export function selectTop(candidates: Uint32Array, count: number, scores: Float64Array, order: Uint32Array, limit: number, rounded = false): number[] {
  if (limit <= 0 || count === 0) return [];
  const heap: number[] = []; // worst-first heap of the best seen so far
  const worse = (a: number, b: number): boolean => before(scores, order, b, a);
  const siftUp = (i: number): void => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(heap[i]!, heap[parent]!)) break;
      swap(heap, i, parent);
      i = parent;
    }
  };
  const siftDown = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      swap(heap, i, m);
      i = m;
    }
  };
  for (let i = 0; i < count; i++) {
    const id = candidates[i]!;
    if (heap.length < limit) {
      if (rounded) scores[id] = roundScore(scores[id]!);
      heap.push(id);
      siftUp(heap.length - 1);
      continue;
    }
    if (rounded) {
      // Below the worst kept by more than rounding can close (half a step, plus the arithmetic's
      // relative error under 2^-51): it does not get in. Else it is compared rounded.
      const raw = scores[id]!;
      if (raw < scores[heap[0]!]! - (1e-9 + Math.abs(raw) * 1e-14)) continue;
      scores[id] = roundScore(raw);
    }
    if (before(scores, order, id, heap[0]!)) {
      heap[0] = id;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => (before(scores, order, a, b) ? -1 : 1));
}

/** Swap two entries in place (a destructuring swap allocates an array per swap where V8 does not optimize it away). */
function swap(heap: number[], a: number, b: number): void {
  const kept = heap[a]!;
  heap[a] = heap[b]!;
  heap[b] = kept;
}
