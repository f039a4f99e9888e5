import { mkdirSync, readFileSync } from 'node:fs';
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

  constructor(
    private readonly tablePath: string,
    readonly dim: number = BUILTIN_DIM,
  ) {
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(tablePath);
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT')) throw error;
    }
    if (bytes) {
      try {
        const loaded = StaticTable.deserialize(bytes, tablePath);
        if (loaded.table.dim === dim) {
          this.table = loaded.table;
          this.fingerprint = loaded.table.fingerprint();
          this.trainedOn = loaded.trainedOn;
        }
      } catch {
        // A damaged table is learned again on the next sync: it is derived data.
        this.table = undefined;
      }
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
  }

  async embed(texts: readonly string[], _kind: EmbedKind): Promise<Float32Array[]> {
    const table = this.table;
    // Untrained (a repository too small to learn from): zero vectors, which match nothing.
    return texts.map((text) => (table ? table.embed(text) : new Float32Array(this.dim)));
  }

  async close(): Promise<void> {}
}
