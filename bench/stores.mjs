#!/usr/bin/env node
// The same corpus in the embedded store and in PostgreSQL (and Citus), side by side: do they
// answer alike (top-20 of every sampled query, identical), and what do syncs, searches and disk
// cost on each. Every store gets its own clone of the corpus; timed runs alternate between stores
// so a drifting machine weighs on all alike. Lexical index only (embeddings off): vectors cost the
// same embedding work on every store, and vector search itself is compared by the test suite.
// Then throughput: N servers per store (default 4) searching at once, on this one machine.
// Usage: node bench/stores.mjs <corpus-git-checkout> --pg URL [--citus URL] [--queries N] [--runs N] [--clients N] [--json out.json]
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioServer, benchEnv, corpusArgs, corpusSelection, createRng, describeMachine, formatBytes, formatMs, listCorpusFiles, machineInfo, renderTable, runProcess, sampleQueries, scrubbedHere, summarize, tail, withClient } from './lib.mjs';

const USAGE = 'usage: node bench/stores.mjs <corpus-git-checkout> --pg URL [--citus URL] [--queries N] [--runs N] [--clients N] [--json out.json]';
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'bin', 'repodex.js');
const log = (message) => process.stderr.write(`[stores] ${message}\n`);
/** Targets: PostgreSQL search p50 ≤ 5 ms and p99 ≤ 25 ms; a full sync ≤ 2× the embedded store's. */
const TARGETS = { p50: 5, p99: 25, fullSync: 2 };
const TABLES = ['repos', 'chunks', 'files', 'segments', 'segment_postings', 'embeddings', 'repo_locks'];

function cloneCorpus(corpus, into) {
  const result = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', corpus, into], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git clone ${corpus} failed: ${tail(result.stderr ?? '')}`);
  // Lexical only, on every store alike.
  spawnSync(process.execPath, [BIN, 'init', '--root', into], { env: benchEnv() });
  const config = join(into, '.repodex', 'config.json');
  const parsed = JSON.parse(readFileSync(config, 'utf8'));
  writeFileSync(config, `${JSON.stringify({ ...parsed, embeddings: { ...(parsed.embeddings ?? {}), provider: 'off' } }, null, 2)}\n`);
  return into;
}

async function repodex(store, args) {
  const run = await runProcess(process.execPath, [BIN, ...args, '--root', store.root, '--store', store.url], { timeoutMs: 900_000 });
  if (run.code !== 0) throw new Error(`repodex ${args.join(' ')} on ${store.name} failed: ${tail(run.stderr)}`);
  return run;
}


/**
 * Bytes of repodex's tables and their indexes (all nodes on Citus), compacted first (the rebuilds
 * before leave dead rows until vacuum): the database holds only this corpus's index, see emptyDatabase.
 */
function databaseBytes(url, citus) {
  const size = citus ? 'citus_total_relation_size' : 'pg_total_relation_size';
  return withClient(url, async (client) => {
    for (const table of TABLES) await client.query(`VACUUM FULL ${table}`);
    return Number((await client.query(`SELECT sum(${size}(t::regclass))::bigint AS bytes FROM unnest($1::text[]) AS t`, [TABLES])).rows[0].bytes);
  });
}

/** Remove every repository's rows and reclaim their space, so sizes and timings start from an empty database. */
function emptyDatabase(url, citus) {
  return withClient(url, async (client) => {
    if (!(await client.query("SELECT to_regclass('repos') IS NOT NULL AS ready")).rows[0].ready) return;
    for (const table of TABLES.filter((t) => t !== 'repos')) await client.query(citus ? `TRUNCATE ${table}` : `TRUNCATE ${table}`);
    await client.query('DELETE FROM repos');
    await client.query('VACUUM FULL repos');
  });
}

function duBytes(path) {
  return Number(spawnSync('du', ['-sb', path], { encoding: 'utf8' }).stdout.split('\t')[0]);
}

async function main() {
  const parsed = corpusArgs(USAGE, { pg: { type: 'string' }, citus: { type: 'string' }, queries: { type: 'string' }, runs: { type: 'string' }, clients: { type: 'string' }, json: { type: 'string' } });
  if (parsed.exit !== undefined) process.exit(parsed.exit);
  const { corpus, values } = parsed;
  if (!values.pg) {
    process.stderr.write(`${USAGE}\n(--pg names a PostgreSQL server with pgvector that holds nothing else: its repodex tables are emptied first)\n`);
    process.exit(1);
  }
  const queryCount = Number(values.queries ?? 200);
  const runs = Number(values.runs ?? 5);
  const clientCount = Number(values.clients ?? 4);
  const machine = machineInfo();
  const scratch = mkdtempSync(join(os.tmpdir(), 'repodex-stores-'));
  const stores = [{ name: 'file store', url: 'fs' }, { name: 'PostgreSQL', url: values.pg }, ...(values.citus ? [{ name: 'Citus', url: values.citus, citus: true }] : [])];
  try {
    for (const store of stores) {
      if (store.url !== 'fs') await emptyDatabase(store.url, store.citus === true);
      store.root = cloneCorpus(corpus, join(scratch, store.name.replace(/\W+/g, '-')));
      store.samples = { full: [], none: [], edit: [] };
    }
    const files = listCorpusFiles(corpus, corpusSelection(corpus));
    const queries = sampleQueries(corpus, files, queryCount, 17).queries.map((query) => query.q);
    // Full syncs from nothing (clean removes the parse cache too), rotating which store goes first.
    for (let run = 0; run < runs; run++) {
      for (let k = 0; k < stores.length; k++) {
        const store = stores[(run + k) % stores.length];
        await repodex(store, ['clean']);
        const sync = await repodex(store, ['sync']);
        store.samples.full.push(sync.ms);
        log(`${store.name}: full sync ${formatMs(sync.ms)}`);
      }
    }
    for (let run = 0; run < runs * 2; run++) for (const store of stores) store.samples.none.push((await repodex(store, ['sync'])).ms);
    const rng = createRng(5);
    const editable = files.filter((file) => /\.(ts|js|py|java)$/.test(file.path));
    for (let run = 0; run < runs * 2; run++) {
      const file = editable[Math.floor(rng() * editable.length)];
      for (const store of stores) {
        appendFileSync(join(store.root, file.path), `\n// edited by the benchmark, run ${run}\n`);
        store.samples.edit.push((await repodex(store, ['sync'])).ms);
      }
    }
    log('sizes');
    const sizes = [];
    for (const store of stores) sizes.push(store.url === 'fs' ? duBytes(join(store.root, '.repodex')) : await databaseBytes(store.url, store.citus === true));
    // Searches from one long-running server per store, interleaved query by query; top-20 compared.
    log(`${queries.length} searches per store`);
    const servers = stores.map((store) => new StdioServer(BIN, store.root, ['--store', store.url]));
    const latencies = stores.map(() => []);
    let differing = 0;
    const examples = [];
    for (const server of servers) for (const q of queries.slice(0, 20)) await server.request({ op: 'search', q, top_k: 20 });
    for (const q of queries) {
      const answers = [];
      for (let s = 0; s < servers.length; s++) {
        const { ms, response } = await servers[s].request({ op: 'search', q, top_k: 20 });
        if (!response.ok) throw new Error(`${stores[s].name}: search ${JSON.stringify(q)} failed: ${response.error}`);
        latencies[s].push(ms);
        answers.push(JSON.stringify(response.data.results.map((hit) => [hit.chunk_id, hit.path, hit.start_line, hit.end_line, hit.score])));
      }
      if (answers.some((answer) => answer !== answers[0])) {
        differing++;
        if (examples.length < 3) examples.push(q);
      }
    }
    for (const server of servers) await server.close();
    // Throughput: `clients` servers per store, each sending every query in turn, all at once.
    const throughput = [];
    for (const store of stores) {
      const clients = Array.from({ length: clientCount }, () => new StdioServer(BIN, store.root, ['--store', store.url]));
      for (const client of clients) await client.request({ op: 'search', q: queries[0], top_k: 20 });
      const started = performance.now();
      await Promise.all(clients.map(async (client, c) => {
        for (let i = 0; i < queries.length; i++) await client.request({ op: 'search', q: queries[(i + c * 37) % queries.length], top_k: 20 });
      }));
      throughput.push((clientCount * queries.length) / ((performance.now() - started) / 1000));
      for (const client of clients) await client.close();
    }
    const baseFull = summarize(stores[0].samples.full).median;
    const rows = stores.map((store, s) => {
      const full = summarize(store.samples.full).median;
      const search = summarize(latencies[s]);
      return [
        store.name,
        formatMs(full),
        s === 0 ? '' : `${(full / baseFull).toFixed(2)}×`,
        formatMs(summarize(store.samples.none).median),
        formatMs(summarize(store.samples.edit).median),
        formatMs(search.median),
        formatMs(search.p99),
        formatBytes(sizes[s]),
        `${Math.round(throughput[s])}/s`,
      ];
    });
    const scrubbed = scrubbedHere();
    process.stdout.write(`\nstores on ${corpus} (${files.length} files); ${describeMachine(machine)}${scrubbed.length > 0 ? `; ${scrubbed.join(', ')} unset for measured processes` : ''}\n\n`);
    process.stdout.write(`${renderTable(['store', 'full sync, median', '÷ file store', 'no-change sync, median', 'one-file edit sync, median', 'search p50', 'search p99', 'index size', `searches/s, ${clientCount} servers`], rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'])}\n\n`);
    process.stdout.write(`top-20 identical on every store: ${queries.length - differing} of ${queries.length} queries${examples.length > 0 ? ` (differing: ${examples.map((q) => JSON.stringify(q)).join(', ')})` : ''}\n`);
    for (let s = 1; s < stores.length; s++) {
      const search = summarize(latencies[s]);
      const ratio = summarize(stores[s].samples.full).median / baseFull;
      process.stdout.write(
        `${stores[s].name}: search p50 ${formatMs(search.median)} (target ≤ ${TARGETS.p50} ms: ${search.median <= TARGETS.p50 ? 'met' : 'MISSED'}), p99 ${formatMs(search.p99)} (≤ ${TARGETS.p99} ms: ${search.p99 <= TARGETS.p99 ? 'met' : 'MISSED'}), full sync ${ratio.toFixed(2)}× the file store's (≤ ${TARGETS.fullSync}×: ${ratio <= TARGETS.fullSync ? 'met' : 'MISSED'})\n`,
      );
    }
    process.stdout.write(`runs per store: ${runs} full syncs, ${runs * 2} no-change and ${runs * 2} one-file edit syncs (whole processes, interleaved), ${queries.length} searches after 20 warm-up ones\n`);
    if (values.json) writeFileSync(values.json, JSON.stringify({ machine, stores: stores.map((store, s) => ({ name: store.name, samples: store.samples, search: latencies[s], bytes: sizes[s] })), differing }, null, 2));
    if (differing > 0) process.exitCode = 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
