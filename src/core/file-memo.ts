import { statIfExistsNs } from './stat.js';

/** One version of a file: inode, size, mtime and ctime in nanoseconds; `-` when there is none. */
export function versionOf(path: string): { readonly key: string; readonly changedNs: bigint } {
  const stat = statIfExistsNs(path);
  if (!stat) return { key: '-', changedNs: 0n };
  const changedNs = stat.mtimeNs > stat.ctimeNs ? stat.mtimeNs : stat.ctimeNs;
  return { key: `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`, changedNs };
}

/**
 * File times come from a coarse kernel clock: a file changed again within this long of a read
 * may keep the size and times it had (git's "racily clean" problem). A value read from a file
 * younger than this is not kept.
 */
export const RACY_NS = 2_000_000_000n;

/**
 * A value derived from a few small files, derived again only when one of them changed, appeared
 * or went: what a long-running server would otherwise re-read on every request (its config, git
 * HEAD). `derive` lists in `consulted` every path it read or looked for. One stat per path
 * replaces a read and a parse.
 */
export class FileMemo<T> {
  private kept: { readonly value: T; readonly paths: readonly string[]; readonly keys: readonly string[] } | undefined;

  constructor(
    private readonly derive: (consulted: string[]) => T,
    /** The clock, in milliseconds (tests move it). */
    private readonly now: () => number = Date.now,
  ) {}

  get(): T {
    const kept = this.kept;
    if (kept && kept.paths.every((path, i) => versionOf(path).key === kept.keys[i])) return kept.value;
    this.kept = undefined;
    const startedNs = BigInt(Math.floor(this.now())) * 1_000_000n;
    const consulted: string[] = [];
    const value = this.derive(consulted);
    const versions = consulted.map(versionOf);
    if (versions.every((version) => version.changedNs < startedNs - RACY_NS)) {
      this.kept = { value, paths: consulted, keys: versions.map((version) => version.key) };
    }
    return value;
  }
}
