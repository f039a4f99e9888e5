import { languageCode, languageFromCode } from '../scan/language.js';
import { type Artifact, type Section, StringTable, leBytes } from './format.js';
import type { Catalog } from '../store/backend.js';
import { FILE_STATES, type FileRecord, type FileState } from './model.js';

/** Sections of files.bin: the catalog of every candidate file, sorted by path (file id = position). */
export function encodeFiles(files: readonly FileRecord[]): Section[] {
  const n = files.length;
  const size = new Float64Array(n);
  const mtime = new Float64Array(n);
  const state = new Uint8Array(n);
  const lang = new Uint8Array(n);
  const chunkStart = new Uint32Array(n + 1);
  const hashes = new Uint8Array(n * 32);
  files.forEach((file, i) => {
    size[i] = file.size;
    mtime[i] = file.mtimeMs;
    state[i] = FILE_STATES.indexOf(file.state);
    lang[i] = languageCode(file.language);
    chunkStart[i] = file.firstChunk;
    hashes.set(file.contentHash, i * 32);
  });
  const last = files[n - 1];
  chunkStart[n] = last ? last.firstChunk + last.chunkCount : 0;
  return [
    { tag: 'PATH', bytes: StringTable.encode(files.map((file) => file.path)) },
    { tag: 'SIZE', bytes: leBytes(size) },
    { tag: 'MTIM', bytes: leBytes(mtime) },
    { tag: 'STAT', bytes: state },
    { tag: 'LANG', bytes: lang },
    { tag: 'CHNK', bytes: leBytes(chunkStart) },
    { tag: 'HASH', bytes: hashes },
  ];
}

/** The file catalog read back from files.bin, with column access and no per-file objects until asked. */
export class FileTable implements Catalog {
  readonly count: number;
  readonly paths: StringTable;
  readonly sizes: Float64Array;
  readonly mtimes: Float64Array;
  readonly states: Uint8Array;
  readonly languages: Uint8Array;
  readonly chunkStart: Uint32Array;
  private readonly hashes: Uint8Array;

  constructor(artifact: Artifact) {
    this.paths = artifact.strings('PATH');
    this.count = this.paths.count;
    this.sizes = artifact.f64('SIZE');
    this.mtimes = artifact.f64('MTIM');
    this.states = artifact.bytes('STAT');
    this.languages = artifact.bytes('LANG');
    this.chunkStart = artifact.u32('CHNK');
    this.hashes = artifact.bytes('HASH');
  }

  path(i: number): string {
    return this.paths.get(i);
  }

  size(i: number): number {
    return this.sizes[i]!;
  }

  mtimeMs(i: number): number {
    return this.mtimes[i]!;
  }

  state(i: number): FileState {
    return FILE_STATES[this.states[i]!] ?? 'unreadable';
  }

  record(i: number): FileRecord {
    return {
      path: this.paths.get(i),
      size: this.sizes[i]!,
      mtimeMs: this.mtimes[i]!,
      state: this.state(i),
      language: languageFromCode(this.languages[i]!),
      contentHash: this.hashes.subarray(i * 32, i * 32 + 32),
      firstChunk: this.chunkStart[i]!,
      chunkCount: this.chunkStart[i + 1]! - this.chunkStart[i]!,
    };
  }
}
