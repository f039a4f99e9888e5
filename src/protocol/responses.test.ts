import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../../test/helpers.js';
import { createEngine } from '../compose.js';
import { type Op, type RequestOf, handle } from './index.js';
import { RESPONSES } from './responses.js';

/**
 * The contract: every op's real output is exactly what its response schema says — no missing
 * field, no wrong type, and no field the schema does not name (parsing strips unknown keys, so
 * the parsed value must equal the original).
 */
function expectConforms<O extends Op>(op: O, data: unknown): void {
  const parsed = RESPONSES[op].safeParse(data);
  expect(parsed.success, `${op}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues)}`).toBe(true);
  expect(parsed.data, `${op} has a field its schema does not name`).toEqual(data);
}

describe('response schemas', () => {
  it('every op answers exactly its schema, on success and on refusal', async () => {
    const root = makeRepo({
      'src/app.ts': 'export class Router {\n  match(path: string): boolean {\n    return path.length > 0;\n  }\n}\n',
      'docs/guide.md': '# Guide\n\nHow the router matches paths.\n',
      '.env': 'SECRET=1\n',
    });
    const engine = createEngine({ root });
    const run = async <O extends Op>(request: RequestOf<O>): Promise<void> => expectConforms(request.op, await handle(engine, request));
    await run({ op: 'init' });
    await run({ op: 'status' });
    await run({ op: 'sync' });
    await run({ op: 'sync' });
    await run({ op: 'status' });
    const search = await handle(engine, { op: 'search', q: 'router match path' });
    expectConforms('search', search);
    writeFileSync(join(root, 'src/more.ts'), 'export const more = 1;\n');
    await run({ op: 'search', q: 'more', mode: 'idf', glob: 'src/**', lang: 'typescript' });
    await run({ op: 'status' });
    await run({ op: 'fetch', ids: [search.results[0]!.chunk_id, 12345] });
    await run({ op: 'open', path: 'src/app.ts', start_line: 2 });
    await run({ op: 'open', path: '.env' });
    await run({ op: 'outline', path: 'src/app.ts' });
    await run({ op: 'outline', path: '../outside.ts' });
    await run({ op: 'files', glob: '*.ts' });
    await run({ op: 'verify' });
    await run({ op: 'clean' });
    await run({ op: 'verify' });
  });
});
