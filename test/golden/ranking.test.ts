import { cpSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/compose.js';
import type { Engine, SearchReport } from '../../src/engine/engine.js';
import { handle } from '../../src/protocol/index.js';
import { SearchRequest } from '../../src/protocol/schemas.js';
import { tempDir } from '../helpers.js';
import { JUDGEMENTS } from './ranking/expected.js';

// Golden ranking: a small vendored corpus (test/golden/ranking/corpus, written for this test) and
// 30 queries, each with the file a right answer starts with (ranking/expected.ts, judged by
// reading the corpus). The rest of each answer is not pinned here: a better ranking must pass.
// A ranking change that fails a query is either a regression or a judgement to revisit in
// expected.ts, with the reason beside it.

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), 'ranking', 'corpus');

/** The first five distinct files of the default search's answer to `q`. */
async function topFiles(engine: Engine, q: string): Promise<string[]> {
  const report = (await handle(engine, SearchRequest.parse({ op: 'search', q, top_k: 20 }))) as SearchReport;
  const files: string[] = [];
  for (const hit of report.results) if (!files.includes(hit.path) && files.length < 5) files.push(hit.path);
  return files;
}

/** A query's first line, short enough for a test's name. */
function title(q: string): string {
  const line = q.split('\n')[0]!;
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

describe('golden ranking', () => {
  let engine: Engine;
  beforeAll(() => {
    const root = tempDir('repodex-golden-ranking-');
    cpSync(CORPUS, root, { recursive: true });
    engine = createEngine({ root });
  });

  it('judges 30 distinct queries, naming only files of the corpus', () => {
    expect(new Set(JUDGEMENTS.map((judgement) => judgement.q)).size).toBe(30);
    for (const { q, top, also = [] } of JUDGEMENTS) {
      expect(top.length, q).toBeGreaterThan(0);
      for (const file of [...top, ...also]) expect(existsSync(join(CORPUS, file)), `${q}: ${file}`).toBe(true);
    }
  });

  it.each(JUDGEMENTS.map((judgement) => [title(judgement.q), judgement] as const))('"%s" starts with the file it is about', async (_title, { q, top, also = [] }) => {
    const files = await topFiles(engine, q);
    expect(top, `first file for ${JSON.stringify(q)} (top five: ${files.join(', ')})`).toContain(files[0]);
    for (const file of also) expect(files, `${file} among the first five for ${JSON.stringify(q)}`).toContain(file);
  });
});
