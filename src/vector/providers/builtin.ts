import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isErrnoException } from '../../core/errors.js';
import { writeFileAtomic } from '../../core/fs-atomic.js';
import type { EmbedKind, LearningEmbedder } from '../embedder.js';
import { learnTable } from '../learn.js';
import { StaticTable } from '../static-table.js';

/** Vector length of the builtin embedder: measured on the dev set (see docs/benchmarks.md). */
export const BUILTIN_DIM = 128;

/**
 * The builtin embedder: term vectors learned from this repository's own chunks at index time
 * (latent semantic analysis, `learn.ts`), applied as a static table (`static-table.ts`). Nothing is
 * downloaded and nothing leaves the machine; embedding a chunk costs microseconds. The table is
 * kept at `tablePath` and reused until the corpus doubles or halves, so vectors stay comparable
 * across syncs and an unchanged chunk keeps its vector.
 */
export class BuiltinEmbedder implements LearningEmbedder {
  readonly engine = 'builtin';
  readonly metric = 'cosine';
  readonly batchSize = 512;
  private table: StaticTable | undefined;
  private fingerprint = '';
  private trainedOn = 0;

  /** The table file as last read (size, mtime, inode), to notice a table another process learned. */
  private fileStamp = '';

  constructor(
    private readonly tablePath: string,
    readonly dim: number = BUILTIN_DIM,
  ) {
    this.reload();
  }

  /**
   * Read the table again when the file changed since it was read: an embedding run in another
   * thread or process (a server's embedding worker) relearned it. Cheap when nothing changed.
   */
  reload(): void {
    const stat = statSync(this.tablePath, { throwIfNoEntry: false });
    const stamp = stat ? `${stat.size}:${stat.mtimeMs}:${stat.ino}` : '';
    if (stamp === this.fileStamp) return;
    this.fileStamp = stamp;
    this.table = undefined;
    this.fingerprint = '';
    this.trainedOn = 0;
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(this.tablePath);
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT')) throw error;
    }
    if (!bytes) return;
    try {
      const loaded = StaticTable.deserialize(bytes, this.tablePath);
      if (loaded.table.dim === this.dim) {
        this.table = loaded.table;
        this.fingerprint = loaded.table.fingerprint();
        this.trainedOn = loaded.trainedOn;
      }
    } catch {
      // A damaged table is learned again on the next sync: it is derived data.
    }
  }

  /** `repo-lsa-128@<table hash>`, or `repo-lsa-128` before the first training. */
  get model(): string {
    return this.table ? `repo-lsa-${this.dim}@${this.fingerprint}` : `repo-lsa-${this.dim}`;
  }

  needsTraining(chunks: number): boolean {
    return !this.table || chunks > this.trainedOn * 2 || chunks * 2 < this.trainedOn;
  }

  async train(texts: readonly string[], chunks: number): Promise<void> {
    const table = learnTable(texts, { dim: this.dim });
    mkdirSync(dirname(this.tablePath), { recursive: true });
    writeFileAtomic(this.tablePath, table.serialize(chunks), dirname(this.tablePath));
    this.table = table;
    this.fingerprint = table.fingerprint();
    this.trainedOn = chunks;
    const stat = statSync(this.tablePath);
    this.fileStamp = `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
  }

  async embed(texts: readonly string[], _kind: EmbedKind): Promise<Float32Array[]> {
    const table = this.table;
    // Untrained (a repository too small to learn from): zero vectors, which match nothing.
    return texts.map((text) => (table ? table.embed(text) : new Float32Array(this.dim)));
  }

  async close(): Promise<void> {}
}
