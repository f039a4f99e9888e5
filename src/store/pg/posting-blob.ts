/**
 * One term's postings in one segment, as the PostgreSQL store keeps them: chunk ids ascending,
 * each as a varint of its gap from the previous one, followed by a varint of its term frequency.
 * A row per (segment, term) instead of a row per posting: a full build of a large repository
 * writes about a hundred times fewer rows.
 */
export function encodePostingBlob(ids: ArrayLike<number>, tfs: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(ids.length * 10);
  let at = 0;
  let previous = 0;
  const put = (value: number): void => {
    while (value >= 0x80) {
      out[at++] = (value & 0x7f) | 0x80;
      value = Math.floor(value / 128);
    }
    out[at++] = value;
  };
  for (let i = 0; i < ids.length; i++) {
    put(ids[i]! - previous);
    put(tfs[i]!);
    previous = ids[i]!;
  }
  return out.subarray(0, at);
}

/** Call `visit` with every (chunk id, term frequency) of a blob, in ascending id order. */
export function decodePostingBlob(blob: Uint8Array, visit: (id: number, tf: number) => void): void {
  let at = 0;
  let id = 0;
  const get = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= blob.length) throw new RangeError('a posting blob ends inside a number');
      const byte = blob[at++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  };
  while (at < blob.length) {
    id += get();
    visit(id, get());
  }
}
