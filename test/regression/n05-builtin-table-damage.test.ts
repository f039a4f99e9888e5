import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prng, runCli } from '../helpers.js';
import { topicRepo } from './damage-fixtures.js';

interface Search {
  mode: string;
  results: { path: string; chunk_id: number }[];
  warnings: string[];
}

describe('N5: the learned embedding table', () => {
  it('N5: a damaged table is found by verify and status, never used by vector or hybrid search, and learned again by sync', () => {
    const root = topicRepo();
    expect(runCli(['sync', '--embeddings', 'builtin', '--root', root]).code).toBe(0);
    const search = (mode: string): Search => runCli(['search', 'continue a partial transfer', '--mode', mode, '--top-k', '3', '--json', '--root', root]).json<Search>();
    const before = search('vector');
    expect(before).toMatchObject({ mode: 'vector', warnings: [] });

    // 50 bytes of the table past its header, as in the report.
    const path = join(root, '.repodex/vectors/builtin-table.bin');
    const bytes = readFileSync(path);
    const rng = prng(3);
    for (let i = 0; i < 50; i++) bytes[64 + Math.floor(rng() * (bytes.length - 64))]! ^= 0x40;
    writeFileSync(path, bytes);

    const verify = runCli(['verify', '--root', root]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/vectors\/builtin-table\.bin is damaged \(checksum mismatch\); `repodex sync` learns it again/);
    const status = runCli(['status', '--json', '--root', root]);
    expect(status.code).toBe(0);
    expect(status.json<{ damage: string[] }>().damage.join('\n')).toMatch(/builtin-table\.bin is damaged/);
    for (const mode of ['vector', 'hybrid']) {
      // Before: the damaged table gave zero vectors, and vector search answered README chunks with no warning.
      const answer = search(mode);
      expect(answer.mode, mode).toBe('bm25');
      expect(answer.warnings.join('\n'), mode).toMatch(/builtin-table\.bin is damaged .*answered with bm25/);
    }

    expect(runCli(['sync', '--root', root]).code).toBe(0);
    expect(runCli(['verify', '--root', root]).code).toBe(0);
    expect(search('vector')).toEqual(before);
  });
});
