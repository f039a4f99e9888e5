import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ChunkIdAllocator, identityKey, pathHash, preferredChunkId } from './chunk-ids.js';

const sha = (text: string) => createHash('sha256').update(text).digest();

describe('chunk ids', () => {
  it('a preferred id depends on the path, the chunk index and the chunk hash, and on nothing else', () => {
    const hash = sha('function a() {}');
    const id = preferredChunkId(pathHash('src/a.ts'), 0, hash);
    expect(preferredChunkId(pathHash('src/a.ts'), 0, Buffer.from(hash))).toBe(id);
    expect(preferredChunkId(pathHash('src/b.ts'), 0, hash)).not.toBe(id);
    expect(preferredChunkId(pathHash('src/a.ts'), 1, hash)).not.toBe(id);
    expect(preferredChunkId(pathHash('src/a.ts'), 0, sha('function a() { }'))).not.toBe(id);
    // Pinned: an id is part of what clients hold, so the rule must not drift silently.
    expect(id).toMatchInlineSnapshot(`1469135860`);
  });

  it('spreads ids evenly: 2^17 chunks over 256 buckets pass a chi-square test, and collide about as often as random', () => {
    const count = 1 << 17;
    const buckets = new Uint32Array(256);
    const seen = new Set<number>();
    let collisions = 0;
    for (let i = 0; i < count; i++) {
      // Many chunks per file, many files with near-identical paths: the shapes real trees have.
      const id = preferredChunkId(pathHash(`packages/pkg${i % 97}/src/file${i >> 7}.ts`), i & 127, sha(`chunk ${i}`));
      buckets[id >>> 24]!++;
      if (seen.has(id)) collisions++;
      seen.add(id);
    }
    const expected = count / 256;
    const chiSquare = buckets.reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    expect(chiSquare).toBeLessThan(330); // 255 degrees of freedom: p ≈ 0.001
    expect(collisions).toBeLessThan(12); // expected n²/2^33 = 2
  });

  it('keeps the ids of unchanged chunks, probes past taken ids, and never hands one id out twice', () => {
    const hashes = [sha('one'), sha('two'), sha('three')];
    const first = new ChunkIdAllocator(() => false).assign('src/a.ts', hashes, new Map());
    expect(first.kept).toBe(0);
    expect(new Set(first.ids).size).toBe(3);

    // The next sync: chunk 1 changed; chunks 0 and 2 keep their ids.
    const previous = new Map(hashes.map((hash, i) => [identityKey(i, hash.toString('hex')), first.ids[i]!]));
    const edited = [hashes[0]!, sha('two, edited'), hashes[2]!];
    const taken = new Set(first.ids);
    const second = new ChunkIdAllocator((id) => taken.has(id)).assign('src/a.ts', edited, previous);
    expect(second.kept).toBe(2);
    expect(second.ids[0]).toBe(first.ids[0]);
    expect(second.ids[2]).toBe(first.ids[2]);
    expect(taken.has(second.ids[1]!)).toBe(false);

    // Every preferred id taken by someone else: each chunk probes upwards to a free one.
    const preferred = hashes.map((hash, i) => preferredChunkId(pathHash('src/b.ts'), i, hash));
    const busy = new Set(preferred.flatMap((id) => [id, (id + 1) >>> 0]));
    const probed = new ChunkIdAllocator((id) => busy.has(id)).assign('src/b.ts', hashes, new Map());
    expect(probed.ids).toEqual(preferred.map((id) => (id + 2) >>> 0));
  });
});
