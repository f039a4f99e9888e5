import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, PROJECT_ROOT, makeRepo, runCli, prng } from '../helpers.js';

// SPEC §2 (atomic generations): a sync SIGKILLed at any moment must leave an index that
// `status` and `search` can still read, and the next sync must recover the stale lock and
// clean up what the killed one left behind. Seeded, so a failing round can be replayed:
// REPODEX_CRASH_SEED=<seed> npx vitest run test/e2e/crash-safety.test.ts

const SEED = Number(process.env.REPODEX_CRASH_SEED ?? 0x5eed1e55);
const ROUNDS = 24;
const FILE_COUNT = 420;
/** Every fourth round edits a few files first, so consecutive generations differ. */
const EDIT_EVERY = 4;
const NO_AUTO_SYNC = { REPODEX_INDEXING: '0' };


const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'zu', 'pe', 'qo', 'xa', 'bri', 'dun', 'fel', 'gor', 'hap', 'jin', 'wex', 'yom'];
const VERBS = ['load', 'parse', 'render', 'merge', 'resolve', 'flush', 'encode', 'decode', 'index', 'scan', 'emit', 'track'];
const NOUNS = ['config', 'buffer', 'token', 'segment', 'cursor', 'ledger', 'socket', 'widget', 'payload', 'bucket', 'cache', 'route'];

function pick<T>(rng: () => number, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

/** A made-up word (three syllables) that reads like a name but appears nowhere else by accident. */
function word(rng: () => number): string {
  return pick(rng, SYLLABLES) + pick(rng, SYLLABLES) + pick(rng, SYLLABLES);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
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
}

/** Run `sync --force` as a real process; SIGKILL it after `killAfterMs` when that is given. */
function runSync(root: string, killAfterMs?: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'sync', '--force', '--json', '--root', root], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: performance.now() - started, stderr });
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

function writeLock(root: string, pid: number): void {
  writeFileSync(join(root, '.repodex', 'lock'), JSON.stringify({ pid, host: hostname(), started: new Date().toISOString() }));
}

/** `search <identifier>` (never syncing on its own) reads the index and ranks the anchor's file first. */
function expectFound(root: string, anchor: (typeof ANCHORS)[number], context: () => string): void {
  const search = runCli(['search', anchor.identifier, '--json', '--root', root], { env: NO_AUTO_SYNC });
  expect(search.code, `${context()}\nsearch ${anchor.identifier}: ${search.stdout}${search.stderr}`).toBe(0);
  expect(search.json<Search>().results[0]?.path, context()).toBe(anchor.path);
}

describe('sync killed with SIGKILL at random moments', () => {
  let root: string;
  let fileCount: number;

  beforeAll(() => {
    root = makeRepo(generateRepo(SEED));
    const first = runCli(['sync', '--json', '--root', root]);
    expect(first.code, first.stderr).toBe(0);
    fileCount = first.json<{ files_scanned: number }>().files_scanned;
    expect(fileCount).toBe(FILE_COUNT);
  });

  it(`never leaves an index that status/search cannot read (${ROUNDS} rounds)`, async () => {
    // Measure how long one sync takes, so kill delays cover startup, indexing, writing and commit.
    const measured = [await runSync(root), await runSync(root)];
    for (const run of measured) expect(run.code, run.stderr).toBe(0);
    const duration = Math.max(...measured.map((run) => run.ms));

    const rng = prng(SEED ^ 0x9e3779b9);
    // Stratified uniform draws over [0, 1.2 × duration] (one per slice, in shuffled order): kills
    // spread evenly over startup, indexing, writing and commit on every seed, not only on lucky ones.
    const delays = Array.from({ length: ROUNDS }, (_, i) => Math.round(((i + rng()) / ROUNDS) * 1.2 * duration));
    for (let i = delays.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [delays[i], delays[j]] = [delays[j]!, delays[i]!];
    }
    const log: string[] = [];
    const context = (): string => `seed=${SEED} sync≈${Math.round(duration)}ms delays=[${delays.join(', ')}]\n${log.join('\n')}`;

    const editRng = prng(SEED + 1);
    const editable = Object.keys(generateRepo(SEED)).filter((path) => !ANCHORS.some((anchor) => anchor.path === path));
    let lastGeneration = 0;
    let killed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      if (round % EDIT_EVERY === 0) {
        for (let e = 0; e < 5; e++) {
          const path = pick(editRng, editable);
          writeFileSync(join(root, path), sourceFile(editRng, 5000 + round * 10 + e, `export const edited${round}x${e} = ${round};`));
        }
      }
      const delay = delays[round]!;
      const outcome = await runSync(root, delay);
      if (outcome.signal === 'SIGKILL') killed++;
      log.push(`round ${round}: kill after ${delay}ms → ${outcome.signal ?? `exit ${outcome.code}`} at ${Math.round(outcome.ms)}ms; .repodex: ${dataDirEntries(root).join(' ')}`);
      // A sync that was not killed must have succeeded: the previous owner of the lock is dead. (A kill
      // in the microseconds between creating the lock and writing the pid would make the next sync
      // refuse for 5 s by design, see lock.ts; at these delays that is a one-in-10⁵ event.)
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

      // One anchor per round (rotating) keeps a round to three processes; all are checked at the end.
      expectFound(root, ANCHORS[round % ANCHORS.length]!, context);
    }
    // Sanity check on the setup, not on speed: with delays up to 1.2× a sync, most rounds die mid-sync, and the first slice always does.
    expect(killed, context()).toBeGreaterThan(0);

    // A normal sync recovers: the dead writer's lock is taken over and its leftovers are removed.
    const recovered = runCli(['sync', '--json', '--root', root]);
    expect(recovered.code, `${context()}\n${recovered.stderr}`).toBe(0);
    const entries = dataDirEntries(root);
    expect(entries.filter((name) => name.includes('.tmp-')), context()).toEqual([]);
    expect(entries.filter((name) => name.startsWith('gen-')).length, context()).toBeLessThanOrEqual(2);
    expect(entries, context()).not.toContain('lock');
    const meta = JSON.parse(readFileSync(join(root, '.repodex', 'meta.json'), 'utf8')) as { generation_dir: string };
    expect(entries).toContain(meta.generation_dir);

    const final = runCli(['status', '--json', '--root', root]).json<Status & { dirty: boolean }>();
    expect(final).toMatchObject({ indexed: true, dirty: false, files: fileCount });
    for (const anchor of ANCHORS) expectFound(root, anchor, context);
  });

  it('refuses to sync while a live process holds the lock, and takes over a dead one', async () => {
    const holder = spawnIdle();
    try {
      expect(holder.pid).toBeTypeOf('number');
      writeLock(root, holder.pid!);
      const refused = runCli(['sync', '--root', root]);
      expect(refused.code).toBe(1);
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
