import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { CHECKED_FILE, checkedFilesOf } from '../../core/checked-files.js';
import { crashPoint } from '../../core/crash.js';
import { checkedJsonText, readCheckedJson } from '../../core/checked-json.js';
import { RepodexError, errorMessage, isErrnoException, isRepodexError } from '../../core/errors.js';
import { fsyncDir, writeFileAtomic } from '../../core/fs-atomic.js';
import { folderNotWritable, rethrowSystemFailure, systemFailure } from '../../core/system-errors.js';
import { processExists } from '../../core/process.js';
import { listDirOrEmpty } from '../../core/stat.js';
import { FEATURE_VERSION, FORMAT_VERSION, TOOL_VERSION } from '../../core/version.js';
import { ArtifactFile, ArtifactWriter, fileSink } from '../../index/format.js';
import { MANIFEST_KIND, type Manifest, type SegmentRef, decodeManifest, encodeManifest } from '../../index/manifest.js';
import type { NewFile, Tree } from '../../index/model.js';
import { Segment, SegmentBuilder } from '../../index/segment.js';
import { LayoutSchema } from '../../scan/layout.js';
import type { EmbedderIdentity } from '../../vector/embedder.js';
import type { CommitResult, DiskUsage, GenerationWriter, HeldLock, IndexMeta, IndexStore, IndexView, IntegrityReport, LocalParseCache, LockOwner, MetaDraft, ParseCache, VectorManifest } from '../backend.js';
import { FsIndexView } from './fs-view.js';
import { FsVectorStore, VECTORS_DIR, checkVectorFiles, dropVectorSets, identityKey, readVectorManifestFile, vectorsDirSize, writeVectorManifestFile } from './fs-vectors.js';
import { acquireLock, isLockLeftover, lockHolder, sweepLockLeftovers } from './lock.js';
import { FsControlPlane } from './fs-control.js';
import { localParseCache } from './parse-cache.js';
import { mergeSegments } from './merge.js';

/** meta.json: the commit record. Written last, by atomic rename; readers start here. */
const MetaFileSchema = z.object({
  format_version: z.int(),
  feature_version: z.int(),
  tool_version: z.string(),
  generation: z.int().check(z.minimum(1)),
  manifest: z.object({ name: z.string().check(z.regex(/^gen-\d+\.rpdx$/)), bytes: z.int(), header_crc: z.int() }),
  config_hash: z.string(),
  index_config_key: z.optional(z.string()),
  project_type: z.string(),
  chunker: z.object({ name: z.string(), version: z.int(), params_key: z.string() }),
  counts: z.object({ files: z.int(), files_indexed: z.int(), files_skipped: z.int(), chunks: z.int(), segments: z.int() }),
  source_bytes: z.number(),
  git: z.nullable(z.object({ commit: z.nullable(z.string()), branch: z.nullable(z.string()) })),
  synced_at: z.string(),
  duration_ms: z.number(),
  partial: z.optional(z.object({ files: z.int(), of: z.int() })),
  layout: z.optional(LayoutSchema),
});
type MetaFile = z.infer<typeof MetaFileSchema>;

const GENERATION_FILE = /^gen-(\d+)\.rpdx$/;
const SEGMENT_FILE = /^seg-(\d+)\.rpdx$/;
const TEMP_FILE = /\.tmp-\d+$/;

/** Fold the small segments into one when a generation would have more than this many… */
const MAX_SEGMENTS = 8;
/** …and rewrite all of them into one when more than this share of chunks are dead (tombstoned). */
const MAX_DEAD_SHARE = 0.25;

function toIndexMeta(file: MetaFile): IndexMeta {
  const { manifest: _manifest, ...meta } = file;
  return meta;
}

/**
 * The embedded store: `.repodex/` holds immutable segment files (`seg-N.rpdx`), one manifest per
 * generation (`gen-N.rpdx`: which segments, which of their files are dead, the walk's shape) and
 * `meta.json`, the commit record naming the current manifest. A sync writes a segment with just
 * the files it (re)indexed plus a manifest, then commits by atomically renaming meta.json; a
 * crash at any point leaves the previous meta.json naming a complete previous generation. When
 * segments pile up or too much of them is dead, a commit merges them into one. Only the current
 * generation's files are kept: a reader holds its generation's segments open and reads them by
 * descriptor, so a commit removes the files it replaced at once, and the system frees their space
 * when the last reader lets go of them. A reader between reading meta.json and opening the files
 * it names may find one gone: it reads meta.json again (`open`).
 */
export class FsStore implements IndexStore {
  private readonly metaPath: string;
  private readonly lockPath: string;
  private readonly vectorLockPath: string;
  private readonly vectorStores = new Map<string, FsVectorStore>();
  private readonly segments = new Map<string, Segment>();
  private readonly cache: LocalParseCache;
  readonly control: FsControlPlane;

  constructor(readonly dataDir: string) {
    this.control = new FsControlPlane(dataDir);
    this.metaPath = join(dataDir, 'meta.json');
    this.lockPath = join(dataDir, 'lock');
    this.vectorLockPath = join(dataDir, 'vectors.lock');
    this.cache = localParseCache(dataDir);
  }

  private readMetaFile(): MetaFile | undefined {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.metaPath);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return undefined;
      throw new RepodexError('INDEX_CORRUPT', `cannot read meta.json: ${errorMessage(error)}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString('utf8'));
    } catch {
      raw = undefined; // reported by the integrity check below
    }
    const version = (raw as { format_version?: unknown } | null | undefined)?.format_version;
    if (typeof version === 'number' && version !== FORMAT_VERSION) {
      throw new RepodexError('INDEX_INCOMPATIBLE', `meta.json has format version ${version}, this repodex reads ${FORMAT_VERSION}`);
    }
    // The checksum covers the record as written, fields this version does not know included (a
    // newer repodex may add optional ones): never the schema's re-serialization of it.
    const body = readCheckedJson(bytes, 'meta.json');
    const parsed = MetaFileSchema.safeParse(body);
    if (!parsed.success) throw new RepodexError('INDEX_CORRUPT', `meta.json does not match its schema: ${parsed.error.issues[0]?.message ?? ''}`);
    return parsed.data;
  }

  async readMeta(): Promise<IndexMeta | undefined> {
    const file = this.readMetaFile();
    return file ? toIndexMeta(file) : undefined;
  }

  async stamp(): Promise<string> {
    const stat = statSync(this.metaPath, { throwIfNoEntry: false, bigint: true });
    return stat ? `${stat.ino}:${stat.mtimeNs}:${stat.size}` : '';
  }

  /** Every stamp reads meta.json's identity: nothing to forget. */
  forgetStamp(): void {}

  private path(name: string): string {
    return join(this.dataDir, name);
  }

  private readManifest(file: MetaFile): Manifest {
    const artifact = ArtifactFile.open(this.path(file.manifest.name), file.manifest.name, MANIFEST_KIND);
    try {
      if (artifact.layout.length !== file.manifest.bytes || artifact.layout.headerCrc !== file.manifest.header_crc) {
        throw new RepodexError('INDEX_CORRUPT', `${file.manifest.name} is not the manifest meta.json names`);
      }
      return decodeManifest(artifact.readAll());
    } finally {
      artifact.close();
    }
  }

  /** An opened segment, reused across views while its file is the same one the manifest names. */
  private segment(ref: SegmentRef): Segment {
    const cached = this.segments.get(ref.name);
    if (cached && cached.bytes === ref.bytes && cached.headerCrc === ref.headerCrc) return cached;
    const segment = Segment.open(this.path(ref.name), ref.name);
    if (segment.bytes !== ref.bytes || segment.headerCrc !== ref.headerCrc) {
      throw new RepodexError('INDEX_CORRUPT', `${ref.name} is not the segment the manifest names (size or header differs)`);
    }
    this.segments.set(ref.name, segment);
    return segment;
  }

  async open(): Promise<FsIndexView> {
    // A concurrent commit may delete the generation we just read about; re-read meta and retry.
    for (let attempt = 0; ; attempt++) {
      const file = this.readMetaFile();
      if (!file) throw new RepodexError('INDEX_MISSING');
      try {
        const manifest = this.readManifest(file);
        const segments = manifest.segments.map((ref) => this.segment(ref));
        for (const name of this.segments.keys()) if (!manifest.segments.some((ref) => ref.name === name)) this.segments.delete(name);
        return new FsIndexView(toIndexMeta(file), manifest, segments);
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) {
          if (attempt < 3) continue;
          throw new RepodexError('INDEX_CORRUPT', `an index file is missing: ${(error as NodeJS.ErrnoException).path ?? ''}`);
        }
        throw error;
      }
    }
  }

  /** A view opens its segments' files and reads on demand: the catalog alone would cost about the same. */
  openCatalog(): Promise<FsIndexView> {
    return this.open();
  }

  async beginGeneration(base: IndexView | undefined): Promise<GenerationWriter> {
    if (base !== undefined && !(base instanceof FsIndexView)) throw new RepodexError('INTERNAL', 'the base of a generation must come from the same store');
    mkdirSync(this.dataDir, { recursive: true });
    // What a killed or failed writer left goes first: on a full disk it may be the room this one needs.
    for (const name of this.list()) {
      if (!TEMP_FILE.test(name) || name.startsWith('lock') || writerAlive(name)) continue;
      try {
        rmSync(this.path(name), { force: true });
      } catch {
        // not removable now: the sweep after the commit tries again
      }
    }
    return new FsGenerationWriter(this, base);
  }

  /** Highest generation number in use: in meta.json, or on disk (a crashed writer's files count too). */
  nextGeneration(): number {
    let highest = 0;
    try {
      highest = this.readMetaFile()?.generation ?? 0;
    } catch (error) {
      if (!isRepodexError(error)) throw error; // damaged or older meta: numbering restarts above what is on disk
    }
    for (const name of this.list()) {
      const match = GENERATION_FILE.exec(name) ?? SEGMENT_FILE.exec(name);
      if (match) highest = Math.max(highest, Number(match[1]));
    }
    return highest + 1;
  }

  /**
   * Write a file durably under its final name: a temp file, flushed, then renamed. A write that
   * fails removes the temp file; one that meets a full disk still lays out the rest of the file
   * (without writing it), so the error says how much room it needed.
   */
  writeArtifact(name: string, write: (writer: ArtifactWriter) => void, crashAfterWrite?: 'segment-written' | 'manifest-written'): { bytes: number; headerCrc: number } {
    const final = this.path(name);
    const temp = `${final}.tmp-${process.pid}`;
    let fd: number;
    try {
      fd = openSync(temp, 'w');
    } catch (error) {
      rethrowSystemFailure(error, { path: final, writing: true });
    }
    const file = fileSink(fd);
    let full: unknown;
    const sink: ReturnType<typeof fileSink> = {
      write(bytes, position) {
        if (full !== undefined) return;
        try {
          file.write(bytes, position);
        } catch (error) {
          if (!isErrnoException(error, 'ENOSPC') && !isErrnoException(error, 'EDQUOT')) throw error;
          full = error;
        }
      },
    };
    let result: { length: number; headerCrc: number } | undefined;
    try {
      const writer = new ArtifactWriter(sink, name.startsWith('seg-') ? 'SEGM' : MANIFEST_KIND);
      write(writer);
      result = writer.finish();
      if (full !== undefined) throw full;
      fsyncSync(fd);
      closeSync(fd);
    } catch (error) {
      try {
        closeSync(fd);
      } catch {
        // closed already, or the write failed: that is the error to report
      }
      rmSync(temp, { force: true });
      rethrowSystemFailure(error, { path: final, writing: true, bytes: result?.length });
    }
    if (crashAfterWrite) crashPoint(crashAfterWrite);
    renameSync(temp, final);
    fsyncDir(this.dataDir);
    return { bytes: result.length, headerCrc: result.headerCrc };
  }

  /** The commit point: atomically replace meta.json. */
  writeMeta(body: MetaFile): void {
    const text = checkedJsonText(body);
    const temp = `${this.metaPath}.tmp-${process.pid}`;
    writeFileAtomic(temp, text, this.dataDir);
    crashPoint('meta-written');
    try {
      renameSync(temp, this.metaPath);
    } catch (error) {
      rmSync(temp, { force: true });
      rethrowSystemFailure(error, { path: this.metaPath, writing: true });
    }
    fsyncDir(this.dataDir);
  }

  private list(): string[] {
    return listDirOrEmpty(this.dataDir, ['ENOENT']);
  }

  /**
   * Remove generation and segment files not in `keep` (the current generation's),
   * temp files of dead writers, and lock files of processes killed while taking the lock. Runs
   * under the lock.
   */
  collectGarbage(keep: ReadonlySet<string>): void {
    const names = this.list();
    sweepLockLeftovers(this.lockPath, names);
    // An embedding run killed while taking its lock leaves the same kind of files beside vectors.lock.
    sweepLockLeftovers(this.vectorLockPath, names);
    for (const name of names) {
      const isIndexFile = GENERATION_FILE.test(name) || SEGMENT_FILE.test(name);
      // A temp file of a live process is being written (analytics, a bundle, the audit log's
      // rotation take no writer lock): only a dead writer's is left over.
      const isTemp = TEMP_FILE.test(name) && !name.startsWith('lock') && !writerAlive(name);
      if ((isIndexFile && !keep.has(name)) || isTemp) {
        try {
          rmSync(this.path(name), { force: true });
        } catch {
          // Not removable now (a system that refuses to remove a file in use): the next sweep takes it.
        }
        crashPoint('gc');
      }
    }
  }

  async tidy(): Promise<void> {
    // A damaged or torn tail of the parse cache, or a cache made under other rules, goes now, not
    // only when a sync next has something to add to it.
    await this.cache.tidy();
    const current = this.currentManifest();
    if (!current) return;
    const keep = new Set<string>([current.file.manifest.name, ...current.manifest.segments.map((ref) => ref.name)]);
    const stray = this.list().some(
      (name) =>
        ((GENERATION_FILE.test(name) || SEGMENT_FILE.test(name)) && !keep.has(name)) ||
        (TEMP_FILE.test(name) && !writerAlive(name)) ||
        isLockLeftover(name, this.lockPath) ||
        isLockLeftover(name, this.vectorLockPath),
    );
    if (stray) this.collectGarbage(keep);
  }

  async lock(options: { waitMs?: number } = {}): Promise<HeldLock> {
    return this.acquire(this.lockPath, options.waitMs ?? 0);
  }

  /** Take the lock at `path` (the writer's or the vectors'), creating `.repodex/` first. */
  private acquire(path: string, waitMs: number): Promise<HeldLock> {
    try {
      mkdirSync(this.dataDir, { recursive: true });
    } catch (error) {
      throw systemFailure(error, { path: this.dataDir, writing: true }) ?? new RepodexError('LOCK_DENIED', `cannot create ${this.dataDir}: ${errorMessage(error)}`);
    }
    // A read-only mount, or another user's checkout: said once, for the folder, before anything is tried in it.
    const refused = folderNotWritable(this.dataDir);
    if (refused) throw refused;
    return acquireLock(path, waitMs);
  }

  async syncRunning(): Promise<LockOwner | undefined> {
    return lockHolder(this.lockPath);
  }

  vectors(identity: EmbedderIdentity): FsVectorStore {
    const key = identityKey(identity);
    let store = this.vectorStores.get(key);
    if (!store) {
      store = new FsVectorStore(this.dataDir, identity);
      this.vectorStores.set(key, store);
    }
    return store;
  }

  async dropOtherVectors(keep: EmbedderIdentity): Promise<number> {
    return dropVectorSets(this.dataDir, keep, (folder) => this.vectorStores.delete(folder));
  }

  async vectorLock(options: { waitMs?: number } = {}): Promise<HeldLock> {
    return this.acquire(this.vectorLockPath, options.waitMs ?? 0);
  }

  async embeddingRunning(): Promise<LockOwner | undefined> {
    return lockHolder(this.vectorLockPath);
  }

  async readVectorManifest(): Promise<VectorManifest | undefined> {
    return readVectorManifestFile(this.dataDir);
  }

  async writeVectorManifest(manifest: Omit<VectorManifest, 'version'>): Promise<void> {
    writeVectorManifestFile(this.dataDir, manifest, (identity) => this.vectors(identity));
  }

  async checkVectors(): Promise<IntegrityReport> {
    return checkVectorFiles(this.dataDir, (identity) => this.vectors(identity));
  }

  async vectorsSizeOnDisk(): Promise<number> {
    return vectorsDirSize(this.dataDir);
  }

  async check(options: { deep?: boolean } = {}): Promise<IntegrityReport> {
    const problems: string[] = [];
    const checked: string[] = [];
    const notes: string[] = [];
    let file: MetaFile | undefined;
    try {
      file = this.readMetaFile();
    } catch (error) {
      if (!isRepodexError(error)) throw error;
      return { problems: [error.message], checked: ['meta.json'], notes };
    }
    if (!file) return { problems: [], checked: [], notes };
    checked.push('meta.json');
    // Asked before the checks below rewrite the record (they vouch for what they find sound).
    const recordDamage = checkedFilesOf(this.dataDir).damage();
    let manifest: Manifest;
    try {
      manifest = this.readManifest(file);
      checked.push(file.manifest.name);
    } catch (error) {
      if (!isRepodexError(error) && !isErrnoException(error)) throw error;
      return { problems: [isErrnoException(error, 'ENOENT') ? `${file.manifest.name} is missing` : errorMessage(error)], checked, notes };
    }
    const liveIds = new Set<number>();
    manifest.segments.forEach((ref, s) => {
      let segment: Segment;
      try {
        // Through the cache of opened segments: what is checked here is what `open` then serves.
        segment = options.deep ? Segment.open(this.path(ref.name), ref.name) : this.segment(ref);
      } catch (error) {
        if (!isRepodexError(error) && !isErrnoException(error)) throw error;
        problems.push(isErrnoException(error, 'ENOENT') ? `${ref.name} is missing` : errorMessage(error));
        return;
      }
      checked.push(ref.name);
      if (segment.bytes !== ref.bytes || segment.headerCrc !== ref.headerCrc) {
        problems.push(`${ref.name} is not the segment the manifest names (size or header differs)`);
        return;
      }
      const checkedFiles = checkedFilesOf(this.dataDir);
      if (!options.deep) {
        // A segment that is checked once (in this process) stays checked: segments never change.
        // Found sound by an earlier process, as the version it still is: not read again (CheckedFiles).
        const bad = checkedFiles.check(ref.name, () => segment.checkBytes(), (found) => found === undefined);
        if (bad) problems.push(bad);
        return;
      }
      const found = checkedFiles.check(ref.name, () => segment.verify(), (found) => found.length === 0, false)!;
      problems.push(...found);
      if (found.length > 0) return;
      const dead = new Set(manifest.dead[s] ?? []);
      for (const local of dead) if (local >= segment.files.count) problems.push(`${file!.manifest.name}: a tombstone names file ${local} of ${ref.name}, which has ${segment.files.count}`);
      const { chunkStart } = segment.files;
      for (let f = 0; f < segment.files.count; f++) {
        if (dead.has(f)) continue;
        for (let c = chunkStart[f]!; c < chunkStart[f + 1]!; c++) {
          const id = segment.chunks.ids[c]!;
          if (liveIds.has(id)) problems.push(`chunk id ${id} is live twice (${ref.name})`);
          liveIds.add(id);
        }
      }
    });
    if (options.deep && problems.length === 0) {
      try {
        await this.open();
      } catch (error) {
        if (!isRepodexError(error)) throw error;
        problems.push(error.message);
      }
    }
    if (statSync(this.path(CHECKED_FILE), { throwIfNoEntry: false })) checked.push(CHECKED_FILE);
    if (recordDamage) problems.push(recordDamage);
    return { problems, checked, notes };
  }

  checkCache(): Promise<IntegrityReport> {
    return this.cache.check();
  }

  parseCache(): Promise<ParseCache> {
    return this.cache.open();
  }

  async clean(): Promise<string[]> {
    const removed: string[] = [];
    for (const name of this.list()) {
      if (
        GENERATION_FILE.test(name) ||
        SEGMENT_FILE.test(name) ||
        name === 'meta.json' ||
        name === CHECKED_FILE ||
        TEMP_FILE.test(name) ||
        isLockLeftover(name, this.lockPath) ||
        isLockLeftover(name, this.vectorLockPath)
      ) {
        rmSync(this.path(name), { force: true });
        removed.push(name);
      }
      if (name === VECTORS_DIR) {
        rmSync(this.path(name), { recursive: true, force: true });
        removed.push(`${name}/`);
      }
    }
    removed.push(...(await this.cache.clean()));
    this.vectorStores.clear();
    this.segments.clear();
    return removed.sort();
  }

  async diskUsage(): Promise<DiskUsage> {
    // The files of the generation served now: meta.json, its manifest and the manifest's segments.
    const current = new Set<string>();
    try {
      const file = this.readMetaFile();
      if (file) {
        current.add('meta.json').add(file.manifest.name);
        for (const ref of this.readManifest(file).segments) current.add(ref.name);
      }
    } catch (error) {
      if (!isRepodexError(error) && !isErrnoException(error)) throw error;
    }
    const parts: Record<string, number> = {};
    const add = (part: string, bytes: number): void => {
      if (bytes > 0) parts[part] = (parts[part] ?? 0) + bytes;
    };
    const walk = (dir: string, top: string | undefined): void => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) return;
        throw error;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path, top ?? entry.name);
        else if (entry.isFile()) add(top === 'vectors' ? 'vectors' : partOf(entry.name, current), statSync(path, { throwIfNoEntry: false })?.size ?? 0);
      }
    };
    walk(this.dataDir, undefined);
    // No readable index, no index size (a parse cache alone is not one).
    return { index: current.size > 0 ? (parts['index'] ?? 0) + (parts['parse cache'] ?? 0) : 0, parts };
  }

  /** The manifest of the current generation (for the writer). */
  currentManifest(): { file: MetaFile; manifest: Manifest } | undefined {
    const file = this.readMetaFile();
    return file ? { file, manifest: this.readManifest(file) } : undefined;
  }
}

/** Whether the process that names a temp file (`NAME.tmp-PID`) is this one or still running. */
function writerAlive(name: string): boolean {
  const pid = Number(/\.tmp-(\d+)$/.exec(name)?.[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  return processExists(pid);
}

/** A generation in the making: new files buffer in a segment builder until commit. */
class FsGenerationWriter implements GenerationWriter {
  private readonly builder = new SegmentBuilder();
  private readonly removed = new Set<string>();
  private tree: Tree = { dirs: [], controls: [] };
  private gitDirty: readonly string[] | null = null;
  private done = false;

  constructor(
    private readonly store: FsStore,
    private readonly base: FsIndexView | undefined,
  ) {}

  async remove(path: string): Promise<void> {
    this.removed.add(path);
  }

  async add(file: NewFile): Promise<void> {
    if (this.base && this.base.findFile(file.record.path) >= 0) this.removed.add(file.record.path);
    this.builder.addFile(file);
  }

  async setTree(tree: Tree, gitDirty: readonly string[] | null): Promise<void> {
    this.tree = tree;
    this.gitDirty = gitDirty;
  }

  async commit(draft: MetaDraft): Promise<CommitResult> {
    if (this.done) throw new RepodexError('INTERNAL', 'generation already committed or aborted');
    this.done = true;
    const store = this.store;
    const generation = store.nextGeneration();
    // The base segments with this generation's tombstones applied.
    const base = (this.base?.segmentList() ?? []).map(({ ref, segment, dead: baseDead }) => {
      const dead = new Set(baseDead);
      const paths = segment.files.paths;
      for (let f = 0; f < segment.files.count; f++) if (!dead.has(f) && this.removed.has(paths.get(f))) dead.add(f);
      return { ref, segment, dead };
    });
    const counts = countsOf(base, this.builder.stats());
    const docsOf = (segment: Segment, files: Iterable<number>): number => {
      let n = 0;
      for (const f of files) n += segment.files.chunkStart[f + 1]! - segment.files.chunkStart[f]!;
      return n;
    };
    const deadDocs = base.reduce((sum, { segment, dead }) => sum + docsOf(segment, dead), 0);
    const allDocs = base.reduce((sum, { segment }) => sum + segment.chunks.count, 0) + this.builder.chunkCount;
    const segmentCount = base.length + (this.builder.fileCount > 0 ? 1 : 0);
    // Tiered, as LSM trees and zoekt's shard merges are: too many segments fold the small ones
    // (everything after the first, oldest and largest) into one; only when a quarter of all
    // chunks are dead is the first one rewritten too, dropping them.
    const merge: 'none' | 'deltas' | 'all' =
      base.length === 0 ? 'none' : deadDocs > MAX_DEAD_SHARE * allDocs ? 'all' : segmentCount > MAX_SEGMENTS ? 'deltas' : 'none';
    const merged = merge !== 'none';

    const segments: SegmentRef[] = [];
    const dead: number[][] = [];
    const segmentName = `seg-${generation}.rpdx`;
    const kept = merge === 'all' ? [] : merge === 'deltas' ? base.slice(0, 1) : base;
    for (const { ref, dead: deadHere } of kept) {
      segments.push(ref);
      dead.push([...deadHere].sort((x, y) => x - y));
    }
    const folded = merge === 'all' ? base : merge === 'deltas' ? base.slice(1) : [];
    if (merged || this.builder.fileCount > 0) {
      const written = store.writeArtifact(segmentName, (writer) => (merged ? mergeSegments(folded, this.builder) : this.builder).write(writer), 'segment-written');
      segments.push({ name: segmentName, bytes: written.bytes, headerCrc: written.headerCrc });
      dead.push([]);
    }
    crashPoint('segment-renamed');
    const manifestName = `gen-${generation}.rpdx`;
    const manifest: Manifest = { segments, dead, tree: this.tree, gitDirty: this.gitDirty };
    const written = store.writeArtifact(
      manifestName,
      (writer) => {
        for (const section of encodeManifest(manifest)) writer.add(section.tag, section.bytes);
      },
      'manifest-written',
    );
    const body: MetaFile = {
      format_version: FORMAT_VERSION,
      feature_version: FEATURE_VERSION,
      tool_version: TOOL_VERSION,
      generation,
      manifest: { name: manifestName, bytes: written.bytes, header_crc: written.headerCrc },
      config_hash: draft.config_hash,
      ...(draft.index_config_key === undefined ? {} : { index_config_key: draft.index_config_key }),
      project_type: draft.project_type,
      chunker: draft.chunker,
      counts: { ...counts.counts, segments: segments.length },
      source_bytes: counts.sourceBytes,
      git: draft.git,
      synced_at: draft.synced_at,
      duration_ms: draft.duration_ms,
      ...(draft.partial === undefined ? {} : { partial: draft.partial }),
      ...(draft.layout === undefined ? {} : { layout: draft.layout }),
    };
    store.writeMeta(body);
    crashPoint('committed');
    // The generation this one replaced goes now: its readers hold its files open.
    store.collectGarbage(new Set<string>([manifestName, ...segments.map((ref) => ref.name)]));
    return { meta: toIndexMeta(body), merged };
  }

  async abort(): Promise<void> {
    this.done = true;
  }
}

/** File and chunk counts of a generation: the base segments' live files and what this sync added. */
function countsOf(
  base: readonly { segment: Segment; dead: ReadonlySet<number> }[],
  added: { files: number; indexed: number; chunks: number; sourceBytes: number },
): { counts: Omit<IndexMeta['counts'], 'segments'>; sourceBytes: number } {
  let files = added.files;
  let indexed = added.indexed;
  let chunks = added.chunks;
  let sourceBytes = added.sourceBytes;
  for (const { segment, dead } of base) {
    const table = segment.files;
    for (let f = 0; f < table.count; f++) {
      if (dead.has(f)) continue;
      files++;
      if (table.state(f) === 'indexed') {
        indexed++;
        sourceBytes += table.sizes[f]!;
        chunks += table.chunkStart[f + 1]! - table.chunkStart[f]!;
      }
    }
  }
  return { counts: { files, files_indexed: indexed, files_skipped: files - indexed, chunks }, sourceBytes };
}

/** Which part of `.repodex/` a file there is (`current`: the files of the generation served now). */
function partOf(name: string, current: ReadonlySet<string>): string {
  if (current.has(name)) return 'index';
  // A replaced generation a crash or the system left behind (the next sync removes it).
  if (/^(gen|seg)-\d+\.rpdx$/.test(name)) return 'replaced generations';
  if (name === 'parse-cache.rpdx') return 'parse cache';
  if (name === 'history.json') return 'history';
  if (/^audit(\.\d+)?\.jsonl$/.test(name)) return 'audit log';
  return 'other';
}
