#!/usr/bin/env node
// What a long query costs: bug reports of 10 KB (the dev set's reports, each repeated to that size)
// against short queries drawn from the corpus, on one `serve --stdio`, interleaved one by one.
//
//   node bench/long-query.mjs <corpus> [--requests N] [--size BYTES] [--seed S]
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StdioServer, corpusSelection, describeMachine, formatMs, git, listCorpusFiles, machineInfo, renderTable, sampleQueries, corpusArgs, syncCorpus, summarize } from './lib.mjs';

const USAGE = 'usage: node bench/long-query.mjs <corpus> [--requests N] [--size BYTES] [--seed S]';
const BIN = resolve(import.meta.dirname, '..', 'bin', 'repodex.js');

async function main() {
  const args = corpusArgs(USAGE, { requests: { type: 'string', default: '200' }, size: { type: 'string', default: '10240' }, seed: { type: 'string', default: '3' } });
  if (args.exit !== undefined) return args.exit;
  const { corpus, values } = args;
  const count = Number(values.requests);
  const size = Number(values.size);
  await syncCorpus(BIN, corpus);
  const reports = JSON.parse(readFileSync(join(import.meta.dirname, 'quality', 'bug-tasks.json'), 'utf8')).map((task) => task.query);
  const long = reports.map((text) => text.repeat(Math.ceil(size / text.length)).slice(0, size));
  const short = sampleQueries(corpus, listCorpusFiles(corpus, corpusSelection(corpus)), count, Number(values.seed)).queries.map((entry) => entry.q);
  const server = new StdioServer(BIN, corpus);
  await server.request({ op: 'search', q: short[0] }); // loads the index
  const samples = { long: [], short: [] };
  let failed = 0;
  for (let i = 0; i < count; i++) {
    for (const [kind, q] of [
      ['long', long[i % long.length]],
      ['short', short[i % short.length]],
    ]) {
      const { ms, response } = await server.request({ op: 'search', q, top_k: 10 });
      if (!response.ok) failed++;
      samples[kind].push(ms);
    }
  }
  const problem = await server.close();
  if (problem) throw new Error(problem);
  const rows = Object.entries(samples).map(([kind, list]) => {
    const s = summarize(list);
    return [kind === 'long' ? `bug report, ${size} bytes` : 'short query (corpus sample)', formatMs(s.median), formatMs(s.p90), formatMs(s.p99), formatMs(s.max)];
  });
  process.stdout.write(
    [
      '# repodex long-query latency',
      '',
      `- date: ${new Date().toISOString()}`,
      `- machine: ${describeMachine(machineInfo())}`,
      `- corpus: ${corpus} @ ${git(corpus, ['rev-parse', 'HEAD']) ?? '(not git)'}`,
      `- build: ${git(resolve(import.meta.dirname, '..'), ['rev-parse', '--short=10', 'HEAD'])}`,
      `- ${count} of each, interleaved, over serve --stdio (client-side round trips); ${failed} failed`,
      '',
      renderTable(['query', 'p50', 'p90', 'p99', 'max'], rows, ['l', 'r', 'r', 'r', 'r']),
      '',
    ].join('\n'),
  );
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
