#!/usr/bin/env node
// Benchmark repodex on a real corpus and compare, in the same run, with rg, with Google
// codesearch (cindex/csearch) and with an earlier build of repodex (a temporary git worktree).
// Usage: node bench/run.mjs <corpus-dir> [--baseline-ref REF|none] [--queries N] [--runs N]
//        [--sync-runs N] [--rounds N] [--seed N] [--json out.json]
// Progress goes to stderr; the report (Markdown) goes to stdout. See bench/README.md.
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime, prepareBaseline } from './baseline.mjs';
import {
  buildRows,
  corpusArgs,
  corpusSelection,
  describeMachine,
  formatBytes,
  git,
  listCorpusFiles,
  machineInfo,
  measureCodesearch,
  measureGitStatus,
  measureRepodex,
  stopDaemon,
  measureRg,
  mergeMeasurements,
  runRepodex,
  renderResults,
  sampleQueries,
} from './lib.mjs';

const USAGE =
  'usage: node bench/run.mjs <corpus-dir> [--baseline-ref REF|none] [--queries N] [--runs N] [--sync-runs N] [--rounds N] [--seed N] [--json out.json]';
const ONE_SHOT_QUERIES = 5;

const log = (message) => process.stderr.write(`[bench] ${message}\n`);

function positiveInt(name, text) {
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    process.stderr.write(`--${name} must be a positive whole number, got ${JSON.stringify(text)}\n${USAGE}\n`);
    process.exit(1);
  }
  return Number(text);
}

async function main() {
  const args = corpusArgs(USAGE, {
    'baseline-ref': { type: 'string', default: 'HEAD~1' },
    queries: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '15' },
    'sync-runs': { type: 'string', default: '3' },
    seed: { type: 'string', default: '42' },
    rounds: { type: 'string', default: '2' },
    json: { type: 'string' },
  });
  if (args.exit !== undefined) return args.exit;
  const { corpus, values } = args;
  if (!existsSync(corpus) || !statSync(corpus).isDirectory()) {
    process.stderr.write(`corpus folder not found: ${corpus}\n`);
    return 1;
  }
  const queryCount = positiveInt('queries', values.queries);
  const runs = { sync: positiveInt('sync-runs', values['sync-runs']), status: positiveInt('runs', values.runs), oneshot: positiveInt('runs', values.runs) };
  const seed = positiveInt('seed', values.seed);

  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const bin = join(repo, 'bin', 'repodex.js');
  const dist = join(repo, 'dist', 'cli.js');
  if (!existsSync(dist)) {
    process.stderr.write(`${dist} is missing: run \`npm run build\` first\n`);
    return 1;
  }
  const notes = [];
  if (newestMtime(join(repo, 'src')) > statSync(dist).mtimeMs) notes.push('dist/cli.js is older than src/: the numbers below may be for a stale build (run `npm run build`)');

  const machine = machineInfo();
  // A corpus without its own config gets a fresh `.repodex/` per build, so each build writes the
  // default config it understands (an older build refuses a newer build's config fields). A
  // corpus with one keeps it for both builds: it says what to index.
  const corpusConfig = existsSync(join(corpus, '.repodex', 'config.json'));
  const freshIndexFolder = () => {
    if (!corpusConfig) rmSync(join(corpus, '.repodex'), { recursive: true, force: true });
  };
  const selection = corpusSelection(corpus);
  const files = listCorpusFiles(corpus, selection);
  const sourceBytes = files.reduce((sum, file) => sum + file.size, 0);
  const corpusHead = git(corpus, ['rev-parse', 'HEAD']);
  const buildHead = git(repo, ['rev-parse', '--short=10', 'HEAD']);
  // Only what goes into dist/ counts: an uncommitted bench/ or test/ file does not change the build.
  const buildDirty = (git(repo, ['status', '--porcelain', '--', 'src', 'scripts', 'bin', 'package.json', 'package-lock.json']) ?? '') !== '';
  if (await stopDaemon(bin, corpus)) log('stopped the repodex daemon that was running for the corpus: it would answer for the one-shot rows');
  log(`sampling ${queryCount} queries (seed ${seed}) from ${files.length} files`);
  const sample = sampleQueries(corpus, files, queryCount, seed);
  const oneShot = sample.identifiers.slice(0, ONE_SHOT_QUERIES);
  // The file a one-file edit changes: the first tracked source file of a middling size (a comment line is appended, then taken out).
  const editFile = files.find((file) => /\.(ts|js|java|py|go|rs)$/.test(file.path) && file.size >= 4096 && file.size <= 32768)?.path;
  const identifierQueries = sample.queries.filter((query) => query.kind === 'identifier').length;

  const rg = await measureRg({ corpus, selection, queries: oneShot, runs: runs.oneshot, log });
  const codesearch = await measureCodesearch({ corpus, files, queries: oneShot, runs: runs.oneshot, indexRuns: runs.sync, log });
  const gitStatus = await measureGitStatus({ corpus, runs: runs.status, log });

  // The two builds take turns, in rounds (A B, then B A, ...), each round with its share of the
  // runs (at least one) and of the serve queries: on a machine whose speed drifts, neither build
  // gets all the quiet (or all the busy) minutes.
  const ref = values['baseline-ref'];
  const rounds = ref === 'none' ? 1 : positiveInt('rounds', values.rounds);
  const share = (total, round) => Math.max(1, Math.floor(total / rounds) + (round < total % rounds ? 1 : 0));
  const measureRound = (build, round, label) => {
    freshIndexFolder();
    const roundRuns = { sync: share(runs.sync, round), status: share(runs.status, round), oneshot: share(runs.oneshot, round) };
    const queries = sample.queries.filter((_, i) => i % rounds === round);
    return measureRepodex({ bin: build, corpus, queries, oneShotQueries: oneShot, runs: roundRuns, editFile, log: (m) => log(`[${label}, round ${round + 1} of ${rounds}] ${m}`) });
  };
  let baseline = null;
  let baselineInfo = null;
  const currentParts = [];
  if (ref !== 'none') {
    // Handlers go in before the worktree exists: a Ctrl-C during the build must not leave it behind.
    const holder = { cleanup: null };
    const cleanupOnSignal = () => {
      holder.cleanup?.();
      process.exit(130);
    };
    process.once('SIGINT', cleanupOnSignal);
    process.once('SIGTERM', cleanupOnSignal);
    try {
      const prepared = prepareBaseline(repo, ref, holder, log);
      baselineInfo = { ref, sha: prepared.sha ?? null, problem: prepared.problem ?? null };
      if (prepared.problem) log(`baseline ${ref}: ${prepared.problem}; continuing without it`);
      const baselineParts = [];
      for (let round = 0; round < rounds; round++) {
        for (const which of round % 2 === 0 ? ['baseline', 'current'] : ['current', 'baseline']) {
          if (which === 'current') currentParts.push(await measureRound(bin, round, 'current'));
          else if (!baselineInfo.problem) baselineParts.push(await measureRound(prepared.bin, round, ref));
        }
      }
      if (baselineParts.length > 0) {
        baseline = mergeMeasurements(baselineParts);
        if (baseline.errors.length > 0) {
          baselineInfo.problem = `the baseline build failed: ${baseline.errors[0]}${corpusConfig ? ' (the corpus has its own .repodex/config.json, which both builds use)' : ''}`;
          log(`baseline ${ref}: ${baselineInfo.problem}; continuing without it`);
          if (!baseline.sync) baseline = null;
        }
      }
    } finally {
      holder.cleanup?.();
      process.off('SIGINT', cleanupOnSignal);
      process.off('SIGTERM', cleanupOnSignal);
    }
  } else {
    log('measuring the current build');
    currentParts.push(await measureRound(bin, 0, 'current'));
  }
  const current = mergeMeasurements(currentParts);
  freshIndexFolder();
  // A corpus with its own config is left indexed by the current build, whichever went last.
  if (corpusConfig && baseline && rounds % 2 === 0) await runRepodex(bin, corpus, ['sync', '--force', '--json']);

  const baselineLabel = baselineInfo && baseline ? `${ref} (${baselineInfo.sha.slice(0, 7)})` : null;
  const rows = buildRows({ current, baseline, rg, codesearch, gitStatus });
  const lines = [
    '# repodex benchmark',
    '',
    `- date: ${new Date().toISOString()}`,
    `- machine: ${describeMachine(machine)}`,
    `- corpus: ${corpus}${corpusHead ? ` @ ${corpusHead}` : ''}, ${files.length} files with indexed extensions, ${formatBytes(sourceBytes)}`,
    `- build: ${repo} @ ${buildHead ?? 'unknown'}${buildDirty ? ' + uncommitted changes' : ''}`,
    `- baseline: ${ref === 'none' ? 'none' : baselineInfo?.problem ? `${ref}: ${baselineInfo.problem}` : `${ref} = ${baselineInfo?.sha}`}`,
    `- serve queries: ${sample.queries.length} (${identifierQueries} identifiers, ${sample.queries.length - identifierQueries} phrases; seed ${seed}), one at a time; one-shot: ${runs.oneshot} runs over ${oneShot.map((q) => `\`${q}\``).join(', ')}`,
    `- one-file edit: a comment line appended to \`${editFile ?? '(no source file of 4–32 KB)'}\`, \`sync\` timed, then the file put back; \`status\`, one-shot search and edit sync also as by default, through the \`repodex daemon\` a command started for the corpus (every other row: \`REPODEX_DAEMON=0\`)`,
    `- rg: ${rg.skipped ?? `${rg.version}, -i --fixed-strings, ${rg.files} files selected by globs`}`,
    `- codesearch: ${codesearch.skipped ?? `cindex over ${codesearch.input}; csearch -i`}`,
    '',
    renderResults(rows, baselineLabel),
    '',
    'Ratios are repodex ÷ the other column: below 1× repodex is faster (or smaller).',
  ];
  if (current.serve) lines.push(`Serve: ${current.serve.failed} failed searches, ${current.serve.empty_results} of ${current.serve.queries + 1} with no results.`);
  if (current.first_search?.partial_files.length > 0) lines.push(`First search: answered from a partial index of ${current.first_search.partial_files.join(', ')} files; a background sync indexed the rest.`);
  for (const note of notes) lines.push(`Note: ${note}`);
  for (const warning of current.warnings) lines.push(`Warning: ${warning}`);
  for (const error of current.errors) lines.push(`ERROR: ${error}`);
  process.stdout.write(`${lines.join('\n')}\n`);

  if (values.json) {
    const out = resolve(values.json);
    mkdirSync(dirname(out), { recursive: true });
    const report = {
      date: new Date().toISOString(),
      machine,
      corpus: { path: corpus, git_head: corpusHead, files: files.length, source_bytes: sourceBytes },
      build: { repo, head: buildHead, dirty: buildDirty },
      baseline: baselineInfo,
      queries: { serve: sample.queries.length, identifiers: identifierQueries, seed, pools: sample.pools, oneshot: oneShot },
      runs,
      rg,
      codesearch,
      current,
      baseline_results: baseline,
      rows: rows.map(({ metric, unit, value, target, rg: rgValue, cs, git: gitValue, base }) => ({ metric, unit, value, target: target?.max ?? null, git: gitValue ?? null, rg: rgValue ?? null, cs: cs ?? null, baseline: base ?? null })),
      notes,
    };
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    log(`wrote ${out}`);
  }
  return current.errors.length > 0 ? 1 : 0;
}

process.exitCode = await main();
