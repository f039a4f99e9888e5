import { type SpawnSyncReturns, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import type { OutlineSymbol } from '../src/lang/types.js';
import { mulberry32 } from '../src/core/prng.js';
import { Artifact, readLayout } from '../src/index/format.js';
import { type Manifest, decodeManifest } from '../src/index/manifest.js';
import { Segment } from '../src/index/segment.js';

/** The repodex checkout under test. */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The built CLI launcher (`npm test` builds it first). */
export const CLI = join(PROJECT_ROOT, 'bin', 'repodex.js');

const created: string[] = [];
afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary folder, removed after the test file finishes. */
export function tempDir(prefix = 'repodex-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Write files (path → content) under a new temporary repository root and return the root. */
export function makeRepo(files: Record<string, string | Uint8Array>, root: string = tempDir()): string {
  for (const [path, content] of Object.entries(files)) {
    const absolute = join(root, path);
    mkdirSync(dirname(absolute), { recursive: true });
    writeFileSync(absolute, content);
  }
  return root;
}

/** Result of one CLI run. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON (for `--json` runs). */
  json<T = unknown>(): T;
}

/**
 * Let the event loop turn. A long test of in-process work (syncs and verifies on the file store
 * are synchronous file I/O behind their awaits) never reaches it otherwise, and the test runner's
 * worker then misses its runner's replies for a minute and reports a timeout: long loops call this
 * once per round.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Run the built CLI as a real process without blocking this one: a test that runs hundreds of
 * them with `runCli` would hold the test worker's event loop for a minute and more, longer than
 * the test runner waits for the worker's progress reports.
 */
export function runCliAsync(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? PROJECT_ROOT, env: { ...process.env, NO_COLOR: '1', ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Run the built CLI as a real process. */
export function runCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string | Uint8Array; timeoutMs?: number } = {}): CliRun {
  const result: SpawnSyncReturns<string> = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    input: options.input,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    json<T>(): T {
      return JSON.parse(result.stdout) as T;
    },
  };
}

/** Six topics of six words each: files about one topic each give the builtin embedder something to learn. */
export const TOPICS = [
  ['upload', 'resume', 'chunk', 'offset', 'partial', 'transfer'],
  ['cookie', 'session', 'expires', 'domain', 'httponly', 'secure'],
  ['retry', 'backoff', 'attempt', 'delay', 'jitter', 'giveup'],
  ['parser', 'token', 'grammar', 'syntax', 'lexer', 'ast'],
  ['cache', 'evict', 'lru', 'capacity', 'stale', 'hit'],
  ['render', 'template', 'layout', 'widget', 'paint', 'frame'],
];

/** A seeded PRNG, so generated trees and random delays are the same on every run. */
export const prng = mulberry32;

/** A random element of `items`, drawn with `rng`. */
export function pick<T>(rng: () => number, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

/** `word` → `Word`, for generated identifiers. */
export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The fields of meta.json that legitimately differ between two syncs of the same tree. */
export const VOLATILE_META_FIELDS = ['generation', 'manifest', 'synced_at', 'duration_ms', 'checksum'] as const;

/** What a root's current generation holds on disk: meta.json, the manifest (decoded and raw) and each segment's bytes, in manifest order. */
export interface IndexOnDisk {
  readonly meta: Record<string, unknown> & { generation: number; manifest: { name: string } };
  readonly manifestBytes: Buffer;
  readonly manifest: Manifest;
  readonly segments: { readonly name: string; readonly bytes: Buffer }[];
}

/** Read the current generation of the index under `root` (copies of the bytes: later syncs may delete the files). */
export function readIndex(root: string): IndexOnDisk {
  const dataDir = join(root, '.repodex');
  const meta = JSON.parse(readFileSync(join(dataDir, 'meta.json'), 'utf8')) as IndexOnDisk['meta'];
  const manifestBytes = readFileSync(join(dataDir, meta.manifest.name));
  const manifest = decodeManifest(Artifact.fromBuffer(meta.manifest.name, 'GENR', manifestBytes));
  const segments = manifest.segments.map((ref) => ({ name: ref.name, bytes: readFileSync(join(dataDir, ref.name)) }));
  return { meta, manifestBytes, manifest, segments };
}

/**
 * Sections that record a file's or folder's ctime and inode: no user-space call can set those, so
 * two copies of one tree differ there and only there.
 */
export const MACHINE_STAT_SECTIONS = ['CTIM', 'INOD', 'DIRC', 'CTLC'] as const;

/**
 * An artifact's sections in file order (tag, bytes), checked, without the ctime and inode sections
 * (and, in a manifest, the segments' header checksums, which cover theirs).
 */
export function portableSections(name: string, kind: 'SEGM' | 'GENR', bytes: Buffer): [string, string][] {
  const artifact = Artifact.fromBuffer(name, kind, bytes);
  const tags = readLayout(name, kind, bytes.length, (offset, length) => bytes.subarray(offset, offset + length)).entries.map((entry) => entry.tag);
  const machine: readonly string[] = kind === 'GENR' ? [...MACHINE_STAT_SECTIONS, 'SEGH'] : MACHINE_STAT_SECTIONS;
  return tags.filter((tag) => !machine.includes(tag)).map((tag) => [tag, Buffer.from(artifact.bytes(tag)).toString('base64')]);
}

/** meta.json without its volatile fields, as text (key order kept). */
export function stableMeta(meta: Record<string, unknown>): string {
  const copy: Record<string, unknown> = { ...meta };
  for (const field of VOLATILE_META_FIELDS) delete copy[field];
  return JSON.stringify(copy, null, 2);
}

/** The ids of every live chunk in the current generation of `root`, in segment order. */
export function liveChunkIds(root: string): number[] {
  const index = readIndex(root);
  const ids: number[] = [];
  index.segments.forEach(({ name, bytes }, s) => {
    const segment = Segment.fromBuffer(name, bytes);
    const dead = new Set(index.manifest.dead[s]);
    for (let f = 0; f < segment.files.count; f++) {
      if (dead.has(f)) continue;
      for (let c = segment.files.chunkStart[f]!; c < segment.files.chunkStart[f + 1]!; c++) ids.push(segment.chunks.ids[c]!);
    }
  });
  return ids;
}

/** An outline symbol for tests: `kind name` at lines start..end, under `parent`, with any other field overridden. */
export function outlineSymbol(kind: string, name: string, start: number, end: number, parent: string | null = null, extra: Partial<OutlineSymbol> = {}): OutlineSymbol {
  return {
    kind,
    name,
    signature: `${kind} ${name}`,
    start_line: start,
    end_line: end,
    doc: null,
    parent_symbol: parent,
    scope_kind: parent ? 'class' : 'module',
    is_conditional: false,
    decl_context: null,
    ...extra,
  };
}

/** A class with two methods and a function after it: the outline most symbol tests start from. */
export const WIDGET_OUTLINE: OutlineSymbol[] = [outlineSymbol('class', 'Widget', 1, 200), outlineSymbol('method', 'layout', 10, 80, 'Widget'), outlineSymbol('method', 'paint', 106, 155, 'Widget'), outlineSymbol('function', 'helper', 210, 220)];

/** Run git in `root` with a fixed identity and default branch (no global config needed); its output, trimmed. Throws when git fails. */
export function git(root: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=test@example.com', '-c', 'user.name=test', '-c', 'init.defaultBranch=main', ...args], { cwd: root, encoding: 'utf8' }).trim();
}

/** A git repository holding `files`, all in one commit. */
export function committedRepo(files: Record<string, string>): string {
  const root = makeRepo(files);
  git(root, 'init', '-q');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'first');
  return root;
}

/** A TypeScript class with two documented methods: what tests of excerpts, symbols and answers search. */
export const ROUTER_SOURCE = [
  'export class Router {',
  '  private routes = new Map<string, () => string>();',
  '  /** Register a handler for a path. */',
  '  add(path: string, handler: () => string): void {',
  '    this.routes.set(path, handler);',
  '  }',
  '  /** Find the handler registered for a path. */',
  '  match(path: string): (() => string) | undefined {',
  '    return this.routes.get(path);',
  '  }',
  '}',
  '',
].join('\n');

/** Each thread's nice value of a running process, by thread id (Linux's /proc). */
export function threadNices(pid: number): Map<number, number> {
  const nices = new Map<number, number>();
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
    // Fields after the command's closing parenthesis start at the third; nice is the nineteenth.
    nices.set(Number(thread), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}
