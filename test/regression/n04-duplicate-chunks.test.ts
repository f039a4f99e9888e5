import { readFileSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { topicRepo } from './damage-fixtures.js';

interface Verify {
  ok: boolean;
  problems: string[];
}

describe('N4: identical chunks are legal', () => {
  it('N4: a fresh index whose chunks repeat verifies clean, and `repodex sync` repairs a vector log that really lost records', () => {
    const root = topicRepo(5);
    const sync = runCli(['sync', '--embeddings', 'builtin', '--json', '--root', root]);
    expect(sync.code, sync.stderr).toBe(0);
    const embedded = sync.json<{ chunks_total: number; embeddings: { vectors: number; chunks: number } }>().embeddings;
    expect(embedded.vectors).toBe(embedded.chunks);
    // Before: "the manifest counts N vectors, the log holds N-10", exit 1, on a brand-new index.
    const fresh = runCli(['verify', '--json', '--root', root]);
    expect(fresh.json<Verify>().problems).toEqual([]);
    expect(fresh.code).toBe(0);
    expect(runCli(['status', '--json', '--root', root]).json<{ damage: string[]; semantic: { state: string } }>()).toMatchObject({ damage: [], semantic: { state: 'ready' } });

    // The manifest an older version wrote for this index (version 1: no checksum, no record count,
    // a vector per chunk): not taken for damage, and rewritten by the next sync.
    const manifestPath = join(root, '.repodex/vectors/manifest.json');
    const current = readFileSync(manifestPath, 'utf8');
    const { checksum: _checksum, records: _records, ...older } = JSON.parse(current) as Record<string, unknown>;
    writeFileSync(manifestPath, `${JSON.stringify({ ...older, version: 1 }, null, 2)}\n`);
    const withOlder = runCli(['verify', '--json', '--root', root]);
    expect(withOlder.json<Verify & { warnings: string[] }>()).toMatchObject({ ok: true, problems: [], warnings: [expect.stringMatching(/manifest\.json was written by an older repodex/)] });
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    expect(JSON.parse(readFileSync(manifestPath, 'utf8'))).toMatchObject({ version: 2, records: expect.any(Number) as number });

    // A real mismatch: the log loses its last two records. verify names it; sync embeds them again.
    const folder = readdirSync(join(root, '.repodex/vectors')).find((name) => name.startsWith('builtin-'))!;
    const log = join(root, '.repodex/vectors', folder, 'vectors.bin');
    truncateSync(log, readFileSync(log).length - 2 * (36 + 128 * 4));
    const damaged = runCli(['verify', '--json', '--root', root]);
    expect(damaged.code).toBe(1);
    expect(damaged.json<Verify>().problems.join('\n')).toMatch(/vectors\/manifest\.json counts \d+ vector records, .*vectors\.bin holds \d+; `repodex sync` embeds again/);
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const repaired = runCli(['verify', '--json', '--root', root]);
    expect(repaired.json<Verify>().problems).toEqual([]);
    expect(repaired.code).toBe(0);
  });
});
