// Shared pieces of the benchmark scripts: timing real processes, statistics, deterministic query
// sampling, the measurement blocks (repodex, rg, codesearch) and the table printer. Every
// measurement runs a real process, the way an agent or a person runs repodex, so startup cost,
// JSON encoding and pipes are part of each number.
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { delimiter, extname, join, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { parseArgs } from 'node:util';

/** Extensions repodex indexes by default (SPEC §9, `project_type: auto`); mirrors src/core/config.ts. */
export const DEFAULT_EXTENSIONS = [
  '.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.py', '.go', '.rs', '.java', '.kt',
  '.c', '.h', '.cc', '.cpp', '.hpp', '.cs', '.rb', '.php', '.swift', '.scala', '.sh', '.md', '.json',
  '.yaml', '.yml', '.toml', '.sql',
];

/** Folders repodex never walks; mirrors SKIP_DIRS in src/scan/ignore-rules.ts so baselines see the same files. */
export const SKIP_DIRS = [
  '.git', '.hg', '.svn', '.repodex', 'node_modules', 'bower_components', 'dist', 'build', 'target', 'out',
  '.venv', 'venv', '__pycache__', '.mypy_cache', '.pytest_cache', '.tox', '.gradle', '.idea', '.vscode',
  '.next', '.nuxt', '.turbo', '.cache', 'coverage', '.yarn',
];

const MB = 1_000_000;

/** Targets from the project plan; `max` is inclusive. Sizes are decimal megabytes. */
export const TARGETS = {
  sync_ms: { max: 2000, text: '≤ 2 s' },
  status_ms: { max: 120, text: '≤ 120 ms' },
  serve_p50_ms: { max: 1, text: '≤ 1 ms' },
  serve_p99_ms: { max: 5, text: '≤ 5 ms' },
  oneshot_ms: { max: 120, text: '≤ 120 ms' },
  index_ratio: { max: 1, text: '≤ 1×' },
  serve_rss_bytes: { max: 150 * MB, text: '≤ 150 MB' },
};

const TIME_BIN = '/usr/bin/time';
const DECLARATION_FILE = /\.d\.[mc]?ts$/i;

// ---------------------------------------------------------------------------------------------
// Processes

/** Absolute path of an executable on PATH, or null when it is not installed. */
export function findTool(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch (error) {
      if (error.code !== 'ENOENT' && error.code !== 'EACCES' && error.code !== 'ENOTDIR') throw error;
    }
  }
  return null;
}

/** Peak resident set size (VmHWM) of a live process in bytes; null when /proc cannot tell. */
export function readPeakRss(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch (error) {
    // Not Linux, or the process is already gone: there is simply no number to report.
    if (error.code === 'ENOENT' || error.code === 'ESRCH') return null;
    throw error;
  }
  const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(text);
  return match ? Number(match[1]) * 1024 : null;
}

/**
 * Environment variables removed from every measured process. NODE_EXTRA_CA_CERTS makes Node parse
 * a certificate bundle at start-up (measured on a machine that sets it: ~50 ms per process, more
 * than a no-change sync's own work) for TLS that neither repodex nor the baselines use; it is a
 * property of that machine, not of the tools compared.
 */
export const SCRUBBED_ENV = ['NODE_EXTRA_CA_CERTS'];

/**
 * The environment for a measured process: this one's, less SCRUBBED_ENV, plus `extra`. repodex
 * commands run in their own processes (`REPODEX_DAEMON=0`) unless `extra` says otherwise: a
 * command would otherwise start a daemon that answers the rows after it.
 */
export function benchEnv(extra = {}) {
  const env = { ...process.env };
  for (const name of SCRUBBED_ENV) delete env[name];
  return { ...env, REPODEX_DAEMON: '0', ...extra };
}

/** Which SCRUBBED_ENV variables this machine sets (for the report). */
export function scrubbedHere() {
  return SCRUBBED_ENV.filter((name) => process.env[name] !== undefined);
}

/**
 * Run a process to completion and time it (wall clock, spawn to exit). With `peakRss` the
 * process runs under `/usr/bin/time -f %M` when that exists, else its VmHWM is polled.
 */
export function runProcess(command, args, options = {}) {
  const useTime = options.peakRss === true && existsSync(TIME_BIN);
  const poll = options.peakRss === true && !useTime;
  const file = useTime ? TIME_BIN : command;
  const argv = useTime ? ['-f', '%M', command, ...args] : args;
  return new Promise((resolve) => {
    let settled = false;
    const out = [];
    const err = [];
    let peak = null;
    let poller;
    let killer;
    const started = performance.now();
    const child = spawn(file, argv, {
      cwd: options.cwd,
      env: options.env ?? benchEnv(),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const finish = (result) => {
      if (settled) return;
      settled = true;
      if (poller) clearInterval(poller);
      if (killer) clearTimeout(killer);
      resolve(result);
    };
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    if (poll) {
      poller = setInterval(() => {
        const value = readPeakRss(child.pid);
        if (value !== null && (peak === null || value > peak)) peak = value;
      }, 5);
    }
    if (options.timeoutMs) killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => finish({ code: null, signal: null, ms: performance.now() - started, stdout: '', stderr: String(error), peakRss: null, spawnError: String(error) }));
    child.on('close', (code, signal) => {
      const ms = performance.now() - started;
      let stderr = Buffer.concat(err).toString('utf8');
      if (useTime) {
        // time(1) appends its own lines; the last one is %M in KiB.
        const lines = stderr.trimEnd().split('\n');
        const last = lines.pop() ?? '';
        if (/^\d+$/.test(last.trim())) peak = Number(last.trim()) * 1024;
        if (lines.length > 0 && /^Command (exited with non-zero status|terminated by signal)/.test(lines[lines.length - 1])) lines.pop();
        stderr = lines.join('\n');
      }
      finish({ code, signal, ms, stdout: Buffer.concat(out).toString('utf8'), stderr, peakRss: peak });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
  });
}

/** Last few lines of a process's stderr, for error messages. */
export function tail(text, lines = 5) {
  const kept = text.trimEnd().split('\n').slice(-lines).join('\n');
  return kept === '' ? '(no stderr)' : kept;
}

/** Synchronous git in `cwd`; returns trimmed stdout or null when git fails. */
export function git(cwd, args) {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (result.error || result.status !== 0) return null;
  return result.stdout.trim();
}

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** Summary of a list of samples: n, min, median (p50), p90, p99, max, mean. */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { n: sorted.length, min: sorted[0], median, p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted[sorted.length - 1], mean, samples: sorted };
}

/** One summary of the samples of several (summarize's; null ones are left out). */
function summarizeAll(summaries) {
  const present = summaries.filter((summary) => summary);
  return present.length === 0 ? null : summarize(present.flatMap((summary) => summary.samples));
}

/**
 * One measurement of a build from several rounds of measureRepodex (each with its share of the
 * runs and queries): every timing summarized over all rounds' samples, peaks the largest, counts
 * added up.
 */
export function mergeMeasurements(parts) {
  const first = parts[0];
  const pick = (key) => parts.map((part) => part[key]).filter((value) => value);
  const merged = { bin: first.bin, errors: parts.flatMap((part) => part.errors), warnings: parts.flatMap((part) => part.warnings), sync: null, first_search: null, status: null, index: null, serve: null, oneshot: null, edit_sync: null, daemon: null };
  const wallOf = (items) => (items.length > 0 ? { wall_ms: summarizeAll(items.map((item) => item.wall_ms)) } : null);
  const syncs = pick('sync');
  if (syncs.length > 0) {
    const rss = syncs.map((sync) => sync.peak_rss_bytes).filter((value) => value !== null);
    merged.sync = {
      ...syncs[0],
      wall_ms: summarizeAll(syncs.map((sync) => sync.wall_ms)),
      reported_ms: summarizeAll(syncs.map((sync) => sync.reported_ms)),
      embed_ms: summarizeAll(syncs.map((sync) => sync.embed_ms)),
      lexical_wall_ms: summarizeAll(syncs.map((sync) => sync.lexical_wall_ms)),
      peak_rss_bytes: rss.length > 0 ? Math.max(...rss) : null,
    };
  }
  const firsts = pick('first_search');
  if (firsts.length > 0) {
    merged.first_search = { wall_ms: summarizeAll(firsts.map((first) => first.wall_ms)), partial_files: firsts.flatMap((first) => first.partial_files), rest_ms: summarizeAll(firsts.map((first) => first.rest_ms)) };
  }
  const statuses = pick('status');
  if (statuses.length > 0) merged.status = { wall_ms: summarizeAll(statuses.map((status) => status.wall_ms)) };
  merged.index = pick('index').at(-1) ?? null;
  const serves = pick('serve');
  if (serves.length > 0) {
    const peaks = serves.map((serve) => serve.peak_rss_bytes).filter((value) => value !== null);
    merged.serve = {
      rtt_ms: summarizeAll(serves.map((serve) => serve.rtt_ms)),
      first_ms: serves[0].first_ms,
      peak_rss_bytes: peaks.length > 0 ? Math.max(...peaks) : null,
      queries: serves.reduce((sum, serve) => sum + serve.queries, 0),
      failed: serves.reduce((sum, serve) => sum + serve.failed, 0),
      empty_results: serves.reduce((sum, serve) => sum + serve.empty_results, 0),
    };
  }
  const oneshots = pick('oneshot');
  if (oneshots.length > 0) merged.oneshot = { wall_ms: summarizeAll(oneshots.map((oneshot) => oneshot.wall_ms)), queries: oneshots[0].queries };
  merged.edit_sync = wallOf(pick('edit_sync'));
  const daemons = pick('daemon');
  if (daemons.length > 0) {
    const of = (key) => wallOf(daemons.map((daemon) => daemon[key]).filter((value) => value));
    merged.daemon = { status: of('status'), oneshot: of('oneshot'), edit_sync: of('edit_sync') };
  }
  return merged;
}

/** Milliseconds for people: more decimals the smaller the number. */
export function formatMs(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(3)} ms`;
}

/** Bytes for people, in decimal units (1 MB = 10^6 bytes). */
export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return '—';
  if (bytes >= MB) return `${(bytes / MB).toFixed(1)} MB`;
  if (bytes >= 1000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${bytes} B`;
}

function formatValue(value, unit) {
  if (value === null || value === undefined) return '—';
  if (unit === 'ms') return formatMs(value);
  if (unit === 'bytes') return formatBytes(value);
  if (unit === 'ratio') return `${value.toFixed(2)}×`;
  return String(value);
}

function formatRatio(current, other) {
  if (current === null || current === undefined || other === null || other === undefined || other === 0) return '';
  return `${(current / other).toFixed(2)}×`;
}

/** A Markdown table with padded columns; `align` holds 'l' or 'r' per column. */
export function renderTable(header, rows, align) {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i].length)));
  const pad = (cell, i) => (align[i] === 'r' ? cell.padStart(widths[i]) : cell.padEnd(widths[i]));
  const line = (cells) => `| ${cells.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((width, i) => (align[i] === 'r' ? `${'-'.repeat(width + 1)}:` : `:${'-'.repeat(width + 1)}`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Machine and corpus

/** The machine the numbers come from: cpu, cores, RAM, OS, node, load at start. */
export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    ram_bytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    load_avg: os.loadavg().map((value) => Number(value.toFixed(2))),
  };
}

/** One line describing the machine. */
export function describeMachine(machine) {
  const scrubbed = scrubbedHere();
  const env = scrubbed.length > 0 ? `; ${scrubbed.join(', ')} unset for the measured processes (see SCRUBBED_ENV in bench/lib.mjs)` : '';
  return `${machine.cpu}, ${machine.cores} cores, ${(machine.ram_bytes / 1e9).toFixed(1)} GB RAM, ${machine.os}, node ${machine.node}, load avg ${machine.load_avg.join(' ')}${env}`;
}

/** Which extensions and size cap the corpus's own `.repodex/config.json` asks for (defaults otherwise). */
export function corpusSelection(corpus) {
  let config = {};
  const path = join(corpus, '.repodex', 'config.json');
  if (existsSync(path)) config = JSON.parse(readFileSync(path, 'utf8'));
  const extensions = config.include_extensions ?? (config.project_type === 'ts' ? ['.ts', '.tsx'] : DEFAULT_EXTENSIONS);
  return { extensions: [...extensions], maxFileBytes: config.max_file_bytes ?? 1024 * 1024, declarationFiles: config.include_declaration_files === true };
}

/**
 * The files the index should contain, as the baselines get them: `git ls-files` (tracked and
 * untracked-not-ignored) in a git checkout, else a plain walk; then repodex's folder, extension,
 * declaration-file and size rules. Sorted, repository-relative, with sizes.
 */
export function listCorpusFiles(corpus, selection) {
  const extensions = new Set(selection.extensions);
  const skip = new Set(SKIP_DIRS);
  let paths;
  const listed = existsSync(join(corpus, '.git')) ? git(corpus, ['ls-files', '-z', '--cached', '--others', '--exclude-standard']) : null;
  if (listed !== null) {
    paths = listed.split('\0').filter(Boolean);
  } else {
    paths = [];
    const visit = (dirRel) => {
      for (const entry of readdirSync(join(corpus, dirRel), { withFileTypes: true })) {
        const rel = dirRel === '' ? entry.name : `${dirRel}/${entry.name}`;
        if (entry.isDirectory() && !skip.has(entry.name)) visit(rel);
        else if (entry.isFile()) paths.push(rel);
      }
    };
    visit('');
  }
  const files = [];
  for (const path of paths) {
    const parts = path.split('/');
    if (parts.slice(0, -1).some((part) => skip.has(part))) continue;
    const name = parts[parts.length - 1];
    if (!extensions.has(extname(name).toLowerCase())) continue;
    if (!selection.declarationFiles && DECLARATION_FILE.test(name)) continue;
    let stat;
    try {
      stat = lstatSync(join(corpus, path));
    } catch (error) {
      // git lists deleted-but-tracked files; they are not part of the tree being measured.
      if (error.code === 'ENOENT') continue;
      throw error;
    }
    if (!stat.isFile() || stat.size > selection.maxFileBytes) continue;
    files.push({ path, size: stat.size });
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return files;
}

// ---------------------------------------------------------------------------------------------
// Deterministic queries

/** mulberry32: a tiny seeded PRNG, so the same seed always draws the same queries. */
export function createRng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle(items, rng) {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/g;
// Word-shaped identifiers only: base64 blobs and hashes in fixtures look like identifiers too.
const CAMEL = /^_{0,2}[A-Za-z][a-z]+(?:[A-Z]+[a-z]+)+[0-9]*$/;
const SNAKE = /^_{0,2}(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)$/;
const STOPWORDS = new Set(
  'the and for are but not you all any can had her was one our out has have him his how its may new now see two who did get let say she too use that this with from they will would there their what when which were been than then them these some such into only also more most other should could about after before while where just very'.split(' '),
);
const COMMENT = /^(?:\/\/+|\/\*+|\*+(?!\/)|#(?![!a-z]))\s*(.*)$/;
const MAX_SAMPLED_FILES = 600;

/**
 * Draw `count` queries from the corpus: half single identifiers (camelCase or snake_case words
 * from source files), half 2–4 word phrases from comments and Markdown prose. Deterministic for
 * a given corpus and seed. Also returns the shuffled identifier pool for one-shot searches.
 */
export function sampleQueries(corpus, files, count, seed) {
  const rng = createRng(seed);
  const chosen = shuffle(files, rng).slice(0, MAX_SAMPLED_FILES);
  chosen.sort((a, b) => (a.path < b.path ? -1 : 1));
  const identifiers = new Set();
  const phrases = new Set();
  const addPhrase = (text) => {
    const words = (text.match(/[A-Za-z][a-z]{2,}/g) ?? []).map((word) => word.toLowerCase());
    if (words.length < 4) return;
    const length = 2 + Math.floor(rng() * 3);
    const start = Math.floor(rng() * (words.length - length + 1));
    const phrase = words.slice(start, start + length);
    // A phrase of stopwords only is a query nobody asks, and an empty result measures nothing.
    if (phrase.some((word) => !STOPWORDS.has(word))) phrases.add(phrase.join(' '));
  };
  for (const file of chosen) {
    const text = readFileSync(join(corpus, file.path), 'utf8');
    const markdown = file.path.toLowerCase().endsWith('.md');
    let fenced = false;
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (markdown) {
        if (trimmed.startsWith('```')) fenced = !fenced;
        else if (!fenced && trimmed !== '' && !/^[|<![]/.test(trimmed)) addPhrase(trimmed.replace(/^[#>*\-\d.\s]+/, ''));
        continue;
      }
      const comment = COMMENT.exec(trimmed);
      if (comment) {
        addPhrase(comment[1]);
        continue;
      }
      for (const word of trimmed.match(IDENTIFIER) ?? []) {
        if (word.length >= 6 && word.length <= 40 && (CAMEL.test(word) || SNAKE.test(word))) identifiers.add(word);
      }
    }
  }
  const identifierPool = shuffle([...identifiers].sort(), rng);
  const phrasePool = shuffle([...phrases].sort(), rng);
  const queries = [];
  const half = Math.ceil(count / 2);
  for (let i = 0; i < count; i++) {
    const useIdentifier = i < half ? identifierPool.length > 0 : phrasePool.length === 0;
    const pool = useIdentifier ? identifierPool : phrasePool;
    if (pool.length === 0) break;
    const index = i < half ? i : i - half;
    queries.push({ kind: useIdentifier ? 'identifier' : 'phrase', q: pool[index % pool.length] });
  }
  return { queries: shuffle(queries, rng), identifiers: identifierPool, pools: { identifiers: identifierPool.length, phrases: phrasePool.length } };
}

// ---------------------------------------------------------------------------------------------
// repodex

export async function runRepodex(bin, corpus, args, options = {}) {
  const result = await runProcess(process.execPath, [bin, ...args, '--root', corpus], { peakRss: options.peakRss, timeoutMs: options.timeoutMs ?? 600_000, env: options.env });
  const command = `repodex ${args.join(' ')}`;
  if (result.spawnError) return { ...result, problem: `${command}: cannot start: ${result.spawnError}` };
  if (result.code !== 0) return { ...result, problem: `${command}: exit ${result.code ?? result.signal}: ${tail(result.stderr)}` };
  try {
    return { ...result, json: JSON.parse(result.stdout) };
  } catch (error) {
    return { ...result, problem: `${command}: output is not valid JSON (${error.message}): ${JSON.stringify(result.stdout.slice(0, 200))}` };
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A running `repodex serve --stdio`: one request at a time, each answer timed on the client side. */
export class StdioServer {
  constructor(bin, corpus, flags = []) {
    this.child = spawn(process.execPath, [bin, 'serve', '--stdio', ...flags, '--root', corpus], { stdio: ['pipe', 'pipe', 'pipe'], env: benchEnv() });
    this.stderr = '';
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (text) => {
      this.stderr += text;
    });
    // A server that died makes writes fail with EPIPE; keep that as part of the story, not a crash.
    this.child.stdin.on('error', (error) => {
      this.stderr += `\n(stdin: ${error.message})`;
    });
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => resolve({ code, signal }));
      this.child.on('error', (error) => resolve({ code: null, signal: null, error: String(error) }));
    });
    this.lines = createInterface({ input: this.child.stdout, crlfDelay: Infinity })[Symbol.asyncIterator]();
  }

  /** Send one request and wait for its line; `ms` is the client-side round trip. */
  async request(body, timeoutMs = 60_000) {
    const started = performance.now();
    this.child.stdin.write(`${JSON.stringify(body)}\n`);
    const next = await withTimeout(this.lines.next(), timeoutMs, `serve ${body.op}`);
    const ms = performance.now() - started;
    if (next.done) throw new Error(`serve --stdio closed its output early: ${tail(this.stderr)}`);
    let response;
    try {
      response = JSON.parse(next.value);
    } catch (error) {
      throw new Error(`serve --stdio answered with invalid JSON (${error.message}): ${JSON.stringify(next.value.slice(0, 200))}`);
    }
    return { ms, response };
  }

  /** Peak RSS of the server so far (VmHWM), in bytes. */
  peakRss() {
    return readPeakRss(this.child.pid);
  }

  /** Close stdin and wait for a clean exit; returns a problem string or null. */
  async close() {
    this.child.stdin.end();
    const exit = await withTimeout(this.exited, 30_000, 'serve --stdio exit').catch((error) => {
      this.child.kill('SIGKILL');
      return { code: null, signal: null, error: error.message };
    });
    if (exit.error) return `serve --stdio: ${exit.error}`;
    if (exit.code !== 0) return `serve --stdio exited with ${exit.code ?? exit.signal}: ${tail(this.stderr)}`;
    return null;
  }
}

function cycle(items, count) {
  return Array.from({ length: count }, (_unused, i) => items[i % items.length]);
}

/**
 * Measure one repodex build on a corpus, as one block: sync (warm-up + `runs.sync` forced
 * rebuilds), no-change status, serve-mode searches, one-shot CLI searches, index size.
 * Problems are collected in `errors` (a failed sync ends the block); nothing throws.
 */
export async function measureRepodex({ bin, corpus, queries, oneShotQueries, runs, editFile, log }) {
  const errors = [];
  const warnings = [];
  const result = { bin, errors, warnings, sync: null, first_search: null, status: null, index: null, serve: null, oneshot: null, edit_sync: null, daemon: null };

  // Every timed sync starts from nothing (`clean` first): no index, and no parse cache where the
  // build has one, so builds with and without a cache do the same work.
  log(`full sync (clean, then sync --force): 1 warm-up + ${runs.sync} timed`);
  const warm = await runRepodex(bin, corpus, ['sync', '--force', '--json']);
  if (warm.problem) {
    errors.push(warm.problem);
    return result;
  }
  const syncWall = [];
  const syncReported = [];
  const syncEmbed = [];
  const syncLexical = [];
  const syncRss = [];
  for (let i = 0; i < runs.sync; i++) {
    const clean = await runRepodex(bin, corpus, ['clean', '--json']);
    if (clean.problem) {
      errors.push(clean.problem);
      return result;
    }
    const run = await runRepodex(bin, corpus, ['sync', '--force', '--json'], { peakRss: true });
    if (run.problem) {
      errors.push(run.problem);
      return result;
    }
    syncWall.push(run.ms);
    if (typeof run.json.duration_ms === 'number') syncReported.push(run.json.duration_ms);
    // The embedding run after the lexical sync (builtin by default since the semantic layer; absent in older builds).
    const embedMs = typeof run.json.embeddings?.duration_ms === 'number' ? run.json.embeddings.duration_ms : 0;
    syncEmbed.push(embedMs);
    syncLexical.push(run.ms - embedMs);
    if (run.peakRss !== null) syncRss.push(run.peakRss);
  }
  result.sync = {
    wall_ms: summarize(syncWall),
    reported_ms: summarize(syncReported),
    embed_ms: summarize(syncEmbed),
    lexical_wall_ms: summarize(syncLexical),
    peak_rss_bytes: syncRss.length > 0 ? Math.max(...syncRss) : null,
    rss_method: existsSync(TIME_BIN) ? '/usr/bin/time %M' : '/proc VmHWM polling',
    files_scanned: warm.json.files_scanned ?? null,
    chunks: warm.json.chunks_total ?? null,
  };

  // What a new user's first command costs: a search on a repository never indexed (it indexes first).
  log(`first search from nothing (clean, then search): ${runs.sync} timed`);
  const firstWall = [];
  const firstPartial = [];
  const firstRest = [];
  for (let i = 0; i < runs.sync && oneShotQueries.length > 0; i++) {
    const clean = await runRepodex(bin, corpus, ['clean', '--json']);
    const run = clean.problem ? clean : await runRepodex(bin, corpus, ['search', oneShotQueries[i % oneShotQueries.length], '--json']);
    if (run.problem) {
      errors.push(run.problem);
      break;
    }
    firstWall.push(run.ms);
    const partial = run.json.freshness?.partial;
    if (partial) firstPartial.push(partial.files);
    // A partial answer left a sync indexing the rest in the background: nothing else is measured until it is done.
    const finished = await untilIndexed(bin, corpus);
    if (finished.problem) {
      errors.push(finished.problem);
      break;
    }
    if (partial && finished.ms !== null) firstRest.push(finished.ms);
  }
  result.first_search = firstWall.length > 0 ? { wall_ms: summarize(firstWall), partial_files: firstPartial, rest_ms: firstRest.length > 0 ? summarize(firstRest) : null } : null;

  log(`status: 1 warm-up + ${runs.status} timed`);
  await settleAfterWrites();
  const statusWall = [];
  let lastStatus = null;
  for (let i = 0; i <= runs.status; i++) {
    const run = await runRepodex(bin, corpus, ['status', '--json']);
    if (run.problem) {
      errors.push(run.problem);
      break;
    }
    if (i > 0) statusWall.push(run.ms);
    lastStatus = run.json;
  }
  if (statusWall.length > 0) result.status = { wall_ms: summarize(statusWall) };
  if (lastStatus) {
    if (lastStatus.dirty === true) warnings.push(`status reports a dirty index right after sync: ${(lastStatus.reasons ?? []).join('; ')}`);
    result.index = {
      size_on_disk: lastStatus.size_on_disk ?? null,
      source_bytes: lastStatus.source_bytes ?? null,
      files: lastStatus.files ?? null,
      files_indexed: lastStatus.files_indexed ?? null,
      chunks: lastStatus.chunks ?? null,
      terms: lastStatus.terms ?? null,
    };
  }

  if (queries.length > 0) {
    log(`serve --stdio: 1 first search + ${queries.length} timed`);
    result.serve = await measureServe(bin, corpus, queries, errors);
  }

  log(`one-shot search: 1 warm-up + ${runs.oneshot} timed over ${oneShotQueries.length} queries`);
  const oneShotWall = [];
  const plan = [oneShotQueries[0], ...cycle(oneShotQueries, runs.oneshot)];
  for (let i = 0; i < plan.length && oneShotQueries.length > 0; i++) {
    const run = await runRepodex(bin, corpus, ['search', plan[i], '--json']);
    if (run.problem) {
      errors.push(run.problem);
      break;
    }
    if (!Array.isArray(run.json.results)) {
      errors.push(`repodex search ${plan[i]} --json: no results array in the output`);
      break;
    }
    if (i > 0) oneShotWall.push(run.ms);
  }
  if (oneShotWall.length > 0) result.oneshot = { wall_ms: summarize(oneShotWall), queries: oneShotQueries };
  if (editFile) result.edit_sync = await measureEditSync(bin, corpus, editFile, runs.status, benchEnv(), errors);
  result.daemon = await measureDaemon({ bin, corpus, oneShotQueries, runs, editFile, errors, log });
  return result;
}

/**
 * A no-change `status` is one some time after the last sync. Within 2 s of a write, a file's
 * times cannot prove it unchanged since a check (the times' granularity), so `status` checks the
 * segments and parse cache a sync just wrote again on every run until they are 2 s old
 * (`src/core/checked-files.ts`): without this wait the status rows would measure that window.
 */
function settleAfterWrites() {
  return new Promise((resolve) => setTimeout(resolve, 2100));
}

/**
 * Stop a `repodex daemon` left running for the corpus (by `bin`, or by another build: it stops
 * when called by another), so that it answers for none of the one-shot rows. Returns whether one ran.
 */
export async function stopDaemon(bin, corpus) {
  if (!existsSync(join(corpus, '.repodex', 'daemon.sock'))) return false;
  await runRepodex(bin, corpus, ['daemon', 'stop', '--json']);
  return true;
}

/**
 * The same no-change `status`, one-shot searches and one-file edit syncs as a user gets them by
 * default: answered by the `repodex daemon` the first command started (a build from before
 * commands started one gets one with `repodex daemon start`), stopped after. Null for a build
 * without daemons.
 */
async function measureDaemon({ bin, corpus, oneShotQueries, runs, editFile, errors, log }) {
  const env = benchEnv({ REPODEX_DAEMON: 'auto' });
  const first = await runRepodex(bin, corpus, ['status', '--json'], { env });
  if (first.problem) errors.push(`the command that starts a daemon: ${first.problem}`);
  let running = false;
  for (const deadline = Date.now() + 30_000; !running && Date.now() < deadline; ) {
    const status = await runRepodex(bin, corpus, ['daemon', 'status', '--json']);
    running = status.json?.running === true;
    if (!running) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!running) {
    const started = await runRepodex(bin, corpus, ['daemon', 'start', '--json']);
    if (started.problem) return null; // a build from before `repodex daemon`
    log('this build starts no daemon by itself: started one with `repodex daemon start`');
  }
  log(`through a daemon: status ${runs.status}, one-shot search ${runs.oneshot}${editFile ? `, edit sync ${runs.status}` : ''} (1 warm-up each)`);
  const out = { status: null, oneshot: null, edit_sync: null };
  try {
    const timed = async (argv, count) => {
      const wall = [];
      for (let i = 0; i <= count; i++) {
        const run = await runRepodex(bin, corpus, typeof argv === 'function' ? argv(i) : argv, { env });
        if (run.problem) {
          errors.push(`through a daemon: ${run.problem}`);
          return null;
        }
        if (i > 0) wall.push(run.ms);
      }
      return { wall_ms: summarize(wall) };
    };
    await settleAfterWrites();
    out.status = await timed(['status', '--json'], runs.status);
    if (oneShotQueries.length > 0) out.oneshot = await timed((i) => ['search', oneShotQueries[i % oneShotQueries.length], '--json'], runs.oneshot);
    if (editFile) out.edit_sync = await measureEditSync(bin, corpus, editFile, runs.status, env, errors);
  } finally {
    const stopped = await runRepodex(bin, corpus, ['daemon', 'stop', '--json']);
    if (stopped.problem) errors.push(stopped.problem);
  }
  return out;
}

/**
 * One-file edit → `sync`: a line appended to `editFile` (a corpus path), then a timed sync, then the
 * file put back and synced again untimed; 1 warm-up + `count` timed.
 */
async function measureEditSync(bin, corpus, editFile, count, env, errors) {
  const path = join(corpus, editFile);
  const original = readFileSync(path);
  const wall = [];
  let edited = false;
  try {
    for (let i = 0; i <= count; i++) {
      writeFileSync(path, Buffer.concat([original, Buffer.from(`\n// edited for a benchmark, ${i}\n`)]));
      edited = true;
      const run = await runRepodex(bin, corpus, ['sync', '--json'], { env });
      if (run.problem) {
        errors.push(`edit sync: ${run.problem}`);
        return null;
      }
      if (run.json.files_updated !== undefined && run.json.files_updated !== 1) errors.push(`edit sync: expected 1 changed file, the sync found ${run.json.files_updated}`);
      if (i > 0) wall.push(run.ms);
      writeFileSync(path, original);
      edited = false;
      await runRepodex(bin, corpus, ['sync', '--json'], { env });
    }
  } finally {
    // Put back after a failure only: a write after the last sync would leave the index one file behind for what follows.
    if (edited) writeFileSync(path, original);
  }
  return { wall_ms: summarize(wall) };
}

async function measureServe(bin, corpus, queries, errors) {
  const server = new StdioServer(bin, corpus);
  const rtts = [];
  let failed = 0;
  let empty = 0;
  let first = null;
  let peak = null;
  try {
    const check = (response, id) => {
      if (response.ok !== true || response.id !== id || !Array.isArray(response.data?.results)) {
        failed++;
        if (failed <= 3) errors.push(`serve search #${id}: ${JSON.stringify(response).slice(0, 200)}`);
        return;
      }
      if (response.data.results.length === 0) empty++;
    };
    const warm = await server.request({ op: 'search', q: queries[0].q, id: 0 });
    first = warm.ms;
    check(warm.response, 0);
    for (let i = 0; i < queries.length; i++) {
      const { ms, response } = await server.request({ op: 'search', q: queries[i].q, id: i + 1 });
      rtts.push(ms);
      check(response, i + 1);
    }
    peak = server.peakRss();
  } catch (error) {
    errors.push(error.message);
  }
  const problem = await server.close();
  if (problem) errors.push(problem);
  if (failed > 3) errors.push(`serve: ${failed} of ${queries.length + 1} searches failed in total`);
  return { rtt_ms: summarize(rtts), first_ms: first, peak_rss_bytes: peak, queries: rtts.length, failed, empty_results: empty };
}

// ---------------------------------------------------------------------------------------------
// Baselines

/** `rg` arguments that select (as far as globs can) the files repodex indexes. */
export function rgSelectionArgs(selection) {
  const args = ['--hidden', '--max-filesize', String(selection.maxFileBytes)];
  for (const extension of selection.extensions) args.push('-g', `*${extension}`);
  if (!selection.declarationFiles) args.push('-g', '!*.d.ts', '-g', '!*.d.mts', '-g', '!*.d.cts');
  for (const dir of SKIP_DIRS) args.push('-g', `!${dir}/`);
  return args;
}

/** One-shot `rg -i --fixed-strings` over the corpus for the same identifiers repodex is asked for. */
export async function measureRg({ corpus, selection, queries, runs, log }) {
  const rg = findTool('rg');
  if (!rg) return { skipped: 'rg not installed: baseline skipped' };
  if (queries.length === 0) return { skipped: 'no identifiers found in the corpus: rg baseline skipped' };
  const version = (await runProcess(rg, ['--version'])).stdout.split('\n')[0];
  log(`rg: 1 warm-up + ${runs} timed`);
  const files = await runProcess(rg, ['--files', ...rgSelectionArgs(selection), corpus]);
  const wall = [];
  const plan = [queries[0], ...cycle(queries, runs)];
  for (let i = 0; i < plan.length; i++) {
    const run = await runProcess(rg, ['-i', '--fixed-strings', ...rgSelectionArgs(selection), '--', plan[i], corpus]);
    if (run.code !== 0 && run.code !== 1) return { skipped: `rg failed (exit ${run.code}): ${tail(run.stderr)}` };
    if (i > 0) wall.push(run.ms);
  }
  return { version, files: files.stdout.split('\n').filter(Boolean).length, wall_ms: summarize(wall) };
}

/**
 * Wait (polling `status`) until no sync runs and the index is not partial: what a first search's
 * background sync leaves when it is done. `ms`: how long that took from the call, or null when
 * nothing was running.
 */
async function untilIndexed(bin, corpus, timeoutMs = 600_000) {
  const started = performance.now();
  for (let polls = 0; ; polls++) {
    const status = await runRepodex(bin, corpus, ['status', '--json']);
    if (status.problem) return { problem: status.problem, ms: null };
    if (!status.json.sync_running && !status.json.freshness?.partial) return { ms: polls === 0 ? null : performance.now() - started };
    if (performance.now() - started > timeoutMs) return { problem: `the background sync of ${corpus} did not finish in ${timeoutMs / 1000} s`, ms: null };
    // A status costs a few hundred ms of CPU on a large tree: polled often, it would slow the sync it waits for.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** `git status` in the corpus (what a no-change `status` is compared with): 1 warm-up + `runs` timed. */
export async function measureGitStatus({ corpus, runs, log }) {
  const gitBin = findTool('git');
  if (!gitBin || !existsSync(join(corpus, '.git'))) return { skipped: 'not a git work tree (or no git): git status baseline skipped' };
  log(`git status: 1 warm-up + ${runs} timed`);
  const wall = [];
  for (let i = 0; i <= runs; i++) {
    const run = await runProcess(gitBin, ['-C', corpus, 'status', '--porcelain']);
    if (run.code !== 0) return { skipped: `git status failed (exit ${run.code}): ${tail(run.stderr)}` };
    if (i > 0) wall.push(run.ms);
  }
  return { wall_ms: summarize(wall) };
}

function escapeRegExp(text) {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/**
 * Google codesearch on the same files: `cindex` full builds into a private index
 * (CSEARCHINDEX in a temp folder, never ~/.csearchindex), its size, and `csearch -i` one-shots.
 */
export async function measureCodesearch({ corpus, files, queries, runs, indexRuns, log }) {
  const cindex = findTool('cindex');
  const csearch = findTool('csearch');
  if (!cindex || !csearch) return { skipped: `${!cindex && !csearch ? 'cindex and csearch' : cindex ? 'csearch' : 'cindex'} not installed: baseline skipped` };
  if (queries.length === 0) return { skipped: 'no identifiers found in the corpus: codesearch baseline skipped' };
  const dir = mkdtempSync(join(os.tmpdir(), 'repodex-bench-csearch-'));
  const indexPath = join(dir, 'csearchindex');
  const env = benchEnv({ CSEARCHINDEX: indexPath });
  try {
    // The exact file list keeps cindex on repodex's files; a huge list would overflow argv, so
    // then the whole folder is indexed instead (cindex skips dot-folders and binary files itself).
    const list = files.map((file) => join(corpus, file.path));
    const listBytes = list.reduce((sum, path) => sum + path.length + 1, 0);
    const inputs = listBytes < 1_000_000 ? list : [corpus];
    const input = inputs.length === 1 ? 'the corpus folder' : `the same ${files.length} files`;
    log(`cindex (${input}): 1 warm-up + ${indexRuns} timed, csearch: 1 warm-up + ${runs} timed`);
    const build = async (peakRss) => {
      rmSync(indexPath, { force: true });
      const run = await runProcess(cindex, inputs, { env, peakRss });
      if (run.code !== 0) throw new Error(`cindex failed (exit ${run.code}): ${tail(run.stderr)}`);
      return run;
    };
    await build(false);
    const wall = [];
    const rss = [];
    for (let i = 0; i < indexRuns; i++) {
      const run = await build(true);
      wall.push(run.ms);
      if (run.peakRss !== null) rss.push(run.peakRss);
    }
    const searchWall = [];
    const plan = [queries[0], ...cycle(queries, runs)];
    for (let i = 0; i < plan.length; i++) {
      const run = await runProcess(csearch, ['-i', escapeRegExp(plan[i])], { env });
      if (run.code !== 0 && run.code !== 1) throw new Error(`csearch failed (exit ${run.code}): ${tail(run.stderr)}`);
      if (i > 0) searchWall.push(run.ms);
    }
    return {
      input,
      input_bytes: inputs.length === 1 ? null : files.reduce((sum, file) => sum + file.size, 0),
      index_ms: summarize(wall),
      index_bytes: statSync(indexPath).size,
      index_peak_rss_bytes: rss.length > 0 ? Math.max(...rss) : null,
      search_ms: summarize(searchWall),
    };
  } catch (error) {
    return { skipped: `codesearch baseline failed: ${error.message}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The table

const get = (object, path) => path.split('.').reduce((value, key) => (value === null || value === undefined ? undefined : value[key]), object);

function indexRatio(block) {
  const size = block?.index?.size_on_disk;
  const source = block?.index?.source_bytes;
  return typeof size === 'number' && typeof source === 'number' && source > 0 ? size / source : null;
}

/**
 * The rows of the results table: one per number, with its target (pass/miss) and the same
 * number from rg, codesearch and the baseline build where one exists. Ratios are repodex ÷ other.
 */
export function buildRows({ current, baseline, rg, codesearch, gitStatus }) {
  const cs = codesearch && !codesearch.skipped ? codesearch : null;
  const rgOk = rg && !rg.skipped ? rg : null;
  const gitOk = gitStatus && !gitStatus.skipped ? gitStatus : null;
  const csRatio = cs && cs.input_bytes ? cs.index_bytes / cs.input_bytes : null;
  const rows = [
    { metric: 'full sync from nothing (`clean`, `sync --force`), median', unit: 'ms', path: 'sync.wall_ms.median', cs: cs?.index_ms?.median },
    { metric: 'of which embedding (as reported), median', unit: 'ms', path: 'sync.embed_ms.median' },
    { metric: 'full sync without embedding (wall − embedding), median', unit: 'ms', path: 'sync.lexical_wall_ms.median', target: TARGETS.sync_ms, cs: cs?.index_ms?.median },
    { metric: 'full sync, as reported (duration_ms), median', unit: 'ms', path: 'sync.reported_ms.median' },
    { metric: 'sync peak RSS', unit: 'bytes', path: 'sync.peak_rss_bytes', cs: cs?.index_peak_rss_bytes },
    { metric: 'first `search` from nothing (indexes first), median', unit: 'ms', path: 'first_search.wall_ms.median', cs: cs?.index_ms?.median },
    { metric: 'of a partial first answer: the rest indexed in the background (after it), median', unit: 'ms', path: 'first_search.rest_ms.median' },
    { metric: 'no-change `status` in its own process, median', unit: 'ms', path: 'status.wall_ms.median', target: TARGETS.status_ms, git: gitOk?.wall_ms?.median },
    { metric: 'no-change `status`, p90', unit: 'ms', path: 'status.wall_ms.p90' },
    { metric: 'serve search, first (loads the index)', unit: 'ms', path: 'serve.first_ms' },
    { metric: 'serve search p50', unit: 'ms', path: 'serve.rtt_ms.median', target: TARGETS.serve_p50_ms },
    { metric: 'serve search p99', unit: 'ms', path: 'serve.rtt_ms.p99', target: TARGETS.serve_p99_ms },
    { metric: 'serve search max', unit: 'ms', path: 'serve.rtt_ms.max' },
    { metric: 'serve peak RSS (VmHWM)', unit: 'bytes', path: 'serve.peak_rss_bytes', target: TARGETS.serve_rss_bytes },
    { metric: 'one-shot CLI search in its own process, median', unit: 'ms', path: 'oneshot.wall_ms.median', target: TARGETS.oneshot_ms, rg: rgOk?.wall_ms?.median, cs: cs?.search_ms?.median },
    { metric: 'one-shot CLI search, p90', unit: 'ms', path: 'oneshot.wall_ms.p90', rg: rgOk?.wall_ms?.p90, cs: cs?.search_ms?.p90 },
    { metric: 'one-file edit → `sync` in its own process, median', unit: 'ms', path: 'edit_sync.wall_ms.median' },
    { metric: 'by default (the daemon a command started): no-change `status`, median', unit: 'ms', path: 'daemon.status.wall_ms.median', target: TARGETS.status_ms, git: gitOk?.wall_ms?.median },
    { metric: 'by default (the daemon a command started): one-shot CLI search, median', unit: 'ms', path: 'daemon.oneshot.wall_ms.median', target: TARGETS.oneshot_ms, rg: rgOk?.wall_ms?.median, cs: cs?.search_ms?.median },
    { metric: 'by default (the daemon a command started): one-file edit → `sync`, median', unit: 'ms', path: 'daemon.edit_sync.wall_ms.median' },
    { metric: 'indexed source bytes', unit: 'bytes', path: 'index.source_bytes', cs: cs?.input_bytes },
    { metric: 'index size on disk', unit: 'bytes', path: 'index.size_on_disk', cs: cs?.index_bytes },
  ];
  const out = rows.map((row) => ({ ...row, value: get(current, row.path) ?? null, base: baseline ? (get(baseline, row.path) ?? null) : undefined }));
  out.push({ metric: 'index size ÷ source bytes', unit: 'ratio', value: indexRatio(current), target: TARGETS.index_ratio, cs: csRatio, base: baseline ? indexRatio(baseline) : undefined });
  return out;
}

/** Render the rows as a Markdown table; columns without any value (no rg, no baseline) are left out. */
export function renderResults(rows, baselineLabel) {
  const columns = [
    { header: 'metric', align: 'l', cell: (row) => row.metric },
    { header: 'repodex', align: 'r', cell: (row) => formatValue(row.value, row.unit) },
    { header: 'target', align: 'l', cell: (row) => row.target?.text ?? '' },
    { header: 'ok', align: 'l', cell: (row) => (row.target ? (row.value === null ? '?' : row.value <= row.target.max ? 'pass' : 'MISS') : '') },
    { header: 'git status', align: 'r', when: (row) => row.git !== undefined, cell: (row) => (row.git === undefined ? '' : formatValue(row.git, row.unit)) },
    { header: '÷ git', align: 'r', when: (row) => row.git !== undefined, cell: (row) => formatRatio(row.value, row.git) },
    { header: 'rg', align: 'r', when: (row) => row.rg !== undefined, cell: (row) => (row.rg === undefined ? '' : formatValue(row.rg, row.unit)) },
    { header: '÷ rg', align: 'r', when: (row) => row.rg !== undefined, cell: (row) => formatRatio(row.value, row.rg) },
    { header: 'cindex/csearch', align: 'r', when: (row) => row.cs !== undefined && row.cs !== null, cell: (row) => (row.cs === undefined ? '' : formatValue(row.cs, row.unit)) },
    { header: '÷ cs', align: 'r', when: (row) => row.cs !== undefined && row.cs !== null, cell: (row) => formatRatio(row.value, row.cs) },
    { header: baselineLabel ?? 'baseline', align: 'r', when: (row) => row.base !== undefined, cell: (row) => (row.base === undefined ? '' : formatValue(row.base, row.unit)) },
    { header: '÷ baseline', align: 'r', when: (row) => row.base !== undefined, cell: (row) => formatRatio(row.value, row.base) },
  ].filter((column) => !column.when || rows.some(column.when));
  return renderTable(
    columns.map((column) => column.header),
    rows.map((row) => columns.map((column) => column.cell(row))),
    columns.map((column) => column.align),
  );
}

/**
 * The command line of a corpus benchmark: `<corpus> [options]`. Returns the corpus (absolute) and
 * the option values, or an exit code after printing `usage` (0 for --help, 1 for a bad line).
 */
export function corpusArgs(usage, options) {
  const { values, positionals } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true });
  if (values.help || positionals.length !== 1) {
    process.stderr.write(`${usage}\n`);
    return { exit: values.help ? 0 : 1 };
  }
  return { corpus: resolvePath(positionals[0]), values };
}

/** Sync a corpus with a repodex build (so measured requests answer from a fresh index); throws when it fails. */
export async function syncCorpus(bin, corpus) {
  const sync = await runProcess(process.execPath, [bin, 'sync', '--root', corpus], { timeoutMs: 600_000 });
  if (sync.code !== 0) throw new Error(`sync failed: ${sync.stderr}`);
}

/** Run `work` with a PostgreSQL client connected to `url`, closed after. */
export async function withClient(url, work) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
