#!/usr/bin/env node
/**
 * Retrieval-quality evaluation over mined tasks (see README.md).
 *
 * For every task the parent tree is extracted once (`git archive <parent> | tar -x`), then each
 * variant ranks files for the task's query: repodex variants run the built CLI
 * (`repodex search --json --top-k 20`) under extra environment variables or arguments, and the
 * `rg` baseline ranks files by how many distinct query keywords ripgrep finds in them, and the
 * `bm25file` baseline ranks whole source files by BM25. Both weigh test files like the default
 * profile does (0.7). Scores are file-level Recall@1/5/10 and MRR, per repository and overall,
 * with paired bootstrap 95% confidence intervals of each variant's difference from the first.
 *
 * Usage: node bench/quality/eval.mjs [options]
 *   --tasks A,B          task files (default bench/quality/tasks.json and bug-tasks.json)
 *   --clones DIR         clones, one directory per repository name (default $REPODEX_QUALITY_CLONES
 *                        or /work/scratch/quality)
 *   --variant NAME=SPEC  add (or replace) a variant; SPEC is whitespace-separated KEY=VALUE
 *                        environment settings and/or extra search arguments, e.g.
 *                        --variant noboost=REPODEX_BOOSTS=0  --variant "idf=--mode idf"
 *                        (defaults: bm25="", noboost="REPODEX_BOOSTS=0", and the rg baseline);
 *                        `{srcglob}` in an argument becomes the repository's source-extension
 *                        glob, e.g. --variant "bm25src=--glob {srcglob}" ranks only what rg ranks
 *   --split S            dev (default: the tuning half), held (the held-back half: look at it
 *                        only once tuning is done) or all; tasks alternate dev/held within each
 *                        repository in chronological order
 *   --only A,B           run only these variants
 *   --repo NAME          only tasks of this repository
 *   --limit N            only the first N tasks (after --repo)
 *   --jobs N             parent trees processed at once (default: min(2, CPUs))
 *   --cache DIR          keep extracted trees in DIR across runs (indexes are still rebuilt
 *                        unless --reuse-index); default: a temporary directory, removed at the end
 *   --reuse-index        with --cache: keep existing .repodex indexes (only when the indexer did
 *                        not change since they were built); each is synced once before its searches
 *   --first-search       rank with what a first search on an unindexed tree answers: every repodex
 *                        search runs on a tree with no index, so a large one is answered from a
 *                        partial index (default: the whole index is built first, by `repodex sync`)
 *   --cli FILE           repodex entry point (default bin/repodex.js of this checkout)
 *   --json FILE          also write per-task ranks and the summary as JSON
 *   --verbose            print each task's first-gold rank per variant
 */
import { Buffer } from 'node:buffer';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SKIP_DIRS, createRng } from '../lib.mjs';
import { graphFacts, importGraph } from './imports.mjs';
import { BUG_REPOS } from './mine-bugs.mjs';
import { REPOS } from './mine.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PROJECT = path.resolve(HERE, '..', '..');
const TOP_K = 20;
const CUTOFFS = [1, 5, 10];
const RG_VARIANT = 'rg';
/** The whole-file BM25 baseline over source files (see fileBm25Rank). */
const FILE_BM25_VARIANT = 'bm25file';
/** The same over non-test source files only (tests and docs ignored), as the held-out evaluation's baseline. */
const SRC_BM25_VARIANT = 'bm25src';
/** Languages of the repositories, for the per-task-type report. */
const LANGUAGE = {
  trpc: 'TypeScript', 'svelte-kit': 'TypeScript', nuxt: 'TypeScript', unocss: 'TypeScript', astro: 'TypeScript',
  vitest: 'TypeScript', 'tanstack-query': 'TypeScript', 'react-router': 'TypeScript', svelte: 'TypeScript',
  poetry: 'Python', httpx: 'Python', click: 'Python', fzf: 'Go', gin: 'Go', cobra: 'Go', ripgrep: 'Rust', jsoup: 'Java',
  express: 'JavaScript', eslint: 'JavaScript', karma: 'JavaScript', 'commons-lang': 'Java', mockito: 'Java',
};
/** The TypeScript monorepos whose fix commits are a task type of their own (what the outside evaluation found weakest). */
const MONOREPOS = new Set(['svelte-kit', 'nuxt', 'unocss', 'astro', 'vitest', 'tanstack-query', 'react-router', 'svelte']);
const MONOREPO_TYPE = 'TS monorepo fixes';
/** Weight of test files in the baselines: the default ranking profile's test weight (src/search/ranking.ts). */
const BASELINE_TEST_WEIGHT = 0.7;
const BOOTSTRAP_SAMPLES = 10_000;

/** English stopwords dropped from rg keywords: the list repodex's tokenizer uses (src/text/tokenizer.ts). */
const STOPWORDS = new Set([
  'a', 'about', 'all', 'also', 'an', 'and', 'any', 'are', 'as', 'at', 'be', 'been', 'but', 'by', 'can',
  'could', 'did', 'do', 'does', 'done', 'each', 'for', 'from', 'had', 'has', 'have', 'he', 'her', 'his',
  'how', 'i', 'if', 'in', 'into', 'is', 'it', 'its', 'me', 'my', 'of', 'on', 'or', 'our', 'she', 'should',
  'so', 'some', 'such', 'than', 'that', 'the', 'their', 'them', 'then', 'there', 'these', 'they', 'this',
  'those', 'to', 'was', 'we', 'were', 'what', 'when', 'where', 'which', 'while', 'who', 'whom', 'why',
  'will', 'with', 'would', 'you', 'your',
]);

function parseArgs(argv) {
  const opts = {
    tasks: [path.join(HERE, 'tasks.json'), path.join(HERE, 'bug-tasks.json')],
    clones: process.env.REPODEX_QUALITY_CLONES || '/work/scratch/quality',
    variants: new Map([
      ['bm25', ''],
      ['noboost', 'REPODEX_BOOSTS=0'],
      [RG_VARIANT, ''],
      [FILE_BM25_VARIANT, ''],
      [SRC_BM25_VARIANT, ''],
    ]),
    split: 'dev',
    only: null,
    repo: '',
    limit: Infinity,
    jobs: Math.max(1, Math.min(2, os.availableParallelism?.() ?? os.cpus().length)),
    cache: '',
    reuseIndex: false,
    firstSearch: false,
    cli: path.join(PROJECT, 'bin', 'repodex.js'),
    json: '',
    verbose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--tasks') opts.tasks = next().split(',').filter(Boolean);
    else if (a === '--clones') opts.clones = next();
    else if (a === '--variant') {
      const spec = next();
      const eq = spec.indexOf('=');
      if (eq <= 0) throw new Error(`--variant needs NAME=SPEC, got ${JSON.stringify(spec)}`);
      opts.variants.set(spec.slice(0, eq), spec.slice(eq + 1));
    } else if (a === '--only') opts.only = next().split(',').filter(Boolean);
    else if (a === '--repo') opts.repo = next();
    else if (a === '--split') {
      opts.split = next();
      if (!['dev', 'held', 'all'].includes(opts.split)) throw new Error(`--split must be dev, held or all, got ${opts.split}`);
    }
    else if (a === '--limit') opts.limit = Number(next());
    else if (a === '--jobs') opts.jobs = Math.max(1, Number(next()));
    else if (a === '--cache') opts.cache = next();
    else if (a === '--reuse-index') opts.reuseIndex = true;
    else if (a === '--first-search') opts.firstSearch = true;
    else if (a === '--cli') opts.cli = next();
    else if (a === '--json') opts.json = next();
    else if (a === '--verbose') opts.verbose = true;
    else throw new Error(`unknown argument ${a} (see the header of bench/quality/eval.mjs)`);
  }
  return opts;
}

/** Which half a task is in: within each repository, in file order, tasks alternate dev, held, dev, … */
function splitOf(task, tasks) {
  const index = tasks.filter((t) => t.repo === task.repo).indexOf(task);
  return index % 2 === 0 ? 'dev' : 'held';
}

/** A variant spec as environment settings plus extra CLI arguments. */
function parseSpec(spec) {
  const env = {};
  const args = [];
  for (const token of spec.split(/\s+/).filter(Boolean)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(token);
    if (m) env[m[1]] = m[2];
    else args.push(token);
  }
  return { env, args };
}

/**
 * Run a program to completion; resolves with its exit code and output (never rejects on exit code).
 * repodex commands run in their own processes: none starts a daemon for a task's tree.
 */
function run(cmd, args, { cwd, env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...env, REPODEX_DAEMON: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
  });
}

/** Extract `parent`'s tree into `dir` with `git archive | tar -x`, once (a sibling marker records completion). */
async function materialize(clone, parent, dir) {
  const marker = `${dir}.complete`; // outside the tree, so it is never indexed or ranked
  if (existsSync(marker)) return;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let gitErr = '';
  await new Promise((resolve, reject) => {
    const git = spawn('git', ['-C', clone, 'archive', '--format=tar', parent], { stdio: ['ignore', 'pipe', 'pipe'] });
    const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    let tarErr = '';
    git.stderr.on('data', (d) => (gitErr += d));
    tar.stderr.on('data', (d) => (tarErr += d));
    git.stdout.pipe(tar.stdin);
    let pending = 2;
    let failure = null;
    const done = (what, errText) => (code) => {
      if (code !== 0 && !failure) failure = new Error(`${what} failed (${code}): ${errText()}`);
      if (--pending > 0) return;
      if (failure) reject(failure);
      else resolve();
    };
    git.on('close', done(`git archive ${parent}`, () => gitErr));
    tar.on('close', done('tar -x', () => tarErr));
    git.on('error', reject);
    tar.on('error', reject);
  }).catch((error) => {
    // A clone from a mirror that leaves out its largest blobs (release bundles, say) cannot
    // archive a tree that holds one: extract the blobs it has, one by one, and name the rest.
    if (!/invalid object|cannot read/.test(`${gitErr}\n${error.message}`)) throw error;
    const missing = extractPresent(clone, parent, dir);
    process.stderr.write(`\n${path.basename(clone)} ${parent.slice(0, 10)}: ${missing.length} blob(s) missing from the clone, left out: ${missing.slice(0, 3).join(', ')}\n`);
  });
  writeFileSync(marker, `${parent}\n`);
}

/** Extract a tree blob by blob, skipping blobs the clone does not hold; returns their paths. */
function extractPresent(clone, parent, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const entries = execFileSync('git', ['-C', clone, 'ls-tree', '-r', '-z', parent], { maxBuffer: 1 << 30 })
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, type, hash] = line.slice(0, tab).split(' ');
      return { mode, type, hash, file: line.slice(tab + 1) };
    })
    .filter((entry) => entry.type === 'blob');
  const missing = [];
  for (const entry of entries) {
    let body;
    try {
      body = execFileSync('git', ['-C', clone, 'cat-file', 'blob', entry.hash], { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      missing.push(entry.file);
      continue;
    }
    const target = path.join(dir, entry.file);
    mkdirSync(path.dirname(target), { recursive: true });
    if (entry.mode === '120000') symlinkSync(body.toString('utf8'), target);
    else writeFileSync(target, body, { mode: entry.mode === '100755' ? 0o755 : 0o644 });
  }
  return missing;
}

/**
 * Give an extracted tree its history, as a checkout has: a `.git` whose HEAD is `parent` and whose
 * objects are the clone's (an alternate, nothing copied). The index reads commit subjects from it
 * (`history`); the tree itself is untouched.
 */
function attachHistory(clone, parent, dir) {
  const gitDir = path.join(dir, '.git');
  if (existsSync(path.join(gitDir, 'HEAD'))) return;
  execFileSync('git', ['init', '-q', dir]);
  const objects = execFileSync('git', ['-C', clone, 'rev-parse', '--path-format=absolute', '--git-path', 'objects'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(gitDir, 'objects', 'info', 'alternates'), `${objects}\n`);
  writeFileSync(path.join(gitDir, 'HEAD'), `${parent}\n`);
}

/** Source files of a tree (the repository's extensions, skipped folders left out). */
function sourceFiles(dir, exts) {
  const skip = new Set(SKIP_DIRS);
  const out = [];
  const walk = (rel) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const file = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!skip.has(entry.name)) walk(file);
      } else if (entry.isFile() && exts.includes(path.extname(entry.name).slice(1).toLowerCase())) out.push(file);
    }
  };
  walk('');
  return out;
}

const graphs = new Map();

/** A re-ranking experiment's setting (`n:0.5,k:3`) as numbers by name. */
function probeWeights(setting) {
  return Object.fromEntries(setting.split(',').map((kv) => kv.split(':')).map(([k, v]) => [k, Number(v)]));
}

/** Each file of a search's results with its best chunk's score, in the answer's order. */
function bestScores(results) {
  const best = new Map();
  for (const r of results) if (!best.has(r.path)) best.set(r.path, r.score);
  return best;
}

/** Files by a re-ranking's score, ties in the answer's order. */
function byScore(scored) {
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  return scored.map((x) => x.file);
}

/**
 * An import-graph re-ranking of repodex's files (an experiment: `IMPORTS=c:0.3,n:0.5` in a
 * variant). Each file's score is its best chunk's; centrality multiplies it by
 * 1 + c·log(1 + in-degree) / log(1 + max in-degree); a neighbour (imports or is imported by) of
 * the top file gains n × the top file's score.
 */
function importRerank(dir, exts, results, setting) {
  const weights = probeWeights(setting);
  if (!graphs.has(dir)) graphs.set(dir, graphFacts(importGraph(dir, sourceFiles(dir, exts))));
  const { indegree, neighbours } = graphs.get(dir);
  const best = bestScores(results);
  const files = [...best.keys()];
  if (files.length === 0) return files;
  const maxIn = Math.max(1, ...indegree.values());
  const top = files[0];
  const topScore = best.get(top);
  const scored = files.map((file, i) => {
    let score = best.get(file) * (1 + (weights.c ?? 0) * (Math.log1p(indegree.get(file) ?? 0) / Math.log1p(maxIn)));
    if (file !== top && neighbours.get(top)?.has(file)) score += (weights.n ?? 0) * topScore;
    return { file, score, i };
  });
  return byScore(scored);
}

const cochanges = new Map();

/**
 * Which files changed together, from the history repodex keeps beside the index (each file's
 * recent commit subjects, pull request numbers and all): two files listing one subject changed in
 * one commit. Subjects listed by more than 20 files (sweeping changes) are left out.
 */
function cochangeFacts(dir) {
  const kept = JSON.parse(readFileSync(path.join(dir, '.repodex', 'history.json'), 'utf8'));
  const bySubject = new Map();
  const changes = new Map();
  for (const [file, subjects] of Object.entries(kept.files)) {
    changes.set(file, subjects.length);
    for (const subject of subjects) {
      let files = bySubject.get(subject);
      if (!files) bySubject.set(subject, (files = []));
      files.push(file);
    }
  }
  const pairs = new Map();
  for (const files of bySubject.values()) {
    if (files.length > 20) continue;
    for (const a of files) {
      let row = pairs.get(a);
      if (!row) pairs.set(a, (row = new Map()));
      for (const b of files) if (b !== a) row.set(b, (row.get(b) ?? 0) + 1);
    }
  }
  return { pairs, changes };
}

/**
 * A co-change re-ranking of repodex's files (an experiment: `COCHANGE=n:0.5,k:3` in a variant):
 * each file's score is its best chunk's, plus n × Σ over the first k files f of f's score × the
 * share of f's commits that also changed it.
 */
function cochangeRerank(dir, results, setting) {
  const weights = probeWeights(setting);
  if (!cochanges.has(dir)) cochanges.set(dir, cochangeFacts(dir));
  const { pairs, changes } = cochanges.get(dir);
  const best = bestScores(results);
  const files = [...best.keys()];
  const leaders = files.slice(0, weights.k ?? 3);
  const scored = files.map((file, i) => {
    let score = best.get(file);
    for (const f of leaders) {
      if (f === file) continue;
      const together = pairs.get(f)?.get(file) ?? 0;
      if (together > 0) score += (weights.n ?? 0) * best.get(f) * (together / (changes.get(f) + 1));
    }
    return { file, score, i };
  });
  return byScore(scored);
}

/**
 * A same-folder re-ranking of repodex's files (an experiment: `SIBLING=n:0.3,k:1` in a variant):
 * each file's score is its best chunk's, plus n × the score of each of the first k files that
 * sits in the same folder. A fix that touches two files often touches two in one folder.
 */
function siblingRerank(results, setting) {
  const weights = probeWeights(setting);
  const best = bestScores(results);
  const files = [...best.keys()];
  const folder = (file) => file.slice(0, file.lastIndexOf('/') + 1);
  const leaders = files.slice(0, weights.k ?? 1);
  const scored = files.map((file, i) => {
    let score = best.get(file);
    for (const f of leaders) if (f !== file && folder(f) === folder(file)) score += (weights.n ?? 0) * best.get(f);
    return { file, score, i };
  });
  return byScore(scored);
}

/**
 * A package re-ranking of repodex's files (an experiment: `PACKAGE=n:0.5` in a variant): each
 * file's best score times 1 + n × its package's share of the results' summed scores, a package
 * being the first two folders under `packages*` and the first folder elsewhere. The package whose
 * files answer the query most, as a whole, is the one a fix most likely touches.
 */
function packageRerank(results, setting) {
  const weights = probeWeights(setting);
  const packageOf = (file) => {
    const parts = file.split('/');
    return parts.length > 2 && parts[0].startsWith('packages') ? `${parts[0]}/${parts[1]}` : parts.length > 1 ? parts[0] : '';
  };
  const best = bestScores(results);
  const mass = new Map();
  let total = 0;
  for (const r of results) {
    mass.set(packageOf(r.path), (mass.get(packageOf(r.path)) ?? 0) + r.score);
    total += r.score;
  }
  const scored = [...best].map(([file, score], i) => ({ file, i, score: score * (1 + (weights.n ?? 0) * ((mass.get(packageOf(file)) ?? 0) / (total || 1))) }));
  return byScore(scored);
}

/**
 * A churn prior on repodex's files (an experiment: `CHURN=0.1` in a variant): each file's best
 * score times 1 + weight × log2(1 + its recent commits), from `.repodex/history.json` (at most
 * 16 commits a file). Files changed often are changed again: the version-history prior of bug
 * localization (Wang and Lo, 2014).
 */
function churnRerank(dir, results, weight) {
  if (!cochanges.has(dir)) cochanges.set(dir, cochangeFacts(dir));
  const { changes } = cochanges.get(dir);
  const best = bestScores(results);
  const scored = [...best].map(([file, score], i) => ({ file, i, score: score * (1 + weight * Math.log2(1 + (changes.get(file) ?? 0))) }));
  return byScore(scored);
}

/**
 * `--first-search`: stop the sync a first search started to finish its partial index (`partial`),
 * and remove the index, so that the next search is a first search too.
 */
async function forgetIndex(dir, partial) {
  const lock = path.join(dir, '.repodex', 'lock');
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const alive = (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  // The background sync is spawned as the search ends: wait for it to take the lock.
  for (let waited = 0; partial && !existsSync(lock) && waited < 10_000; waited += 20) await sleep(20);
  let pid;
  try {
    pid = JSON.parse(readFileSync(lock, 'utf8')).pid;
  } catch {
    pid = undefined;
  }
  if (Number.isInteger(pid) && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    while (alive(pid)) await sleep(20);
  }
  rmSync(path.join(dir, '.repodex'), { recursive: true, force: true });
}

/**
 * The eval-side re-ranking experiments, by the variant setting that turns each on. Each one
 * re-ranks the search's own results; given more than one, the last listed here decides.
 */
const RERANKS = [
  ['IMPORTS', (dir, exts, results, setting) => importRerank(dir, exts, results, setting)],
  ['COCHANGE', (dir, exts, results, setting) => cochangeRerank(dir, results, setting)],
  ['CHURN', (dir, exts, results, setting) => churnRerank(dir, results, Number(setting))],
  ['SIBLING', (dir, exts, results, setting) => siblingRerank(results, setting)],
  ['PACKAGE', (dir, exts, results, setting) => packageRerank(results, setting)],
];

/** Distinct file paths of a repodex search, in rank order, plus index/search facts. */
async function repodexRank(opts, dir, query, spec, exts) {
  const { env, args: rawArgs } = parseSpec(spec);
  const reranks = RERANKS.map(([name, rerank]) => {
    const setting = env[name];
    delete env[name];
    return { setting, rerank };
  }).filter((probe) => probe.setting);
  // `{srcglob}` lets one variant restrict every repository to its own source extensions.
  const args = rawArgs.map((a) => a.replaceAll('{srcglob}', `*.{${exts.join(',')}}`));
  const started = process.hrtime.bigint();
  const res = await run(
    process.execPath,
    [opts.cli, 'search', `--q=${query}`, '--json', '--top-k', String(TOP_K), '--root', dir, ...args],
    { env: { ...process.env, ...env } },
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  // A query the CLI refuses (over its length limit, say) finds nothing: it counts as a miss, and is counted.
  if (res.code === 1 && /BAD_REQUEST|bad request|at most \d+ characters/i.test(res.stderr + res.stdout)) return { files: [], ms, refused: true };
  if (res.code !== 0) throw new Error(`repodex search failed (${res.code}): ${res.stderr.trim() || res.stdout.trim()}`);
  const out = JSON.parse(res.stdout);
  const files = [];
  for (const r of out.results) if (!files.includes(r.path)) files.push(r.path);
  for (const { setting, rerank } of reranks) files.splice(0, files.length, ...rerank(dir, exts, out.results, setting));
  // The files of the results in answer order, one per result: what an agent reading the first five results sees.
  const hits = reranks.length > 0 ? files : out.results.map((r) => r.path);
  return { files, hits, ms, indexed: out.synced?.files_indexed ?? null, indexMs: out.synced?.duration_ms ?? null, partial: out.freshness?.partial !== undefined };
}

/** The rg baseline's keywords: lower-cased words of at least 3 characters, minus stopwords, deduplicated. */
export function keywords(query) {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length >= 3 && !STOPWORDS.has(w)))];
}

/**
 * The rg baseline: for each keyword, `rg -c -i -F` over the repository's source extensions gives
 * each file's matching-line count; files are ranked by the number of distinct keywords they
 * contain, then by total matching lines, then by path.
 */
async function rgRank(dir, query, exts) {
  const started = process.hrtime.bigint();
  const globs = exts.flatMap((e) => ['-g', `*.${e}`]);
  const stats = new Map(); // path -> { kws, lines }
  for (const kw of keywords(query)) {
    const res = await run('rg', ['-c', '-i', '-F', '--null', '--no-messages', ...globs, '-e', kw], { cwd: dir });
    if (res.code === 2) throw new Error(`rg failed for ${JSON.stringify(kw)}: ${res.stderr.trim()}`);
    for (const line of res.stdout.split('\n')) {
      const nul = line.indexOf('\0');
      if (nul < 0) continue;
      const file = line.slice(0, nul).replace(/^\.\//, '');
      const s = stats.get(file) ?? { kws: 0, lines: 0 };
      s.kws += 1;
      s.lines += Number(line.slice(nul + 1));
      stats.set(file, s);
    }
  }
  // Test files weigh 0.7, as in the default ranking profile.
  const weight = (file) => (isTestFile(file) ? BASELINE_TEST_WEIGHT : 1);
  const files = [...stats]
    .sort(([pa, a], [pb, b]) => b.kws * weight(pb) - a.kws * weight(pa) || b.lines - a.lines || (pa < pb ? -1 : pa > pb ? 1 : 0))
    .slice(0, TOP_K)
    .map(([p]) => p);
  return { files, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** Test files by the conventions repodex's ranking uses (the same patterns as src/scan/test-paths.ts). */
const TEST_DIR = /(^|\/)(tests?|__tests__|specs?|e2e|testing|testdata|fixtures)\//i;
const TEST_FILE = /(\.(test|spec)\.[^/]+$)|((^|\/)test_[^/]+\.py$)|(_test\.(py|go|rb|exs?)$)|((Tests?|Spec)\.(java|kt|cs|scala|swift)$)|(_spec\.rb$)/;
function isTestFile(file) {
  return TEST_DIR.test(file) || TEST_FILE.test(file);
}

/** Terms of a text for the whole-file baseline: words, their camelCase/snake_case parts, lower-cased, no stopwords. */
function baselineTerms(text) {
  const out = [];
  for (const word of text.match(/[A-Za-z0-9_]+/g) ?? []) {
    const whole = word.toLowerCase();
    if (whole.length >= 2 && !STOPWORDS.has(whole)) out.push(whole);
    const parts = word.split(/_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/).filter(Boolean);
    if (parts.length > 1) for (const part of parts) {
      const lower = part.toLowerCase();
      if (lower.length >= 2 && !STOPWORDS.has(lower)) out.push(lower);
    }
  }
  return out;
}

/** The whole-file index of one tree: term frequencies per source file (built once per tree). */
function fileIndex(dir, exts, { withTests = true } = {}) {
  const docs = [];
  for (const file of sourceFiles(dir, exts)) {
    if (!withTests && isTestFile(file)) continue;
    const stat = statSync(path.join(dir, file));
    if (stat.size > 1024 * 1024) continue;
    const tf = new Map();
    const terms = baselineTerms(readFileSync(path.join(dir, file), 'utf8'));
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    docs.push({ file, tf, length: terms.length, weight: isTestFile(file) ? BASELINE_TEST_WEIGHT : 1 });
  }
  const df = new Map();
  for (const doc of docs) for (const term of doc.tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  const avg = docs.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, docs.length);
  return { docs, df, avg };
}

/**
 * The whole-file baseline: BM25 (k1 1.2, b 0.75) over whole source files (the repository's
 * source extensions, docs excluded by extension), test files weighted 0.7 like the default.
 */
function fileBm25Rank(index, query) {
  const started = process.hrtime.bigint();
  const terms = [...new Set(baselineTerms(query))];
  const n = index.docs.length;
  const scored = [];
  for (const doc of index.docs) {
    let score = 0;
    for (const term of terms) {
      const tf = doc.tf.get(term);
      if (!tf) continue;
      const df = index.df.get(term);
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * doc.length) / index.avg));
    }
    if (score > 0) scored.push([doc.file, score * doc.weight]);
  }
  scored.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return { files: scored.slice(0, TOP_K).map(([file]) => file), ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/**
 * Paired bootstrap: resample tasks with replacement, recompute the difference of a metric between
 * two variants on the same tasks; the 2.5th and 97.5th percentiles bound a 95% interval.
 */
function bootstrapDiff(ranksA, ranksB, metric, samples = BOOTSTRAP_SAMPLES) {
  const n = ranksA.length;
  const value = (r) => (metric === 'Acc@5' ? r : metric === 'MRR' ? (r > 0 ? 1 / r : 0) : r > 0 && r <= 5 ? 1 : 0);
  const a = ranksA.map(value);
  const b = ranksB.map(value);
  const diff = (a.reduce((s, x) => s + x, 0) - b.reduce((s, x) => s + x, 0)) / n;
  const rng = createRng(42); // seeded: the same intervals on every run
  const diffs = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const j = Math.floor(rng() * n);
      sum += a[j] - b[j];
    }
    diffs[s] = sum / n;
  }
  diffs.sort();
  return { diff, low: diffs[Math.floor(0.025 * samples)], high: diffs[Math.floor(0.975 * samples)] };
}

/** Rank (1-based) of the first gold file in a ranked file list, or 0 when none is listed. */
function firstGoldRank(files, gold) {
  const i = files.findIndex((f) => gold.includes(f));
  return i < 0 ? 0 : i + 1;
}

/** 1 when every gold file is among the files of the first `k` results (a file-level answer's Acc@k), else 0. */
function allGoldWithin(hits, gold, k) {
  const seen = new Set(hits.slice(0, k));
  return gold.every((file) => seen.has(file)) ? 1 : 0;
}

/**
 * Recall@k (share of tasks with a gold file in the top k distinct files), MRR over first-gold
 * ranks, and Acc@5 (share of tasks with every gold file among the first 5 results).
 */
function aggregate(ranks, acc5) {
  const n = ranks.length;
  const row = { n };
  for (const k of CUTOFFS) row[`R@${k}`] = n ? ranks.filter((r) => r > 0 && r <= k).length / n : 0;
  row.MRR = n ? ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / n : 0;
  row['Acc@5'] = n ? acc5.reduce((s, x) => s + x, 0) / n : 0;
  return row;
}

/** Run `worker` over `items` with at most `jobs` at once, keeping input order in the results. */
async function pool(items, jobs, worker) {
  const results = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(jobs, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await worker(items[i], i);
    }
  });
  await Promise.all(lanes);
  return results;
}

function fmt(x) {
  return x.toFixed(3);
}

function printTable(summary, variants, repos) {
  const header = ['variant', 'repo', 'n', ...CUTOFFS.map((k) => `R@${k}`), 'MRR', 'Acc@5'];
  const rows = [];
  for (const v of variants) {
    for (const repo of [...repos, 'all']) {
      const s = summary[v][repo];
      rows.push([v, repo, String(s.n), ...CUTOFFS.map((k) => fmt(s[`R@${k}`])), fmt(s.MRR), fmt(s['Acc@5'])]);
    }
  }
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells) => `| ${cells.map((x, c) => x.padEnd(widths[c])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let tasks = opts.tasks.flatMap((file) => JSON.parse(readFileSync(file, 'utf8')));
  if (opts.split !== 'all') {
    const all = tasks;
    tasks = tasks.filter((t) => splitOf(t, all) === opts.split);
  }
  if (opts.repo) tasks = tasks.filter((t) => t.repo === opts.repo);
  tasks = tasks.slice(0, opts.limit);
  if (tasks.length === 0) throw new Error('no tasks selected');
  if (!existsSync(opts.cli)) throw new Error(`${opts.cli} is missing (run npm run build)`);
  const variants = [...opts.variants.keys()].filter((v) => !opts.only || opts.only.includes(v));
  const repoByName = new Map([...REPOS, ...BUG_REPOS].map((r) => [r.name, r]));
  for (const t of tasks) {
    const clone = path.join(opts.clones, t.repo);
    if (!repoByName.has(t.repo)) throw new Error(`task ${t.id}: unknown repository ${t.repo}`);
    if (!existsSync(clone)) throw new Error(`clone of ${t.repo} missing at ${clone} (see bench/quality/README.md)`);
  }

  const workRoot = opts.cache ? path.resolve(opts.cache) : mkdtempSync(path.join(os.tmpdir(), 'repodex-quality-'));
  mkdirSync(workRoot, { recursive: true });
  const cleanup = () => {
    if (!opts.cache) rmSync(workRoot, { recursive: true, force: true });
  };
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });

  // One group per parent tree: its index is built once and shared by every task and variant on it.
  const groups = new Map();
  for (const t of tasks) {
    const key = `${t.repo}-${t.parent.slice(0, 12)}`;
    if (!groups.has(key)) groups.set(key, { key, repo: t.repo, parent: t.parent, tasks: [] });
    groups.get(key).tasks.push(t);
  }

  const started = Date.now();
  const embedTimes = [];
  let doneGroups = 0;
  const perTask = new Map();
  try {
    await pool([...groups.values()], opts.jobs, async (g) => {
      const dir = path.join(workRoot, g.key);
      await materialize(path.join(opts.clones, g.repo), g.parent, dir);
      attachHistory(path.join(opts.clones, g.repo), g.parent, dir);
      if (!opts.reuseIndex || opts.firstSearch) rmSync(path.join(dir, '.repodex'), { recursive: true, force: true });
      // The whole index is built before any search: a first search on a large tree would answer from
      // the part it indexed within its budget (`--first-search` measures that instead). A kept index
      // is brought up to what this build records (a sync with nothing to read is cheap).
      if (!opts.firstSearch) {
        const synced = await run(process.execPath, [opts.cli, 'sync', '--root', dir], { env: process.env });
        if (synced.code !== 0) throw new Error(`repodex sync failed in ${dir}: ${synced.stderr.trim()}`);
      }
      const exts = repoByName.get(g.repo).exts;
      // vector and hybrid variants need the chunks embedded: a search never embeds, `sync` does.
      if (variants.some((v) => /--mode[= ](vector|hybrid)/.test(opts.variants.get(v) ?? ''))) {
        if (opts.firstSearch) throw new Error('--first-search measures lexical first answers: leave out the vector and hybrid variants');
        // Embeddings are off by default: the configured embedder, or the builtin one where none is configured.
        const synced = await run(process.execPath, [opts.cli, 'sync', '--json', '--embeddings', 'on', '--root', dir], { env: process.env });
        if (synced.code !== 0) throw new Error(`repodex sync failed in ${dir}: ${synced.stderr.trim()}`);
        const embeddings = JSON.parse(synced.stdout).embeddings;
        if (embeddings?.error) throw new Error(`embedding failed in ${dir}: ${embeddings.error}`);
        if (embeddings) embedTimes.push({ repo: g.repo, ...embeddings });
      }
      const wholeFiles = variants.includes(FILE_BM25_VARIANT) ? fileIndex(dir, exts) : undefined;
      const sourceOnly = variants.includes(SRC_BM25_VARIANT) ? fileIndex(dir, exts, { withTests: false }) : undefined;
      for (const t of g.tasks) {
        const entry = { id: t.id, repo: t.repo, query: t.query, gold: t.gold, variants: {} };
        for (const v of variants) {
          const r =
            v === RG_VARIANT
              ? await rgRank(dir, t.query, exts)
              : v === FILE_BM25_VARIANT
                ? fileBm25Rank(wholeFiles, t.query)
                : v === SRC_BM25_VARIANT
                  ? fileBm25Rank(sourceOnly, t.query)
                  : await repodexRank(opts, dir, t.query, opts.variants.get(v), exts);
          if (opts.firstSearch && r.partial !== undefined) await forgetIndex(dir, r.partial);
          const acc5 = allGoldWithin(r.hits ?? r.files, t.gold, 5);
          entry.variants[v] = { rank: firstGoldRank(r.files, t.gold), acc5, top: r.files.slice(0, 10), ms: Math.round(r.ms), ...(r.refused ? { refused: true } : {}), ...(r.partial ? { partial: true } : {}) };
          if (r.indexMs) entry.index_ms = r.indexMs;
        }
        perTask.set(t.id, entry);
      }
      doneGroups++;
      process.stderr.write(`\r${doneGroups}/${groups.size} trees`);
    });
  } finally {
    process.stderr.write('\n');
    cleanup();
  }

  const entries = tasks.map((t) => perTask.get(t.id));
  const repos = [...new Set(tasks.map((t) => t.repo))];
  // Task types: the kind of text (commit messages, bug reports) and the repository's language.
  const kindOf = (e) => (tasks.find((t) => t.id === e.id)?.kind === 'bug-report' ? 'bug reports' : 'commits');
  const typesOf = (e) => [kindOf(e), LANGUAGE[e.repo] ?? 'other', ...(MONOREPOS.has(e.repo) ? [MONOREPO_TYPE] : [])];
  const types = [...new Set(entries.flatMap(typesOf))].sort((a, b) => (a === 'commits' ? -1 : b === 'commits' ? 1 : a === 'bug reports' ? -1 : b === 'bug reports' ? 1 : a.localeCompare(b)));
  const summary = {};
  for (const v of variants) {
    summary[v] = {};
    for (const repo of [...repos, ...types, 'all']) {
      const chosen = entries.filter((e) => repo === 'all' || e.repo === repo || typesOf(e).includes(repo));
      summary[v][repo] = aggregate(chosen.map((e) => e.variants[v].rank), chosen.map((e) => e.variants[v].acc5));
    }
    const refused = entries.filter((e) => e.variants[v].refused).length;
    if (refused > 0) summary[v].refused = refused;
  }
  if (opts.verbose) {
    for (const e of entries) {
      const ranks = variants.map((v) => `${v}=${e.variants[v].rank || '-'}`).join(' ');
      console.log(`${e.id.padEnd(10)} ${ranks.padEnd(32)} ${e.query.slice(0, 70)}`);
    }
    console.log('');
  }
  printTable(summary, variants, [...repos, ...types]);
  for (const e of embedTimes) console.log(`embedded ${e.repo}: ${e.embedded} chunks (${e.reused} reused) by ${e.engine} ${e.model} in ${e.duration_ms} ms${e.trained ? ', table learned' : ''}`);
  for (const v of variants) if (summary[v].refused) console.log(`${v}: ${summary[v].refused} queries refused by the search (counted as misses)`);
  if (variants.length > 1) {
    console.log(`\nDifference from ${variants[0]}, all tasks, with paired bootstrap 95% intervals (${BOOTSTRAP_SAMPLES} resamples):`);
    const show = (d) => `${d.diff >= 0 ? '+' : ''}${fmt(d.diff)} [${fmt(d.low)}, ${fmt(d.high)}]`;
    for (const group of ['all', ...types]) {
      const chosen = entries.filter((e) => group === 'all' || typesOf(e).includes(group));
      if (group !== 'all') console.log(`  ${group} (${chosen.length} tasks):`);
      const base = chosen.map((e) => e.variants[variants[0]].rank);
      const baseAcc = chosen.map((e) => e.variants[variants[0]].acc5);
      for (const v of variants.slice(1)) {
        const r5 = bootstrapDiff(chosen.map((e) => e.variants[v].rank), base, 'R@5');
        const mrr = bootstrapDiff(chosen.map((e) => e.variants[v].rank), base, 'MRR');
        const acc = bootstrapDiff(chosen.map((e) => e.variants[v].acc5), baseAcc, 'Acc@5');
        console.log(`  ${v.padEnd(10)} R@5 ${show(r5)}   MRR ${show(mrr)}   Acc@5 ${show(acc)}`);
      }
    }
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `\n${tasks.length} tasks (${opts.split} split), ${groups.size} parent trees, ${seconds.toFixed(0)} s. ` +
      'R@k = share of tasks with at least one gold file among the first k distinct files; ' +
      `MRR = mean of 1/rank of the first gold file (0 when none is in the top ${TOP_K} results); ` +
      'Acc@5 = share of tasks with every gold file among the files of the first 5 results.',
  );
  for (const v of variants) {
    const spec =
      v === RG_VARIANT
        ? 'rg keyword baseline'
        : v === FILE_BM25_VARIANT
          ? 'BM25 over whole source files, tests weighted 0.7 (baseline)'
          : v === SRC_BM25_VARIANT
            ? 'BM25 over whole non-test source files (baseline)'
            : opts.variants.get(v) || '(default environment)';
    console.log(`  ${v}: ${spec}`);
  }
  if (opts.json) {
    const report = {
      tasks_files: opts.tasks.map((file) => path.relative(PROJECT, path.resolve(file))),
      top_k: TOP_K,
      split: opts.split,
      variants: Object.fromEntries(variants.map((v) => [v, v === RG_VARIANT || v === FILE_BM25_VARIANT || v === SRC_BM25_VARIANT ? v : opts.variants.get(v)])),
      summary,
      tasks: entries,
    };
    writeFileSync(opts.json, `${JSON.stringify(report, null, 2)}\n`);
  }
}

main().catch((err) => {
  console.error(`eval: ${err.message}`);
  process.exit(1);
});
