#!/usr/bin/env node
// Semantic layer latency and memory: one `repodex serve --stdio` process on an already-synced
// corpus (run `repodex sync` there first: it embeds), answering the same queries in bm25, vector
// and hybrid mode, interleaved query by query so machine noise lands on every mode alike. Prints
// p50/p90/p99 per mode, hybrid's cost over bm25 as a ratio, and the server's resident memory.
//
//   node bench/semantic.mjs --root /work/scratch/sem/x2 [--queries 200]
//
// The queries are the corpus's own terms (repodex picks them: warm-up sampling), in one- to
// three-word combinations, plus a few English questions.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(HERE, '..', 'bin', 'repodex.js');

function args() {
  const out = { root: '', queries: 200 };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--root') out.root = argv[++i];
    else if (argv[i] === '--queries') out.queries = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!out.root) throw new Error('--root DIR is required (a synced repository)');
  return out;
}

/** A JSONL session with one server: send a request, await its answer. */
function session(root) {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS; // adds a certificate load to every Node start on this machine
  const child = spawn(process.execPath, [CLI, 'serve', '--stdio', '--root', root], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  let buffer = '';
  const waiting = [];
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      waiting.shift()?.(JSON.parse(line));
    }
  });
  let id = 0;
  return {
    pid: child.pid,
    ask(request) {
      return new Promise((resolve) => {
        waiting.push(resolve);
        child.stdin.write(`${JSON.stringify({ id: id++, ...request })}\n`);
      });
    },
    close() {
      child.stdin.end();
      return new Promise((resolve) => child.on('exit', resolve));
    },
  };
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const QUESTIONS = [
  'where do we continue an interrupted upload',
  'how are cookies stored between sessions',
  'what happens when a request times out',
  'where is the browser process launched',
  'how do we wait for an element to be visible',
];

const opts = args();
const server = session(opts.root);
const status = (await server.ask({ op: 'status' })).data;
if (!status.semantic || status.semantic.state !== 'ready') {
  console.error(`the vectors are not ready (${status.semantic?.state}): run \`repodex sync\` in ${opts.root} first`);
  process.exit(1);
}
// Terms for queries: what the index holds, spread over the dictionary.
const sample = (await server.ask({ op: 'search', q: 'function', top_k: 20 })).data.results.map((hit) => hit.snippet);
const words = [...new Set(sample.join(' ').toLowerCase().match(/[a-z]{4,}/g) ?? [])];
const queries = [];
for (let i = 0; queries.length < opts.queries; i++) {
  if (i % 10 === 0) queries.push(QUESTIONS[(i / 10) % QUESTIONS.length]);
  else queries.push([words[i % words.length], words[(i * 7 + 3) % words.length], words[(i * 13 + 5) % words.length]].slice(0, 1 + (i % 3)).join(' '));
}
const modes = ['bm25', 'vector', 'hybrid'];
const times = Object.fromEntries(modes.map((mode) => [mode, []]));
// Warm up every mode (loads the vectors, compiles the scoring loops).
for (const mode of modes) for (const q of queries.slice(0, 20)) await server.ask({ op: 'search', q, mode });
for (const q of queries) {
  for (const mode of modes) {
    const started = process.hrtime.bigint();
    const answer = await server.ask({ op: 'search', q, mode });
    times[mode].push(Number(process.hrtime.bigint() - started) / 1e6);
    if (!answer.ok) throw new Error(`search failed: ${JSON.stringify(answer.error)}`);
    if (answer.data.mode !== mode) throw new Error(`asked ${mode}, answered ${answer.data.mode}: ${answer.data.warnings.join('; ')}`);
  }
}
const rss = rssMb(server.pid);
await server.close();

console.log(`corpus ${opts.root}: ${status.chunks} chunks, ${status.semantic.vectors} with vectors (${status.semantic.engine} ${status.semantic.model}, ${status.semantic.dim}-D)`);
console.log(`${queries.length} queries per mode, interleaved, one serve --stdio process (round trip over the pipe)\n`);
console.log('| mode | p50 ms | p90 ms | p99 ms | p50 vs bm25 |');
console.log('| --- | --- | --- | --- | --- |');
const base = percentile([...times.bm25].sort((a, b) => a - b), 50);
for (const mode of modes) {
  const sorted = [...times[mode]].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  console.log(`| ${mode} | ${p50.toFixed(2)} | ${percentile(sorted, 90).toFixed(2)} | ${percentile(sorted, 99).toFixed(2)} | ${(p50 / base).toFixed(2)}× |`);
}
console.log(`\nserver RSS after the run: ${rss.toFixed(0)} MB`);
