import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRASH_POINTS } from '../../src/core/crash.js';
import { processStartTime } from '../../src/store/fs/lock.js';
import { CLI, PROJECT_ROOT, capitalize, makeRepo, pick, prng, readIndex, runCli } from '../helpers.js';

// SPEC §2 (atomic generations): a sync SIGKILLed at any moment must leave an index that
// `status`, `search` and `verify` accept, and the next sync must recover the stale lock and clean
// up what the killed one left behind. Random kills cover whatever timing finds; named crash points
// (REPODEX_CRASH_AT) hit every window of a commit exactly, on a delta commit and on a merging one.
// Seeded, so a failing round can be replayed:
// REPODEX_CRASH_SEED=<seed> npx vitest run test/e2e/crash-safety.test.ts

const SEED = Number(process.env.REPODEX_CRASH_SEED ?? 0x5eed1e55);
const ROUNDS = 24;
const FILE_COUNT = 240;
/** Every fourth round is a full rebuild (longer, heavier writes); the others are incremental. */
const FULL_EVERY = 4;
const NO_AUTO_SYNC = { REPODEX_INDEXING: '0' };

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'zu', 'pe', 'qo', 'xa', 'bri', 'dun', 'fel', 'gor', 'hap', 'jin', 'wex', 'yom'];
const VERBS = ['load', 'parse', 'render', 'merge', 'resolve', 'flush', 'encode', 'decode', 'index', 'scan', 'emit', 'track'];
const NOUNS = ['config', 'buffer', 'token', 'segment', 'cursor', 'ledger', 'socket', 'widget', 'payload', 'bucket', 'cache', 'route'];

/** A made-up word (three syllables) that reads like a name but appears nowhere else by accident. */
function word(rng: () => number): string {
  return pick(rng, SYLLABLES) + pick(rng, SYLLABLES) + pick(rng, SYLLABLES);
}

/** One TypeScript module of ~150 lines with varied identifiers. */
function sourceFile(rng: () => number, index: number, extra = ''): string {
  const lines: string[] = [`// module ${index}: generated for the crash-safety test`, `import { helper${index % 7} } from './shared.js';`, ''];
  const functions = 8 + Math.floor(rng() * 6);
  for (let f = 0; f < functions; f++) {
    const name = `${pick(rng, VERBS)}${capitalize(pick(rng, NOUNS))}${capitalize(word(rng))}`;
    lines.push(`/** ${pick(rng, VERBS)} the ${pick(rng, NOUNS)} of a ${word(rng)} ${pick(rng, NOUNS)}. */`);
    lines.push(`export function ${name}(input: ${capitalize(pick(rng, NOUNS))}, limit = ${Math.floor(rng() * 1000)}): number {`);
    const body = 6 + Math.floor(rng() * 10);
    for (let b = 0; b < body; b++) {
      lines.push(`  const ${word(rng)}${capitalize(pick(rng, NOUNS))} = input.${pick(rng, NOUNS)}.${pick(rng, VERBS)}(${Math.floor(rng() * 100)}, '${word(rng)}');`);
    }
    lines.push(`  return helper${index % 7}(input, limit) + ${f};`, '}', '');
  }
  if (extra) lines.push(extra, '');
  return lines.join('\n');
}

/** Files whose one unique identifier every round searches for; they are never edited. */
const ANCHORS = [
  { path: 'src/core/anchor-alpha.ts', identifier: 'quokkaLanternVelvetine' },
  { path: 'lib/deep/nested/anchor-beta.ts', identifier: 'marzipanOrbitalThimble' },
  { path: 'docs/anchor-gamma.md', identifier: 'zephyrCobaltHarmonica' },
] as const;

function generateRepo(seed: number): Record<string, string> {
  const rng = prng(seed);
  const files: Record<string, string> = {};
  const folders = ['src/core', 'src/util', 'src/net', 'lib/deep/nested', 'lib/io', 'pkg/alpha', 'pkg/beta'];
  for (let i = 0; i < FILE_COUNT - ANCHORS.length; i++) {
    files[`${folders[i % folders.length]}/mod-${String(i).padStart(4, '0')}.ts`] = sourceFile(rng, i);
  }
  files[ANCHORS[0].path] = sourceFile(rng, 9001, `export const ${ANCHORS[0].identifier} = 'alpha';`);
  files[ANCHORS[1].path] = sourceFile(rng, 9002, `export function ${ANCHORS[1].identifier}(): void {}`);
  files[ANCHORS[2].path] = `# Gamma\n\nThe ${ANCHORS[2].identifier} keeps the ledger in tune.\n`;
  return files;
}

interface Status {
  indexed: boolean;
  generation: number | null;
  files: number;
  chunks: number;
}

interface Search {
  results: { path: string }[];
}

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly ms: number;
  readonly stderr: string;
  readonly stdout: string;
}

/** Run `sync` (or `sync --force`) as a real process; SIGKILL it after `killAfterMs` when that is given. */
function runSync(root: string, options: { force?: boolean; killAfterMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'sync', ...(options.force ? ['--force'] : []), '--json', '--root', root], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const timer = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: performance.now() - started, stderr, stdout });
    });
  });
}

function dataDirEntries(root: string): string[] {
  return readdirSync(join(root, '.repodex')).sort();
}

/** A process that stays alive until killed, to own a lock file. */
function spawnIdle(): ReturnType<typeof spawn> {
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
}

function waitForExit(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** A lock as this version writes it for process `pid` (its start time and the boot id tell a live holder from a reused pid). */
function writeLock(root: string, pid: number): void {
  const boot = existsSync('/proc/sys/kernel/random/boot_id') ? readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() : null;
  writeFileSync(join(root, '.repodex', 'lock'), JSON.stringify({ pid, host: hostname(), started: new Date().toISOString(), token: `test-${pid}`, start: processStartTime(pid) ?? null, boot }));
}

/** `search <identifier>` (never syncing on its own) reads the index and ranks the anchor's file first. */
function expectFound(root: string, anchor: (typeof ANCHORS)[number], context: () => string): void {
  const search = runCli(['search', anchor.identifier, '--json', '--root', root], { env: NO_AUTO_SYNC });
  expect(search.code, `${context()}\nsearch ${anchor.identifier}: ${search.stdout}${search.stderr}`).toBe(0);
  expect(search.json<Search>().results[0]?.path, context()).toBe(anchor.path);
}

/** `verify` accepts the index: every checksum and cross-reference holds. */
function expectVerified(root: string, context: () => string): void {
  const verify = runCli(['verify', '--json', '--root', root]);
  expect(verify.code, `${context()}\nverify: ${verify.stdout}${verify.stderr}`).toBe(0);
  expect(verify.json<{ ok: boolean }>().ok, context()).toBe(true);
}

/** After a clean sync: no temp files, no lock, and the current generation's files alone (a replaced one's go at the commit). */
function expectTidy(root: string, context: () => string): void {
  const entries = dataDirEntries(root);
  expect(entries.filter((name) => name.includes('.tmp')), context()).toEqual([]);
  expect(entries.filter((name) => name.startsWith('lock')), context()).toEqual([]);
  const index = readIndex(root);
  expect(entries.filter((name) => name.startsWith('gen-')), context()).toEqual([index.meta.manifest.name]);
  expect(entries.filter((name) => name.startsWith('seg-')).sort(), context()).toEqual(index.segments.map((segment) => segment.name).sort());
}

/** Rewrite a few non-anchor files so the next sync has something to do. */
function editSome(root: string, rng: () => number, editable: readonly string[], tag: number, count = 3): void {
  for (let e = 0; e < count; e++) {
    const path = pick(rng, editable);
    writeFileSync(join(root, path), sourceFile(rng, 5000 + tag * 10 + e, `export const edited${tag}x${e} = ${tag};`));
  }
}

describe('sync killed with SIGKILL', () => {
  let root: string;
  let fileCount: number;
  const editable = Object.keys(generateRepo(SEED)).filter((path) => !ANCHORS.some((anchor) => anchor.path === path));

  beforeAll(() => {
    root = makeRepo(generateRepo(SEED));
    const first = runCli(['sync', '--json', '--root', root]);
    expect(first.code, first.stderr).toBe(0);
    fileCount = first.json<{ files_scanned: number }>().files_scanned;
    expect(fileCount).toBe(FILE_COUNT);
  });

  it(`at random moments of incremental and full syncs never leaves an index that status, search or verify reject (${ROUNDS} rounds)`, async () => {
    const rng = prng(SEED ^ 0x9e3779b9);
    // Measure how long each kind of sync takes, so kill delays cover startup, reading, writing and commit.
    editSome(root, rng, editable, 0);
    const incremental = await runSync(root);
    const full = await runSync(root, { force: true });
    for (const run of [incremental, full]) expect(run.code, run.stderr).toBe(0);
    // Stratified uniform draws over [0, 1.2 × duration] (one per slice, in shuffled order): kills
    // spread evenly over every phase on every seed, not only on lucky ones.
    const fractions = Array.from({ length: ROUNDS }, (_, i) => (i + rng()) / ROUNDS);
    for (let i = fractions.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [fractions[i], fractions[j]] = [fractions[j]!, fractions[i]!];
    }
    const log: string[] = [];
    const context = (): string => `seed=${SEED} incremental≈${Math.round(incremental.ms)}ms full≈${Math.round(full.ms)}ms\n${log.join('\n')}`;
    let lastGeneration = 0;
    let killed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const force = round % FULL_EVERY === FULL_EVERY - 1;
      editSome(root, rng, editable, round + 1);
      const delay = Math.round(fractions[round]! * 1.2 * (force ? full.ms : incremental.ms));
      const outcome = await runSync(root, { force, killAfterMs: delay });
      if (outcome.signal === 'SIGKILL') killed++;
      log.push(`round ${round}${force ? ' (full)' : ''}: kill after ${delay}ms → ${outcome.signal ?? `exit ${outcome.code}`} at ${Math.round(outcome.ms)}ms; .repodex: ${dataDirEntries(root).join(' ')}`);
      // A sync that was not killed must have succeeded: the previous holder of the lock is dead.
      if (outcome.signal === null) expect(outcome.code, `${context()}\n${outcome.stderr}`).toBe(0);

      const status = runCli(['status', '--json', '--root', root]);
      expect(status.code, `${context()}\nstatus: ${status.stderr}`).toBe(0);
      const report = status.json<Status>();
      expect(report.indexed, context()).toBe(true);
      expect(report.files, context()).toBe(fileCount);
      expect(report.chunks, context()).toBeGreaterThan(0);
      // The committed generation never goes back: meta.json only ever moves forward.
      expect(report.generation!, context()).toBeGreaterThanOrEqual(lastGeneration);
      lastGeneration = report.generation!;
      expectVerified(root, context);
      // One anchor per round (rotating) keeps a round to a few processes; all are checked at the end.
      expectFound(root, ANCHORS[round % ANCHORS.length]!, context);
    }
    // Sanity check on the setup, not on speed: with delays up to 1.2× a sync, most rounds die mid-sync.
    expect(killed, context()).toBeGreaterThan(ROUNDS / 3);

    // A normal sync recovers: the dead writer's lock is taken over and its leftovers are removed.
    const recovered = runCli(['sync', '--json', '--root', root]);
    expect(recovered.code, `${context()}\n${recovered.stderr}`).toBe(0);
    expectTidy(root, context);
    const final = runCli(['status', '--json', '--root', root]).json<Status & { dirty: boolean }>();
    expect(final).toMatchObject({ indexed: true, dirty: false, files: fileCount });
    expectVerified(root, context);
    for (const anchor of ANCHORS) expectFound(root, anchor, context);
  });

  it.each(CRASH_POINTS)('at crash point %s, on a delta commit and on a merging one', async (point) => {
    const rng = prng(SEED ^ point.length);
    const context = (): string => `crash point ${point}; .repodex: ${dataDirEntries(root).join(' ')}`;
    for (const merging of [false, true]) {
      // A merging commit: enough delta segments that the next commit folds them into one. A full
      // sync first, so no dead chunks are left from earlier tests: past a quarter dead, a commit
      // rewrites everything into one segment, which would reset the count mid-loop.
      if (merging) {
        expect((await runSync(root, { force: true })).code).toBe(0);
        for (let i = 0; i < 12 && readIndex(root).segments.length < 8; i++) {
          editSome(root, rng, editable, 700 + i, 1);
          expect((await runSync(root)).code).toBe(0);
        }
        expect(readIndex(root).segments.length, context()).toBeGreaterThanOrEqual(8);
      }
      const before = readIndex(root).meta.generation;
      editSome(root, rng, editable, 900 + point.length, 2);
      const crashed = await runSync(root, { env: { REPODEX_CRASH_AT: point } });
      expect(crashed.signal, `${context()}\n${crashed.stderr}`).toBe('SIGKILL');
      // The commit point is the rename of meta.json: before it, the old generation; after it, the new.
      const committed = ['committed', 'gc', 'cache-appended'].includes(point);
      expect(readIndex(root).meta.generation, context()).toBe(committed ? before + 1 : before);
      // A merging commit folds the small segments into one, after the first (largest) one.
      if (committed && merging) expect(readIndex(root).segments.length, context()).toBe(2);
      expectVerified(root, context);
      for (const anchor of ANCHORS) expectFound(root, anchor, context);
      const status = runCli(['status', '--json', '--root', root]).json<Status & { dirty: boolean }>();
      expect(status.indexed, context()).toBe(true);
      // The next sync takes the dead writer's lock over, finishes the job and tidies up.
      const next = await runSync(root);
      expect(next.code, `${context()}\n${next.stderr}`).toBe(0);
      expectTidy(root, context);
      expectVerified(root, context);
      expect(runCli(['status', '--json', '--root', root]).json<{ dirty: boolean }>().dirty, context()).toBe(false);
    }
  });

  it('ten concurrent syncs end with one valid index: each one syncs, waits its turn or says a sync is running', async () => {
    const rng = prng(SEED + 10);
    editSome(root, rng, editable, 1000, 6);
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => runSync(root)));
    for (const outcome of outcomes) {
      expect(outcome.signal).toBeNull();
      if (outcome.code !== 0) {
        expect(outcome.code, outcome.stderr).toBe(1);
        expect(outcome.stderr).toMatch(/sync already running/);
      }
    }
    expect(outcomes.filter((outcome) => outcome.code === 0).length).toBeGreaterThanOrEqual(1);
    // Exactly one of them read the edited files; the others found nothing left to do.
    const summaries = outcomes.filter((outcome) => outcome.code === 0).map((outcome) => JSON.parse(outcome.stdout) as { mode: string; files_scanned: number });
    expect(summaries.filter((summary) => summary.mode !== 'none').length).toBe(1);
    expectTidy(root, () => 'after concurrent syncs');
    expectVerified(root, () => 'after concurrent syncs');
    expect(runCli(['status', '--json', '--root', root]).json<{ dirty: boolean }>().dirty).toBe(false);
  });

  it('refuses to sync while a live process holds the lock, and takes over a dead one', async () => {
    const holder = spawnIdle();
    try {
      expect(holder.pid).toBeTypeOf('number');
      writeLock(root, holder.pid!);
      const refused = runCli(['sync', '--root', root]);
      expect(refused.code).toBe(1);
      // It waited its turn (about 2 s) before giving up.
      expect(refused.stderr).toContain(`sync already running (pid ${holder.pid}`);
      const refusedJson = runCli(['sync', '--json', '--root', root]);
      expect(refusedJson.code).toBe(1);
      expect(refusedJson.json()).toMatchObject({ ok: false, code: 'LOCKED' });
      // The lock is left alone, and readers still answer from the committed index meanwhile.
      expect(JSON.parse(readFileSync(join(root, '.repodex', 'lock'), 'utf8'))).toMatchObject({ pid: holder.pid });
      const status = runCli(['status', '--json', '--root', root]);
      expect(status.code).toBe(0);
      expect(status.json()).toMatchObject({ indexed: true, sync_running: true, state: 'indexing' });
      expectFound(root, ANCHORS[0], () => 'while a live process holds the lock');
    } finally {
      holder.kill('SIGKILL');
      await waitForExit(holder);
    }

    // The holder is dead now: its lock is stale and the next sync takes it over.
    const taken = runCli(['sync', '--json', '--root', root]);
    expect(taken.code, taken.stderr).toBe(0);
    expect(existsSync(join(root, '.repodex', 'lock'))).toBe(false);

    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await waitForExit(gone);
    writeLock(root, gone.pid!);
    const afterDead = runCli(['sync', '--json', '--root', root]);
    expect(afterDead.code, afterDead.stderr).toBe(0);
    expect(existsSync(join(root, '.repodex', 'lock'))).toBe(false);
  });
});

describe('sync stopped by a signal', () => {
  // Ctrl-C and SIGTERM are not crashes: the sync stops at the next file, writes nothing, releases
  // its lock and says so (exit 130). Before, the handlers were removed while the sync still ran,
  // so the signal killed it outright and left the lock behind.
  it.each(['SIGINT', 'SIGTERM'] as const)('%s mid-sync: exit 130, nothing committed, the lock released', async (signal) => {
    const rng = prng(SEED + 20);
    const files: Record<string, string> = {};
    for (let i = 0; i < 800; i++) files[`src/m${i}.ts`] = sourceFile(rng, 8000 + i);
    const root = makeRepo(files);
    const first = runCli(['sync', '--embeddings', 'off', '--json', '--root', root]);
    expect(first.code, first.stderr).toBe(0);
    const before = readIndex(root).meta.generation;
    // A full rebuild with its parse cache removed: seconds of work, so the signal lands mid-way.
    rmSync(join(root, '.repodex', 'parse-cache.rpdx'), { force: true });
    const child = spawn(process.execPath, [CLI, 'sync', '--force', '--root', root], { cwd: PROJECT_ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
    const deadline = performance.now() + 20_000;
    while (!existsSync(join(root, '.repodex', 'lock'))) {
      if (performance.now() > deadline) throw new Error(`the sync never took its lock; stderr: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill(signal);
    const exit = await exited;
    expect(exit, stderr).toEqual({ code: 130, signal: null });
    expect(stderr).toMatch(/stopped before it committed/);
    expect(existsSync(join(root, '.repodex', 'lock'))).toBe(false);
    expect(readIndex(root).meta.generation).toBe(before);
    expectVerified(root, () => `after ${signal}`);
  });
});
