import { languageCode, languageFromCode } from '../scan/language.js';
import type { ControlFile, WalkedDir } from '../scan/walker.js';
import { type Artifact, type Section, StringTable, leBytes } from './format.js';
import type { Catalog } from '../store/backend.js';
import { FILE_STATES, type FileRecord, type FileState } from './model.js';

/** Sections of files.bin: the catalog of every candidate file, sorted by path (file id = position). */
export function encodeFiles(files: readonly FileRecord[], dirs: readonly WalkedDir[], controls: readonly ControlFile[]): Section[] {
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
    // The folders and ignore files behind the walk: `status` proves "nothing changed" from their stats alone.
    { tag: 'DIRP', bytes: StringTable.encode(dirs.map((dir) => dir.path)) },
    { tag: 'DIRM', bytes: leBytes(Float64Array.from(dirs, (dir) => dir.mtimeMs)) },
    { tag: 'CTLP', bytes: StringTable.encode(controls.map((control) => control.path)) },
    { tag: 'CTLS', bytes: leBytes(Float64Array.from(controls, (control) => control.size)) },
    { tag: 'CTLM', bytes: leBytes(Float64Array.from(controls, (control) => control.mtimeMs)) },
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
  readonly dirs: readonly WalkedDir[];
  readonly controls: readonly ControlFile[];

  constructor(artifact: Artifact) {
    this.paths = artifact.strings('PATH');
    this.count = this.paths.count;
    this.sizes = artifact.f64('SIZE');
    this.mtimes = artifact.f64('MTIM');
    this.states = artifact.bytes('STAT');
    this.languages = artifact.bytes('LANG');
    this.chunkStart = artifact.u32('CHNK');
    this.hashes = artifact.bytes('HASH');
    const dirPaths = artifact.strings('DIRP');
    const dirMtimes = artifact.f64('DIRM');
    this.dirs = Array.from({ length: dirPaths.count }, (_, i) => ({ path: dirPaths.get(i), mtimeMs: dirMtimes[i]! }));
    const controlPaths = artifact.strings('CTLP');
    const controlSizes = artifact.f64('CTLS');
    const controlMtimes = artifact.f64('CTLM');
    this.controls = Array.from({ length: controlPaths.count }, (_, i) => ({
      path: controlPaths.get(i),
      size: controlSizes[i]!,
      mtimeMs: controlMtimes[i]!,
    }));
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
