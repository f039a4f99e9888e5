#!/usr/bin/env node
// Search round trips of `repodex serve --stdio`, this build against a baseline build, query by
// query in alternation (which build goes first alternates too), so a machine whose speed drifts
// moves both alike. Each build serves its own clone of the corpus, indexed by itself.
//
//   node bench/serve-latency.mjs <corpus> [--baseline-ref REF] [--queries N] [--passes N] [--seed S]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { prepareBaseline } from './baseline.mjs';
import { StdioServer, corpusArgs, corpusSelection, describeMachine, formatMs, git, listCorpusFiles, machineInfo, renderTable, runProcess, sampleQueries, summarize, syncCorpus } from './lib.mjs';

const USAGE = 'usage: node bench/serve-latency.mjs <corpus> [--baseline-ref REF] [--queries N] [--passes N] [--seed S]';
const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'repodex.js');
/** Searches each server answers before the measured ones (loads the index, warms the code). */
const WARMUP = 200;

async function main() {
  const args = corpusArgs(USAGE, { 'baseline-ref': { type: 'string', default: 'HEAD~1' }, queries: { type: 'string', default: '1000' }, passes: { type: 'string', default: '3' }, seed: { type: 'string', default: '42' } });
  if (args.exit !== undefined) return args.exit;
  const { corpus, values } = args;
  const count = Number(values.queries);
  const passes = Number(values.passes);
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(passes) || passes < 1) {
    process.stderr.write(`--queries and --passes must be whole numbers ≥ 1\n${USAGE}\n`);
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
    const summaries = builds.map((build) => summarize(build.samples));
    const rows = builds.map((build, i) => {
      const s = summaries[i];
      return [build.label, formatMs(s.median), formatMs(s.p90), formatMs(s.p99), formatMs(s.max), formatMs(s.mean)];
    });
    const [a, b] = summaries;
    rows.push(['ratio, this build / baseline', (b.median / a.median).toFixed(2), (b.p90 / a.p90).toFixed(2), (b.p99 / a.p99).toFixed(2), (b.max / a.max).toFixed(2), (b.mean / a.mean).toFixed(2)]);
    process.stdout.write(
      [
        '# repodex serve latency, two builds',
        '',
        `- date: ${new Date().toISOString()}`,
        `- machine: ${describeMachine(machineInfo())}`,
        `- corpus: ${corpus} @ ${git(corpus, ['rev-parse', 'HEAD']) ?? '(not git)'} (each build serves a clone it indexed)`,
        `- ${queries.length} corpus queries (seed ${values.seed}) × ${passes} passes over serve --stdio, client-side round trips, after ${WARMUP} warm-up searches each; ${failed} failed`,
        '',
        renderTable(['build', 'p50', 'p90', 'p99', 'max', 'mean'], rows, ['l', 'r', 'r', 'r', 'r', 'r']),
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

process.exitCode = await main();
