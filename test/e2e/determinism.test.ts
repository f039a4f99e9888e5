import { readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type IndexOnDisk, VOLATILE_META_FIELDS, makeRepo, portableSections, readIndex, runCli, stableMeta, tempDir, prng, pick, capitalize } from '../helpers.js';

// "Two syncs of one tree give byte-identical artifacts": nothing in a generation may depend on
// wall-clock time, readdir order, hash-map iteration order or the process that wrote it.

const VERBS = ['load', 'parse', 'render', 'merge', 'resolve', 'flush', 'encode', 'decode', 'retry', 'validate'];
const NOUNS = ['config', 'buffer', 'token', 'segment', 'cursor', 'ledger', 'socket', 'session', 'payload', 'cache'];

/** A generated module in one of a few languages, with overlapping vocabulary so terms have long postings. */
function generatedFile(rng: () => number, index: number): [string, string] {
  const verb = pick(rng, VERBS);
  const noun = pick(rng, NOUNS);
  const body = Array.from({ length: 20 + Math.floor(rng() * 60) }, (_, i) => `${pick(rng, VERBS)} ${pick(rng, NOUNS)} step ${i} of ${noun}`);
  switch (index % 4) {
    case 0:
      return [
        `src/gen/${noun}-${index}.ts`,
        `export function ${verb}${capitalize(noun)}${index}(input: string): string {\n${body.map((line) => `  // ${line}`).join('\n')}\n  return input;\n}\n`,
      ];
    case 1:
      return [`py/gen/${noun}_${index}.py`, `def ${verb}_${noun}_${index}(value):\n${body.map((line) => `    # ${line}`).join('\n')}\n    return value\n`];
    case 2:
      return [`go/gen/${noun}${index}.go`, `package gen\n\nfunc ${capitalize(verb)}${capitalize(noun)}${index}() {\n${body.map((line) => `\t// ${line}`).join('\n')}\n}\n`];
    default:
      return [`rust/gen/${noun}_${index}.rs`, `pub fn ${verb}_${noun}_${index}() {\n${body.map((line) => `    // ${line}`).join('\n')}\n}\n`];
  }
}

function crlf(text: string): string {
  return text.replace(/\n/g, '\r\n');
}

function repoFiles(): Record<string, string | Uint8Array> {
  const rng = prng(0xd37e2417);
  const files: Record<string, string | Uint8Array> = {
    '.gitignore': 'vendor/\n*.tmp\n',
    'README.md': '# Demo\n\nA small demo repository: it loads the config, parses tokens and renders widgets.\n',
    'src/config/load-config.ts': [
      'export interface AppConfig { port: number; retries: number }',
      '',
      '/** Load the config file and merge defaults. */',
      'export function loadConfig(path: string): AppConfig {',
      '  const raw = readConfigFile(path);',
      '  return { port: raw.port ?? 8080, retries: raw.retries ?? 3 };',
      '}',
      '',
    ].join('\n'),
    'src/ui/widget-view.tsx': 'export function WidgetView({ label }: { label: string }) {\n  return <button className="widget">{label}</button>;\n}\n',
    'lib/retry.js': 'export async function retryWithBackoff(fn, attempts = 5) {\n  for (let i = 0; i < attempts; i++) {\n    try { return await fn(); } catch { await sleep(2 ** i * 100); }\n  }\n}\n',
    'py/tokenizer.py': 'class TokenStream:\n    """Split source text into tokens."""\n\n    def parse_tokens(self, text):\n        return text.split()\n',
    'go/server.go': 'package main\n\nimport "net/http"\n\nfunc startHTTPServer(addr string) error {\n\treturn http.ListenAndServe(addr, nil)\n}\n',
    'rust/ledger.rs': 'pub struct Ledger { entries: Vec<u64> }\n\nimpl Ledger {\n    pub fn flush_ledger(&mut self) { self.entries.clear(); }\n}\n',
    'java/SessionCache.java': 'public class SessionCache {\n  public void evictSession(String id) { cache.remove(id); }\n}\n',
    'config/settings.json': '{\n  "port": 8080,\n  "retries": 3,\n  "feature_flags": ["widgets", "ledger"]\n}\n',
    'config/app.yaml': 'server:\n  port: 8080\n  session_timeout: 30\n',
    'db/schema.sql': 'CREATE TABLE sessions (id TEXT PRIMARY KEY, payload BLOB);\n',
    'scripts/deploy.sh': '#!/bin/sh\nset -e\necho "deploying the ledger service"\n',
    'docs/unicode.md': '# Überblick\n\nDie Konfiguration lädt `größeKonfig` und `naïveCache`; 日本語のテキスト.\n',
    // CRLF line endings (and a BOM) must index exactly like the LF form would, every time.
    'win/crlf-module.ts': crlf('export function decodeWindowsSegment(bytes: Uint8Array): string {\n  return new TextDecoder().decode(bytes);\n}\n'),
    'win/notes.md': crlf('# Windows notes\n\nThe socket payload is flushed on close.\n'),
    'win/bom.py': `\ufeff${crlf('def encode_bom_payload(value):\n    return value.encode()\n')}`,
    // A nested .gitignore: its rules apply only below pkg/.
    'pkg/.gitignore': '*.gen.ts\ngenerated/\n',
    'pkg/keep.ts': 'export const keptInPackage = true;\n',
    'pkg/skip.gen.ts': 'export const ignoredGeneratedLedger = 1;\n',
    'pkg/generated/output.ts': 'export const ignoredOutputLedger = 2;\n',
    'vendor/lib.ts': 'export const ignoredVendoredLedger = 3;\n',
    'other/kept.gen.ts': '// a .gen.ts outside pkg/ is not ignored: ledger outside package\nexport const ledgerOutsidePackage = 4;\n',
    // Skipped files are recorded in the catalog, so they must be recorded the same way too.
    'assets/sprite.js': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0x6c, 0x65, 0x64, 0x67, 0x65, 0x72]),
    'big/huge.md': 'oversized line of text about the ledger and its sessions\n'.repeat(20_000),
  };
  for (let i = 0; i < 80; i++) {
    const [path, text] = generatedFile(rng, i);
    files[path] = text;
  }
  return files;
}

/** Give every file and folder under `dir` the same fixed mtime (children first, the folder last). */
function pinMtimes(dir: string, seconds: number): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) pinMtimes(path, seconds);
    else utimesSync(path, seconds, seconds);
  }
  utimesSync(dir, seconds, seconds);
}


interface SyncSummary {
  files_indexed: number;
  skipped_by_reason: Record<string, number>;
}

interface SearchReport {
  generation: number;
  results: { chunk_id: number; path: string }[];
  [field: string]: unknown;
}

/** Queries that exercise both modes, filters, multi-term ranking, unicode and CRLF files. */
const QUERIES: readonly string[][] = [
  ['load config'],
  ['parse tokens', '--top-k', '10'],
  ['ledger session payload', '--mode', 'idf'],
  ['decodeWindowsSegment'],
  ['encode_bom_payload', '--lang', 'python'],
  ['retry validate cache', '--glob', 'src/**/*.ts'],
  ['größeKonfig'],
  ['socket flushed windows'],
  ['ledgerOutsidePackage'],
  ['ledger'],
];

describe('two syncs of one tree', () => {
  let root: string;

  const searchAll = (): SearchReport[] =>
    QUERIES.map(([query, ...flags]) => {
      const run = runCli(['search', query!, ...flags, '--json', '--root', root], { env: { REPODEX_INDEXING: '0' } });
      expect(run.code, `search ${query}: ${run.stderr}`).toBe(0);
      return run.json<SearchReport>();
    });
  const withoutGeneration = (reports: readonly SearchReport[]): unknown[] => reports.map(({ generation: _generation, freshness: _freshness, ...rest }) => rest);

  const fetchTop = (reports: readonly SearchReport[]): unknown => {
    const ids = [...new Set(reports.flatMap((report) => report.results.slice(0, 1).map((hit) => hit.chunk_id)))].slice(0, 5);
    const run = runCli(['fetch', '--ids', ids.join(','), '--json', '--root', root]);
    expect(run.code, run.stderr).toBe(0);
    const { generation: _generation, freshness: _freshness, ...rest } = run.json<Record<string, unknown>>();
    return rest;
  };

  let first: IndexOnDisk;
  let firstSearches: SearchReport[];
  let firstFetch: unknown;
  let second: IndexOnDisk;

  beforeAll(() => {
    root = makeRepo(repoFiles());
    const firstRun = runCli(['sync', '--json', '--root', root]);
    expect(firstRun.code, firstRun.stderr).toBe(0);
    const summary = firstRun.json<SyncSummary>();
    // The tree really has the awkward cases this test is about.
    expect(summary.skipped_by_reason).toMatchObject({ binary: 1, 'too-large': 1 });
    // Copy the bytes now: later syncs garbage-collect old generations.
    first = readIndex(root);
    firstSearches = searchAll();
    firstFetch = fetchTop(firstSearches);

    const secondRun = runCli(['sync', '--force', '--json', '--root', root]);
    expect(secondRun.code, secondRun.stderr).toBe(0);
    second = readIndex(root);
  });

  it('the tree exercises nested ignores, CRLF files and several languages', () => {
    const paths = new Set(firstSearches.flatMap((report) => report.results.map((hit) => hit.path)));
    expect(paths).toContain('win/crlf-module.ts');
    expect(paths).toContain('win/bom.py');
    expect(paths).toContain('docs/unicode.md');
    expect(paths).toContain('other/kept.gen.ts');
    for (const ignored of ['pkg/skip.gen.ts', 'pkg/generated/output.ts', 'vendor/lib.ts', 'big/huge.md', 'assets/sprite.js']) expect(paths).not.toContain(ignored);
  });

  it('writes a new generation with a byte-identical segment and the same manifest', () => {
    expect(second.meta.generation).toBe(first.meta.generation + 1);
    expect(second.segments.map((segment) => segment.name)).not.toEqual(first.segments.map((segment) => segment.name));
    expect(second.segments.length).toBe(1);
    expect(first.segments.length).toBe(1);
    const [before, after] = [first.segments[0]!.bytes, second.segments[0]!.bytes];
    expect(before.length).toBeGreaterThan(0);
    // Buffer.equals first: a failing toEqual on megabytes of bytes is unreadable.
    expect(before.equals(after), `${first.segments[0]!.name} differs from ${second.segments[0]!.name}`).toBe(true);
    expect({ ...second.manifest, segments: [] }).toEqual({ ...first.manifest, segments: [] });
  });

  it('writes meta.json that differs only in the volatile fields', () => {
    expect(stableMeta(second.meta)).toBe(stableMeta(first.meta));
    for (const field of Object.keys(first.meta)) {
      if ((VOLATILE_META_FIELDS as readonly string[]).includes(field)) continue;
      expect(second.meta[field], field).toEqual(first.meta[field]);
    }
  });

  it('answers searches and fetches identically from both generations', () => {
    const secondSearches = searchAll();
    expect(secondSearches.every((report) => report.generation === secondSearches[0]!.generation)).toBe(true);
    expect(secondSearches[0]!.generation).not.toBe(firstSearches[0]!.generation);
    expect(withoutGeneration(secondSearches)).toEqual(withoutGeneration(firstSearches));
    expect(fetchTop(secondSearches)).toEqual(firstFetch);
  });

  it('answers identically across separate runs of the CLI', () => {
    const runA = searchAll();
    const runB = searchAll();
    expect(runA.some((report) => report.results.length > 0)).toBe(true);
    expect(runB).toEqual(runA);
  });

  it('indexes two copies of the tree, written in different orders, to identical artifacts', () => {
    // Same content and stats, different creation order (so different readdir order on most
    // file systems) and a different absolute root: nothing of that may reach the artifacts.
    const entries = Object.entries(repoFiles());
    const copies = [entries, [...entries].reverse()].map((order) => {
      const copy = makeRepo(Object.fromEntries(order), tempDir());
      expect(runCli(['init', '--root', copy]).code).toBe(0);
      pinMtimes(copy, 1_700_000_000);
      const run = runCli(['sync', '--json', '--root', copy]);
      expect(run.code, run.stderr).toBe(0);
      return readIndex(copy);
    });
    const [a, b] = copies as [IndexOnDisk, IndexOnDisk];
    expect(a.segments.map((segment) => segment.name)).toEqual(b.segments.map((segment) => segment.name));
    // Every section but the ctimes and inodes, which no copy can share.
    a.segments.forEach((segment, i) => expect(portableSections(segment.name, 'SEGM', b.segments[i]!.bytes), `${segment.name} differs between the copies`).toEqual(portableSections(segment.name, 'SEGM', segment.bytes)));
    expect(portableSections('manifest', 'GENR', b.manifestBytes), 'the manifests differ between the copies').toEqual(portableSections('manifest', 'GENR', a.manifestBytes));
    expect(stableMeta(b.meta)).toBe(stableMeta(a.meta));
  });
});
