import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from '../../core/crc32.js';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import type { RepoPaths } from '../../core/paths.js';
import { FORMAT_VERSION } from '../../core/version.js';
import { FileTable } from '../../index/files-codec.js';
import { Artifact } from '../../index/format.js';
import { acquireLock } from '../../index/lock.js';
import { ARTIFACTS, type ArtifactName, type IndexMeta, IndexMetaSchema } from '../../index/meta.js';
import type { GenerationData, IndexStore, MetaDraft } from '../backend.js';
import { fsyncDir, writeFileAtomic, writeFileDurable } from '../../core/fs-atomic.js';
import { FsIndexView } from './fs-view.js';

const GENERATION_DIR = /^gen-(\d+)(\.tmp-\d+)?$/;
const KIND: Record<ArtifactName, string> = {
  'files.bin': 'FILE',
  'chunks.bin': 'CHNK',
  'terms.bin': 'TERM',
  'postings.bin': 'POST',
  'symbols.bin': 'SYMB',
};

/**
 * The embedded store: each sync writes a complete generation folder `.repodex/gen-N/`, then
 * commits it by atomically renaming a new `meta.json` into place. A crash at any point leaves
 * the previous meta.json, which names a complete previous generation.
 */
export class FsStore implements IndexStore {
  constructor(private readonly paths: RepoPaths) {}

  readMeta(): IndexMeta | undefined {
    let text: string;
    try {
      text = readFileSync(this.paths.meta, 'utf8');
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return undefined;
      throw new RepodexError('INDEX_CORRUPT', `cannot read meta.json: ${errorMessage(error)}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new RepodexError('INDEX_CORRUPT', `meta.json is not valid JSON: ${errorMessage(error)}`);
    }
    const version = (raw as { format_version?: unknown } | null)?.format_version;
    if (typeof version === 'number' && version !== FORMAT_VERSION) {
      throw new RepodexError('INDEX_INCOMPATIBLE', `meta.json has format version ${version}, this repodex reads ${FORMAT_VERSION}`);
    }
    const parsed = IndexMetaSchema.safeParse(raw);
    if (!parsed.success) throw new RepodexError('INDEX_CORRUPT', `meta.json does not match its schema: ${parsed.error.issues[0]?.message ?? ''}`);
    return parsed.data;
  }

  private artifactPath(meta: IndexMeta, name: string): string {
    return join(this.paths.dataDir, meta.generation_dir, name);
  }

  missingArtifacts(meta: IndexMeta): string[] {
    const missing: string[] = [];
    for (const name of ARTIFACTS) if (!existsSync(this.artifactPath(meta, name))) missing.push(name);
    return missing;
  }

  async openCatalog(meta: IndexMeta): Promise<FileTable> {
    const bytes = readFileSync(this.artifactPath(meta, 'files.bin'));
    return new FileTable(new Artifact('files.bin', bytes, KIND['files.bin'], true));
  }

  async open(options: { verify?: boolean } = {}): Promise<FsIndexView> {
    // A concurrent sync may delete the generation we just read about; re-read meta and retry.
    for (let attempt = 0; ; attempt++) {
      const meta = this.readMeta();
      if (!meta) throw new RepodexError('INDEX_MISSING');
      try {
        const load = (name: ArtifactName): Artifact =>
          new Artifact(name, readFileSync(this.artifactPath(meta, name)), KIND[name], options.verify ?? true);
        // symbols.bin is loaded lazily; it is checked for existence now so a missing artifact fails here, not mid-request.
        if (!existsSync(this.artifactPath(meta, 'symbols.bin'))) throw new RepodexError('INDEX_MISSING', 'artifact symbols.bin is missing');
        return new FsIndexView(meta, load('files.bin'), load('chunks.bin'), load('terms.bin'), load('postings.bin'), () => load('symbols.bin'));
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) {
          if (attempt < 2) continue;
          throw new RepodexError('INDEX_MISSING', `artifact missing: ${(error as NodeJS.ErrnoException).path ?? ''}`);
        }
        throw error;
      }
    }
  }

  async commit(data: GenerationData, draft: MetaDraft): Promise<IndexMeta> {
    mkdirSync(this.paths.dataDir, { recursive: true });
    const previous = this.readMetaOrUndefined();
    const generation = Math.max(previous?.generation ?? 0, this.highestGenerationOnDisk()) + 1;
    const generationDir = `gen-${generation}`;
    const finalDir = join(this.paths.dataDir, generationDir);
    const tempDir = `${finalDir}.tmp-${process.pid}`;
    rmSync(tempDir, { recursive: true, force: true });
    mkdirSync(tempDir);
    const artifacts: IndexMeta['artifacts'] = {};
    const bytesOf: Record<ArtifactName, Uint8Array> = {
      'files.bin': data.files,
      'chunks.bin': data.chunks,
      'terms.bin': data.terms,
      'postings.bin': data.postings,
      'symbols.bin': data.symbols,
    };
    for (const name of ARTIFACTS) {
      const bytes = bytesOf[name];
      writeFileDurable(join(tempDir, name), bytes);
      artifacts[name] = { bytes: bytes.length, crc32: crc32(bytes) };
    }
    fsyncDir(tempDir);
    renameSync(tempDir, finalDir);
    fsyncDir(this.paths.dataDir);
    const meta: IndexMeta = { ...draft, generation, generation_dir: generationDir, artifacts };
    // The commit point: one atomic rename of meta.json.
    writeFileAtomic(this.paths.meta, `${JSON.stringify(meta, null, 2)}\n`, this.paths.dataDir);
    this.collectGarbage(new Set([generationDir, previous?.generation_dir ?? '']));
    return meta;
  }

  private readMetaOrUndefined(): IndexMeta | undefined {
    try {
      return this.readMeta();
    } catch (error) {
      // A damaged or older meta.json is replaced by this commit; its generation number restarts above what is on disk.
      if (error instanceof RepodexError) return undefined;
      throw error;
    }
  }

  private highestGenerationOnDisk(): number {
    let highest = 0;
    for (const name of this.listDataDir()) {
      // Only complete generations count: a crashed writer's temp folder must not burn a number.
      const match = GENERATION_DIR.exec(name);
      if (match && match[2] === undefined) highest = Math.max(highest, Number(match[1]));
    }
    return highest;
  }

  private listDataDir(): string[] {
    try {
      return readdirSync(this.paths.dataDir);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return [];
      throw error;
    }
  }

  /** Remove generations other than the current and the previous one (a reader may still be loading it). */
  private collectGarbage(keep: ReadonlySet<string>): void {
    for (const name of this.listDataDir()) {
      if (!GENERATION_DIR.test(name) || keep.has(name)) continue;
      rmSync(join(this.paths.dataDir, name), { recursive: true, force: true });
    }
    for (const name of this.listDataDir()) {
      if (/^meta\.json\.tmp-\d+$/.test(name)) rmSync(join(this.paths.dataDir, name), { force: true });
    }
  }

  lock(): { release(): void } {
    mkdirSync(this.paths.dataDir, { recursive: true });
    return acquireLock(this.paths.lock);
  }

  clean(): string[] {
    const removed: string[] = [];
    for (const name of this.listDataDir()) {
      if (GENERATION_DIR.test(name) || name === 'meta.json' || /^meta\.json\.tmp-\d+$/.test(name)) {
        rmSync(join(this.paths.dataDir, name), { recursive: true, force: true });
        removed.push(name);
      }
    }
    return removed.sort();
  }

  sizeOnDisk(meta: IndexMeta): number {
    let total = 0;
    for (const name of ARTIFACTS) total += statSync(this.artifactPath(meta, name), { throwIfNoEntry: false })?.size ?? 0;
    return total + (statSync(this.paths.meta, { throwIfNoEntry: false })?.size ?? 0);
  }
}
