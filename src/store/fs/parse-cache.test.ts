import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers.js';
import { crc32 } from '../../core/crc32.js';
import { SECRET_RULES_VERSION } from '../../safety/secrets.js';
import { FsParseCache, repairParseCache, verifyParseCache } from './parse-cache.js';

const parsed = (lines: number) => ({ spans: [{ startLine: 1, endLine: lines }], symbols: [], fallback: null });
const key = (n: number): string => n.toString(16).padStart(64, '0');

async function cacheWith(keys: number[]): Promise<{ dir: string; path: string }> {
  const dir = tempDir();
  const path = join(dir, 'parse-cache.rpdx');
  const cache = new FsParseCache(path, dir);
  for (const n of keys) cache.put(key(n), parsed(n));
  await cache.flush(async () => new Set());
  return { dir, path };
}

/** The same cache as if written under other credential rules: the header's rules text replaced, its CRC made good. */
function underOtherRules(path: string): void {
  const bytes = readFileSync(path);
  const rulesAt = 24;
  const other = Buffer.from(SECRET_RULES_VERSION.replace(/.$/, (last) => (last === '0' ? '1' : '0')), 'utf8');
  expect(other.length).toBe(bytes.readUInt32LE(20));
  other.copy(bytes, rulesAt);
  const end = rulesAt + other.length + ((4 - (other.length % 4)) % 4);
  bytes.writeUInt32LE(crc32(bytes.subarray(0, end)), end);
  writeFileSync(path, bytes);
}

describe('the parse cache file', () => {
  it('records the rules it was made under: a cache made under other rules is never used, and discarded whole', async () => {
    const { dir, path } = await cacheWith([1, 2, 3]);
    expect(new FsParseCache(path, dir).get(key(2))).toMatchObject(parsed(2));
    underOtherRules(path);
    expect(new FsParseCache(path, dir).get(key(2))).toBeUndefined();
    expect(verifyParseCache(path)).toEqual({ problems: [], notes: [expect.stringMatching(/^parse-cache\.rpdx was written under other rules \(.*\): the next sync discards it$/)] });
    // The next write starts it over: nothing of the old rules' results is left on disk.
    const cache = new FsParseCache(path, dir);
    cache.put(key(9), parsed(9));
    await cache.flush(async () => new Set());
    const reader = new FsParseCache(path, dir);
    expect([1, 2, 3].map((n) => reader.get(key(n)))).toEqual([undefined, undefined, undefined]);
    expect(reader.get(key(9))).toMatchObject(parsed(9));
    expect(verifyParseCache(path)).toEqual({ problems: [], notes: [] });
    // And a sync with nothing to write removes it.
    underOtherRules(path);
    repairParseCache(path);
    expect(existsSync(path)).toBe(false);
  });

  it('a cache an older repodex wrote (no rules in its header) is discarded too', async () => {
    const dir = tempDir();
    const path = join(dir, 'parse-cache.rpdx');
    const header = Buffer.alloc(16);
    header.write('RPDXPCAC', 0, 'latin1');
    header.writeUInt32LE(3, 8);
    header.writeUInt32LE(crc32(header.subarray(0, 12)), 12);
    writeFileSync(path, Buffer.concat([header, Buffer.alloc(40, 7)]));
    expect(verifyParseCache(path).notes).toEqual([expect.stringMatching(/written by an older repodex/)]);
    repairParseCache(path);
    expect(existsSync(path)).toBe(false);
  });

  it('stores each result deflated, and finds one put before the flush', async () => {
    const dir = tempDir();
    const path = join(dir, 'parse-cache.rpdx');
    const cache = new FsParseCache(path, dir);
    const symbol = (i: number) => ({ kind: 'method', name: `handle${i}`, signature: `public void handle${i}(Request request, Response response)`, start_line: i, end_line: i + 3, doc: null, parent_symbol: 'Router', scope_kind: 'class' as const, is_conditional: false, decl_context: null });
    const big = { spans: [{ startLine: 1, endLine: 400 }], symbols: Array.from({ length: 100 }, (_, i) => symbol(i)), fallback: null };
    cache.put(key(1), big);
    expect(cache.get(key(1))).toMatchObject(big);
    await cache.flush(async () => new Set());
    expect(new FsParseCache(path, dir).get(key(1))).toMatchObject(big);
    // The JSON of these symbols is over 15 KB; deflated, the whole file is a fraction of it.
    expect(JSON.stringify(big.symbols).length).toBeGreaterThan(15_000);
    expect(readFileSync(path).length).toBeLessThan(4_000);
  });

  it('a cache of the layout before (JSON payloads) is discarded, not misread', async () => {
    const { dir, path } = await cacheWith([1, 2]);
    const bytes = readFileSync(path);
    bytes.writeUInt32LE(2, 12);
    const end = 24 + bytes.readUInt32LE(20) + ((4 - (bytes.readUInt32LE(20) % 4)) % 4);
    bytes.writeUInt32LE(crc32(bytes.subarray(0, end)), end);
    writeFileSync(path, bytes);
    expect(new FsParseCache(path, dir).get(key(1))).toBeUndefined();
    expect(verifyParseCache(path).notes).toEqual([expect.stringMatching(/written under other rules \(format \d+, layout 2,/)]);
  });

  it('a damaged record and what follows are cut off by repair; the records before it stay', async () => {
    const { dir, path } = await cacheWith([1, 2, 3]);
    const bytes = readFileSync(path);
    bytes[bytes.length - 5]! ^= 0x10;
    writeFileSync(path, bytes);
    expect(verifyParseCache(path).problems).toEqual([expect.stringMatching(/^parse-cache\.rpdx is damaged: record at offset \d+ fails its checksum; `repodex sync` drops it/)]);
    repairParseCache(path);
    expect(verifyParseCache(path)).toEqual({ problems: [], notes: [] });
    const reader = new FsParseCache(path, dir);
    expect([1, 2, 3].map((n) => reader.get(key(n)) !== undefined)).toEqual([true, true, false]);
  });
});
