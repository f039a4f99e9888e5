import { describe, expect, it } from 'vitest';
import { analyze, loadLanguages } from '../lang/index.js';
import { workerFromSource } from '../../test/worker-from-source.js';
import { outlineThread } from './outline-thread.js';
import { contentHashOf } from './prepare-file.js';

/** The parse worker, run from its source (no build needed). */
const SCRIPT = workerFromSource(new URL('./parse-worker.ts', import.meta.url));

const SOURCE = 'export class Router {\n  match(path: string): string {\n    return path;\n  }\n}\nexport function serve(router: Router): void {}\n';

describe('the outline thread', () => {
  it('outlines exactly as this thread would, then stops when idle and starts again when asked', async () => {
    const parser = outlineThread({ script: SCRIPT, idleMs: 20 })!;
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
