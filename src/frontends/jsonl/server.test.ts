import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../../../test/helpers.js';
import { createEngine } from '../../compose.js';
import { serveJsonl } from './server.js';

/** Every line a session writes, as written. */
async function session(requests: readonly object[]): Promise<string[]> {
  const root = makeRepo({
    'src/parse.ts': 'export function parseWidget(text: string) {\n  return text.split(",");\n}\n',
    'docs/naïve.md': '# Naïve parsing\n\nHow parseWidget splits “quoted” text.\n',
  });
  const engine = createEngine({ root });
  await engine.sync();
  let written = '';
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString('utf8');
      done();
    },
  });
  await serveJsonl(
    engine,
    Readable.from(requests.map((request) => `${JSON.stringify(request)}\n`)),
    output,
  );
  return written.split('\n').filter((line) => line !== '');
}

describe('JSONL answer lines', () => {
  it('are exactly the JSON of { ok, op, data, warnings?, id? }, however the answer was serialised', async () => {
    const lines = await session([
      { op: 'search', q: 'parseWidget', id: 1 },
      { op: 'search', q: 'naïve “quoted”', id: 'with-a-string-id' },
      { op: 'search', q: 'parse widget' },
      { op: 'open', path: 'src/parse.ts', start_line: 1, end_line: 3, id: 4 },
      { op: 'status', id: 5 },
    ]);
    expect(lines).toHaveLength(5);
    for (const line of lines) {
      const reply = JSON.parse(line) as { ok: boolean; op: string; data: unknown; warnings?: string[]; id?: string | number };
      expect(reply.ok, line.slice(0, 200)).toBe(true);
      const canonical = JSON.stringify({ ok: reply.ok, op: reply.op, data: reply.data, ...(reply.warnings ? { warnings: reply.warnings } : {}), ...('id' in reply ? { id: reply.id } : {}) });
      expect(line).toBe(canonical);
    }
    expect(lines.map((line) => (JSON.parse(line) as { id?: unknown }).id)).toEqual([1, 'with-a-string-id', undefined, 4, 5]);
    expect((JSON.parse(lines[0]!) as { data: { results: { path: string }[] } }).data.results[0]?.path).toBe('src/parse.ts');
  });
});
