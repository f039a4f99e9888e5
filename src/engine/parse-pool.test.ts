import { describe, expect, it } from 'vitest';
import { isRepodexError } from '../core/errors.js';
import { workerFromSource } from '../../test/worker-from-source.js';
import { createParser } from './parse-pool.js';

/** The worker, run from its source (no build needed). */
const SCRIPT = workerFromSource(new URL('./parse-worker.ts', import.meta.url));
const PARAMS = { target_lines: 60, max_lines: 200, overlap_lines: 0 };

/** A TypeScript file of `functions` small functions. */
function source(functions: number, salt: number): string {
  let text = '';
  for (let f = 0; f < functions; f++) text += `/** Step ${f} of ${salt}. */\nexport function step${salt}x${f}(input: number): number {\n  return input * ${f} + ${salt};\n}\n\n`;
  return text;
}

describe('parse worker pool', () => {
  it('closes at once with files in flight: every file is parsed whole or refused, none is left waiting', async () => {
    const parser = await createParser(PARAMS, Array.from({ length: 200 }, () => 'typescript' as const), 0, SCRIPT);
    const files = Array.from({ length: 80 }, (_, i) => parser.parse(source(300, i), 'typescript', `src/steps-${i}.ts`));
    const outcomes = Promise.allSettled(files);
    await files[0];
    await parser.close();
    const settled = await outcomes;
    const refused = settled.filter((result) => result.status === 'rejected');
    const parsed = settled.filter((result) => result.status === 'fulfilled');
    expect(refused.length).toBeGreaterThan(0);
    for (const result of refused) expect(isRepodexError(result.reason) && result.reason.code === 'ABORTED').toBe(true);
    for (const result of parsed) expect(result.value.spans.length).toBeGreaterThan(0);
    // After closing, a file is parsed on the calling thread.
    expect((await parser.parse(source(2, 999), 'typescript', 'src/late.ts')).spans.length).toBeGreaterThan(0);
  }, 60_000);
});
