import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

/** Every file's bytes under `dir`, recursively. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(path) : statSync(path).size;
  }
  return total;
}

interface Status {
  size_on_disk: number;
  size_by_part: Record<string, number>;
}

describe('status: the size by part', () => {
  it('names where the space under .repodex/ goes, and the parts add up to all of it', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++) files[`src/m${i}.ts`] = `/** Module ${i}. */\nexport function handler${i}(input: number): number {\n  return input * ${i};\n}\n`;
    const root = makeRepo(files);
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    // A second generation, and a search: an audit line.
    writeFileSync(join(root, 'src/m3.ts'), 'export function replaced(): number {\n  return 3;\n}\n');
    expect(runCli(['search', 'handler', '--root', root]).code).toBe(0);
    const before = bytesUnder(join(root, '.repodex'));
    // (The status call's own audit line is written after it answers.)
    const status = runCli(['status', '--json', '--root', root]).json<Status>();
    const parts = status.size_by_part;
    expect(Object.keys(parts)).toEqual(expect.arrayContaining(['index', 'parse cache', 'audit log']));
    expect(Object.values(parts).every((bytes) => bytes > 0)).toBe(true);
    expect(Object.values(parts).reduce((a, b) => a + b, 0)).toBe(before);
    // The total reported as the index's size is its current generation and the parse cache.
    expect(status.size_on_disk).toBe(parts['index']! + parts['parse cache']!);
    const text = runCli(['status', '--root', root]).stdout;
    expect(text).toMatch(/by part +index [\d.]+ KB, .*parse cache/);
  });
});
