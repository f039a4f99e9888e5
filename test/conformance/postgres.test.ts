import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbedder, openStore } from '../../src/compose.js';
import { Engine } from '../../src/engine/engine.js';
import { call } from '../../src/protocol/call.js';
import { pgPool } from '../../src/pg-driver.js';
import { localParseCache } from '../../src/store/fs/parse-cache.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import type { SqlPool } from '../../src/store/pg/sql.js';
import { TOPICS, committedRepo, git, runCli, runCliAsync } from '../helpers.js';
import { testBackends } from './backends.js';

// Seed 001's exit criteria and the database store's own promises, checked with SQL against a real
// server: what a team running repodex on PostgreSQL (or Citus) relies on.

/** A git repository with one commit. */
function module(name: string, lines = 6): string {
  return `export function ${name}(input: number): number {\n${Array.from({ length: lines }, (_, i) => `  input += ${i}; // ${name} step ${i}`).join('\n')}\n  return input;\n}\n`;
}

for (const backend of testBackends().filter((b) => b.name !== 'fs')) {
  describe.skipIf(backend.missing !== undefined)(`seed 001 on ${backend.name}`, () => {
    const url = backend.spec.kind === 'postgres' ? backend.spec.url : '';
    const pools: SqlPool[] = [];
    const sql = (): SqlPool => {
      const pool = pgPool(url, 'the test database');
      pools.push(pool);
      return pool;
    };
    afterAll(async () => {
      await Promise.all(pools.map((pool) => pool.end()));
    });
    const engineFor = (root: string): Engine => new Engine(root, openStore(root, backend.spec), { autoIndex: true, lockWaitMs: 2_000, embedders: createEmbedder });
    const repoId = async (db: SqlPool, root: string): Promise<string> => (await db.query<{ id: string }>('SELECT id FROM repos WHERE root = $1', [root]))[0]!.id;

    it('the first search indexes the repository (pending → ready), and an unchanged second sync creates nothing and returns at once', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const db = sql();
      const engine = engineFor(root);
      const first = await engine.search({ q: 'alphaStep' });
      expect(first.synced?.mode).toBe('full');
      expect(first.results[0]?.path).toBe('src/a.ts');
      const id = await repoId(db, root);
      const [repo] = await db.query<{ index_status: string; last_indexed_commit: string; generation: string }>('SELECT index_status, last_indexed_commit, generation FROM repos WHERE id = $1', [id]);
      expect(repo).toMatchObject({ index_status: 'ready', last_indexed_commit: git(root, 'rev-parse', 'HEAD'), generation: '1' });
      const again = await engine.sync();
      expect(again).toMatchObject({ mode: 'none', chunks_created: 0, files_scanned: 0 });
      expect((await db.query<{ generation: string }>('SELECT generation FROM repos WHERE id = $1', [id]))[0]!.generation).toBe('1');
    });

    it('an answer thread whose kept view was replaced meanwhile answers again from the current generation', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const writer = engineFor(root);
      await writer.sync();
      // What an answer thread runs: told which generation the server proved, it answers from its kept view of it.
      const reader = new Engine(root, openStore(root, backend.spec), { autoIndex: false });
      const first = await reader.answer({ op: 'search', options: { q: 'alphaStep', mode: 'bm25' }, generation: 1, treeMatches: true });
      expect(first.generation).toBe(1);
      writeFileSync(join(root, 'src/c.ts'), module('gammaStep'));
      await writer.sync();
      // Still told generation 1: the kept view's first statement finds it replaced, and the answer is made again from generation 2.
      const second = await reader.answer({ op: 'search', options: { q: 'betaStep', mode: 'bm25' }, generation: 1, treeMatches: true });
      expect(second.generation).toBe(2);
      const paths = second.data.results.map((hit) => hit.path);
      expect(paths[0]).toBe('src/b.ts');
      expect(paths).toContain('src/c.ts'); // a file only generation 2 holds
    });

    it("a server's request thread checks freshness from the catalog alone: only its answer thread reads a generation's chunks, and the files once", async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const writer = engineFor(root);
      await writer.sync();
      /** A store whose statements (on the pool and on sessions of its own) are written to `seen`. */
      const watched = (seen: string[]): PgStore => {
        const db = sql();
        const pool: SqlPool = {
          ...db,
          query: (text, params) => (seen.push(text), db.query(text, params)),
          connect: async () => {
            const session = await db.connect();
            return { ...session, query: (text, params) => (seen.push(text), session.query(text, params)) };
          },
        };
        return new PgStore(pool, root, 'the test database', localParseCache(join(root, '.repodex')), () => false);
      };
      const checking: string[] = [];
      const answering: string[] = [];
      const answerThread = new Engine(root, watched(answering), { autoIndex: false });
      // Syncs off (a server's run on a thread of their own, and read what they need there): the check alone is watched.
      const server = new Engine(root, watched(checking), { autoIndex: false, answerer: { answer: (job) => answerThread.answer(job) } });
      /** The statements that read a generation's file rows, or its chunk rows, as views do. */
      const rowReads = { files: /^SELECT path, state, language\b/, chunks: /^SELECT chunk_id, path, chunk_index\b/ };
      const readsOf = (seen: string[], table: keyof typeof rowReads): number => seen.filter((text) => rowReads[table].test(text)).length;
      for (const round of [1, 2]) {
        // The listing first: answered from the catalog, it asks whether the generation is current (see GenerationProof).
        const listed = await server.files(undefined, 10);
        expect([listed.generation, listed.files.map((entry) => entry.path)]).toEqual(round === 1 ? [1, ['src/a.ts', 'src/b.ts']] : [2, ['src/a.ts', 'src/b.ts', 'src/c.ts']]);
        const found = await server.search({ q: 'alphaStep' });
        expect(found.generation).toBe(round);
        expect(found.results[0]?.path).toBe('src/a.ts');
        const fetched = await server.fetch([found.results[0]!.chunk_id]);
        expect(fetched.chunks[0]?.path).toBe('src/a.ts');
        // Status too: the page's status panel asks for it often.
        expect((await server.status()).generation).toBe(round);
        expect(readsOf(checking, 'chunks')).toBe(0);
        expect(readsOf(checking, 'files')).toBe(round);
        expect(readsOf(answering, 'chunks')).toBe(round);
        expect(readsOf(answering, 'files')).toBe(round);
        if (round === 2) break;
        // Another process commits a newer generation: each side reads it once.
        writeFileSync(join(root, 'src/c.ts'), module('gammaStep'));
        await writer.sync();
      }
    });

    it('a commit re-chunks only its files: the others keep their rows, and the changed ones are seen at the new HEAD', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep'), 'src/c.ts': module('gammaStep') });
      const db = sql();
      const engine = engineFor(root);
      await engine.sync();
      const id = await repoId(db, root);
      const rows = async (): Promise<Map<string, { id: string; created_at: string; last_seen_commit: string }>> =>
        new Map(
          (await db.query<{ path: string; chunk_index: number; id: string; created_at: string; last_seen_commit: string }>('SELECT path, chunk_index, id, created_at::text AS created_at, last_seen_commit FROM chunks WHERE repo_id = $1', [id])).map((row) => [
            `${row.path}#${row.chunk_index}`,
            row,
          ]),
        );
      const before = await rows();
      const firstHead = git(root, 'rev-parse', 'HEAD');
      writeFileSync(join(root, 'src/b.ts'), module('betaStepRenamed'));
      git(root, 'commit', '-qam', 'change b');
      const head = git(root, 'rev-parse', 'HEAD');
      const summary = await engine.sync();
      expect(summary).toMatchObject({ mode: 'incremental', files_scanned: 1 });
      const after = await rows();
      for (const key of ['src/a.ts#0', 'src/c.ts#0']) expect(after.get(key), key).toEqual(before.get(key));
      expect(after.get('src/a.ts#0')!.last_seen_commit).toBe(firstHead);
      expect(after.get('src/b.ts#0')!.last_seen_commit).toBe(head);
      expect(after.get('src/b.ts#0')!.id).not.toBe(before.get('src/b.ts#0')!.id);
      expect((await db.query<{ c: string }>('SELECT last_indexed_commit AS c FROM repos WHERE id = $1', [id]))[0]!.c).toBe(head);
      // A full rebuild writes every row again, each seen at HEAD.
      await engine.sync({ force: true });
      expect(new Set([...(await rows()).values()].map((row) => row.last_seen_commit))).toEqual(new Set([head]));
    });

    it('a deleted file’s chunks, postings and row vanish with the next sync', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/gone.ts': module('goneStep') });
      const db = sql();
      const engine = engineFor(root);
      await engine.sync();
      const id = await repoId(db, root);
      git(root, 'rm', '-q', 'src/gone.ts');
      git(root, 'commit', '-qm', 'remove');
      await engine.search({ q: 'alphaStep' });
      const [counts] = await db.query<{ chunks: string; files: string }>(
        `SELECT (SELECT count(*) FROM chunks WHERE repo_id = $1 AND path = 'src/gone.ts') AS chunks,
                (SELECT count(*) FROM files WHERE repo_id = $1 AND path = 'src/gone.ts') AS files`,
        [id],
      );
      expect(counts).toEqual({ chunks: '0', files: '0' });
      expect((await engine.search({ q: 'goneStep' })).results.map((hit) => hit.path)).not.toContain('src/gone.ts');
    });

    it('ten syncs of one repository at once, as ten processes, never duplicate a chunk', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 30; i++) files[`src/m${i}.ts`] = module(`step${i}`, 4 + (i % 7));
      const root = committedRepo(files);
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 30; i += 3) writeFileSync(join(root, `src/m${i}.ts`), module(`round${round}step${i}`, 5));
        const runs = await Promise.all(Array.from({ length: 10 }, () => runCliAsync(['sync', '--json', '--embeddings', 'off'], { cwd: root, env: { REPODEX_STORE: url } })));
        for (const run of runs) expect(run.code === 0 || /another sync is running/.test(run.stderr), run.stderr).toBe(true);
        expect(runs.some((run) => run.code === 0)).toBe(true);
      }
      const db = sql();
      const id = await repoId(db, root);
      const duplicates = await db.query(
        `SELECT path, chunk_index, count(*) FROM chunks WHERE repo_id = $1 GROUP BY path, chunk_index HAVING count(*) > 1
         UNION ALL SELECT 'id', chunk_id::int, count(*) FROM chunks WHERE repo_id = $1 GROUP BY chunk_id HAVING count(*) > 1`,
        [id],
      );
      expect(duplicates).toEqual([]);
      const [posted] = await db.query<{ n: string }>('SELECT count(*) AS n FROM (SELECT term, segment FROM segment_postings WHERE repo_id = $1 GROUP BY term, segment HAVING count(*) > 1) d', [id]);
      expect(posted!.n).toBe('0');
      expect(runCli(['verify', '--store', url], { cwd: root }).code).toBe(0);
      expect(runCli(['search', 'round1step3', '--json', '--store', url], { cwd: root }).json<{ results: { path: string }[] }>().results[0]?.path).toBe('src/m3.ts');
    });

    it('readers never wait for a writer, and a sync of one repository never blocks searches of another', async () => {
      const a = committedRepo({ 'src/a.ts': module('alphaStep') });
      const b = committedRepo({ 'src/b.ts': module('betaStep') });
      const engineA = engineFor(a);
      const engineB = engineFor(b);
      await engineA.sync();
      await engineB.sync();
      // A writer on repository a, mid-transaction: it has replaced a's rows but not committed.
      const store = openStore(a, backend.spec);
      const writer = await store.beginGeneration(undefined);
      try {
        const readA = await engineFor(a).search({ q: 'alphaStep' });
        const readB = await engineB.search({ q: 'betaStep' });
        expect(readA.results[0]?.path).toBe('src/a.ts');
        expect(readB.results[0]?.path).toBe('src/b.ts');
        // Both answered with the writer still open (a still says `indexing` until it ends): a read
        // that waited for the writer's transaction would never have returned.
        const [during] = await sql().query<{ index_status: string }>('SELECT index_status FROM repos WHERE root = $1', [a]);
        expect(during!.index_status).toBe('indexing');
      } finally {
        await writer.abort();
      }
      const db = sql();
      const [status] = await db.query<{ index_status: string }>('SELECT index_status FROM repos WHERE root = $1', [a]);
      expect(status!.index_status).toBe('ready');
    });

    it("a long-running reader answers from another process's new generation on its next request, also from what it keeps in memory", async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const writer = engineFor(root);
      await writer.sync();
      // The reader has read everything these requests need (postings, declarations, chunk records) and keeps it.
      const reader = new Engine(root, openStore(root, backend.spec), { autoIndex: false, embedders: createEmbedder });
      const first = await reader.search({ q: 'alphaStep' });
      expect((await reader.search({ q: 'alphaStep' })).results).toEqual(first.results);
      const old = first.results.find((hit) => hit.path === 'src/a.ts')!.chunk_id;
      expect((await reader.fetch([old])).chunks[0]).toMatchObject({ chunk_id: old, path: 'src/a.ts' });
      writeFileSync(join(root, 'src/a.ts'), module('gammaStep'));
      const synced = await writer.sync();
      const fetched = await reader.fetch([old]);
      expect(fetched.generation).toBe(synced.generation);
      expect(fetched.chunks[0]).toMatchObject({ chunk_id: old, error: `chunk ${old} is gone: search again` });
      expect((await reader.search({ q: 'beta' })).results.map((hit) => hit.path)).toEqual(['src/b.ts']);
      writeFileSync(join(root, 'src/b.ts'), module('deltaStep'));
      await writer.sync();
      const after = await reader.search({ q: 'beta' });
      expect(after.generation).toBe(synced.generation + 1);
      expect(after.results).toEqual([]);
    });

    it("a view that has served many requests keeps every posting of its generation in memory, and never answers from it once another process has committed a newer generation", async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const writer = engineFor(root);
      await writer.sync();
      // The reader's statements, counted: those that read postings name their table.
      const db = sql();
      const postingStatements: string[] = [];
      const counted: SqlPool = {
        ...db,
        query: (text, params) => {
          if (text.includes('segment_postings')) postingStatements.push(text);
          return db.query(text, params);
        },
        connect: async () => {
          const session = await db.connect();
          return {
            ...session,
            copyOut: (statement) => {
              if (statement.includes('segment_postings')) postingStatements.push(statement);
              return session.copyOut(statement);
            },
          };
        },
      };
      const store = new PgStore(counted, root, 'the test database', localParseCache(join(root, '.repodex')), () => false);
      await store.stamp();
      const view = await store.open();
      // A request per term, each asking the database for that term, until the view has copied out
      // every row of its generation (in the background) and a request asks nothing more.
      for (let i = 0, asked = -1; asked !== postingStatements.length; i++) {
        expect(i).toBeLessThan(1000);
        asked = postingStatements.length;
        await store.stamp();
        expect(await view.postings([`absent${i}`])).toEqual([undefined]);
      }
      expect(postingStatements.filter((text) => text.startsWith('COPY'))).toHaveLength(1);
      const asked = postingStatements.length;
      await store.stamp();
      const [alpha, beta] = await view.postings(['alphastep', 'betastep']);
      expect(postingStatements).toHaveLength(asked);
      expect([alpha?.df, beta?.df]).toEqual([1, 1]);
      expect(view.docFile[alpha!.docs[0]!]).toBe(view.findFile('src/a.ts'));
      // Another process commits a newer generation: the next request is told so, also for a term the view holds.
      writeFileSync(join(root, 'src/b.ts'), module('deltaStep'));
      await writer.sync();
      await store.stamp();
      await expect(view.postings(['deltastep'])).rejects.toMatchObject({ code: 'INDEX_CHANGED' });
      await store.stamp();
      await expect(view.postings(['betastep'])).rejects.toMatchObject({ code: 'INDEX_CHANGED' });
      // An engine reading through the same store answers from the new generation.
      const reader = new Engine(root, store, { autoIndex: false });
      expect((await reader.search({ q: 'delta' })).results.map((hit) => hit.path)).toEqual(['src/b.ts']);
      expect((await reader.search({ q: 'beta' })).results).toEqual([]);
    });

    it('regression: a postings request that filled the view’s cache of postings lists answered nothing for the terms it had kept earlier in the same request', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      await engineFor(root).sync();
      const store = openStore(root, backend.spec);
      await store.stamp();
      const view = await store.open();
      // One list short of a full cache (4096 lists): the second term of the next request empties it.
      await view.postings(Array.from({ length: 4095 }, (_, i) => `absent${i}`));
      const [alpha, beta] = await view.postings(['alphastep', 'betastep']);
      expect([alpha?.df, beta?.df]).toEqual([1, 1]);
    });

    it("a file listing, answered from the catalog in memory, shows another process's new generation on the very next request", async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep') });
      const writer = engineFor(root);
      await writer.sync();
      const reader = new Engine(root, openStore(root, backend.spec), { autoIndex: false });
      expect((await reader.files(undefined, 50)).files.map((file) => file.path)).toEqual(['src/a.ts']);
      // A search proves the generation: the next stamp is named without asking.
      await reader.search({ q: 'alphaStep' });
      writeFileSync(join(root, 'src/c.ts'), module('gammaStep'));
      const synced = await writer.sync();
      const listed = await reader.files(undefined, 50);
      expect(listed.generation).toBe(synced.generation);
      expect(listed.files.map((file) => file.path)).toEqual(['src/a.ts', 'src/c.ts']);
    });

    it('a stamp keeps naming the view opened after it while that view is current, also when the view is newer than the stamp (one generation is never loaded twice)', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const writer = engineFor(root);
      await writer.sync();
      // A server's store, driven as its engine drives it: a stamp per request, a view opened when the stamp is new.
      const store = openStore(root, backend.spec);
      const first = await store.stamp();
      const old = await store.open();
      expect((await old.postings(['alpha']))[0]).toBeDefined();
      // A sync elsewhere (this server's sync worker, say): the next stamp, named without asking, is still the old one…
      writeFileSync(join(root, 'src/a.ts'), module('gammaStep'));
      await writer.sync();
      const named = await store.stamp();
      expect(named).toBe(first);
      // …and the engine, which dropped its view after its sync, opens the new generation with it.
      const opened = await store.open();
      expect(opened.meta.generation).toBe(old.meta.generation + 1);
      expect((await opened.postings(['gamma']))[0]).toBeDefined();
      expect(await store.stamp()).toBe(named);
      // The old view's reads say it was replaced; once another generation is committed, the stamp changes.
      await expect(old.postings(['beta'])).rejects.toMatchObject({ code: 'INDEX_CHANGED' });
      writeFileSync(join(root, 'src/b.ts'), module('deltaStep'));
      await writer.sync();
      await expect(opened.postings(['delta'])).rejects.toMatchObject({ code: 'INDEX_CHANGED' });
      expect(await store.stamp()).not.toBe(named);
    });

    it('rows written before the declarations column name the declarations at lines as the column does (from their outline)', async () => {
      const root = committedRepo({
        'src/shapes.ts': `export interface Shape {\n  area(): number;\n}\n\nexport class Circle implements Shape {\n  constructor(private r: number) {}\n\n  area(): number {\n    return Math.PI * this.r * this.r;\n  }\n}\n\nexport function unit(): Circle {\n  return new Circle(1);\n}\n`,
      });
      await engineFor(root).sync();
      const paths = async (): Promise<(string | null)[]> => {
        const view = await openStore(root, backend.spec).open();
        const slot = view.findFile('src/shapes.ts');
        return Promise.all(Array.from({ length: 16 }, (_, i) => view.symbolAt(slot, i + 1, i + 2)));
      };
      const fromColumn = await paths();
      expect(fromColumn).toContain('class Circle › area');
      const db = sql();
      await db.query('UPDATE files SET declarations = NULL WHERE repo_id = $1', [await repoId(db, root)]);
      expect(await paths()).toEqual(fromColumn);
    });

    it('an unchanged chunk is never embedded again, also after a forced rebuild; a changed file embeds only its new chunks', async () => {
      const files: Record<string, string> = {};
      for (let f = 0; f < 72; f++) {
        const words = TOPICS[f % TOPICS.length]!;
        files[`src/${words[0]}/mod${f}.ts`] = `/** Handles the ${words[1]} of a ${words[2]}. */\nexport function ${words[3]}${f}(${words[4]}: number): number {\n  return ${words[4]} + ${f}; // ${words[5]}\n}\n`;
      }
      const root = committedRepo(files);
      const engine = engineFor(root);
      const first = await engine.sync({ provider: 'builtin' });
      expect(first.embeddings).toMatchObject({ embedded: 72, reused: 0 });
      const forced = await engine.sync({ force: true });
      expect(forced.embeddings).toMatchObject({ embedded: 0, reused: 72 });
      writeFileSync(join(root, 'src/upload/mod0.ts'), '/** Resumes a partial upload from its offset. */\nexport function resumeUpload(offset: number): number {\n  return offset;\n}\n');
      const edited = await engine.sync();
      expect(edited.embeddings).toMatchObject({ embedded: 1, reused: 71 });
      const db = sql();
      const id = await repoId(db, root);
      const [counts] = await db.query<{ missing: string; dims: string }>(
        `SELECT (SELECT count(*) FROM chunks WHERE repo_id = $1 AND embedding IS NULL) AS missing,
                (SELECT count(DISTINCT vector_dims(embedding)) FROM chunks WHERE repo_id = $1) AS dims`,
        [id],
      );
      expect(counts).toEqual({ missing: '0', dims: '1' });
      expect((await engine.search({ q: 'resume partial upload offset', mode: 'vector' })).results[0]?.path).toBe('src/upload/mod0.ts');
    });

    it.runIf(backend.name === 'citus')('on Citus every table is distributed by repo_id and co-located, and one repository lives in one shard of each', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      await engineFor(root).sync();
      const db = sql();
      const id = await repoId(db, root);
      const tables = await db.query<{ name: string; method: string; colocation: number; key: string | null }>(
        "SELECT logicalrelid::regclass::text AS name, partmethod AS method, colocationid AS colocation, column_to_column_name(logicalrelid, partkey) AS key FROM pg_dist_partition WHERE logicalrelid::regclass::text IN ('repos', 'chunks', 'files', 'segments', 'segment_postings', 'embeddings', 'repo_locks')",
      );
      const byName = new Map(tables.map((table) => [table.name, table]));
      expect(byName.get('repos')?.method).toBe('n');
      const distributed = ['chunks', 'files', 'segments', 'segment_postings', 'embeddings', 'repo_locks'].map((name) => byName.get(name));
      for (const table of distributed) expect(table).toMatchObject({ method: 'h', key: 'repo_id' });
      expect(new Set(distributed.map((table) => table!.colocation)).size).toBe(1);
      for (const table of ['chunks', 'segment_postings', 'files']) {
        const shards = await db.query<{ result: string }>(`SELECT result FROM run_command_on_shards('${table}', $$SELECT count(*) FROM %s WHERE repo_id = '${id}'$$)`);
        expect(shards.filter((shard) => Number(shard.result) > 0), table).toHaveLength(1);
      }
    });

    it('verify finds rows damaged behind its back, and a forced sync repairs them', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const engine = engineFor(root);
      await engine.sync();
      expect((await engine.verify()).ok).toBe(true);
      const db = sql();
      const id = await repoId(db, root);
      await db.query("DELETE FROM chunks WHERE repo_id = $1 AND path = 'src/b.ts'", [id]);
      const damaged = await engine.verify();
      expect(damaged.ok).toBe(false);
      expect(damaged.problems.join(' ')).toMatch(/chunks/);
      await engine.sync({ force: true });
      expect((await engine.verify()).ok).toBe(true);
    });

    it('fetch answers from the chunk text the database keeps: the file edited or gone from the checkout, the indexed lines come back flagged stale', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep'), 'src/b.ts': module('betaStep') });
      const engine = new Engine(root, openStore(root, backend.spec), { autoIndex: false, lockWaitMs: 2_000 });
      await engine.sync();
      const hits = (await engine.search({ q: 'alphaStep betaStep' })).results;
      const ids = ['src/a.ts', 'src/b.ts'].map((path) => hits.find((hit) => hit.path === path)!.chunk_id);
      const before = (await engine.fetch(ids)).chunks;
      expect(before.map((chunk) => ('stale' in chunk ? chunk.stale : chunk.error))).toEqual([false, false]);
      writeFileSync(join(root, 'src/a.ts'), module('gammaStep'));
      rmSync(join(root, 'src/b.ts'));
      const after = (await engine.fetch(ids)).chunks;
      expect(after.map((chunk) => ('stale' in chunk ? chunk.stale : chunk.error))).toEqual([true, true]);
      expect(after.map((chunk) => ('lines' in chunk ? chunk.lines : []))).toEqual(before.map((chunk) => ('lines' in chunk ? chunk.lines : [])));
      expect(JSON.stringify(after)).not.toContain('gammaStep');
    });

    it('clean keeps the repository row and moves its generation on: a view opened before is told it was replaced, never answered from nothing', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep') });
      const store = openStore(root, backend.spec);
      const engine = new Engine(root, store, { autoIndex: false, lockWaitMs: 2_000 });
      await engine.sync();
      const view = await store.open();
      const db = sql();
      const id = await repoId(db, root);
      await engine.clean();
      await expect(view.postings(['alphastep'])).rejects.toMatchObject({ code: 'INDEX_CHANGED' });
      expect(await store.stamp()).toBe('');
      expect(await db.query('SELECT id FROM repos WHERE id = $1', [id])).toHaveLength(1);
      expect(await db.query('SELECT chunk_id FROM chunks WHERE repo_id = $1', [id])).toEqual([]);
      await engine.sync();
      expect((await store.readMeta())!.generation).toBe(1);
    });

    it('the audit log is a table every process writes to: a changed row is left out of `audit` and named by verify', async () => {
      const root = committedRepo({ 'src/a.ts': module('alphaStep') });
      const [one, two] = [engineFor(root), engineFor(root)];
      await call(one, { op: 'search', q: 'alpha step' }, { frontend: 'cli' });
      await call(two, { op: 'files' }, { frontend: 'mcp' });
      await Promise.all([one.auditLog.settled(), two.auditLog.settled()]);
      const db = sql();
      const id = await repoId(db, root);
      const rows = await db.query<{ seq: string; line: string }>('SELECT seq, line FROM audit_log WHERE repo_id = $1 ORDER BY seq', [id]);
      expect(rows.map((row) => JSON.parse(row.line).frontend)).toEqual(['cli', 'mcp']);
      expect((await one.audit(undefined, 10)).entries.map((e) => e.op)).toEqual(['search', 'files']);
      expect((await one.verify()).ok).toBe(true);
      await db.query("UPDATE audit_log SET line = replace(line, 'alpha step', 'alpha stop') WHERE repo_id = $1 AND seq = $2", [id, rows[0]!.seq]);
      const read = await two.audit(undefined, 10);
      expect(read.entries.map((e) => e.op)).toEqual(['files']);
      expect(read.warnings?.[0]).toMatch(/^1 damaged line\(s\) of the audit log left out/);
      const verify = await two.verify();
      expect(verify.problems).toEqual([expect.stringMatching(new RegExp(`^table audit_log in .*: row with seq ${rows[0]!.seq} is damaged; .*DELETE FROM audit_log`))]);
    });
  });
}

const plain = testBackends().find((b) => b.name === 'postgres');
describe.skipIf(plain === undefined || plain.missing !== undefined)('PostgreSQL store errors', () => {
  const url = plain?.spec.kind === 'postgres' ? plain.spec.url : '';
  const root = committedRepo({ 'src/a.ts': module('alphaStep') });

  it('a bad URL, an unreachable server and a missing database are one line each that names the fix, never a stack trace', () => {
    const cases: [string, RegExp][] = [
      ['mysql://localhost/db', /--store: "mysql:\/\/localhost\/db" is neither fs nor a PostgreSQL URL/],
      ['postgres://postgres@127.0.0.1:1/postgres', /cannot connect to postgres:\/\/postgres@127\.0\.0\.1:1\/postgres: .*is the server running/],
      [url.replace(/\/[^/]*$/, '/no_such_database'), /create the database first/],
    ];
    for (const [store, message] of cases) {
      const run = runCli(['search', 'alphaStep', '--store', store], { cwd: root });
      expect(run.code, store).toBe(1);
      expect(run.stderr, store).toMatch(message);
      expect(run.stderr.trim().split('\n'), store).toHaveLength(1);
      expect(run.stderr).not.toMatch(/ at .*\.js:\d+/);
    }
  });

  it('a database without pgvector that this user may not add it to, and one migrated by a newer repodex, are refused with their fix', async () => {
    const admin = pgPool(url, 'the test database');
    const suffix = `${process.pid}_${Date.now()}`;
    try {
      await admin.query(`CREATE ROLE limited_${suffix} LOGIN`);
      await admin.query(`CREATE DATABASE novector_${suffix}`);
      await admin.query(`CREATE DATABASE newer_${suffix}`);
      const base = new URL(url);
      const limited = new URL(url);
      limited.username = `limited_${suffix}`;
      limited.pathname = `/novector_${suffix}`;
      const run = runCli(['search', 'alphaStep', '--store', limited.toString()], { cwd: root });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/lacks the pgvector extension .*CREATE EXTENSION vector/);
      const newer = new URL(url);
      newer.pathname = `/newer_${suffix}`;
      const setup = pgPool(newer.toString(), 'newer');
      await setup.query('CREATE EXTENSION IF NOT EXISTS vector');
      await setup.query('CREATE TABLE repodex_migrations (version INT PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
      await setup.query("INSERT INTO repodex_migrations (version, name) VALUES (999, '999_future')");
      await setup.end();
      const refused = runCli(['search', 'alphaStep', '--store', newer.toString()], { cwd: root });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/schema version 999, newer than this repodex knows.*upgrade repodex/);
      void base;
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS novector_${suffix}`).catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS newer_${suffix} WITH (FORCE)`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS limited_${suffix}`).catch(() => undefined);
      await admin.end();
    }
    rmSync(join(root, '.repodex'), { recursive: true, force: true });
  });
});
