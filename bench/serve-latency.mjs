#!/usr/bin/env node
// Search round trips of `repodex serve --stdio`, this build against a baseline build, query by
// query in alternation (which build goes first alternates too), so a machine whose speed drifts
// moves both alike. Each build serves its own clone of the corpus, indexed by itself.
//
// With --fresh N, each build instead starts N fresh servers, in turns (A B, then B A, ...), and
// each answers one untimed first search and then every query once: what a new server does with
// queries it has not seen (compiling its code and decoding its lists as it goes), as the serve
// row of bench/run.mjs measures it (its first search is the first query, timed again in turn).
// --passes applies to the warm comparison only.
//
//   node bench/serve-latency.mjs <corpus> [--baseline-ref REF] [--queries N] [--passes N] [--fresh N] [--seed S]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { prepareBaseline } from './baseline.mjs';
import { StdioServer, corpusArgs, corpusSelection, describeMachine, formatMs, git, listCorpusFiles, machineInfo, renderTable, runProcess, sampleQueries, summarize, syncCorpus } from './lib.mjs';

const USAGE = 'usage: node bench/serve-latency.mjs <corpus> [--baseline-ref REF] [--queries N] [--passes N] [--fresh N] [--seed S]';
const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'repodex.js');
/** Searches each server answers before the measured ones (loads the index, warms the code). */
const WARMUP = 200;

async function main() {
  const args = corpusArgs(USAGE, { 'baseline-ref': { type: 'string', default: 'HEAD~1' }, queries: { type: 'string', default: '1000' }, passes: { type: 'string', default: '3' }, fresh: { type: 'string', default: '0' }, seed: { type: 'string', default: '42' } });
  if (args.exit !== undefined) return args.exit;
  const { corpus, values } = args;
  const count = Number(values.queries);
  const passes = Number(values.passes);
  const fresh = Number(values.fresh);
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(passes) || passes < 1 || !Number.isInteger(fresh) || fresh < 0) {
    process.stderr.write(`--queries and --passes must be whole numbers ≥ 1, --fresh one ≥ 0\n${USAGE}\n`);
    return 1;
  }
  const log = (message) => process.stderr.write(`[serve-latency] ${message}\n`);
  const holder = { cleanup: null };
  const scratch = mkdtempSync(join(os.tmpdir(), 'repodex-serve-latency-'));
  const servers = [];
  try {
    const baseline = prepareBaseline(REPO, values['baseline-ref'], holder, log);
    if (baseline.problem) throw new Error(`baseline ${values['baseline-ref']}: ${baseline.problem}`);
    const builds = [
      { label: `baseline ${values['baseline-ref']} (${baseline.sha.slice(0, 10)})`, bin: baseline.bin },
      { label: `this build (${git(REPO, ['rev-parse', '--short=10', 'HEAD'])})`, bin: BIN },
    ];
    for (const [i, build] of builds.entries()) {
      build.root = join(scratch, `corpus-${i}`);
      const clone = await runProcess('git', ['clone', '--quiet', '--local', corpus, build.root], { timeoutMs: 600_000 });
      if (clone.code !== 0) throw new Error(`git clone failed: ${clone.stderr}`);
      log(`indexing ${build.root} with ${build.label}`);
      await syncCorpus(build.bin, build.root);
    }
    const queries = sampleQueries(corpus, listCorpusFiles(corpus, corpusSelection(corpus)), count, Number(values.seed)).queries.map((entry) => entry.q);
    const failed = fresh > 0 ? await freshServers(builds, queries, fresh, log) : await warmServers(builds, queries, passes, servers, log);
    const summaries = builds.map((build) => summarize(build.samples));
    const rows = builds.map((build, i) => {
      const s = summaries[i];
      return [build.label, formatMs(s.median), formatMs(s.p90), formatMs(s.p99), formatMs(s.max), formatMs(s.mean)];
    });
    const [a, b] = summaries;
    rows.push(['ratio, this build / baseline', (b.median / a.median).toFixed(2), (b.p90 / a.p90).toFixed(2), (b.p99 / a.p99).toFixed(2), (b.max / a.max).toFixed(2), (b.mean / a.mean).toFixed(2)]);
    const how =
      fresh > 0
        ? `${fresh} fresh servers per build, in turns, each answering 1 untimed first search and then the ${queries.length} corpus queries (seed ${values.seed}) once; client-side round trips over serve --stdio; ${failed} failed`
        : `${queries.length} corpus queries (seed ${values.seed}) × ${passes} passes over serve --stdio, client-side round trips, after ${WARMUP} warm-up searches each; ${failed} failed`;
    const perServer =
      fresh > 0
        ? [
            '',
            'Each fresh server on its own (p99 of its queries, then the median over servers):',
            '',
            renderTable(
              ['build', 'p99 of each server', 'median p99', 'median p50'],
              builds.map((build) => [build.label, build.rounds.map((round) => formatMs(round.p99)).join(', '), formatMs(summarize(build.rounds.map((round) => round.p99)).median), formatMs(summarize(build.rounds.map((round) => round.median)).median)]),
              ['l', 'l', 'r', 'r'],
            ),
          ]
        : [];
    process.stdout.write(
      [
        '# repodex serve latency, two builds',
        '',
        `- date: ${new Date().toISOString()}`,
        `- machine: ${describeMachine(machineInfo())}`,
        `- corpus: ${corpus} @ ${git(corpus, ['rev-parse', 'HEAD']) ?? '(not git)'} (each build serves a clone it indexed)`,
        `- ${how}`,
        '',
        renderTable(['build', 'p50', 'p90', 'p99', 'max', 'mean'], rows, ['l', 'r', 'r', 'r', 'r', 'r']),
        ...perServer,
        '',
      ].join('\n'),
    );
    return failed > 0 ? 1 : 0;
  } finally {
    for (const server of servers) await server.close();
    holder.cleanup?.();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One server per build for the whole run, warmed by WARMUP searches; the queries in alternation, query by query. Returns the failed count. */
async function warmServers(builds, queries, passes, servers, log) {
  for (const build of builds) {
    build.server = new StdioServer(build.bin, build.root);
    servers.push(build.server);
    build.samples = [];
    for (let i = 0; i < WARMUP; i++) await build.server.request({ op: 'search', q: queries[i % queries.length] });
  }
  let failed = 0;
  log(`${queries.length} queries × ${passes} passes, builds in alternation`);
  for (let pass = 0; pass < passes; pass++) {
    for (let i = 0; i < queries.length; i++) {
      const order = (i + pass) % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) {
        const { ms, response } = await build.server.request({ op: 'search', q: queries[i] });
        if (response.ok !== true) failed++;
        build.samples.push(ms);
      }
    }
  }
  return failed;
}

/** `rounds` fresh servers per build, builds in turns; each answers a first search (untimed), then every query once. Returns the failed count. */
async function freshServers(builds, queries, rounds, log) {
  for (const build of builds) {
    build.samples = [];
    build.rounds = [];
  }
  let failed = 0;
  log(`${rounds} fresh servers per build, in turns, ${queries.length} queries each`);
  for (let round = 0; round < rounds; round++) {
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const server = new StdioServer(build.bin, build.root);
      const samples = [];
      try {
        if ((await server.request({ op: 'search', q: queries[0] })).response.ok !== true) failed++;
        for (const q of queries) {
          const { ms, response } = await server.request({ op: 'search', q });
          if (response.ok !== true) failed++;
          samples.push(ms);
        }
      } finally {
        await server.close();
      }
      build.samples.push(...samples);
      build.rounds.push(summarize(samples));
    }
  }
  return failed;
}

process.exitCode = await main();
