import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/compose.js';
import type { ResponseOf } from '../../src/protocol/index.js';

type SearchReport = ResponseOf<'search'>;
type FetchReport = ResponseOf<'fetch'>;
import { serveJsonl } from '../../src/frontends/jsonl/server.js';
import { makeRepo } from '../helpers.js';

/**
 * The JSONL server's in-process index cache (seed 000 §4.3): artifacts are loaded once per
 * session and reused by every search and fetch, and reloaded only after a sync commits — our own
 * `sync` op or another process's (noticed through the meta.json stamp).
 */

/** One response line, as the protocol defines it. */
interface Reply {
  readonly ok: boolean;
  readonly op: string;
  readonly data?: unknown;
  readonly error?: string;
  readonly id?: string | number;
}

/** Collects response lines and lets a test wait until a given number have arrived. */
class LineCollector extends Writable {
  readonly replies: Reply[] = [];
  private partial = '';
  private waiter: { count: number; resolve: () => void } | undefined;

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const pieces = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = pieces.pop() ?? '';
    for (const line of pieces) this.replies.push(JSON.parse(line) as Reply);
    if (this.waiter && this.replies.length >= this.waiter.count) this.waiter.resolve();
    callback();
  }

  /** Resolves once `count` responses in total have been written. */
  async waitFor(count: number): Promise<void> {
    if (this.replies.length >= count) return;
    await new Promise<void>((resolve) => {
      this.waiter = { count, resolve };
    });
    this.waiter = undefined;
  }

  /** Bytes written after the last newline (a complete session leaves none). */
  get trailing(): string {
    return this.partial;
  }
}

const WORDS = ['parse', 'widget', 'config', 'render', 'pipeline', 'stage', 'frames', 'flux', 'capacitor', 'harmonic', 'marker', 'settings', 'width'];

/** The i-th of many varied search requests: different terms, modes, caps and filters. */
function searchRequest(i: number): Record<string, unknown> {
  const a = WORDS[i % WORDS.length] ?? 'widget';
  const b = WORDS[(i * 7 + 3) % WORDS.length] ?? 'render';
  const request: Record<string, unknown> = { op: 'search', id: i, q: i % 3 === 0 ? a : `${a} ${b}` };
  if (i % 2 === 1) request.mode = 'idf';
  if (i % 5 === 0) request.top_k = 1 + (i % 20);
  if (i % 11 === 0) request.glob = 'src/**';
  if (i % 13 === 0) request.lang = 'typescript';
  return request;
}

function sampleRepo(): string {
  const files: Record<string, string> = {
    'src/widget-config.ts': 'export interface WidgetConfig {\n  readonly width: number;\n}\n\n/** Reads the widget settings. */\nexport function parseWidgetConfig(text: string): WidgetConfig {\n  return { width: text.length };\n}\n',
    'src/render-pipeline.ts': 'export class RenderPipelineStage {\n  run(frames: number): number {\n    return frames * 2;\n  }\n}\n',
    'docs/guide.md': '# Guide\n\nCalibrate the flux capacitor before the first run.\n',
  };
  for (let i = 0; i < 12; i++) files[`src/harmonics/harmonic-${i}.ts`] = `/** Harmonic marker ${i}. */\nexport const harmonicMarker${i} = ${i};\n`;
  return makeRepo(files);
}

/** A live in-process session: write request lines, await their responses. */
function startSession(engine: ReturnType<typeof createEngine>): { input: PassThrough; output: LineCollector; finished: Promise<void>; send(requests: readonly Record<string, unknown>[]): void } {
  const input = new PassThrough();
  const output = new LineCollector();
  const finished = serveJsonl(engine, input, output);
  return {
    input,
    output,
    finished,
    send(requests) {
      input.write(requests.map((request) => `${JSON.stringify(request)}\n`).join(''));
    },
  };
}

describe('serve --stdio cache (in process)', () => {
  it('loads artifacts once for 1,000 searches, reloads after its own sync and after an external one', async () => {
    const root = sampleRepo();
    const engine = createEngine({ root });
    await engine.sync();
    expect(engine.loads).toBe(0);

    // Chunk ids for the fetches come from a separate engine so the session's engine starts cold.
    const probe = await createEngine({ root }).search({ q: 'parse widget config render pipeline' });
    const ids = probe.results.map((hit) => hit.chunk_id);
    expect(ids.length).toBeGreaterThanOrEqual(2);

    const session = startSession(engine);
    const requests: Record<string, unknown>[] = [];
    for (let i = 0; i < 1000; i++) {
      requests.push(searchRequest(i));
      if (i % 250 === 249) requests.push({ op: 'fetch', id: `fetch-${i}`, ids: ids.slice(0, 2), max_lines: 3 });
    }
    // Send in uneven pieces so request lines straddle chunk boundaries.
    const text = requests.map((request) => `${JSON.stringify(request)}\n`).join('');
    for (let at = 0; at < text.length; at += 997) session.input.write(text.slice(at, at + 997));
    await session.output.waitFor(requests.length);

    const replies = session.output.replies;
    expect(replies).toHaveLength(1004);
    replies.forEach((reply, i) => {
      expect(reply, JSON.stringify(requests[i])).toMatchObject({ ok: true, op: requests[i]?.op, id: requests[i]?.id });
    });
    const hits = replies.filter((reply) => reply.op === 'search').map((reply) => (reply.data as SearchReport).results.length);
    expect(hits.filter((n) => n > 0).length).toBeGreaterThan(900); // the queries really searched something
    const fetched = replies.filter((reply) => reply.op === 'fetch').map((reply) => reply.data as FetchReport);
    for (const report of fetched) {
      expect(report.chunks.map((chunk) => chunk.chunk_id)).toEqual(ids.slice(0, 2));
      for (const chunk of report.chunks) expect('lines' in chunk && chunk.lines.length <= 3).toBe(true);
    }
    expect(engine.loads).toBe(1);

    // A file added during the session: the next search finds the index stale, syncs first (the
    // same policy as the CLI) and finds it; the search after that reuses the reloaded index.
    writeFileSync(join(root, 'src', 'quokka-telemetry.ts'), 'export function sendQuokkaTelemetry(): void {}\n');
    session.send([
      { op: 'search', id: 'after', q: 'quokka telemetry' },
      { op: 'search', id: 'again', q: 'quokka telemetry' },
    ]);
    await session.output.waitFor(1006);
    expect(replies[1004]).toMatchObject({ ok: true, op: 'search', id: 'after' });
    const after = replies[1004]?.data as SearchReport;
    expect(after.synced).toMatchObject({ mode: 'incremental', files_scanned: 1 });
    expect(after.results[0]?.path).toBe('src/quokka-telemetry.ts');
    expect(after.freshness.dirty).toBe(false);
    expect(replies[1005]).toMatchObject({ ok: true, id: 'again' });
    expect((replies[1005]?.data as SearchReport).synced).toBeUndefined();
    expect(engine.loads).toBe(2);

    // An explicit sync op with nothing changed writes nothing, so nothing is reloaded.
    session.send([{ op: 'sync', id: 'sync' }]);
    await session.output.waitFor(1007);
    expect(replies[1006]).toMatchObject({ ok: true, op: 'sync', id: 'sync', data: { mode: 'none' } });
    expect(engine.loads).toBe(2);

    // Another engine (as another process would) commits a sync: the session's next search sees it.
    writeFileSync(join(root, 'docs', 'yak-shaving.md'), '# Yak shaving\n\nThe ceremonial yak grooming checklist.\n');
    const other = createEngine({ root });
    await other.sync();
    session.send([
      { op: 'search', id: 'external', q: 'ceremonial yak grooming' },
      { op: 'search', id: 'external-again', q: 'ceremonial yak grooming' },
    ]);
    await session.output.waitFor(1009);
    expect(replies[1007]).toMatchObject({ ok: true, id: 'external' });
    expect((replies[1007]?.data as SearchReport).results[0]?.path).toBe('docs/yak-shaving.md');
    expect((replies[1007]?.data as SearchReport).synced).toBeUndefined();
    expect(replies[1008]).toMatchObject({ ok: true, id: 'external-again' });
    expect(engine.loads).toBe(3);

    session.input.end();
    await session.finished;
    expect(replies).toHaveLength(1009);
    expect(session.output.trailing).toBe('');
  });

  it('serves a whole session from a finite Readable with one load', async () => {
    const root = sampleRepo();
    const engine = createEngine({ root });
    await engine.sync();
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) lines.push(`${JSON.stringify(searchRequest(i))}\n`);
    const ids = (await createEngine({ root }).search({ q: 'parse widget' })).results.map((hit) => hit.chunk_id).slice(0, 2);
    lines.push(`${JSON.stringify({ op: 'fetch', id: 'f', ids })}\n`);
    const output = new LineCollector();
    await serveJsonl(engine, Readable.from(lines), output);
    expect(output.replies).toHaveLength(1001);
    expect(output.replies.every((reply) => reply.ok)).toBe(true);
    expect((output.replies[1000]?.data as FetchReport).chunks.every((chunk) => 'lines' in chunk)).toBe(true);
    expect(output.replies.map((reply) => reply.id)).toEqual([...Array.from({ length: 1000 }, (_, i) => i), 'f']);
    expect(engine.loads).toBe(1);
  });

  it('warms up on the index it loads, answering its own searches: no call logged, no search counted', async () => {
    const root = sampleRepo();
    await createEngine({ root }).sync();
    const audit = join(root, '.repodex', 'audit.jsonl');
    const logged = (): string => (existsSync(audit) ? readFileSync(audit, 'utf8') : '');
    const before = logged();
    const engine = createEngine({ root });
    await engine.warmUp(2_000);
    await engine.auditLog.settled();
    await engine.analytics.flush();
    expect(logged()).toBe(before);
    expect((await engine.status()).semantic?.analytics.queries).toBe(0);
    // The session's requests are answered from the index the warm-up loaded.
    const output = new LineCollector();
    await serveJsonl(engine, Readable.from([`${JSON.stringify({ op: 'search', q: 'harmonic marker', id: 1 })}\n`]), output);
    expect(output.replies[0]).toMatchObject({ ok: true, id: 1 });
    expect((output.replies[0]?.data as SearchReport).results.length).toBeGreaterThan(0);
    expect(engine.loads).toBe(1);
  });

  it('warms up without failing when the config is invalid: the requests report it', async () => {
    const root = sampleRepo();
    await createEngine({ root }).sync();
    writeFileSync(join(root, '.repodex', 'config.json'), '{ "bad": ');
    const engine = createEngine({ root });
    await engine.warmUp(2_000);
    const output = new LineCollector();
    await serveJsonl(engine, Readable.from([`${JSON.stringify({ op: 'search', q: 'harmonic marker', id: 1 })}\n`]), output);
    expect(output.replies[0]).toMatchObject({ ok: false, code: 'CONFIG_INVALID', id: 1 });
  });
});
