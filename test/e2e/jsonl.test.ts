import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_NICE } from '../../src/engine/give-way.js';
import type { ResponseOf } from '../../src/protocol/index.js';

type SearchReport = ResponseOf<'search'>;
type FetchReport = ResponseOf<'fetch'>;
import { CLI, PROJECT_ROOT, makeRepo, runCli, threadNices } from '../helpers.js';

/**
 * End-to-end tests of `repodex serve --stdio` (seed 000 §4.3, SPEC §1): the built CLI runs as a
 * real child process and is fed raw bytes, so framing, size limits and exit behaviour are tested
 * exactly as an agent would meet them.
 */

/** One response line, as the protocol defines it. */
interface Reply {
  readonly ok: boolean;
  readonly op: string;
  readonly data?: unknown;
  readonly error?: string;
  readonly code?: string;
  readonly id?: string | number;
}

const MIB = 1024 * 1024;

/** A request line of about `bytes` bytes that would be valid JSON if the server read it whole. */
function hugeSearchLine(bytes: number): string {
  return `{"op":"search","q":"${'a'.repeat(bytes)}"}`;
}

/** A running `serve --stdio` process with a line reader on its stdout. */
class ServeSession {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr = '';
  /** Bytes after the last newline on stdout (must be empty when the server is idle). */
  partial = '';
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;
  private done = false;

  constructor(root: string, flags: readonly string[] = [], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [CLI, 'serve', '--stdio', ...flags, '--root', root], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NO_COLOR: '1', ...env },
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => {
      const pieces = (this.partial + text).split('\n');
      this.partial = pieces.pop() ?? '';
      this.lines.push(...pieces);
      this.wake?.();
    });
    this.child.stderr.on('data', (text: string) => {
      this.stderr += text;
    });
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        this.done = true;
        this.wake?.();
        resolve({ code, signal });
      });
    });
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Lines received but not yet read. */
  get pending(): readonly string[] {
    return this.lines;
  }

  /** Write raw bytes and wait until the pipe accepted them. */
  async write(data: string | Uint8Array): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.child.stdin.write(data, (error) => (error ? reject(error) : resolve()));
    });
  }

  /** The next response line; fails (instead of hanging) if the server exits first. */
  async nextLine(): Promise<string> {
    for (;;) {
      const line = this.lines.shift();
      if (line !== undefined) return line;
      if (this.done) throw new Error(`server exited before answering; stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  /** The next response, parsed (a line that is not JSON fails the test here). */
  async next(): Promise<Reply> {
    const line = await this.nextLine();
    return JSON.parse(line) as Reply;
  }

  /** Send one request object as one line and return its response. */
  async request(request: Record<string, unknown>): Promise<Reply> {
    await this.write(`${JSON.stringify(request)}\n`);
    return this.next();
  }

  /** Close stdin (EOF) and wait for the process to exit. */
  async end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end();
    return this.exited;
  }
}

const sessions: ServeSession[] = [];
afterEach(() => {
  // A failed test must not leave its server behind.
  for (const session of sessions.splice(0)) if (session.alive) session.child.kill();
});

function serve(root: string, flags: readonly string[] = [], env: NodeJS.ProcessEnv = {}): ServeSession {
  const session = new ServeSession(root, flags, env);
  sessions.push(session);
  return session;
}

/** Shape every response must have, whichever way it went. */
function expectWellFormed(reply: Reply): void {
  expect(typeof reply.ok).toBe('boolean');
  expect(typeof reply.op).toBe('string');
  if (reply.ok) {
    expect(reply).toHaveProperty('data');
    expect(reply).not.toHaveProperty('error');
  } else {
    expect(typeof reply.error).toBe('string');
    expect(typeof reply.code).toBe('string');
    // Only a refused read (blocked, missing, a chunk that is gone) still carries its answer.
    if ('data' in reply) expect(['BLOCKED', 'REFUSED']).toContain(reply.code);
  }
}

function syncRepo(root: string): void {
  const run = runCli(['sync', '--root', root, '--json']);
  expect(run.code, run.stderr).toBe(0);
}

/** A small repository with distinctive identifiers, plus many files sharing one rare word (for top_k). */
function sampleRepo(): string {
  const files: Record<string, string> = {
    'src/widget-config.ts': [
      'export interface WidgetConfig {',
      '  readonly width: number;',
      '}',
      '',
      '/** Reads the widget settings file. */',
      'export function parseWidgetConfig(text: string): WidgetConfig {',
      '  return { width: text.length };',
      '}',
      '',
    ].join('\n'),
    'src/render-pipeline.ts': [
      'export class RenderPipelineStage {',
      '  run(frames: number): number {',
      '    return frames * 2;',
      '  }',
      '}',
      '',
    ].join('\n'),
    'docs/guide.md': ['# Guide', '', 'Calibrate the flux capacitor before the first run.', ''].join('\n'),
  };
  for (let i = 0; i < 25; i++) {
    const n = String(i).padStart(2, '0');
    files[`src/harmonics/harmonic-${n}.ts`] = `/** Harmonic marker ${n}. */\nexport const harmonicMarker${n} = ${i};\n`;
  }
  return makeRepo(files);
}

beforeAll(() => {
  // The CLI under test is the bundle: fail early and clearly when it is missing.
  const run = runCli(['--help']);
  expect(run.code, `run \`npm run build\` first: ${run.stderr}`).toBe(0);
});

describe('serve --stdio: one session of hostile and valid lines', () => {
  it('answers every line once, in order, keeps serving, and exits 0 at EOF', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);

    // Twelve request lines in one session; the numbers are their positions (and response order).
    await session.write('{"op":"search",\n'); // 0: invalid JSON
    await session.write('{"op":"frobnicate","id":"u-1"}\n'); // 1: unknown op
    await session.write(`${hugeSearchLine(2 * MIB)}\n`); // 2: 2 MiB line in one write
    // 3: a 2 MiB line in several writes; its newline arrives in the same write as the next request.
    const huge = hugeSearchLine(2 * MIB);
    const step = 300 * 1024;
    for (let at = 0; at < huge.length; at += step) await session.write(huge.slice(at, at + step));
    await session.write('\n{"op":"search","id":"no-q"}\n'); // 4: q missing
    await session.write('{"op":"search","id":"typed","q":42,"top_k":"5"}\n'); // 5: mistyped fields
    await session.write('{"op":"fetch","id":"ids-str","ids":"1"}\n'); // 6: ids not an array
    await session.write(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])); // 7: invalid UTF-8
    await session.write('\n'); // 8: empty line
    await session.write('\r\n'); // 9: only a carriage return
    await session.write('{"op":"search","id":7,"q":"parse widget config"}\n'); // 10: valid search

    const replies: Reply[] = [];
    for (let i = 0; i <= 10; i++) replies.push(await session.next());
    for (const reply of replies) expectWellFormed(reply);

    const [invalidJson, unknownOp, tooLarge, tooLargeSplit, noQ, typed, idsString, badUtf8, empty, carriage, search] = replies as [
      Reply,
      Reply,
      Reply,
      Reply,
      Reply,
      Reply,
      Reply,
      Reply,
      Reply,
      Reply,
      Reply,
    ];
    expect(invalidJson).toMatchObject({ ok: false, op: '', code: 'BAD_REQUEST' });
    expect(invalidJson.error).toMatch(/invalid JSON/);
    expect(invalidJson).not.toHaveProperty('id');

    expect(unknownOp).toMatchObject({ ok: false, op: '', id: 'u-1' });
    expect(unknownOp.error).toMatch(/unknown op "frobnicate"/);

    for (const reply of [tooLarge, tooLargeSplit]) {
      expect(reply).toMatchObject({ ok: false, op: '' });
      expect(reply.error).toMatch(/request too large/);
      expect(reply).not.toHaveProperty('id');
    }

    expect(noQ).toMatchObject({ ok: false, op: 'search', id: 'no-q', code: 'BAD_REQUEST' });
    expect(noQ.error).toMatch(/\bq: required/);

    expect(typed).toMatchObject({ ok: false, op: 'search', id: 'typed', code: 'BAD_REQUEST' });
    expect(typed.error).toMatch(/\bq: expected string/);
    expect(typed.error).toMatch(/top_k: expected number/);

    expect(idsString).toMatchObject({ ok: false, op: 'fetch', id: 'ids-str', code: 'BAD_REQUEST' });
    expect(idsString.error).toMatch(/ids: expected array/);

    expect(badUtf8).toMatchObject({ ok: false, op: '' });
    expect(badUtf8.error).toMatch(/UTF-8/);

    for (const reply of [empty, carriage]) {
      expect(reply).toMatchObject({ ok: false, op: '' });
      expect(reply.error).toMatch(/empty request line/);
    }

    expect(search).toMatchObject({ ok: true, op: 'search', id: 7 });
    const report = search.data as SearchReport;
    const top = report.results[0];
    expect(top?.path).toBe('src/widget-config.ts');

    // 11: fetch one of the search results, still in the same session.
    const fetched = await session.request({ op: 'fetch', id: 'f-1', ids: [top?.chunk_id] });
    expectWellFormed(fetched);
    expect(fetched).toMatchObject({ ok: true, op: 'fetch', id: 'f-1' });
    const chunk = (fetched.data as FetchReport).chunks[0];
    expect(chunk).toMatchObject({ chunk_id: top?.chunk_id, path: 'src/widget-config.ts' });
    expect(chunk && 'lines' in chunk ? chunk.lines.join('\n') : '').toMatch(/^\d+\| export function parseWidgetConfig/m);

    // Nothing extra was written, and bad input did not end the session.
    expect(session.pending).toEqual([]);
    expect(session.partial).toBe('');
    expect(session.alive).toBe(true);

    const exit = await session.end();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(session.pending).toEqual([]);
    expect(session.partial).toBe('');
  });
});

describe('serve --stdio: framing at end of input', () => {
  it('answers a last line that has no trailing newline', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    await session.write('{"op":"status","id":"s"}\n{"op":"search","id":"tail","q":"render pipeline stage"}');
    const status = await session.next();
    expect(status).toMatchObject({ ok: true, op: 'status', id: 's' });
    expect(session.alive).toBe(true);
    const exit = await session.end();
    expect(exit).toEqual({ code: 0, signal: null });
    const tail = await session.next();
    expect(tail).toMatchObject({ ok: true, op: 'search', id: 'tail' });
    expect((tail.data as SearchReport).results[0]?.path).toBe('src/render-pipeline.ts');
    expect(session.pending).toEqual([]);
  });

  it('answers an oversized last line without a newline with "request too large"', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    await session.write(hugeSearchLine(2 * MIB));
    const exit = await session.end();
    expect(exit).toEqual({ code: 0, signal: null });
    const reply = await session.next();
    expect(reply).toMatchObject({ ok: false, op: '' });
    expect(reply.error).toMatch(/request too large/);
    expect(session.pending).toEqual([]);
  });
});

describe('serve --stdio: caps, ids and sync', () => {
  it('caps top_k at 20 instead of rejecting it', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    const reply = await session.request({ op: 'search', id: 'k', q: 'harmonic marker', top_k: 50 });
    expect(reply).toMatchObject({ ok: true, op: 'search', id: 'k' });
    const report = reply.data as SearchReport;
    expect(report.top_k).toBe(20);
    // 25 files match, so the cap (not a shortage of matches) is what limits the list.
    expect(report.matched).toBeGreaterThanOrEqual(25);
    expect(report.results).toHaveLength(20);
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });

  it('processes only the first 5 fetch ids and caps max_lines at 120', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    const search = await session.request({ op: 'search', q: 'harmonic marker', top_k: 7 });
    const ids = (search.data as SearchReport).results.map((hit) => hit.chunk_id);
    expect(ids).toHaveLength(7);

    const reply = await session.request({ op: 'fetch', id: 3, ids, max_lines: 500 });
    expect(reply).toMatchObject({ ok: true, op: 'fetch', id: 3 });
    const report = reply.data as FetchReport;
    expect(report.chunks.map((chunk) => chunk.chunk_id)).toEqual(ids.slice(0, 5));
    expect(report.ignored_ids).toEqual(ids.slice(5));
    expect(report.max_lines).toBe(120);
    for (const chunk of report.chunks) {
      expect(chunk).toHaveProperty('lines');
      expect(chunk.path).toMatch(/^src\/harmonics\/harmonic-\d\d\.ts$/);
    }
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });

  it('echoes string and number ids (including 0 and "") on success and on error', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    const cases: { request: Record<string, unknown>; ok: boolean; op: string }[] = [
      { request: { op: 'status', id: 0 }, ok: true, op: 'status' },
      { request: { op: 'status', id: '' }, ok: true, op: 'status' },
      { request: { op: 'search', id: 'ok-s', q: 'flux capacitor' }, ok: true, op: 'search' },
      // An unknown chunk id is a refusal: ok:false, with the answer that says it is gone.
      { request: { op: 'fetch', id: 12.5, ids: [0] }, ok: false, op: 'fetch' },
      { request: { op: 'search', id: 'err-s', q: '   ' }, ok: false, op: 'search' },
      { request: { op: 'search', id: -4, q: 'x', top_k: 0 }, ok: false, op: 'search' },
      { request: { op: 'fetch', id: 'err-f', ids: [] }, ok: false, op: 'fetch' },
      { request: { op: 'fetch', id: 'extra', ids: [0], bogus: true }, ok: false, op: 'fetch' },
      { request: { op: 'nope', id: 99 }, ok: false, op: '' },
      { request: { id: 'no-op' }, ok: false, op: '' },
    ];
    for (const { request, ok, op } of cases) {
      const reply = await session.request(request);
      expectWellFormed(reply);
      expect(reply, JSON.stringify(request)).toMatchObject({ ok, op, id: request.id });
    }
    const flux = await session.request({ op: 'search', id: 'flux', q: 'flux capacitor' });
    expect((flux.data as SearchReport).results[0]?.path).toBe('docs/guide.md');
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });

  it('a sync op makes files added during the session searchable', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    const query = { op: 'search', q: 'quokka telemetry' };

    const before = await session.request({ ...query, id: 'before' });
    expect(before).toMatchObject({ ok: true, id: 'before' });
    expect((before.data as SearchReport).results).toEqual([]);

    writeFileSync(join(root, 'src', 'quokka-telemetry.ts'), 'export function sendQuokkaTelemetry(): void {}\n');

    const sync = await session.request({ op: 'sync', id: 'sync' });
    expect(sync).toMatchObject({ ok: true, op: 'sync', id: 'sync' });
    expect(sync.data).toMatchObject({ mode: 'incremental', files_scanned: 1, chunks_created: 1 });

    const after = await session.request({ ...query, id: 'after' });
    expect(after).toMatchObject({ ok: true, op: 'search', id: 'after' });
    const hit = (after.data as SearchReport).results[0];
    expect(hit?.path).toBe('src/quokka-telemetry.ts');

    const fetched = await session.request({ op: 'fetch', id: 'new', ids: [hit?.chunk_id] });
    const chunk = (fetched.data as FetchReport).chunks[0];
    expect(chunk && 'lines' in chunk ? chunk.lines : []).toEqual(['1| export function sendQuokkaTelemetry(): void {}']);
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });
});

describe('serve --stdio: the same freshness policy as the CLI', () => {
  it('a search on a stale index syncs first, even an instant after the edit, and says which generation answered', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    const first = await session.request({ op: 'search', q: 'parse widget config' });
    const generation = (first.data as SearchReport).generation;
    expect((first.data as SearchReport).freshness).toEqual({ generation, indexed_commit: null, dirty: false });
    // No pause between the write and the request: the check happens when the request arrives.
    writeFileSync(join(root, 'src', 'quokka-telemetry.ts'), 'export function sendQuokkaTelemetry(): void {}\n');
    const reply = await session.request({ op: 'search', q: 'quokka telemetry' });
    const data = reply.data as SearchReport;
    expect(data.results[0]?.path).toBe('src/quokka-telemetry.ts');
    expect(data.synced).toMatchObject({ mode: 'incremental', files_scanned: 1 });
    expect(data.freshness).toEqual({ generation: generation + 1, indexed_commit: null, dirty: false });
    expect(data.warnings).toEqual([]);
    const status = await session.request({ op: 'status' });
    expect(status.data).toMatchObject({ state: 'ready', generation: generation + 1 });
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });

  it('with automatic indexing off it answers from the index it has and says `stale` in warnings', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root, [], { REPODEX_INDEXING: '0' });
    writeFileSync(join(root, 'src', 'quokka-telemetry.ts'), 'export function sendQuokkaTelemetry(): void {}\n');
    const data = (await session.request({ op: 'search', q: 'quokka telemetry' })).data as SearchReport;
    expect(data.results).toEqual([]);
    expect(data.synced).toBeUndefined();
    expect(data.freshness.dirty).toBe(true);
    expect(data.warnings.join(' ')).toMatch(/index is stale \(1 file\(s\) changed: 1 added.*run `repodex sync`/);
    // A sync op still brings it up to date.
    expect((await session.request({ op: 'sync' })).data).toMatchObject({ mode: 'incremental', files_scanned: 1 });
    expect(((await session.request({ op: 'search', q: 'quokka telemetry' })).data as SearchReport).results[0]?.path).toBe('src/quokka-telemetry.ts');
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });

  it('--watch re-indexes in the background: requests meanwhile answer at once, with a warning, then see the change', async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root, ['--watch', '--debounce-ms', '3000']);
    expect((await session.request({ op: 'status' })).data).toMatchObject({ state: 'ready' });
    writeFileSync(join(root, 'src', 'quokka-telemetry.ts'), 'export function sendQuokkaTelemetry(): void {}\n');
    const during = (await session.request({ op: 'search', q: 'quokka telemetry' })).data as SearchReport;
    expect(during.synced).toBeUndefined();
    expect(during.freshness.dirty).toBe(true);
    expect(during.warnings.join(' ')).toMatch(/re-indexing in the background/);
    let after: SearchReport | undefined;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      after = (await session.request({ op: 'search', q: 'quokka telemetry' })).data as SearchReport;
      // Between the background commit and the watcher hearing of it, an answer may already show the
      // change and still say dirty (conservative, never the reverse): wait for the settled answer.
      if (after.results.length > 0 && !after.freshness.dirty) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(after?.results[0]?.path).toBe('src/quokka-telemetry.ts');
    expect(after?.freshness.dirty).toBe(false);
    expect(after?.warnings).toEqual([]);
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });
});

describe.skipIf(!existsSync('/proc/self/task'))('serve --stdio threads', () => {
  it("answers on its own thread at the server's priority, with the helper threads it had once warm at the syncs' lower one", async () => {
    const root = sampleRepo();
    syncRepo(root);
    const session = serve(root);
    // The first answer comes after the warm-up, which is when the helpers are lowered.
    expect((await session.request({ op: 'search', q: 'parse widget config' })).ok).toBe(true);
    const pid = session.child.pid!;
    const nices = threadNices(pid);
    // Relative to this process's own priority: a suite run under `nice` starts its servers there.
    expect(nices.get(pid)).toBe(getPriority());
    const helpers = [...nices].filter(([thread]) => thread !== pid).map(([, nice]) => nice);
    // V8's helper threads (four by default) exist from the start; a thread started later for an answer keeps the server's priority.
    expect(helpers.filter((nice) => nice === Math.max(getPriority(), BACKGROUND_NICE)).length).toBeGreaterThanOrEqual(4);
    expect(await session.end()).toEqual({ code: 0, signal: null });
  });
});
