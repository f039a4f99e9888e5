import type { SqlPool } from './sql.js';

/**
 * How a long-running process knows, in as few round trips as possible, that the generation it
 * answers from is still the repository's current one. Every request starts with a stamp (a new
 * epoch). When the previous request's reads were proven current by the database, the stamp names
 * the generation proven then without asking: the request's first statement that reads the
 * generation proves it again (or finds it replaced: INDEX_CHANGED, and the engine asks once
 * more), and a read answered from memory alone (a file listing too) waits for a check sent in
 * this epoch. A request that proved nothing makes the next stamp ask first. A search costs the
 * one statement it needs.
 */
export class GenerationProof {
  /** Stamps answered so far. */
  private epoch = 0;
  /** The newest generation the database reported (undefined: the repository is gone), and the epoch it was asked in. */
  private seen: { epoch: number; generation: number | undefined } = { epoch: -1, generation: undefined };
  /** Forgotten when this process is about to change the generation itself. */
  private trusted = false;
  /** The check sent in an epoch, shared by the reads of that epoch that need one. */
  private pending: { epoch: number; check: Promise<number | undefined> } | undefined;

  constructor(
    private readonly pool: SqlPool,
    readonly repoId: string,
  ) {}

  /** The generation a new request names (the one proven in the previous request, else the database's answer now), and whether it was asked. */
  async generation(): Promise<{ generation: number | undefined; asked: boolean }> {
    const proven = this.trusted && this.seen.epoch === this.epoch;
    this.epoch++;
    if (proven) return { generation: this.seen.generation, asked: false };
    return { generation: await this.latest(), asked: true };
  }

  /** The epoch a statement is sent in, to hand back to `saw` with what it found. */
  now(): number {
    return this.epoch;
  }

  /** What a statement sent in `epoch` found the generation to be. */
  saw(epoch: number, generation: number | undefined): void {
    if (epoch < this.seen.epoch) return;
    this.seen = { epoch, generation };
    this.trusted = true;
  }

  /** The generation as proven in this epoch: known already, or asked once (the reads of the epoch share the answer). */
  latest(): Promise<number | undefined> {
    if (this.seen.epoch === this.epoch) return Promise.resolve(this.seen.generation);
    if (this.pending?.epoch === this.epoch) return this.pending.check;
    const epoch = this.epoch;
    // No index (never synced, or cleaned) reads as generation 0: the stamp is empty.
    const check = this.pool.query<{ generation: string }>('SELECT CASE WHEN meta IS NULL THEN 0 ELSE generation END AS generation FROM repos WHERE id = $1', [this.repoId]).then(([row]) => {
      const generation = row ? Number(row.generation) : undefined;
      this.saw(epoch, generation);
      return generation;
    });
    this.pending = { epoch, check };
    return check;
  }

  /**
   * The next stamp asks the database (this process is changing the generation, or a worker of it
   * just did). A new epoch starts too: a statement still in flight from before reports what it
   * saw for its own, older epoch, which proves nothing about the next request.
   */
  forget(): void {
    this.trusted = false;
    this.epoch++;
  }
}
