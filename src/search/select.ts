/**
 * Order of results everywhere (SPEC §3): score descending, then path, then start line. `order`
 * ranks docs in (path, start line) order, so it is the whole tie-break.
 */
export function before(scores: Float64Array, order: Uint32Array, a: number, b: number): boolean {
  const sa = scores[a]!;
  const sb = scores[b]!;
  return sa > sb || (sa === sb && order[a]! < order[b]!);
}

/** The best `limit` candidates in result order, without sorting all of them (a bounded heap). */
export function selectTop(candidates: Uint32Array, count: number, scores: Float64Array, order: Uint32Array, limit: number): number[] {
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
      heap.push(id);
      siftUp(heap.length - 1);
    } else if (before(scores, order, id, heap[0]!)) {
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
