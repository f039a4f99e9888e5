#!/usr/bin/env node
// Freshness benchmarks on a real corpus: what keeping the index fresh costs. Full sync (cold) and
// its peak RSS against an earlier build, no-change sync against no-change status, one edited file,
// a hundred edited files, and for `serve --stdio --watch` how long an edit takes to become
// searchable and how fast searches stay while a background re-index runs. Works on private
// clones of the corpus (it edits files), never on the corpus itself. Runs of the two builds are
// interleaved (A B A B …) so drift on a shared machine hits both.
// Usage: node bench/freshness.mjs <corpus-git-checkout> [--baseline-ref REF|none] [--runs N] [--json out.json]
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime, prepareBaseline } from './baseline.mjs';
import { StdioServer, benchEnv, corpusArgs, corpusSelection, createRng, describeMachine, formatBytes, formatMs, git, listCorpusFiles, machineInfo, renderTable, runProcess, sampleQueries, summarize, tail } from './lib.mjs';

const USAGE = 'usage: node bench/freshness.mjs <corpus-git-checkout> [--baseline-ref REF|none] [--runs N] [--json out.json]';
const log = (message) => process.stderr.write(`[freshness] ${message}\n`);

/** The targets of the freshness work (docs/benchmarks.md). */
const TARGETS = {
  noChangeRatio: 1.2,
  oneEditMs: 250,
  hundredEditsMs: 1500,
  watchP50Ms: 300,
  serveP99Ms: 10,
  syncRssBytes: 200e6,
};

/** A private clone of a git corpus (files are copied, not hard-linked: the benchmark edits them). */
function cloneCorpus(corpus, into) {
  const result = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', corpus, into], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git clone ${corpus} failed: ${tail(result.stderr ?? '')}`);
  return into;
}

/**
 * Write back dirty pages (coreutils `sync`) before a timed run, so it does not pay for the
 * previous run's writes: a baseline that rewrites its whole index on every sync leaves ~10 MB for
 * the kernel to flush while the next command runs.
 */
function settle() {
  spawnSync('sync');
}

async function cli(bin, root, args, options = {}) {
  settle();
  const run = await runProcess(process.execPath, [bin, ...args, '--root', root], { env: benchEnv({ NO_COLOR: '1', ...options.env }), peakRss: options.peakRss });
  if (run.code !== 0) throw new Error(`repodex ${args.join(' ')} exited ${run.code}: ${tail(run.stderr)}`);
  return run;
}

/** Append a comment line to a file (a real edit: size and content change). */
function touchEdit(root, path, round) {
  appendFileSync(join(root, path), `\n// freshness benchmark edit ${round}\n`);
}

const wait = (ms) => new Promise((resolveWait) => setTimeout(resolveWait, ms));

async function main() {
  const args = corpusArgs(USAGE, {
    'baseline-ref': { type: 'string', default: '5abde31' },
    runs: { type: 'string', default: '15' },
    json: { type: 'string' },
  });
  if (args.exit !== undefined) return args.exit;
  const { corpus, values } = args;
  if (!existsSync(join(corpus, '.git'))) {
    process.stderr.write(`${corpus} is not a git checkout (the benchmark clones it to edit files)\n${USAGE}\n`);
    return 1;
  }
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 3) {
    process.stderr.write(`--runs must be a whole number of at least 3\n${USAGE}\n`);
    return 1;
  }
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const bin = join(repo, 'bin', 'repodex.js');
  const notes = [];
  if (!existsSync(join(repo, 'dist', 'cli.js'))) {
    process.stderr.write('dist/ is missing: run `npm run build` first\n');
    return 1;
  }
  if (newestMtime(join(repo, 'src')) > statSync(join(repo, 'dist', 'cli.js')).mtimeMs) notes.push('dist/ is older than src/: run `npm run build` (numbers may be for a stale build)');
  const machine = machineInfo();
  const scratch = mkdtempSync(join(os.tmpdir(), 'repodex-freshness-'));
  const holder = { cleanup: null };
  const cleanup = () => {
    holder.cleanup?.();
    rmSync(scratch, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    const a = cloneCorpus(corpus, join(scratch, 'current'));
    const selection = corpusSelection(a);
    const files = listCorpusFiles(a, selection).filter((file) => /\.(ts|tsx|js|java|go|rs)$/.test(file.path));
    const rng = createRng(7);
    const pickFiles = (count) => {
      const chosen = new Set();
      while (chosen.size < Math.min(count, files.length)) chosen.add(files[Math.floor(rng() * files.length)].path);
      return [...chosen];
    };

    let baseline = null;
    const ref = values['baseline-ref'];
    if (ref !== 'none') {
      const prepared = prepareBaseline(repo, ref, holder, log);
      if (prepared.problem) notes.push(`baseline ${ref}: ${prepared.problem}`);
      else baseline = { ref, sha: prepared.sha, bin: prepared.bin, root: cloneCorpus(corpus, join(scratch, 'baseline')) };
    }
    const samples = {};
    const add = (key, value) => (samples[key] ??= []).push(value);

    // 1. Full sync from nothing (no index, no parse cache), with peak RSS; paired with the
    // baseline, alternating which of the two runs first.
    const syncRuns = Math.max(5, Math.round(runs / 3));
    const hundredRuns = Math.max(3, Math.round(runs / 5));
    for (let r = 0; r < syncRuns; r++) {
      log(`full sync ${r + 1}/${syncRuns}`);
      const ours = async () => {
        rmSync(join(a, '.repodex'), { recursive: true, force: true });
        const current = await cli(bin, a, ['sync', '--json'], { peakRss: true });
        add('full', current.ms);
        add('fullRss', current.peakRss);
      };
      const theirs = async () => {
        rmSync(join(baseline.root, '.repodex'), { recursive: true, force: true });
        const before = await cli(baseline.bin, baseline.root, ['sync', '--json'], { peakRss: true });
        add('baseFull', before.ms);
        add('baseFullRss', before.peakRss);
      };
      if (baseline && r % 2 === 1) await theirs();
      await ours();
      if (baseline && r % 2 === 0) await theirs();
    }
    // A rebuild whose files were all parsed before (`--force` with the parse cache).
    for (let r = 0; r < syncRuns; r++) add('force', (await cli(bin, a, ['sync', '--force', '--json'])).ms);

    // 2. Nothing changed: sync against status, interleaved.
    log('no-change sync and status');
    // Twice the runs (both are cheap), in alternating order, so neither is always the one that
    // follows the baseline's sync (seconds of work).
    for (let r = 0; r < 2 * runs; r++) {
      if (baseline) add('baseNoChange', (await cli(baseline.bin, baseline.root, ['sync', '--json'])).ms);
      const status = async () => add('status', (await cli(bin, a, ['status', '--json'])).ms);
      const sync = async () => {
        const run = await cli(bin, a, ['sync', '--json']);
        if (JSON.parse(run.stdout).mode !== 'none') notes.push('a no-change sync wrote a generation');
        add('noChange', run.ms);
      };
      if (r % 2 === 0) {
        await status();
        await sync();
      } else {
        await sync();
        await status();
      }
    }

    // 3. One edited file, then sync (merges of small segments happen every few rounds and are included).
    log('one-file edits');
    for (let r = 0; r < runs; r++) {
      const [path] = pickFiles(1);
      touchEdit(a, path, `a${r}`);
      const run = await cli(bin, a, ['sync', '--json']);
      add('oneEdit', run.ms);
      if (baseline) {
        touchEdit(baseline.root, path, `b${r}`);
        add('baseOneEdit', (await cli(baseline.bin, baseline.root, ['sync', '--json'])).ms);
      }
    }

    // 4. A hundred edited files, then sync.
    log('hundred-file edits');
    for (let r = 0; r < hundredRuns; r++) {
      const paths = pickFiles(100);
      for (const path of paths) touchEdit(a, path, `h${r}`);
      add('hundred', (await cli(bin, a, ['sync', '--json'])).ms);
      if (baseline) {
        for (const path of paths) touchEdit(baseline.root, path, `h${r}`);
        add('baseHundred', (await cli(baseline.bin, baseline.root, ['sync', '--json'])).ms);
      }
    }

    // 5. serve --stdio --watch (default debounce): edit → searchable, and how fast the searches
    // that poll for it meanwhile are answered; the baseline's server too, the two in turns. Then
    // searches while a re-index runs.
    log('serve --watch: edit to searchable');
    const watched = [{ prefix: '', bin, root: a }];
    if (baseline) watched.push({ prefix: 'base', bin: baseline.bin, root: baseline.root });
    for (const side of watched) {
      side.server = new StdioServer(side.bin, side.root, ['--watch']);
      await side.server.request({ op: 'status' });
    }
    await wait(1000);
    // Only files the index holds can become searchable (not one it skips: too large, minified, generated).
    const listed = (await watched[0].server.request({ op: 'files', limit: 10_000 })).response.data.files;
    const held = new Set(listed.filter((file) => file.state === 'indexed' && file.chunks > 0).map((file) => file.path));
    const pickHeld = () => {
      for (;;) {
        const [path] = pickFiles(1);
        if (held.has(path)) return path;
      }
    };
    for (let r = 0; r < runs; r++) {
      const path = pickHeld();
      for (const side of r % 2 === 0 ? watched : [...watched].reverse()) {
        const token = `freshnessProbeToken${r}x${Math.floor(rng() * 1e6)}`;
        appendFileSync(join(side.root, path), `\nexport const ${token} = ${r};\n`);
        const started = performance.now();
        for (;;) {
          const { response, ms } = await side.server.request({ op: 'search', q: token, top_k: 1 });
          if (response.ok && response.data.results[0]?.path === path) break;
          add(`${side.prefix}watchWaiting`, ms);
          if (performance.now() - started > 15_000) {
            notes.push(`watch: ${token} was not searchable after 15 s`);
            break;
          }
          await wait(10);
        }
        add(`${side.prefix}watch`, performance.now() - started);
        await wait(800);
      }
    }
    for (const side of watched.slice(1)) await side.server.close();
    const server = watched[0].server;

    log('serve --watch: search latency, idle and during a re-index');
    const queries = sampleQueries(a, listCorpusFiles(a, selection), 400, 42).queries.map((query) => query.q);
    for (let i = 0; i < 400; i++) add('serveIdle', (await server.request({ op: 'search', q: queries[i % queries.length] })).ms);
    for (let round = 0; round < 3; round++) {
      const before = (await server.request({ op: 'status' })).response.data.generation;
      for (const path of pickFiles(300)) touchEdit(a, path, `w${round}`);
      const started = performance.now();
      let i = 0;
      for (;;) {
        const { response, ms } = await server.request({ op: 'search', q: queries[i++ % queries.length] });
        add('serveDuring', ms);
        if (response.ok && response.data.generation > before && !response.data.freshness.dirty) break;
        if (performance.now() - started > 30_000) {
          notes.push('serve: the background re-index did not finish within 30 s');
          break;
        }
      }
      add('reindexSearches', i);
      await wait(1000);
    }
    await server.close();

    // The table.
    const s = Object.fromEntries(Object.entries(samples).map(([key, list]) => [key, summarize(list.filter((value) => value !== null))]));
    const med = (key) => s[key]?.median ?? null;
    const rows = [];
    const row = (metric, value, format, target, ok, base) => rows.push([metric, format(value), target ?? '', ok === undefined ? '' : ok ? 'pass' : 'MISS', base === undefined || base === null ? '' : format(base), base ? `${(value / base).toFixed(2)}×` : '']);
    // The verdict on speed is the median of per-pair ratios: drift on a shared machine moves both runs of a pair.
    const pairedFull = baseline ? summarize(samples.full.map((ms, i) => ms / samples.baseFull[i])).median : null;
    row('full sync from nothing, median', med('full'), formatMs, 'no slower than the baseline', baseline ? pairedFull <= 1.05 : undefined, baseline ? med('baseFull') : null);
    if (baseline) rows.push(['full sync ÷ baseline, median of paired runs', `${pairedFull.toFixed(2)}×`, '≤ 1.05× (noise)', pairedFull <= 1.05 ? 'pass' : 'MISS', '', '']);
    row('full sync peak RSS, median', med('fullRss'), formatBytes, `≤ ${formatBytes(TARGETS.syncRssBytes)}`, med('fullRss') <= TARGETS.syncRssBytes, baseline ? med('baseFullRss') : null);
    row('rebuild with every file parsed before (`--force`)', med('force'), formatMs);
    row('no-change `status`, median', med('status'), formatMs);
    row('no-change `sync`, median', med('noChange'), formatMs, `≤ ${TARGETS.noChangeRatio}× status`, med('noChange') <= TARGETS.noChangeRatio * med('status'), baseline ? med('baseNoChange') : null);
    rows.push(['no-change sync ÷ status', `${(med('noChange') / med('status')).toFixed(2)}×`, `≤ ${TARGETS.noChangeRatio}×`, med('noChange') <= TARGETS.noChangeRatio * med('status') ? 'pass' : 'MISS', '', '']);
    row('one-file edit → `sync`, median', med('oneEdit'), formatMs, `≤ ${TARGETS.oneEditMs} ms`, med('oneEdit') <= TARGETS.oneEditMs, baseline ? med('baseOneEdit') : null);
    row('one-file edit → `sync`, p90', s.oneEdit.p90, formatMs, '', undefined, baseline ? s.baseOneEdit?.p90 : null);
    row('100 edited files → `sync`, median', med('hundred'), formatMs, `≤ ${TARGETS.hundredEditsMs} ms`, med('hundred') <= TARGETS.hundredEditsMs, baseline ? med('baseHundred') : null);
    row('watch: edit → searchable (default debounce), p50', med('watch'), formatMs, `p50 ≤ ${TARGETS.watchP50Ms} ms`, med('watch') <= TARGETS.watchP50Ms, baseline ? med('basewatch') : null);
    row('watch: edit → searchable, p90', s.watch.p90, formatMs, '', undefined, baseline ? s.basewatch?.p90 : null);
    row('watch: a search while an edit waits for its re-index, p50', med('watchWaiting'), formatMs, '', undefined, baseline ? med('basewatchWaiting') : null);
    row('watch: a search while an edit waits for its re-index, p90', s.watchWaiting?.p90 ?? null, formatMs, '', undefined, baseline ? s.basewatchWaiting?.p90 : null);
    row('serve search while idle, p50', med('serveIdle'), formatMs);
    row('serve search while idle, p99', s.serveIdle.p99, formatMs);
    row('serve search during a watch re-index, p50', med('serveDuring'), formatMs);
    row('serve search during a watch re-index, p99', s.serveDuring.p99, formatMs, `≤ ${TARGETS.serveP99Ms} ms`, s.serveDuring.p99 <= TARGETS.serveP99Ms);
    row('serve search during a watch re-index, max', s.serveDuring.max, formatMs);

    const table = renderTable(['metric', 'repodex', 'target', 'ok', baseline ? `baseline ${ref}` : 'baseline', '÷ baseline'], rows, ['l', 'r', 'l', 'l', 'r', 'r']);
    const head = git(repo, ['rev-parse', '--short=10', 'HEAD']);
    const lines = [
      '# repodex freshness benchmark',
      '',
      `- date: ${new Date().toISOString()}`,
      `- machine: ${describeMachine(machine)}`,
      `- corpus: ${corpus} @ ${git(corpus, ['rev-parse', 'HEAD'])} (${files.length} source files edited at random)`,
      `- build: ${head}${baseline ? `; baseline ${ref} = ${baseline.sha}` : ''}`,
      `- runs: ${runs} per edit measure, ${2 * runs} per no-change status and sync (alternating which follows the baseline), ${syncRuns} per full sync, ${hundredRuns} per hundred-file edit; serve: 400 idle searches, 3 re-indexes of 300 edited files (${(samples.reindexSearches ?? []).join(', ')} searches answered during them)`,
      '',
      table,
    ];
    for (const note of [...new Set(notes)]) lines.push(`Note: ${note}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    if (values.json) {
      const out = resolve(values.json);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), machine, corpus, build: head, baseline: baseline && { ref, sha: baseline.sha }, runs, samples, summary: s, notes }, null, 2)}\n`);
      log(`wrote ${out}`);
    }
    return 0;
  } finally {
    cleanup();
  }
}

process.exitCode = await main();
