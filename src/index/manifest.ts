import { RepodexError } from '../core/errors.js';
import type { ControlFile, WalkedDir } from '../scan/walker.js';
import { type Artifact, type Section, StringTable, leBytes } from './format.js';
import type { Tree } from './model.js';

/**
 * A generation manifest (kind `GENR`): which segments make up the index, which of their files
 * are dead (tombstones: deleted or replaced by a later segment), and the shape of the walk. An
 * incremental sync writes one small segment and a new manifest; nothing else is rewritten.
 *
 *   SEGN segment file names, SEGL their lengths, SEGH their header checksums (binds the manifest
 *        to the exact files); TOFF/TOMB dead local file numbers per segment (offsets, values);
 *   DIRP/DIRM/DIRC listed folders and their mtimes and ctimes; CTLP/CTLS/CTLM/CTLC ignore files and their stat;
 *   GDRT paths whose working-tree content differed from the indexed commit at sync time
 *        (present only when recorded: what lets the next sync ask git instead of stat).
 */
export const MANIFEST_KIND = 'GENR';

/** One segment as a manifest names it. */
export interface SegmentRef {
  readonly name: string;
  readonly bytes: number;
  readonly headerCrc: number;
}

/** A decoded manifest. */
export interface Manifest {
  readonly segments: readonly SegmentRef[];
  /** Per segment (same order), its dead local file numbers, ascending. */
  readonly dead: readonly (readonly number[])[];
  readonly tree: Tree;
  readonly gitDirty: readonly string[] | null;
}

/** The sections of a manifest. */
export function encodeManifest(manifest: Manifest): Section[] {
  const offsets = new Uint32Array(manifest.segments.length + 1);
  const values: number[] = [];
  manifest.dead.forEach((list, i) => {
    offsets[i] = values.length;
    values.push(...list);
  });
  offsets[manifest.segments.length] = values.length;
  const { dirs, controls } = manifest.tree;
  const sections: Section[] = [
    { tag: 'SEGN', bytes: StringTable.encode(manifest.segments.map((segment) => segment.name)) },
    { tag: 'SEGL', bytes: leBytes(Float64Array.from(manifest.segments, (segment) => segment.bytes)) },
    { tag: 'SEGH', bytes: leBytes(Uint32Array.from(manifest.segments, (segment) => segment.headerCrc)) },
    { tag: 'TOFF', bytes: leBytes(offsets) },
    { tag: 'TOMB', bytes: leBytes(Uint32Array.from(values)) },
    { tag: 'DIRP', bytes: StringTable.encode(dirs.map((dir) => dir.path)) },
    { tag: 'DIRM', bytes: leBytes(Float64Array.from(dirs, (dir) => dir.mtimeMs)) },
    { tag: 'DIRC', bytes: leBytes(Float64Array.from(dirs, (dir) => dir.ctimeMs)) },
    { tag: 'CTLP', bytes: StringTable.encode(controls.map((control) => control.path)) },
    { tag: 'CTLS', bytes: leBytes(Float64Array.from(controls, (control) => control.size)) },
    { tag: 'CTLM', bytes: leBytes(Float64Array.from(controls, (control) => control.mtimeMs)) },
    { tag: 'CTLC', bytes: leBytes(Float64Array.from(controls, (control) => control.ctimeMs)) },
  ];
  if (manifest.gitDirty) sections.push({ tag: 'GDRT', bytes: StringTable.encode(manifest.gitDirty) });
  return sections;
}

/** Read a manifest back; inconsistent columns are INDEX_CORRUPT. */
export function decodeManifest(artifact: Artifact): Manifest {
  const damaged = (why: string): RepodexError => new RepodexError('INDEX_CORRUPT', `${artifact.name}: ${why}`);
  const names = artifact.strings('SEGN');
  const lengths = artifact.f64('SEGL');
  const headers = artifact.u32('SEGH');
  const offsets = artifact.u32('TOFF');
  const values = artifact.u32('TOMB');
  if (lengths.length !== names.count || headers.length !== names.count || offsets.length !== names.count + 1) throw damaged('segment table is damaged');
  const segments: SegmentRef[] = [];
  const dead: number[][] = [];
  for (let i = 0; i < names.count; i++) {
    const name = names.get(i);
    if (!/^seg-\d+\.rpdx$/.test(name)) throw damaged(`bad segment name ${JSON.stringify(name)}`);
    segments.push({ name, bytes: lengths[i]!, headerCrc: headers[i]! });
    const from = offsets[i]!;
    const to = offsets[i + 1]!;
    if (to < from || to > values.length) throw damaged('tombstone table is damaged');
    dead.push([...values.subarray(from, to)]);
  }
  const dirPaths = artifact.strings('DIRP');
  const dirMtimes = artifact.f64('DIRM');
  const dirCtimes = artifact.f64('DIRC');
  const controlPaths = artifact.strings('CTLP');
  const controlSizes = artifact.f64('CTLS');
  const controlMtimes = artifact.f64('CTLM');
  const controlCtimes = artifact.f64('CTLC');
  if (dirMtimes.length !== dirPaths.count || dirCtimes.length !== dirPaths.count) throw damaged('tree table is damaged');
  if ([controlSizes, controlMtimes, controlCtimes].some((column) => column.length !== controlPaths.count)) throw damaged('tree table is damaged');
  const dirs: WalkedDir[] = Array.from({ length: dirPaths.count }, (_, i) => ({ path: dirPaths.get(i), mtimeMs: dirMtimes[i]!, ctimeMs: dirCtimes[i]! }));
  const controls: ControlFile[] = Array.from({ length: controlPaths.count }, (_, i) => ({
    path: controlPaths.get(i),
    size: controlSizes[i]!,
    mtimeMs: controlMtimes[i]!,
    ctimeMs: controlCtimes[i]!,
  }));
  let gitDirty: string[] | null = null;
  if (artifact.has('GDRT')) {
    const table = artifact.strings('GDRT');
    gitDirty = Array.from({ length: table.count }, (_, i) => table.get(i));
  }
  return { segments, dead, tree: { dirs, controls }, gitDirty };
}
