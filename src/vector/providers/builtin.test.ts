import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crc32 } from '../../core/crc32.js';
import { StaticTable, peekTable } from '../static-table.js';
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

/** A 16-D table learned from 120 chunks, saved in a fresh folder. */
async function learnedTable(): Promise<{ tablePath: string; learned: BuiltinEmbedder }> {
  const dir = mkdtempSync(join(tmpdir(), 'repodex-builtin-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'builtin-test'));
  const tablePath = join(dir, 'builtin-test', 'builtin-table.bin');
  const learned = new BuiltinEmbedder(tablePath, 16);
  await learned.train(corpus(120), 120);
  return { tablePath, learned };
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

  it('names its model from the table header alone; reading the table finds damage, which is refused, never used, and then means learning again', async () => {
    const { tablePath, learned } = await learnedTable();
    const bytes = readFileSync(tablePath);
    expect(peekTable(bytes.subarray(0, 64))).toMatchObject({ version: 3, dim: 16, trainedOn: 120, fingerprint: learned.model.split('@')[1] });
    expect(learned.check()).toEqual({ checked: ['builtin-test/builtin-table.bin'], problems: [] });
    // Damage in the body, not the header: the model is still named (status reads only that)…
    bytes[bytes.length - 40]! ^= 0xff;
    writeFileSync(tablePath, bytes);
    const reader = new BuiltinEmbedder(tablePath, 16);
    expect(reader.model).toBe(learned.model);
    expect(reader.check().problems).toEqual(['builtin-test/builtin-table.bin is damaged (checksum mismatch); `repodex sync` learns it again (vector and hybrid searches answer with bm25 until then)']);
    // …but the first use reads the table, finds the damage and refuses to embed with it (a damaged
    // table would silently give other vectors), and the next sync learns a new one.
    await expect(reader.embed(['resume the upload'], 'query')).rejects.toMatchObject({ code: 'EMBEDDER_FAILED', message: expect.stringMatching(/builtin-table\.bin is damaged \(checksum mismatch\); `repodex sync` learns it again/) as string });
    expect(reader.damage).toMatch(/builtin-table\.bin is damaged/);
    expect(reader.needsTraining(120)).toBe(true);
    await reader.train(corpus(120), 120);
    expect(reader.damage).toBeUndefined();
    expect(reader.model).toBe(learned.model); // the same corpus learns the same table
  });

  it('never uses a table whose header is damaged, and never names another model from it: any byte of it', async () => {
    const { tablePath, learned } = await learnedTable();
    const pristine = readFileSync(tablePath);
    for (let at = 0; at < 44; at++) {
      const bytes = Buffer.from(pristine);
      bytes[at]! ^= 0x01;
      writeFileSync(tablePath, bytes);
      const reader = new BuiltinEmbedder(tablePath, 16);
      // The header's own CRC, or (a flip that makes it an older version's header) the whole table's.
      expect([learned.model, 'repo-lsa-16'], `byte ${at}`).toContain(reader.model);
      expect(reader.check().problems, `byte ${at}`).toHaveLength(1);
      await expect(reader.embed(['resume the upload'], 'query'), `byte ${at}`).rejects.toMatchObject({ code: 'EMBEDDER_FAILED' });
      expect(reader.damage, `byte ${at}`).toMatch(/builtin-table\.bin is damaged/);
    }
  });

  it('reads a table of the format before the header named it, with the same model, and rewrites it in the new format', async () => {
    const { tablePath, learned } = await learnedTable();
    // The same table as version 1 wrote it: no fingerprint and no header CRC in the header (16 bytes fewer), its own CRC.
    const v3 = readFileSync(tablePath);
    const body = Buffer.concat([v3.subarray(0, 28), v3.subarray(44, v3.length - 4)]);
    body.writeUInt32LE(1, 8);
    const termLength = body.readUInt32LE(20);
    // Version 1 padded the terms to 4 bytes after a 28-byte header, version 3 after a 44-byte one: the same padding.
    expect((28 + termLength) % 4).toBe((44 + termLength) % 4);
    const v1 = Buffer.alloc(body.length + 4);
    body.copy(v1);
    v1.writeUInt32LE(crc32(body), body.length);
    writeFileSync(tablePath, v1);
    expect(StaticTable.deserialize(v1, 'v1').fingerprint).toBe(learned.model.split('@')[1]);

    const old = new BuiltinEmbedder(tablePath, 16);
    expect(old.model).toBe(learned.model);
    expect(old.needsTraining(120)).toBe(false);
    expect(peekTable(readFileSync(tablePath).subarray(0, 64))).toMatchObject({ version: 3, fingerprint: learned.model.split('@')[1] });
    expect(new BuiltinEmbedder(tablePath, 16).model).toBe(learned.model);
  });
});
