import { cpSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createStore } from '../../src/compose.js';
import { detectChanges } from '../../src/engine/changes.js';
import { loadContext } from '../../src/engine/context.js';
import { Engine } from '../../src/engine/engine.js';
import { RepoScope } from '../../src/scan/scope.js';
import { makeRepo, runCli, tempDir } from '../helpers.js';

/**
 * A repository whose files holding the rare word sort last by path, so that a first sync reading
 * in path order would reach them last: `fillers` small files without it, then `zz/late-N.ts`.
 */
function lateWordRepo(fillers: number, fillerBytes = 200): string {
  const files: Record<string, string> = {};
  const line = 'export function handleRequest(input: string): string { return input.trim(); }\n';
  for (let f = 0; f < fillers; f++) files[`src/mod${String(f).padStart(4, '0')}.ts`] = `// module ${f}\n${line.repeat(Math.max(1, Math.round(fillerBytes / line.length)))}`;
  for (let f = 0; f < 3; f++) files[`zz/late-${f}.ts`] = `/** Where the zephyr quokka is kept. */\nexport function zephyrQuokka${f}(count: number): number {\n  return count * ${f + 2};\n}\n`;
  return makeRepo(files);
}

interface SearchJson {
  results: { path: string; score: number }[];
  warnings: string[];
  freshness: { dirty: boolean; partial?: { files: number; of: number } };
}

describe('first answer from a partial index (a first search on a large repository)', () => {
  it('indexes the files holding the query words first, answers from them marked partial, and the next sync adds the rest', async () => {
    const root = lateWordRepo(60);
    const complete = tempDir();
    cpSync(root, complete, { recursive: true });
    let continued = 0;
    // A budget of 0 stops after the first file read: the test of the order and the marking, whatever the machine's speed.
    const engine = new Engine(root, createStore(root), { autoIndex: true, firstAnswer: { budgetMs: 0, minBytes: 0, continueInBackground: () => continued++ } });

    const first = await engine.search({ q: 'zephyrQuokka' });
    expect(first.results.map((hit) => hit.path)).toEqual(['zz/late-0.ts']);
    expect(first.freshness).toMatchObject({ dirty: true, partial: { files: 1, of: 63 } });
    expect(first.warnings[0]).toMatch(/^partial index: 1 of 63 files indexed so far .*`repodex status`/);
    expect(first.synced).toMatchObject({ files_scanned: 1, partial: { files: 1, of: 63 } });
    expect(continued).toBe(1);

    // A reader that ignores the mark (an older repodex, which compares folder times) still finds what was not read.
    const ctx = loadContext(root);
    const view = await createStore(root).open();
    const unaware = detectChanges(new RepoScope(root, ctx.loaded.config, ctx.denylist), view.catalog(), 'stat', view.meta.git?.commit, false).changes;
    // (it reads every file again, the one already indexed included: nothing is trusted)
    expect(new Set(unaware.changed.map((file) => file.path)).size).toBe(63);

    const status = await engine.status();
    expect(status.state).toBe('stale');
    expect(status.reasons.join('\n')).toMatch(/partial index: 1 of 63 files/);
    expect(status.changes?.added).toBe(62);

    // The rest: an explicit sync walks the tree and adds what the first answer did not read.
    const rest = await engine.sync();
    expect(rest).toMatchObject({ mode: 'incremental', found_by: 'walk', files_scanned: 62, files_added: 62 });
    expect(rest.partial).toBeUndefined();
    const after = await engine.search({ q: 'zephyrQuokka' });
    expect(after.freshness.partial).toBeUndefined();
    expect(after.warnings).toEqual([]);
    expect((await engine.status()).state).toBe('ready');

    // The completed index answers exactly as one built in one go.
    const whole = await new Engine(complete, createStore(complete), { autoIndex: true }).search({ q: 'zephyrQuokka handleRequest' });
    const finished = await engine.search({ q: 'zephyrQuokka handleRequest' });
    expect(finished.results.map((hit) => [hit.path, hit.start_line, hit.score])).toEqual(whole.results.map((hit) => [hit.path, hit.start_line, hit.score]));
    expect(continued).toBe(1);
  });

  it('reads first the short source file holding the words, before a long changelog or a test holding as many or more', async () => {
    const files: Record<string, string> = {};
    for (let f = 0; f < 60; f++) files[`src/mod${String(f).padStart(2, '0')}.ts`] = `export function handleRequest${f}(input: string): string {\n  return input.trim();\n}\n`;
    files['CHANGELOG.md'] = '- fixed the zephyr quokka keeper crash\n'.repeat(1000);
    files['test/zephyr.test.ts'] = "it('zephyr quokka', () => {});\n";
    files['src/zoo/zephyr.ts'] = 'export function zephyrQuokka(): number {\n  return 1;\n}\n';
    const root = makeRepo(files);
    // A budget of 0 reads one file: the one the order puts first.
    const engine = new Engine(root, createStore(root), { autoIndex: true, firstAnswer: { budgetMs: 0, minBytes: 0, continueInBackground: () => undefined } });
    const first = await engine.search({ q: 'zephyr quokka keeper crash' });
    expect(first.results.map((hit) => hit.path)).toEqual(['src/zoo/zephyr.ts']);
    expect(first.freshness.partial).toEqual({ files: 1, of: 63 });
  });

  it('answers from the whole index when it is built within the budget, or when the repository is small', async () => {
    const root = lateWordRepo(20);
    let continued = 0;
    const engine = new Engine(root, createStore(root), { autoIndex: true, firstAnswer: { budgetMs: 60_000, minBytes: 0, continueInBackground: () => continued++ } });
    const report = await engine.search({ q: 'zephyrQuokka' });
    expect(report.freshness.partial).toBeUndefined();
    expect(report.results).toHaveLength(3);
    const small = lateWordRepo(20);
    const tiny = await new Engine(small, createStore(small), { autoIndex: true, firstAnswer: { budgetMs: 0, minBytes: 1_000_000, continueInBackground: () => continued++ } }).search({ q: 'zephyrQuokka' });
    expect(tiny.freshness.partial).toBeUndefined();
    expect(tiny.results).toHaveLength(3);
    expect(continued).toBe(0);
  });

  it('a search that finds the first build under way waits for it and answers from it, in this engine or another', async () => {
    const root = lateWordRepo(400);
    const builder = new Engine(root, createStore(root), { autoIndex: true });
    const searches: Promise<Awaited<ReturnType<Engine['search']>>>[] = [];
    // Both searches start from the build's first progress event, while it holds the index lock.
    // Another engine on the same folder stands for another process: it sees only the lock.
    const built = await builder.sync({}, () => {
      if (searches.length > 0) return;
      searches.push(builder.search({ q: 'zephyrQuokka' }), new Engine(root, createStore(root), { autoIndex: true }).search({ q: 'zephyrQuokka' }));
    });
    expect(searches).toHaveLength(2);
    for (const report of await Promise.all(searches)) {
      expect(report.results.map((hit) => hit.path)).toEqual(['zz/late-0.ts', 'zz/late-1.ts', 'zz/late-2.ts']);
      expect(report.freshness).toMatchObject({ dirty: false, generation: built.generation });
      expect(report.warnings).toEqual([]);
    }
  });

  it('CLI: a first search answers from a partial index and a background sync finishes it', async () => {
    // Over 4 MB of files (what a first answer waits for), answering after 1 ms of indexing.
    const root = lateWordRepo(160, 26_000);
    const env = { ...process.env, REPODEX_FIRST_ANSWER_MS: '1' };
    const first = runCli(['search', 'zephyrQuokka', '--json', '--root', root], { env });
    expect(first.code, first.stderr).toBe(0);
    const answer = first.json<SearchJson>();
    expect(answer.results[0]!.path).toMatch(/^zz\/late-\d\.ts$/);
    expect(answer.freshness.partial!.files).toBeLessThan(answer.freshness.partial!.of);
    expect(answer.warnings[0]).toMatch(/^partial index: \d+ of 163 files/);
    // The detached sync it started finishes the index; status says so.
    let state = '';
    for (let i = 0; i < 600 && state !== 'ready'; i++) {
      state = runCli(['status', '--json', '--root', root]).json<{ state: string }>().state;
      if (state !== 'ready') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(state).toBe('ready');
    const second = runCli(['search', 'zephyrQuokka', '--json', '--root', root], { env }).json<SearchJson>();
    expect(second.freshness.partial).toBeUndefined();
    expect(second.warnings).toEqual([]);
    expect(second.results.map((hit) => hit.path).sort()).toEqual(['zz/late-0.ts', 'zz/late-1.ts', 'zz/late-2.ts']);
    // Turned off, a first search waits for the whole index.
    const off = lateWordRepo(160, 26_000);
    const whole = runCli(['search', 'zephyrQuokka', '--json', '--root', off], { env: { ...process.env, REPODEX_FIRST_ANSWER_MS: '0' } }).json<SearchJson>();
    expect(whole.freshness.partial).toBeUndefined();
    expect(whole.results).toHaveLength(3);
  }, 120_000);
});
