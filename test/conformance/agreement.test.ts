import { cpSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createEmbedder, openStore } from '../../src/compose.js';
import { Engine } from '../../src/engine/engine.js';
import { handle } from '../../src/protocol/index.js';
import type { StoreSpec } from '../../src/store/backend.js';
import { JUDGEMENTS } from '../golden/ranking/expected.js';
import { TOPICS, makeRepo, tempDir } from '../helpers.js';
import { testBackends } from './backends.js';

// One ranker, every backend: the same tree indexed in the embedded store and in a database store
// answers exactly alike — every search result (ids, lines, scores, reasons), the top five files of
// the golden ranking queries, fetched chunks, outlines, bundles, and the vector and hybrid modes.

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'ranking');
const QUERIES = JUDGEMENTS.map((judgement) => judgement.q);

/** A private copy of the golden corpus, indexed in the store `spec` names. */
async function engineOn(spec: StoreSpec, source = join(GOLDEN, 'corpus'), provider?: 'builtin'): Promise<{ engine: Engine; root: string }> {
  const root = tempDir('repodex-agree-');
  // Timestamps kept: `files` answers with them.
  cpSync(source, root, { recursive: true, preserveTimestamps: true, filter: (path) => !path.includes('.repodex') });
  const engine = new Engine(root, openStore(root, spec), { autoIndex: true, lockWaitMs: 0, embedders: createEmbedder });
  await engine.sync({ provider });
  return { engine, root };
}

/** The golden corpus plus 72 files about six topics: enough chunks for the builtin embedder to learn from. */
function semanticCorpus(): string {
  const root = tempDir('repodex-agree-source-');
  cpSync(join(GOLDEN, 'corpus'), root, { recursive: true, preserveTimestamps: true });
  const files: Record<string, string> = {};
  for (let f = 0; f < 72; f++) {
    const words = TOPICS[f % TOPICS.length]!;
    files[`topics/${words[0]}/mod${f}.ts`] = [0, 1, 2]
      .map((i) => {
        const [a, b, c, d] = [words[(i + f) % 6]!, words[(i + f + 1) % 6]!, words[(i + f + 2) % 6]!, words[(i + f + 3) % 6]!];
        return `/** Handles the ${a} and ${b} of a ${c}. */\nexport function ${a}${b[0]!.toUpperCase()}${b.slice(1)}${f}_${i}(${c}: number, ${d}: string): string {\n  return ${d}.repeat(${c}) + '${b}';\n}\n`;
      })
      .join('\n');
  }
  return makeRepo(files, root);
}

/** Everything a search answers except how fresh it was (which generation, how long). */
async function searched(engine: Engine, q: string, mode: 'bm25' | 'idf' | 'vector' | 'hybrid'): Promise<unknown> {
  const report = await handle(engine, { op: 'search', q, mode, top_k: 20 });
  return { mode: report.mode, terms: report.terms, matched: report.matched, results: report.results };
}

function topFiles(results: readonly { path: string }[]): string[] {
  const files: string[] = [];
  for (const hit of results) if (!files.includes(hit.path) && files.length < 5) files.push(hit.path);
  return files;
}

const databases = testBackends().filter((backend) => backend.name !== 'fs');

for (const backend of databases) {
  describe.skipIf(backend.missing !== undefined)(`the ${backend.name} store answers exactly as the embedded one`, () => {
    it('every golden ranking query, in bm25 and idf: the same results, ids, scores and reasons, and the same top five files', async () => {
      const fs = await engineOn({ kind: 'fs' });
      const db = await engineOn(backend.spec);
      for (const q of QUERIES) {
        for (const mode of ['bm25', 'idf'] as const) {
          const expected = await searched(fs.engine, q, mode);
          expect(await searched(db.engine, q, mode), `${mode}: ${q}`).toEqual(expected);
        }
        // The default search too, file by file: the whole top five, where the golden ranking test
        // (on the embedded store) judges only the first.
        const answered = async (engine: Engine): Promise<string[]> => topFiles((await handle(engine, { op: 'search', q, top_k: 20 })).results);
        expect(await answered(db.engine), q).toEqual(await answered(fs.engine));
      }
    });

    it('vector and hybrid search, fetch, outline, files and bundles agree, also after edits', async () => {
      const source = semanticCorpus();
      // Embeddings are off by default: this comparison turns the builtin embedder on for both.
      const fs = await engineOn({ kind: 'fs' }, source, 'builtin');
      const db = await engineOn(backend.spec, source, 'builtin');
      const compare = async (label: string): Promise<void> => {
        for (const q of [...QUERIES.slice(0, 6), 'resume a partial upload', 'evict stale cache entries']) {
          for (const mode of ['vector', 'hybrid'] as const) {
            const expected = (await searched(fs.engine, q, mode)) as { mode: string };
            expect(expected.mode, `${label}: the vectors answered ${q}`).toBe(mode);
            expect(await searched(db.engine, q, mode), `${label} ${mode}: ${q}`).toEqual(expected);
          }
        }
        const ids = (await handle(fs.engine, { op: 'search', q: QUERIES[0]!, top_k: 10 })).results.map((hit) => hit.chunk_id);
        const fetched = async (engine: Engine): Promise<unknown> => (await handle(engine, { op: 'fetch', ids })).chunks;
        expect(await fetched(db.engine), label).toEqual(await fetched(fs.engine));
        const files = async (engine: Engine): Promise<unknown> => (await handle(engine, { op: 'files', limit: 500 })).files;
        expect(await files(db.engine), label).toEqual(await files(fs.engine));
        const listed = (await handle(fs.engine, { op: 'files', limit: 500 })).files.filter((file) => file.state === 'indexed').slice(0, 6);
        for (const file of listed) {
          const outline = async (engine: Engine): Promise<unknown> => await handle(engine, { op: 'outline', path: file.path });
          expect(await outline(db.engine), `${label} outline ${file.path}`).toEqual(await outline(fs.engine));
        }
        const bundle = async (engine: Engine): Promise<unknown> => {
          const { bundle_id, excerpts } = await handle(engine, { op: 'bundle', prompt: `fix the retry handling in ${QUERIES[1]}` });
          return { bundle_id, excerpts };
        };
        expect(await bundle(db.engine), `${label} bundle`).toEqual(await bundle(fs.engine));
      };
      await compare('first sync');
      // The same edits on both copies, then incremental syncs on both.
      const listed = (await handle(fs.engine, { op: 'files', limit: 500 })).files.filter((file) => file.state === 'indexed');
      for (const root of [fs.root, db.root]) {
        rmSync(join(root, listed[0]!.path));
        writeFileSync(join(root, listed[1]!.path), `${readFileSync(join(root, listed[1]!.path), 'utf8')}\nexport function replayDeadLetters(queue: string[]): number {\n  return queue.length;\n}\n`);
        writeFileSync(join(root, 'src-added.ts'), 'export const addedAfterwards = "retry backoff jitter";\n');
      }
      // The same timestamps on both copies: \`files\` answers with them.
      for (const path of [listed[1]!.path, 'src-added.ts']) {
        const stamp = new Date(Date.parse('2026-01-02T03:04:05Z'));
        for (const root of [fs.root, db.root]) utimesSync(join(root, path), stamp, stamp);
      }
      expect((await fs.engine.sync()).mode).toBe('incremental');
      expect((await db.engine.sync()).mode).toBe('incremental');
      await compare('after edits');
    });
  });
}
