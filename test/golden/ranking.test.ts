import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/compose.js';
import type { Engine, SearchReport } from '../../src/engine/engine.js';
import { handle } from '../../src/protocol/index.js';
import { SearchRequest } from '../../src/protocol/schemas.js';
import { tempDir } from '../helpers.js';

// Golden ranking: a small vendored corpus (test/golden/ranking/corpus, written for this test) and
// 30 queries with the top-5 files the default ranking gives them. A ranking change shows up as a
// diff of expected.json in review: accept it, after reading it, with
//   UPDATE_GOLDEN=1 npx vitest run test/golden/ranking.test.ts

const HERE = join(dirname(fileURLToPath(import.meta.url)), 'ranking');
const EXPECTED = join(HERE, 'expected.json');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const queries = JSON.parse(readFileSync(join(HERE, 'queries.json'), 'utf8')) as string[];

async function topFiles(engine: Engine, q: string): Promise<string[]> {
  const report = (await handle(engine, SearchRequest.parse({ op: 'search', q, top_k: 20 }))) as SearchReport;
  const files: string[] = [];
  for (const hit of report.results) if (!files.includes(hit.path) && files.length < 5) files.push(hit.path);
  return files;
}

describe('golden ranking', () => {
  let engine: Engine;
  beforeAll(() => {
    const root = tempDir('repodex-golden-ranking-');
    cpSync(join(HERE, 'corpus'), root, { recursive: true });
    engine = createEngine({ root });
  });

  // Skipped (visibly) while expected.json is being rewritten by the test below.
  it.skipIf(UPDATE)('has 30 distinct queries over the vendored corpus, each with top files that exist there, and expected.json holds exactly them', () => {
    expect(new Set(queries).size).toBe(30);
    const expected = JSON.parse(readFileSync(EXPECTED, 'utf8')) as Record<string, string[]>;
    expect(Object.keys(expected).sort()).toEqual([...queries].sort());
    for (const [q, files] of Object.entries(expected)) {
      expect(files.length, q).toBeGreaterThan(0);
      for (const file of files) expect(existsSync(join(HERE, 'corpus', file)), `${q}: ${file}`).toBe(true);
    }
  });

  it('gives every query the top-5 files in expected.json', async () => {
    const actual: Record<string, string[]> = {};
    for (const q of queries) actual[q] = await topFiles(engine, q);
    if (UPDATE) {
      writeFileSync(EXPECTED, `${JSON.stringify(actual, null, 2)}\n`);
      return;
    }
    if (!existsSync(EXPECTED)) throw new Error(`missing ${EXPECTED}: run UPDATE_GOLDEN=1 npx vitest run test/golden/ranking.test.ts and review it`);
    expect(actual).toEqual(JSON.parse(readFileSync(EXPECTED, 'utf8')));
  });
});
