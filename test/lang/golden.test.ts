import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChunkParams } from '../../src/chunk/chunker.js';
import { chunkWithTreeSitter } from '../../src/chunk/tree-sitter-chunker.js';
import { analyze, loadLanguages } from '../../src/lang/index.js';
import { adapterLanguages } from '../../src/lang/registry.js';
import { languageOf } from '../../src/scan/language.js';
import { normalizeNewlines, splitLines } from '../../src/text/normalize.js';

// Golden outlines and chunks, one realistic fixture per adapter language (test/golden/fixtures/<language>/).
// A mismatch fails with a diff; after reviewing it, accept the new output with
//   UPDATE_GOLDEN=1 npx vitest run test/lang/golden.test.ts
// and review the rewritten *.outline.json / *.chunks.json in the commit diff.

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'fixtures');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
/** Smaller than the defaults so that the ~100-line fixtures exercise splitting and merging. */
const PARAMS: ChunkParams = { target_lines: 30, max_lines: 60, overlap_lines: 5 };

interface Fixture {
  readonly dir: string;
  readonly file: string;
  readonly path: string;
}

function fixtures(): Fixture[] {
  return readdirSync(FIXTURES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .flatMap((dir) =>
      readdirSync(join(FIXTURES, dir))
        .filter((file) => !file.endsWith('.json'))
        .sort()
        .map((file) => ({ dir, file, path: join(FIXTURES, dir, file) })),
    );
}

function goldenPath(fixture: Fixture, kind: 'outline' | 'chunks'): string {
  const stem = fixture.file.slice(0, fixture.file.lastIndexOf('.'));
  return join(FIXTURES, fixture.dir, `${stem}.${kind}.json`);
}

/** Compare with the golden file, or rewrite it under UPDATE_GOLDEN=1. */
function checkGolden(path: string, actual: string): void {
  if (UPDATE) {
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) throw new Error(`missing golden file ${path}: run UPDATE_GOLDEN=1 npx vitest run test/lang/golden.test.ts and review it`);
  expect(actual, `${path} differs (UPDATE_GOLDEN=1 rewrites it)`).toBe(readFileSync(path, 'utf8'));
}

beforeAll(async () => {
  await loadLanguages();
});

describe('golden fixtures', () => {
  const all = fixtures();

  it('has a fixture for every adapter language, in a folder named after it', () => {
    expect([...new Set(all.map((fixture) => fixture.dir))]).toEqual([...adapterLanguages()].sort());
    for (const fixture of all) expect(languageOf(fixture.file)).toBe(fixture.dir);
  });

  for (const fixture of all) {
    describe(`${fixture.dir}/${fixture.file}`, () => {
      const text = normalizeNewlines(readFileSync(fixture.path, 'utf8'));
      const lines = splitLines(text);

      it('is a realistic size and parses cleanly', () => {
        expect(lines.length).toBeGreaterThanOrEqual(80);
        expect(lines.length).toBeLessThanOrEqual(200);
        expect(analyze(languageOf(fixture.file), text).ok).toBe(true);
      });

      it('matches the golden outline', () => {
        const { symbols } = analyze(languageOf(fixture.file), text);
        checkGolden(goldenPath(fixture, 'outline'), `${JSON.stringify(symbols, null, 2)}\n`);
      });

      it('matches the golden chunks', () => {
        const result = chunkWithTreeSitter(lines, languageOf(fixture.file), PARAMS);
        const chunks = result.spans.map((span) => ({
          start_line: span.startLine,
          end_line: span.endLine,
          lines: span.endLine - span.startLine + 1,
          first: lines[span.startLine - 1]!.trim(),
        }));
        checkGolden(goldenPath(fixture, 'chunks'), `${JSON.stringify({ params: PARAMS, fallback: result.fallback, chunks }, null, 2)}\n`);
      });
    });
  }
});
