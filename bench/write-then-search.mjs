#!/usr/bin/env node
// What it costs a server to never answer from before a change it could have seen, on a real
// corpus, against an earlier build in the same run. Two `serve --stdio` servers (this build and
// the baseline, each on its own private clone of the corpus) answer interleaved requests:
//   1. searches on an unchanged tree: the per-request cost of proving freshness (p50, p99);
//   2. write-then-search: a new file written, a search for its identifier sent the instant the
//      write returns; how many answers miss the file while saying `dirty: false`, and how long
//      such a request takes (it includes the sync of that file).
// Usage: node bench/write-then-search.mjs <corpus-git-checkout> [--baseline-ref REF|none] [--queries N] [--rounds N] [--json out.json]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareBaseline } from './baseline.mjs';
import { StdioServer, corpusArgs, corpusSelection, createRng, describeMachine, formatMs, listCorpusFiles, machineInfo, renderTable, sampleQueries, summarize, syncCorpus, tail } from './lib.mjs';

const USAGE = 'usage: node bench/write-then-search.mjs <corpus-git-checkout> [--baseline-ref REF|none] [--queries N] [--rounds N] [--json out.json]';
const log = (message) => process.stderr.write(`[write-then-search] ${message}\n`);
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The target: proving freshness adds at most this much to a request's p50 (docs/benchmarks.md). */
const TARGET_ADDED_P50_MS = 2;

function cloneCorpus(corpus, into) {
  const result = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', corpus, into], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git clone ${corpus} failed: ${tail(result.stderr ?? '')}`);
  return into;
}

async function main() {
  const parsed = corpusArgs(USAGE, { 'baseline-ref': { type: 'string' }, queries: { type: 'string' }, rounds: { type: 'string' }, json: { type: 'string' } });
  if (parsed.exit !== undefined) process.exit(parsed.exit);
  const { corpus, values } = parsed;
  const queryCount = Number(values.queries ?? 400);
  const rounds = Number(values.rounds ?? 200);
  const baselineRef = values['baseline-ref'] ?? '32348b2';
  const machine = machineInfo();
  const scratch = mkdtempSync(join(os.tmpdir(), 'repodex-wts-'));
  const holder = {};
  const builds = [{ label: 'this build', bin: join(REPO, 'bin', 'repodex.js') }];
  try {
    if (baselineRef !== 'none') {
      const baseline = prepareBaseline(REPO, baselineRef, holder, log);
      if (baseline.problem) throw new Error(`baseline ${baselineRef}: ${baseline.problem}`);
      builds.push({ label: `${baselineRef} (${baseline.sha.slice(0, 7)})`, bin: baseline.bin });
    }
    for (const [i, build] of builds.entries()) {
      build.root = cloneCorpus(corpus, join(scratch, `corpus-${i}`));
      log(`${build.label}: first sync of ${build.root}`);
      await syncCorpus(build.bin, build.root);
      build.server = new StdioServer(build.bin, build.root);
      await build.server.request({ op: 'status' });
      build.unchanged = [];
      build.written = [];
      build.missedSilently = 0;
      build.missedDirty = 0;
    }
    const files = listCorpusFiles(corpus, corpusSelection(corpus));
    const queries = sampleQueries(corpus, files, queryCount, 7).queries.map((query) => query.q);
    // Warm both servers up on the same queries, then measure them interleaved (A B A B …).
    for (const query of queries.slice(0, 50)) for (const build of builds) await build.server.request({ op: 'search', q: query, top_k: 10 });
    log(`${queries.length} searches on the unchanged tree`);
    for (const query of queries) {
      for (const build of builds) {
        const { ms, response } = await build.server.request({ op: 'search', q: query, top_k: 10 });
        if (!response.ok) throw new Error(`${build.label}: search failed: ${response.error}`);
        build.unchanged.push(ms);
      }
    }
    log(`${rounds} write-then-search rounds`);
    const rng = createRng(42);
    for (let round = 0; round < rounds; round++) {
      const identifier = `writtenJustNow${Math.floor(rng() * 1e9).toString(36)}R${round}`;
      for (const build of builds) {
        const path = join(build.root, `wts-${round}.ts`);
        writeFileSync(path, `export const ${identifier} = ${round};\n`);
        const { ms, response } = await build.server.request({ op: 'search', q: identifier, top_k: 5 });
        if (!response.ok) throw new Error(`${build.label}: search failed: ${response.error}`);
        build.written.push(ms);
        const found = response.data.results.some((hit) => hit.path === `wts-${round}.ts`);
        if (!found && !response.data.freshness.dirty) build.missedSilently++;
        else if (!found) build.missedDirty++;
        unlinkSync(path);
      }
    }
    for (const build of builds) {
      const problem = await build.server.close();
      if (problem) log(problem);
    }
    const current = builds[0];
    const baseline = builds[1];
    const stats = (build) => ({ unchanged: summarize(build.unchanged), written: summarize(build.written) });
    const rows = builds.map((build) => {
      const { unchanged, written } = stats(build);
      return [build.label, formatMs(unchanged.median), formatMs(unchanged.p99), `${build.missedSilently} of ${rounds}`, `${build.missedDirty} of ${rounds}`, formatMs(written.median), formatMs(written.p99)];
    });
    const header = ['build', 'search p50 (unchanged tree)', 'p99', 'write→search: missing, dirty:false', 'missing, dirty:true', 'write→search p50', 'p99'];
    console.log(`\nwrite then search on ${corpus} (${files.length} files); ${describeMachine(machine)}\n`);
    console.log(renderTable(header, rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']));
    if (baseline) {
      const added = stats(current).unchanged.median - stats(baseline).unchanged.median;
      console.log(`\nadded per request (p50, unchanged tree): ${formatMs(added)} (target ≤ ${TARGET_ADDED_P50_MS} ms: ${added <= TARGET_ADDED_P50_MS ? 'met' : 'missed'})`);
    }
    if (values.json) {
      writeFileSync(values.json, `${JSON.stringify({ machine, corpus, rounds, queries: queries.length, builds: builds.map((build) => ({ label: build.label, ...stats(build), missedSilently: build.missedSilently, missedDirty: build.missedDirty })) }, null, 2)}\n`);
    }
  } finally {
    for (const build of builds) build.server?.child.kill('SIGKILL');
    holder.cleanup?.();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
