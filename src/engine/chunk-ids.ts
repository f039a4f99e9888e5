import { createHash } from 'node:crypto';

/**
 * The id a chunk would like: the first four bytes of sha256(path ‖ chunk_index ‖ chunk_hash), so
 * the same chunk (seed 001 identity) gets the same uint32 id in every build of every clone, and an
 * edited chunk a new one.
 */
export function preferredChunkId(path: string, chunkIndex: number, hash: Uint8Array): number {
  return createHash('sha256').update(path).update('\0').update(String(chunkIndex)).update('\0').update(hash).digest().readUInt32LE(0);
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

  /** Ids for one file's chunks, in chunk order; `previous` maps identity keys of the file's old chunks to their ids. */
  assign(path: string, hashes: readonly Uint8Array[], previous: ReadonlyMap<string, number>): number[] {
    return hashes.map((hash, chunkIndex) => {
      const kept = previous.get(identityKey(chunkIndex, Buffer.from(hash).toString('hex')));
      if (kept !== undefined && !this.assigned.has(kept)) {
        this.assigned.add(kept);
        return kept;
      }
      let id = preferredChunkId(path, chunkIndex, hash);
      while (this.assigned.has(id) || this.takenBefore(id)) id = (id + 1) >>> 0;
      this.assigned.add(id);
      return id;
    });
  }
}
