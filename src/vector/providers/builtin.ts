import { type Stats, closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { RepodexError, errorMessage, isErrnoException, isRepodexError } from '../../core/errors.js';
import { writeFileAtomic } from '../../core/fs-atomic.js';
import type { EmbedKind, LearningEmbedder } from '../embedder.js';
import { learnTable } from '../learn.js';
import { StaticTable, TABLE_HEADER_BYTES, TABLE_VERSION, checkTableBytes, peekTable } from '../static-table.js';

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
  /** The table, once something needed it (embedding, or deciding whether to train). */
  private table: StaticTable | undefined;
  /** The table file's fingerprint ('' without a usable table), known from its header before the table is read. */
  private fingerprint = '';
  private trainedOn = 0;
  /** The table file's format version, as last read (0: not read yet). */
  private version = 0;
  /** Why the table file on disk cannot be used (damaged), as far as it was read; undefined otherwise. */
  private damaged: string | undefined;
  /** The table file as damage reports name it (inside `.repodex/`). */
  private readonly name: string;

  /** The table file as last read (size, mtime, inode), to notice a table another process learned. */
  private fileStamp = '';

  constructor(
    private readonly tablePath: string,
    readonly dim: number = BUILTIN_DIM,
  ) {
    this.name = `${basename(dirname(tablePath))}/${basename(tablePath)}`;
    this.reload();
  }

  /**
   * Look at the table file again when it changed since it was read: an embedding run in another
   * thread or process (a server's embedding worker) relearned it. Cheap when nothing changed, and
   * cheap when it did: only the header is read (it names the model, and carries its own CRC); the
   * table itself is read when something embeds. A table file from before headers named it is
   * read whole.
   */
  reload(): void {
    const stat = statSync(this.tablePath, { throwIfNoEntry: false });
    const stamp = stat ? stampOf(stat) : '';
    if (stamp === this.fileStamp) return;
    this.fileStamp = stamp;
    this.table = undefined;
    this.fingerprint = '';
    this.trainedOn = 0;
    this.version = 0;
    this.damaged = undefined;
    if (!stat) return;
    const header = readHeader(this.tablePath);
    if (!header) {
      this.version = -1;
      this.damaged = `${this.name} is damaged (its header is not an embedding table's)`;
    } else if (header.fingerprint !== undefined && header.dim === this.dim) {
      this.fingerprint = header.fingerprint;
      this.trainedOn = header.trainedOn;
      this.version = header.version;
    } else {
      this.load();
    }
  }

  /** The table, read and checked now if only its header was read so far; undefined without a usable one. */
  private load(): StaticTable | undefined {
    if (this.table || this.version === -1 || (this.fingerprint === '' && this.version !== 0)) return this.table;
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(this.tablePath);
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT')) throw error;
    }
    this.fingerprint = '';
    this.trainedOn = 0;
    if (!bytes) return undefined;
    try {
      const loaded = StaticTable.deserialize(bytes, this.name);
      this.version = loaded.version;
      if (loaded.table.dim === this.dim) {
        this.table = loaded.table;
        this.fingerprint = loaded.fingerprint;
        this.trainedOn = loaded.trainedOn;
      }
    } catch (error) {
      // Never used damaged: the next embedding run learns it again (it is derived data).
      this.version = -1;
      const detail = isRepodexError(error) ? (error.detail ?? error.message) : errorMessage(error);
      this.damaged = `${this.name} is damaged (${detail.startsWith(`${this.name}: `) ? detail.slice(this.name.length + 2) : detail})`;
    }
    return this.table;
  }

  /** `repo-lsa-128@<table hash>`, or `repo-lsa-128` before the first training. */
  get model(): string {
    return this.fingerprint ? `repo-lsa-${this.dim}@${this.fingerprint}` : `repo-lsa-${this.dim}`;
  }

  /** Why the table on disk cannot be used, as far as it has been read (its header, or all of it once something embedded). */
  get damage(): string | undefined {
    return this.damaged === undefined ? undefined : `${this.damaged}; \`repodex sync\` learns it again`;
  }

  /**
   * Whether the embedding run must learn a table first: none, a damaged one, or one learned from
   * an index less than half or more than twice this size. Reads the whole table (the run is about
   * to use it), and rewrites one of an older format, unchanged otherwise (same fingerprint, so no
   * vector is made again), so later processes can name it from a checked header (the run holds
   * the vectors lock).
   */
  needsTraining(chunks: number): boolean {
    const table = this.load();
    if (!table) return true;
    if (chunks > this.trainedOn * 2 || chunks * 2 < this.trainedOn) return true;
    if (this.version < TABLE_VERSION) this.write(table, this.trainedOn);
    return false;
  }

  async train(texts: readonly string[], chunks: number): Promise<void> {
    this.write(learnTable(texts, { dim: this.dim }), chunks);
  }

  private write(table: StaticTable, trainedOn: number): void {
    mkdirSync(dirname(this.tablePath), { recursive: true });
    writeFileAtomic(this.tablePath, table.serialize(trainedOn), dirname(this.tablePath));
    this.table = table;
    this.fingerprint = table.fingerprint();
    this.trainedOn = trainedOn;
    this.version = TABLE_VERSION;
    this.damaged = undefined;
    this.fileStamp = stampOf(statSync(this.tablePath));
  }

  async embed(texts: readonly string[], _kind: EmbedKind): Promise<Float32Array[]> {
    const table = this.load();
    // A damaged table is refused, never used: its vectors would silently mean something else.
    if (this.damaged !== undefined) throw new RepodexError('EMBEDDER_FAILED', this.damage, { selfContained: true });
    // Untrained (a repository too small to learn from): zero vectors, which match nothing.
    return texts.map((text) => (table ? table.embed(text) : new Float32Array(this.dim)));
  }

  /** Check the whole table file (both checksums) without loading it: what `verify` and `status` report. */
  check(): { checked: string[]; problems: string[] } {
    let fd: number;
    try {
      fd = openSync(this.tablePath, 'r');
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return { checked: [], problems: [] };
      return { checked: [this.name], problems: [`cannot read ${this.name}: ${errorMessage(error)}`] };
    }
    try {
      const why = checkTableBytes(fstatSync(fd).size, (offset, into) => readSync(fd, into, 0, into.length, offset));
      return { checked: [this.name], problems: why === undefined ? [] : [`${this.name} is damaged (${why}); \`repodex sync\` learns it again (vector and hybrid searches answer with bm25 until then)`] };
    } finally {
      closeSync(fd);
    }
  }

  async close(): Promise<void> {}
}

/** What tells one version of the table file from another: size, mtime, inode. */
function stampOf(stat: Stats): string {
  return `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
}

/** The header of the table file at `path` (see peekTable), or undefined when it cannot be read as one. */
function readHeader(path: string): ReturnType<typeof peekTable> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const header = Buffer.alloc(TABLE_HEADER_BYTES);
    const n = readSync(fd, header, 0, header.length, 0);
    return peekTable(header.subarray(0, n));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
