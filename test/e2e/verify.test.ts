import { readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type CliRun, makeRepo, prng, readIndex, runCli, yieldToEventLoop } from '../helpers.js';

// `repodex verify` (seed 003 addendum) and damage in `status`: a flipped byte in any artifact
// kind — meta.json, a generation manifest, a segment (header, any section, padding, TOC), the
// parse cache — is found and named; status says the index is damaged; sync repairs it. An index
// built with other rules (feature version) is stale, and never served.

interface Verify {
  ok: boolean;
  problems: string[];
  checked: string[];
}

const cli = (root: string, ...args: string[]): CliRun => runCli([...args, '--root', root]);
const verify = (root: string): { code: number | null; report: Verify } => {
  const run = cli(root, 'verify', '--json');
  return { code: run.code, report: run.json<Verify>() };
};

function repo(): string {
  const files: Record<string, string> = {};
  for (let i = 0; i < 12; i++) files[`src/m${i}.ts`] = `/** Module ${i}. */\nexport function handler${i}(input: number): number {\n  return input * ${i};\n}\n`;
  files['README.md'] = '# Readme\n\nWords about handlers.\n';
  const root = makeRepo(files);
  expect(cli(root, 'sync').code).toBe(0);
  // A second, incremental sync: the index then has a delta segment and tombstones too.
  writeFileSync(join(root, 'src/m3.ts'), 'export function replacedHandler(): number {\n  return 3;\n}\n');
  expect(cli(root, 'sync').code).toBe(0);
  return root;
}

/** Flip one byte of a file under .repodex/. */
function flip(root: string, name: string, at: number): void {
  const path = join(root, '.repodex', name);
  const bytes = readFileSync(path);
  bytes[at]! ^= 0x5a;
  writeFileSync(path, bytes);
}

describe('verify', () => {
  it('passes on a sound index, listing what it checked', () => {
    const root = repo();
    const { code, report } = verify(root);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    const index = readIndex(root);
    // The generation, then every other file an answer depends on (vectors: this repository is too small to embed).
    expect(report.checked).toEqual(['meta.json', index.meta.manifest.name, ...index.segments.map((segment) => segment.name), 'parse-cache.rpdx', 'audit.jsonl', 'secret-rules.json']);
    expect(cli(root, 'verify').stdout).toMatch(/^index sound: generation \d+, 7 files checked/);
  });

  it('catches a flipped byte in every artifact kind, names the file, and sync repairs it', async () => {
    const root = repo();
    const index = readIndex(root);
    const rng = prng(99);
    const targets: { name: string; at: number }[] = [];
    const size = (name: string): number => readFileSync(join(root, '.repodex', name)).length;
    // meta.json: inside a value that still parses (a digit of the generation number).
    const metaText = readFileSync(join(root, '.repodex', 'meta.json'), 'utf8');
    targets.push({ name: 'meta.json', at: metaText.indexOf('"duration_ms": ') + '"duration_ms": '.length });
    // The manifest and each segment: the header, somewhere in the middle, the last byte (TOC).
    for (const name of [index.meta.manifest.name, ...index.segments.map((segment) => segment.name)]) {
      targets.push({ name, at: 5 }, { name, at: 40 + Math.floor(rng() * (size(name) - 80)) }, { name, at: size(name) - 1 });
    }
    // The parse cache: a byte inside its first record.
    targets.push({ name: 'parse-cache.rpdx', at: 40 });
    for (const { name, at } of targets) {
      await yieldToEventLoop();
      const original = readFileSync(join(root, '.repodex', name));
      flip(root, name, at);
      const { code, report } = verify(root);
      expect(code, `${name} byte ${at}`).toBe(1);
      expect(report.ok).toBe(false);
      expect(report.problems.join('\n'), `${name} byte ${at}`).toContain(name);
      // Status notices it too (it checks every checksum); damage to the lexical index also makes it stale.
      const status = cli(root, 'status', '--json').json<{ state: string; dirty: boolean; damage: string[] }>();
      expect(status.damage.join('\n'), `${name} byte ${at}`).toContain(name);
      expect(status.dirty, `${name} byte ${at}`).toBe(name !== 'parse-cache.rpdx');
      writeFileSync(join(root, '.repodex', name), original);
      expect(verify(root).code, `restoring ${name}`).toBe(0);
    }
    // A damaged segment: `sync` (not --force) rebuilds, and the index is sound again.
    const segment = readIndex(root).segments[0]!.name;
    flip(root, segment, 100);
    const repaired = cli(root, 'sync', '--json');
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.json<{ mode: string; full_reason: string }>()).toMatchObject({ mode: 'full', full_reason: expect.stringContaining('damaged index') as string });
    expect(verify(root).code).toBe(0);
    // A damaged parse cache: the next sync drops the bad tail and carries on.
    flip(root, 'parse-cache.rpdx', size('parse-cache.rpdx') - 3);
    writeFileSync(join(root, 'src/m4.ts'), 'export const changedAgain = 4;\n');
    expect(cli(root, 'sync').code).toBe(0);
    expect(verify(root).code).toBe(0);
  });

  it('a truncated segment: status says damaged instead of ready, search rebuilds', () => {
    const root = repo();
    const name = readIndex(root).segments[0]!.name;
    const path = join(root, '.repodex', name);
    writeFileSync(path, readFileSync(path).subarray(0, 300));
    const status = cli(root, 'status', '--json').json<{ state: string; damage: string[]; reasons: string[] }>();
    expect(status.state).toBe('stale');
    expect(status.damage[0]).toMatch(new RegExp(`${name.replace('.', '\\.')}.*truncated`));
    expect(cli(root, 'status').stdout).toMatch(/damaged:/);
    const search = cli(root, 'search', 'handler', '--json');
    expect(search.code, search.stderr).toBe(0);
    expect(search.json<{ synced: { mode: string } }>().synced.mode).toBe('full');
    expect(verify(root).code).toBe(0);
  });

  it('status reads again what an earlier status found sound once it is written to, even with its mtime put back', async () => {
    const root = repo();
    // Times within 2 s of a write may not show a second write: only files older than that are vouched for.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(cli(root, 'status', '--json').json<{ damage: string[] }>().damage).toEqual([]);
    const vouched = (JSON.parse(readFileSync(join(root, '.repodex/checked.json'), 'utf8')) as { files: Record<string, string> }).files;
    const { segments } = readIndex(root);
    expect(Object.keys(vouched).sort()).toEqual([...segments.map((segment) => segment.name), 'parse-cache.rpdx'].sort());

    for (const name of [segments.at(-1)!.name, 'parse-cache.rpdx']) {
      const path = join(root, '.repodex', name);
      const { atime, mtime } = statSync(path);
      flip(root, name, Math.floor(statSync(path).size / 2));
      utimesSync(path, atime, mtime);
      const status = cli(root, 'status', '--json').json<{ state: string; damage: string[] }>();
      expect(status.damage.join('\n'), name).toContain(name);
      expect(verify(root).report.problems.join('\n'), name).toContain(name);
      flip(root, name, Math.floor(statSync(path).size / 2)); // back as it was
    }
  });

  it('no index: verify says so and exits 1', () => {
    const root = makeRepo({ 'a.ts': 'export const a = 1;\n' });
    const run = cli(root, 'verify');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/no index to verify: run `repodex sync`/);
  });
});

describe('feature version', () => {
  /** Rewrite meta.json as if an older repodex, with other indexing rules, had built the index. */
  function markOtherRules(root: string): void {
    const path = join(root, '.repodex', 'meta.json');
    const meta = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    delete meta.checksum;
    meta.feature_version = 0;
    const body = JSON.stringify(meta, null, 2);
    writeFileSync(path, `${JSON.stringify({ ...meta, checksum: crc32(Buffer.from(body)) }, null, 2)}\n`);
  }

  it('an index built with other rules is stale, refused without automatic indexing, and rebuilt with it', () => {
    const root = repo();
    markOtherRules(root);
    expect(verify(root).report.ok).toBe(true); // not damage
    const status = cli(root, 'status', '--json').json<{ state: string; reasons: string[] }>();
    expect(status.state).toBe('stale');
    expect(status.reasons[0]).toMatch(/index built with other rules \(feature version 0, this repodex uses \d+\)/);
    const refused = runCli(['search', 'handler', '--json', '--root', root], { env: { REPODEX_INDEXING: '0' } });
    expect(refused.code).toBe(1);
    expect(refused.json()).toMatchObject({ ok: false, code: 'INDEX_STALE' });
    const rebuilt = cli(root, 'search', 'handler', '--json');
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.json<{ synced: { mode: string; full_reason: string } }>().synced).toMatchObject({ mode: 'full', full_reason: expect.stringContaining('other rules') as string });
    expect(cli(root, 'status', '--json').json<{ state: string }>().state).toBe('ready');
    expect(readdirSync(join(root, '.repodex')).filter((name) => name.includes('.tmp'))).toEqual([]);
  });
});

describe('meta.json from a newer repodex', () => {
  it('an optional field this version does not know is kept under the checksum, not taken for damage', () => {
    const root = repo();
    const path = join(root, '.repodex', 'meta.json');
    const meta = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    delete meta.checksum;
    const newer = { ...meta, field_of_a_later_version: { anything: [1, 2] } };
    const body = JSON.stringify(newer, null, 2);
    writeFileSync(path, `${JSON.stringify({ ...newer, checksum: crc32(Buffer.from(body)) }, null, 2)}\n`);
    expect(verify(root).report.ok).toBe(true);
    expect(cli(root, 'status', '--json').json<{ state: string }>().state).toBe('ready');
    // Changing any byte of it is still damage.
    writeFileSync(path, readFileSync(path, 'utf8').replace('"anything"', '"anythinG"'));
    expect(verify(root).report.ok).toBe(false);
  });
});
