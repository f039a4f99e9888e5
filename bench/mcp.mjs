#!/usr/bin/env node
// MCP round trips on a real corpus: `repo.search`, `repo.open_file` and `repo.outline` through
// `repodex serve --mcp`, driven by the MCP SDK's own client over stdio (what an agent's client
// does), against the same requests over `serve --stdio` (the JSONL protocol) in the same run.
// Rounds alternate which server goes first; each answer is timed on the client side.
//
//   node bench/mcp.mjs <corpus> [--requests N] [--rounds N] [--seed S] [--json out.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StdioServer,
  benchEnv,
  corpusSelection,
  createRng,
  describeMachine,
  formatMs,
  git,
  listCorpusFiles,
  machineInfo,
  renderTable,
  corpusArgs,
  syncCorpus,
  sampleQueries,
  summarize,
} from './lib.mjs';

const USAGE = 'usage: node bench/mcp.mjs <corpus> [--requests N] [--rounds N] [--seed S] [--json out.json]';
const BIN = resolve(import.meta.dirname, '..', 'bin', 'repodex.js');
const OUTLINED = new Set(['.ts', '.tsx', '.js', '.py', '.go', '.rs', '.java', '.c', '.cc', '.cpp', '.cs', '.rb', '.php']);

const log = (message) => process.stderr.write(`[mcp] ${message}\n`);

/** The requests of one kind, as MCP tool calls and as the equivalent JSONL ops. */
function workload(corpus, count, seed) {
  const files = listCorpusFiles(corpus, corpusSelection(corpus));
  const rng = createRng(seed);
  const queries = sampleQueries(corpus, files, count, seed).queries.map((entry) => entry.q);
  const pick = (list) => list[Math.floor(rng() * list.length)];
  // `**/secrets.*` is denylisted (tests/mcp/secrets.spec.ts would be refused, not outlined).
  const outlinable = files.filter((file) => OUTLINED.has(file.path.slice(file.path.lastIndexOf('.'))) && !/(^|\/)secrets\./i.test(file.path));
  const opens = Array.from({ length: count }, () => {
    const file = pick(files);
    const text = readFileSync(join(corpus, file.path), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const start = 1 + Math.floor(rng() * Math.min(40, lines));
    return { path: file.path, start_line: start, end_line: start + 59 };
  });
  const outlines = Array.from({ length: count }, () => pick(outlinable).path);
  return {
    search: queries.map((q) => ({ mcp: ['repo.search', { query: q, top_k: 10 }], jsonl: { op: 'search', q, top_k: 10 } })),
    open_file: opens.map((open) => ({ mcp: ['repo.open_file', open], jsonl: { op: 'open', ...open } })),
    outline: outlines.map((path) => ({ mcp: ['repo.outline', { path }], jsonl: { op: 'outline', path } })),
  };
}

async function mcpServer(corpus) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--mcp', '--root', corpus], env: benchEnv(), stderr: 'pipe' });
  const client = new Client({ name: 'repodex-bench', version: '1.0.0' });
  await client.connect(transport);
  return {
    async call([name, args]) {
      const started = performance.now();
      const result = await client.callTool({ name, arguments: args });
      const ms = performance.now() - started;
      return { ms, ok: result.structuredContent?.ok === true };
    },
    close: () => client.close(),
  };
}

async function jsonlServer(corpus) {
  const server = new StdioServer(BIN, corpus);
  return {
    async call(body) {
      const { ms, response } = await server.request(body);
      return { ms, ok: response.ok === true };
    },
    close: () => server.close(),
  };
}

async function main() {
  const args = corpusArgs(USAGE, { requests: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' }, seed: { type: 'string', default: '7' }, json: { type: 'string' } });
  if (args.exit !== undefined) return args.exit;
  const { corpus, values } = args;
  const count = Number(values.requests);
  const rounds = Number(values.rounds);
  log('sync (so every request answers from a fresh index)');
  await syncCorpus(BIN, corpus);
  const work = workload(corpus, count, Number(values.seed));
  const samples = { mcp: { search: [], open_file: [], outline: [] }, jsonl: { search: [], open_file: [], outline: [] } };
  let failed = 0;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['mcp', 'jsonl'] : ['jsonl', 'mcp'];
    for (const kind of order) {
      log(`round ${round + 1}/${rounds}: ${kind}`);
      const server = kind === 'mcp' ? await mcpServer(corpus) : await jsonlServer(corpus);
      // One untimed call of each tool: the first search loads the index.
      for (const tool of Object.keys(work)) await server.call(work[tool][0][kind]);
      for (const tool of Object.keys(work)) {
        for (const request of work[tool]) {
          const { ms, ok } = await server.call(request[kind]);
          if (!ok) {
            failed++;
            if (failed <= 5) log(`failed: ${kind} ${JSON.stringify(request[kind]).slice(0, 200)}`);
          }
          samples[kind][tool].push(ms);
        }
      }
      await server.close();
    }
  }
  const rows = [];
  for (const tool of Object.keys(work)) {
    const mcp = summarize(samples.mcp[tool]);
    const jsonl = summarize(samples.jsonl[tool]);
    rows.push([`repo.${tool}`, formatMs(mcp.median), formatMs(mcp.p99), formatMs(mcp.max), formatMs(jsonl.median), formatMs(jsonl.p99), `${(mcp.median / jsonl.median).toFixed(2)}×`]);
  }
  const head = git(corpus, ['rev-parse', 'HEAD']);
  const report = [
    '# repodex MCP round trips',
    '',
    `- date: ${new Date().toISOString()}`,
    `- machine: ${describeMachine(machineInfo())}`,
    `- corpus: ${corpus}${head ? ` @ ${head}` : ''}`,
    `- build: ${join(import.meta.dirname, '..')} @ ${git(join(import.meta.dirname, '..'), ['rev-parse', '--short=10', 'HEAD'])}`,
    `- requests: ${count} per tool per round, ${rounds} rounds per server (alternating which server goes first); search top_k 10, open_file 60-line ranges, outline of source files; ${failed} failed`,
    '',
    renderTable(['tool', 'MCP p50', 'MCP p99', 'MCP max', 'JSONL p50', 'JSONL p99', 'MCP ÷ JSONL p50'], rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']),
    '',
    'Round trips are client-side: from the request written to the answer parsed (the MCP SDK client also validates each answer against the tool\'s output schema).',
  ].join('\n');
  process.stdout.write(`${report}\n`);
  if (values.json) writeFileSync(values.json, JSON.stringify({ samples, failed }, null, 2));
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
