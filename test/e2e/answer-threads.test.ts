import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/compose.js';
import { Engine } from '../../src/engine/engine.js';
import { type WorkerPool, workerPool } from '../../src/engine/worker-runner.js';
import { PROJECT_ROOT, ROUTER_SOURCE, makeRepo } from '../helpers.js';

// A team server answers searches, fetches and outlines on answer threads once its own thread has
// checked freshness. The answers must be exactly the ones the engine gives in one thread, follow
// the index to each new generation, and refuse what it refuses.

/** The built worker (test/built.ts has checked dist/ is the build of these sources). */
const WORKER = join(PROJECT_ROOT, 'dist', 'sync-worker.js');

const FILES: Record<string, string> = {
  'src/router.ts': ROUTER_SOURCE,
  'src/server.ts': 'import { Router } from "./router";\nexport function serve(router: Router, path: string): string {\n  const handler = router.match(path);\n  return handler ? handler() : "not found";\n}\n',
  'docs/guide.md': '# Guide\n\nThe router matches a path to its handler; serve answers "not found" otherwise.\n',
  '.env': 'SESSION_SECRET=never-served-by-any-thread\n',
};

const QUERIES = ['router match path', 'handler', 'not found', 'register a handler for a path', 'serve'];

describe('answer threads', () => {
  let root: string;
  let pool: WorkerPool;
  let here: Engine;
  let threaded: Engine;

  beforeAll(async () => {
    root = makeRepo(FILES);
    pool = workerPool({ answers: 2, script: new URL(`file://${WORKER}`) });
    const spec = { kind: 'fs' } as const;
    here = new Engine(root, openStore(root, spec), { autoIndex: true });
    const answerer = pool.answerer(root, spec, {});
    expect(answerer).toBeDefined();
    threaded = new Engine(root, openStore(root, spec), { autoIndex: true, answerer: answerer! });
    await here.sync();
  });

  afterAll(async () => {
    await pool.close();
  });

  it('searches, fetches and outlines answer exactly as in one thread', async () => {
    for (const q of QUERIES) {
      for (const mode of ['bm25', 'idf'] as const) {
        const [a, b] = [await here.search({ q, mode, top_k: 5 }), await threaded.search({ q, mode, top_k: 5 })];
        expect(b, `${mode} ${q}`).toEqual(a);
      }
    }
    const ids = (await here.search({ q: 'router handler path', top_k: 5 })).results.map((hit) => hit.chunk_id);
    expect(ids.length).toBeGreaterThan(1);
    expect(await threaded.fetch([...ids, 999_999_999], 40)).toEqual(await here.fetch([...ids, 999_999_999], 40));
    for (const path of ['src/router.ts', 'src/server.ts', 'docs/guide.md', 'src/missing.ts', '.env', '../outside.ts']) {
      expect(await threaded.outline(path), path).toEqual(await here.outline(path));
    }
    // A glob that matches nothing is said the same way.
    const glob = await threaded.search({ q: 'router', glob: 'lib/**/*.py' });
    expect(glob.results).toEqual([]);
    expect(glob.warnings.join(' ')).toContain('no indexed file matches');
    // No thread serves the credential file.
    expect(JSON.stringify(await threaded.search({ q: 'SESSION_SECRET never served' }))).not.toContain('never-served-by-any-thread');
  });

  it('many reads at once each get their own answer (the threads take them all and work through them)', async () => {
    const asked = Array.from({ length: 60 }, (_, i) => ({ q: QUERIES[i % QUERIES.length]!, top_k: 1 + (i % 7) }));
    const expected = await Promise.all(asked.map((options) => here.search(options)));
    const answered = await Promise.all(asked.map((options) => threaded.search(options)));
    expect(answered).toEqual(expected);
  });

  it('answer from each new generation as soon as it is committed', async () => {
    const before = await threaded.search({ q: 'dispatcher' });
    expect(before.results).toEqual([]);
    writeFileSync(join(root, 'src/dispatch.ts'), 'export function dispatcher(path: string): string {\n  return `dispatched ${path}`;\n}\n');
    await here.sync();
    const after = await threaded.search({ q: 'dispatcher' });
    expect(after.generation).toBeGreaterThan(before.generation);
    expect(after.results.map((hit) => hit.path)).toContain('src/dispatch.ts');
    expect(after).toEqual(await here.search({ q: 'dispatcher' }));
    const [hit] = after.results;
    const fetched = await threaded.fetch([hit!.chunk_id]);
    expect(fetched.generation).toBe(after.generation);
    expect(JSON.stringify(fetched.chunks)).toContain('dispatched');
  });

  it('outline a large file the index has none for on a thread of their own, answering other reads meanwhile', async () => {
    // Over the size a sync parses (MAX_PARSE_CHARS): the index keeps no outline, so each outline parses it.
    const functions = Array.from({ length: 7000 }, (_, i) => `export function handler${i}(path: string): string {\n  return path + '${i}';\n}\n`);
    writeFileSync(join(root, 'src/generated.ts'), functions.join(''));
    await here.sync();
    // One answer thread: with two, the searches would simply go to the other one.
    const single = workerPool({ answers: 1, script: new URL(`file://${WORKER}`) });
    const spec = { kind: 'fs' } as const;
    const threaded = new Engine(root, openStore(root, spec), { autoIndex: true, answerer: single.answerer(root, spec, {})! });
    const big = threaded.outline('src/generated.ts');
    let outlineDone = false;
    void big.then(() => (outlineDone = true));
    // Searches asked one after another until the outline answers: they are answered while the other
    // thread parses (here, 5 got in before the parse began when it ran on the answer thread; 462 with it elsewhere).
    let answered = 0;
    while (!outlineDone) {
      const search = await threaded.search({ q: 'router match', top_k: 3 });
      expect(search.results.length).toBeGreaterThan(0);
      answered++;
    }
    expect(answered).toBeGreaterThanOrEqual(50);
    const outlined = await big;
    expect(outlined).toEqual(await here.outline('src/generated.ts'));
    expect(outlined).toMatchObject({ source: 'parse', parsed: true });
    expect('symbols' in outlined && outlined.symbols.length).toBe(7000);
    // Asked again, the same answer (kept by content).
    expect(await threaded.outline('src/generated.ts')).toEqual(outlined);
    await single.close();
  });
});
