import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze, loadLanguages } from '../lang/index.js';
import { PROJECT_ROOT } from '../../test/helpers.js';
import { outlineThread } from './outline-thread.js';
import { contentHashOf } from './prepare-file.js';

const SCRIPT = join(PROJECT_ROOT, 'dist', 'parse-worker.js');

const SOURCE = 'export class Router {\n  match(path: string): string {\n    return path;\n  }\n}\nexport function serve(router: Router): void {}\n';

describe.skipIf(!existsSync(SCRIPT))('the outline thread', () => {
  it('outlines exactly as this thread would, then stops when idle and starts again when asked', async () => {
    const parser = outlineThread({ script: new URL(`file://${SCRIPT}`), idleMs: 20 })!;
    await loadLanguages(['typescript', 'python']);
    expect(parser.running).toBe(false);
    expect(await parser.analyze('typescript', SOURCE, contentHashOf(SOURCE))).toEqual(analyze('typescript', SOURCE));
    expect(parser.running).toBe(true);
    await expect.poll(() => parser.running, { timeout: 5000 }).toBe(false);
    const python = 'def handler(path):\n    return path\n';
    expect(await parser.analyze('python', python, contentHashOf(python))).toEqual(analyze('python', python));
    // Unparseable input: the same "no symbols, not parsed" answer as in this thread.
    expect(await parser.analyze('typescript', 'export class {{{', contentHashOf('export class {{{'))).toEqual({ ok: false, symbols: [] });
  });
});
