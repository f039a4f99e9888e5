import { cpSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capitalize, makeRepo, pick, portableSections, prng, readIndex, tempDir } from '../../../test/helpers.js';
import { createEngine } from '../../compose.js';

// The embedded store's own promises, beyond what every store promises (test/conformance): a
// small change writes a small delta, segments are folded in tiers, and a merge that drops the
// dead writes exactly what a fresh build of the same tree writes.

function module(rng: () => number, tag: number): string {
  const words = ['load', 'parse', 'config', 'buffer', 'token', 'cursor', 'ledger', 'session'];
  return Array.from({ length: 2 + Math.floor(rng() * 3) }, (_, f) => `export function ${pick(rng, words)}${capitalize(pick(rng, words))}${tag}x${f}(): number {\n  return ${f};\n}\n`).join('\n');
}

describe('the embedded store', () => {
  it('writes a delta per sync, folds deltas past 8 segments, and a full merge equals a fresh build byte for byte', async () => {
    const rng = prng(31);
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/m${String(i).padStart(2, '0')}.ts`] = module(rng, i);
    const root = makeRepo(files);
    const engine = createEngine({ root });
    await engine.sync();
    const base = readIndex(root).segments[0]!;
    // One file per sync: each adds one small segment and leaves the first one alone.
    let folded = false;
    for (let i = 0; i < 9; i++) {
      writeFileSync(join(root, `src/m${String(i).padStart(2, '0')}.ts`), module(rng, 100 + i));
      const summary = await engine.sync();
      const index = readIndex(root);
      expect(index.segments[0]!.bytes.equals(base.bytes), `sync ${i}: the first segment is untouched`).toBe(true);
      if (summary.merged) folded = true;
      expect(index.segments.length).toBeLessThanOrEqual(8);
      if (!summary.merged) expect(index.segments.at(-1)!.bytes.length).toBeLessThan(base.bytes.length / 5);
    }
    expect(folded).toBe(true);
    // Change over a quarter of the chunks: the next commit rewrites everything into one segment…
    for (let i = 10; i < 30; i++) writeFileSync(join(root, `src/m${i}.ts`), module(rng, 200 + i));
    rmSync(join(root, 'src/m39.ts'));
    // Whole-second mtimes, so the copy below carries exactly the same stat (a copy rounds below a millisecond).
    const pinned = new Date('2030-01-01T00:00:00Z');
    for (const name of readdirSync(join(root, 'src'))) utimesSync(join(root, 'src', name), pinned, pinned);
    const big = await engine.sync();
    expect(big.merged).toBe(true);
    const merged = readIndex(root);
    expect(merged.segments).toHaveLength(1);
    expect(merged.manifest.dead).toEqual([[]]);
    // …which is what a fresh build of the same tree writes.
    const copy = tempDir();
    cpSync(root, copy, { recursive: true, preserveTimestamps: true, filter: (source) => !source.includes('.repodex') });
    await createEngine({ root: copy }).sync();
    const fresh = readIndex(copy);
    // Byte for byte, but for the ctimes and inodes a copy cannot share.
    expect(portableSections('fresh', 'SEGM', fresh.segments[0]!.bytes)).toEqual(portableSections('merged', 'SEGM', merged.segments[0]!.bytes));
  });
});
