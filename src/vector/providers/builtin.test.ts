import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from './builtin.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Chunk-like texts over a small vocabulary with co-occurring pairs, enough to learn from. */
function corpus(n: number): string[] {
  const topics = [
    ['upload', 'resume', 'chunk', 'offset', 'retry'],
    ['parse', 'token', 'syntax', 'grammar', 'node'],
    ['cache', 'evict', 'ttl', 'memory', 'entry'],
    ['route', 'handler', 'request', 'response', 'middleware'],
  ];
  return Array.from({ length: n }, (_, i) => {
    const topic = topics[i % topics.length]!;
    return `function ${topic[i % 5]}${i}() { ${topic.join(' ')} ${topic[(i * 3) % 5]} value${i % 17} }`;
  });
}

describe('BuiltinEmbedder', () => {
  it('remembers the size of the index it learned for, not of the sample it learned from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'repodex-builtin-'));
    dirs.push(dir);
    const tablePath = join(dir, 'builtin-table.bin');
    const embedder = new BuiltinEmbedder(tablePath, 16);
    expect(embedder.needsTraining(10_000)).toBe(true);
    // A 200-chunk sample stands for an index of 10,000 chunks.
    await embedder.train(corpus(200), 10_000);
    expect(embedder.model).toMatch(/^repo-lsa-16@[0-9a-f]{12}$/);
    // Growth short of doubling keeps the table, so every vector made so far stays valid.
    expect(embedder.needsTraining(12_000)).toBe(false);
    expect(embedder.needsTraining(19_999)).toBe(false);
    expect(embedder.needsTraining(20_001)).toBe(true);
    expect(embedder.needsTraining(4_999)).toBe(true);
    // And so does the table read back from disk.
    const reopened = new BuiltinEmbedder(tablePath, 16);
    expect(reopened.model).toBe(embedder.model);
    expect(reopened.needsTraining(12_000)).toBe(false);
    expect(reopened.needsTraining(20_001)).toBe(true);
    const [a, b] = await reopened.embed(['resume the upload at its offset', 'resume the upload at its offset'], 'query');
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
  });

  it('picks up a table another process learned, and only then changes its model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'repodex-builtin-'));
    dirs.push(dir);
    const tablePath = join(dir, 'builtin-table.bin');
    const server = new BuiltinEmbedder(tablePath, 16);
    expect(server.model).toBe('repo-lsa-16');
    const worker = new BuiltinEmbedder(tablePath, 16);
    await worker.train(corpus(120), 120);
    expect(server.model).toBe('repo-lsa-16');
    server.reload();
    expect(server.model).toBe(worker.model);
    // A relearned table (another corpus) is a new model.
    await worker.train(corpus(300).map((text) => `${text} retry backoff`), 300);
    server.reload();
    expect(server.model).toBe(worker.model);
    const before = server.model;
    server.reload();
    expect(server.model).toBe(before);
  });
});
