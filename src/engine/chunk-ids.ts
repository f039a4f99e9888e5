/** The murmur3 finalizer: every input bit flips each output bit with probability about 1/2. */
function mix32(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A 32-bit hash of a path (FNV-1a over its UTF-16 code units, then mixed): the per-file part of a chunk's preferred id. */
export function pathHash(path: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 0x01000193);
  return mix32(h);
}

/**
 * The id a chunk would like, from its identity (seed 001's path, chunk_index, chunk_hash): the
 * path's hash, the index and two words of the chunk hash (a sha256 of the chunk's content, so
 * already uniform), mixed. The same chunk gets the same uint32 id in every build of every clone,
 * and an edited chunk a new one. A sha256 per chunk would do the same at ~3 µs each (~40 ms of a
 * full build of playwright, measured); this costs a tenth of that or less.
 */
export function preferredChunkId(pathKey: number, chunkIndex: number, hash: Uint8Array): number {
  const word = (at: number) => (hash[at]! | (hash[at + 1]! << 8) | (hash[at + 2]! << 16) | (hash[at + 3]! << 24)) >>> 0;
  return mix32(mix32(pathKey ^ word(0)) ^ Math.imul(chunkIndex + 1, 0x9e3779b1) ^ word(4));
}

/** The key of a chunk's identity within its file. */
export function identityKey(chunkIndex: number, hashHex: string): string {
  return `${chunkIndex}:${hashHex}`;
}

/**
 * Assigns stable chunk ids during one sync. A chunk whose identity the index already had keeps
 * its id; any other takes its preferred id, or the next free one above it when that is taken (a
 * 32-bit collision) by a live chunk, by a chunk this sync removes (so a removed id is not handed
 * to other code while a client may still hold it) or by a chunk assigned earlier in this sync.
 * Files are assigned in path order, so a fresh build is deterministic.
 */
export class ChunkIdAllocator {
  private readonly assigned = new Set<number>();

  constructor(private readonly takenBefore: (id: number) => boolean) {}

  /**
   * Ids for one file's chunks, in chunk order, and how many kept the id they had; `previous` maps
   * identity keys of the file's old chunks to their ids.
   */
  assign(path: string, hashes: readonly Uint8Array[], previous: ReadonlyMap<string, number>): { ids: number[]; kept: number } {
    const pathKey = pathHash(path);
    let kept = 0;
    const ids = hashes.map((hash, chunkIndex) => {
      const before = previous.size > 0 ? previous.get(identityKey(chunkIndex, Buffer.from(hash).toString('hex'))) : undefined;
      if (before !== undefined && !this.assigned.has(before)) {
        this.assigned.add(before);
        kept++;
        return before;
      }
      let id = preferredChunkId(pathKey, chunkIndex, hash);
      while (this.assigned.has(id) || this.takenBefore(id)) id = (id + 1) >>> 0;
      this.assigned.add(id);
      return id;
    });
    return { ids, kept };
  }
}
