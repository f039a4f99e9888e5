#!/usr/bin/env node
// CI smoke benchmark: generate a deterministic synthetic corpus (~300 TypeScript, Python and
// Markdown files, a few MB) in a temp folder, then run sync, status, 200 serve-mode searches and a
// few one-shot searches against the built CLI, with rg (and codesearch) as in-run baselines when
// installed. Prints the same table as bench/run.mjs. Exits non-zero only when a repodex command
// fails (non-zero exit or invalid JSON); numbers never fail it, CI machines are too noisy.
// Usage: node bench/smoke.mjs [--keep] [--json out.json]   (after `npm run build`)
import { Buffer } from 'node:buffer';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  buildRows,
  corpusSelection,
  createRng,
  describeMachine,
  formatBytes,
  listCorpusFiles,
  machineInfo,
  measureCodesearch,
  measureRepodex,
  measureRg,
  renderResults,
  sampleQueries,
} from './lib.mjs';

const SEED = 20240601;
const FILES = { ts: 150, py: 100, md: 50 };
const RUNS = { sync: 3, status: 10, oneshot: 6 };
const SERVE_QUERIES = 200;
const ONE_SHOT_QUERIES = 3;

const log = (message) => process.stderr.write(`[smoke] ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Synthetic corpus: code-shaped text with camelCase/snake_case identifiers built from a fixed
// vocabulary and English-like comments, so both identifier and phrase queries find something.

const NOUNS = (
  'account action adapter agent alias anchor archive asset audit batch binary block branch buffer bundle cache ' +
  'callback candidate channel chunk client cluster column commit config context cursor daemon delta digest ' +
  'document domain draft driver entry event export field filter folder format frame gateway graph handler header ' +
  'index input issue job kernel label layer ledger limit listener loader lock logger manifest marker member message ' +
  'metric module monitor node offset option order outline packet page parser patch path payload peer pipeline plugin ' +
  'policy pool port posting prefix process profile prompt provider proxy query queue quota range reader record region ' +
  'registry report request resolver resource response result route rule runner sample schema scope score segment ' +
  'selector session shard signal snapshot socket source span state status store stream suffix summary symbol table ' +
  'task template tenant term thread token topic trace tracker transaction tree trigger upload user value vector ' +
  'version view watcher window worker writer'
).split(' ');
const VERBS = (
  'apply build check close collect compute create decode delete encode ensure fetch find flush format handle load ' +
  'merge normalize open parse prepare read refresh register release render resolve restore scan select send split ' +
  'start stop store sync track update validate verify watch write'
).split(' ');
const ADJECTIVES = 'active cached current default dirty empty final first initial last local pending primary raw remote stale'.split(' ');
const GLUE = 'the a each every when before after if unless until so that then because while with without into from for of'.split(' ');
const TYPES = ['string', 'number', 'boolean', 'Uint8Array', 'readonly string[]', 'Map<string, number>'];

function makeWriter(rng) {
  const pick = (list) => list[Math.floor(rng() * list.length)];
  const between = (low, high) => low + Math.floor(rng() * (high - low + 1));
  const cap = (word) => word[0].toUpperCase() + word.slice(1);
  const sentence = (min, max) => {
    const words = [];
    const length = between(min, max);
    while (words.length < length) words.push(rng() < 0.35 ? pick(GLUE) : rng() < 0.5 ? pick(NOUNS) : rng() < 0.5 ? pick(VERBS) : pick(ADJECTIVES));
    return cap(words.join(' '));
  };
  const camel = () => `${pick(VERBS)}${cap(pick(ADJECTIVES))}${cap(pick(NOUNS))}`;
  const pascal = () => `${cap(pick(ADJECTIVES))}${cap(pick(NOUNS))}${cap(pick(NOUNS))}`;
  const snake = () => `${pick(VERBS)}_${pick(ADJECTIVES)}_${pick(NOUNS)}`;
  return { pick, between, sentence, camel, pascal, snake, cap };
}

function typescriptFile(w, targetBytes) {
  const parts = [`// ${w.sentence(6, 14)}.`, `import { ${w.camel()}, ${w.camel()} } from './${w.pick(NOUNS)}-${w.pick(NOUNS)}.js';`, ''];
  let size = 0;
  while (size < targetBytes) {
    let block;
    if (w.pick([0, 1, 2]) === 0) {
      const name = w.pascal();
      const field = w.camel();
      block = [
        `/** ${w.sentence(6, 16)}. */`,
        `export class ${name} {`,
        `  private ${field}: ${w.pick(TYPES)} | undefined;`,
        '',
        `  // ${w.sentence(5, 12)}.`,
        `  ${w.camel()}(${w.pick(NOUNS)}Id: number): boolean {`,
        `    const ${w.pick(NOUNS)}Count = this.${field} === undefined ? 0 : ${w.between(1, 999)};`,
        `    return ${w.camel()}(${w.pick(NOUNS)}Id) > ${w.between(1, 99)};`,
        '  }',
        '}',
      ];
    } else {
      const local = `${w.pick(ADJECTIVES)}${w.cap(w.pick(NOUNS))}`;
      block = [
        `/**`,
        ` * ${w.sentence(8, 18)}.`,
        ` * ${w.sentence(6, 14)}.`,
        ' */',
        `export function ${w.camel()}(${w.pick(NOUNS)}: ${w.pick(TYPES)}, limit = ${w.between(1, 500)}): ${w.pick(TYPES)} | null {`,
        `  const ${local} = ${w.camel()}(limit);`,
        `  // ${w.sentence(5, 12)}.`,
        `  if (${local} === null || limit > ${w.between(10, 5000)}) {`,
        `    throw new Error('${w.sentence(4, 9).toLowerCase()}');`,
        '  }',
        `  for (let i = 0; i < limit; i++) ${w.camel()}(${local}, i);`,
        `  return ${w.camel()}(${local});`,
        '}',
      ];
    }
    const text = `${block.join('\n')}\n\n`;
    parts.push(text);
    size += text.length;
  }
  return parts.join('\n');
}

function pythonFile(w, targetBytes) {
  const parts = [`"""${w.sentence(6, 14)}."""\n`, `from .${w.pick(NOUNS)} import ${w.snake()}, ${w.snake()}\n\n\n`];
  let size = 0;
  while (size < targetBytes) {
    const lines = [];
    if (w.pick([0, 1, 2]) === 0) {
      lines.push(`class ${w.pascal()}:`, `    """${w.sentence(6, 14)}."""`, '');
      for (let i = w.between(1, 3); i > 0; i--) {
        lines.push(`    def ${w.snake()}(self, ${w.pick(NOUNS)}_id: int) -> bool:`, `        # ${w.sentence(5, 12)}.`, `        return ${w.snake()}(${w.pick(NOUNS)}_id) > ${w.between(1, 99)}`, '');
      }
    } else {
      const local = `${w.pick(ADJECTIVES)}_${w.pick(NOUNS)}`;
      lines.push(
        `def ${w.snake()}(${w.pick(NOUNS)}, limit=${w.between(1, 500)}):`,
        `    """${w.sentence(8, 18)}.`,
        '',
        `    ${w.sentence(6, 14)}.`,
        '    """',
        `    ${local} = ${w.snake()}(limit)`,
        `    # ${w.sentence(5, 12)}.`,
        `    if ${local} is None or limit > ${w.between(10, 5000)}:`,
        `        raise ValueError("${w.sentence(4, 9).toLowerCase()}")`,
        `    for index in range(limit):`,
        `        ${w.snake()}(${local}, index)`,
        `    return ${w.snake()}(${local})`,
      );
    }
    const text = `${lines.join('\n')}\n\n\n`;
    parts.push(text);
    size += text.length;
  }
  return parts.join('');
}

function markdownFile(w, targetBytes) {
  const parts = [`# ${w.sentence(2, 5)}`, '', `${w.sentence(10, 24)}. ${w.sentence(8, 20)}.`, ''];
  let size = 0;
  while (size < targetBytes) {
    const lines = [`## ${w.sentence(2, 6)}`, ''];
    for (let i = w.between(1, 3); i > 0; i--) lines.push(`${w.sentence(10, 24)}. ${w.sentence(8, 20)}. ${w.sentence(6, 16)}.`, '');
    if (w.pick([0, 1]) === 0) {
      for (let i = w.between(2, 5); i > 0; i--) lines.push(`- ${w.sentence(4, 10)} (\`${w.camel()}\`)`);
      lines.push('');
    } else {
      lines.push('```ts', `const ${w.pick(NOUNS)} = ${w.camel()}({ ${w.pick(NOUNS)}: ${w.between(1, 99)} });`, '```', '');
    }
    const text = `${lines.join('\n')}\n`;
    parts.push(text);
    size += text.length;
  }
  return parts.join('\n');
}

/** Write the synthetic corpus into `root`; the same seed always writes the same bytes. */
function generateCorpus(root, seed) {
  const rng = createRng(seed);
  const w = makeWriter(rng);
  let bytes = 0;
  const write = (path, text) => {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
    bytes += Buffer.byteLength(text);
  };
  const packages = ['core', 'engine', 'server', 'client', 'storage', 'cli'];
  for (let i = 0; i < FILES.ts; i++) write(`packages/${packages[i % packages.length]}/src/${w.pick(NOUNS)}-${w.pick(NOUNS)}-${i}.ts`, typescriptFile(w, w.between(4_000, 20_000)));
  const services = ['ingest', 'billing', 'search', 'auth'];
  for (let i = 0; i < FILES.py; i++) write(`services/${services[i % services.length]}/${w.pick(NOUNS)}_${w.pick(NOUNS)}_${i}.py`, pythonFile(w, w.between(3_000, 16_000)));
  for (let i = 0; i < FILES.md; i++) write(`docs/${w.pick(['guide', 'reference', 'design'])}/${w.pick(NOUNS)}-${i}.md`, markdownFile(w, w.between(2_000, 10_000)));
  write('README.md', markdownFile(w, 3_000));
  return { files: FILES.ts + FILES.py + FILES.md + 1, bytes };
}

async function main() {
  const { values } = parseArgs({ options: { keep: { type: 'boolean' }, json: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write('usage: node bench/smoke.mjs [--keep] [--json out.json]\n');
    return 0;
  }
  const started = performance.now();
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const bin = join(repo, 'bin', 'repodex.js');
  if (!existsSync(join(repo, 'dist', 'cli.js'))) {
    process.stderr.write('dist/cli.js is missing: run `npm run build` first\n');
    return 1;
  }
  const corpus = mkdtempSync(join(os.tmpdir(), 'repodex-smoke-'));
  try {
    const generated = generateCorpus(corpus, SEED);
    log(`generated ${generated.files} files (${formatBytes(generated.bytes)}) in ${corpus}`);
    const selection = corpusSelection(corpus);
    const files = listCorpusFiles(corpus, selection);
    const sample = sampleQueries(corpus, files, SERVE_QUERIES, SEED);
    const oneShot = sample.identifiers.slice(0, ONE_SHOT_QUERIES);

    const rg = await measureRg({ corpus, selection, queries: oneShot, runs: RUNS.oneshot, log });
    const codesearch = await measureCodesearch({ corpus, files, queries: oneShot, runs: RUNS.oneshot, indexRuns: RUNS.sync, log });
    const current = await measureRepodex({ bin, corpus, queries: sample.queries, oneShotQueries: oneShot, runs: RUNS, log });
    const machine = machineInfo();

    const rows = buildRows({ current, baseline: null, rg, codesearch });
    const lines = [
      '# repodex smoke benchmark (synthetic corpus)',
      '',
      `- date: ${new Date().toISOString()}`,
      `- machine: ${describeMachine(machine)}`,
      `- corpus: ${files.length} generated files (seed ${SEED}), ${formatBytes(generated.bytes)}`,
      `- serve queries: ${sample.queries.length}, one at a time; one-shot: ${RUNS.oneshot} runs over ${oneShot.map((q) => `\`${q}\``).join(', ')}`,
      `- rg: ${rg.skipped ?? `${rg.version}, -i --fixed-strings`}`,
      `- codesearch: ${codesearch.skipped ?? `cindex over ${codesearch.input}; csearch -i`}`,
      '',
      renderResults(rows, null),
      '',
      'Targets are set for the reference corpus (a clone of microsoft/playwright); here they are informational.',
      'Ratios are repodex ÷ the other column: below 1× repodex is faster (or smaller).',
    ];
    if (current.serve) lines.push(`Serve: ${current.serve.failed} failed searches, ${current.serve.empty_results} of ${current.serve.queries + 1} with no results.`);
    for (const warning of current.warnings) lines.push(`Warning: ${warning}`);
    for (const error of current.errors) lines.push(`ERROR: ${error}`);
    lines.push(`Total time: ${((performance.now() - started) / 1000).toFixed(1)} s.`);
    process.stdout.write(`${lines.join('\n')}\n`);

    if (values.json) {
      const out = resolve(values.json);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), machine, corpus: { files: files.length, bytes: generated.bytes, seed: SEED }, rg, codesearch, current, rows }, null, 2)}\n`);
      log(`wrote ${out}`);
    }
    return current.errors.length > 0 ? 1 : 0;
  } finally {
    if (values.keep) log(`kept the corpus at ${corpus}`);
    else rmSync(corpus, { recursive: true, force: true });
  }
}

process.exitCode = await main();
