import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStore } from '../../src/compose.js';
import { makeRepo, readIndex, runCli } from '../helpers.js';

describe('a replaced generation', () => {
  it('leaves the disk at its commit, and a reader that opened it still reads it whole', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`src/m${i}.ts`] = `/** Module ${i}. */\nexport function handler${i}(input: number): number {\n  return input * ${i};\n}\n`;
    const root = makeRepo(files);
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const dataDir = join(root, '.repodex');
    const first = readIndex(root);

    // A reader opens generation 1 and has read nothing of its postings or chunks yet.
    const reader = await createStore(root).open();
    expect(reader.meta.generation).toBe(first.meta.generation);

    // A rebuild writes a whole new segment: generation 1's manifest and segment are replaced.
    writeFileSync(join(root, 'src/m3.ts'), 'export function replacement(): number {\n  return 3;\n}\n');
    expect(runCli(['sync', '--force', '--root', root]).code).toBe(0);
    const second = readIndex(root);
    const index = readdirSync(dataDir).filter((name) => /^(gen|seg)-\d+\.rpdx$/.test(name));
    expect(index.sort()).toEqual([second.meta.manifest.name, ...second.segments.map((segment) => segment.name)].sort());
    for (const replaced of [first.meta.manifest.name, ...first.segments.map((segment) => segment.name)]) expect(index).not.toContain(replaced);

    // The reader goes on reading generation 1 through the files it holds open.
    const [list] = await reader.postings(['handler3']);
    expect(list?.df).toBe(1);
    const [chunk] = await reader.chunks([list!.docs[0]!]);
    expect(chunk!.path).toBe('src/m3.ts');
    expect(chunk!.snippet).toContain('handler3');

    // A new reader sees generation 2, where m3 says something else.
    const now = await createStore(root).open();
    expect(now.meta.generation).toBe(second.meta.generation);
    expect((await now.postings(['handler3']))[0]).toBeUndefined();

    // Nothing of the replaced generation is counted as kept.
    const status = runCli(['status', '--json', '--root', root]).json<{ size_by_part: Record<string, number> }>();
    expect(Object.keys(status.size_by_part)).not.toContain('replaced generations');
  });
});
