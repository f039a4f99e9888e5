import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, capitalize, makeRepo, pick, prng, runCli, tempDir } from '../helpers.js';
import { needsInotify } from '../inotify.js';

/**
 * Everything that writes an index, at once, on one repository: two `repodex watch`, a
 * `serve --stdio --watch` answering searches, and CLI syncs, while files are created, edited,
 * renamed and removed at random. Afterwards the index verifies clean and answers exactly as a
 * fresh build of the same tree does. REPODEX_STRESS_SECONDS sets how long the edits go on (the
 * suite runs 20 s; the release check runs 120).
 */
const SECONDS = Number(process.env.REPODEX_STRESS_SECONDS ?? 20);

const WORDS = ['retry', 'backoff', 'session', 'token', 'cache', 'parser', 'router', 'schema', 'ledger', 'socket', 'buffer', 'cursor', 'render', 'queue', 'shard'];

function module(rng: () => number, n: number): string {
  const lines: string[] = [];
  for (let f = 0; f < 3; f++) {
    const name = `${pick(rng, WORDS)}${capitalize(pick(rng, WORDS))}${n}x${f}`;
    lines.push(`/** ${pick(rng, WORDS)} ${pick(rng, WORDS)} ${pick(rng, WORDS)} */`, `export function ${name}(input: number): number {`);
    for (let l = 0; l < 4 + Math.floor(rng() * 8); l++) lines.push(`  input += ${Math.floor(rng() * 100)}; // ${pick(rng, WORDS)}`);
    lines.push('  return input;', '}', '');
  }
  return lines.join('\n');
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function start(args: string[]): { child: ChildProcessWithoutNullStreams; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1' } });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

interface Hit {
  path: string;
  start_line: number;
  end_line: number;
  chunk_id: number;
  score: number;
}

function searchAll(root: string, queries: readonly string[]): Hit[][] {
  return queries.map((q) => {
    const run = runCli(['search', q, '--json', '--top-k', '10', '--indexing=off', '--root', root]);
    expect(run.code, run.stderr).toBe(0);
    return run.json<{ results: Hit[] }>().results.map(({ path, start_line, end_line, chunk_id, score }) => ({ path, start_line, end_line, chunk_id, score }));
  });
}

describe('concurrent writers on one repository', () => {
  it(`two watchers, a watching server and CLI syncs for ${SECONDS} s of random edits leave a sound index equal to a fresh build`, needsInotify(async () => {
    const rng = prng(5);
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`src/${pick(rng, WORDS)}/m${i}.ts`] = module(rng, i);
    const root = makeRepo(files);
    expect(runCli(['sync', '--root', root]).code).toBe(0);

    const watchers = [start(['watch', '--debounce-ms', '50', '--root', root]), start(['watch', '--debounce-ms', '120', '--root', root])];
    const server = start(['serve', '--stdio', '--watch', '--debounce-ms', '80', '--root', root]);
    const answers = createInterface({ input: server.child.stdout })[Symbol.asyncIterator]();
    let searches = 0;
    let serverFailures = 0;
    let syncs = 0;
    let next = 1000;
    const deadline = Date.now() + SECONDS * 1000;
    while (Date.now() < deadline) {
      const live = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
      const target = pick(rng, live);
      const path = join(target.parentPath, target.name);
      const roll = rng();
      if (roll < 0.35) appendFileSync(path, `export const edit${next} = ${next}; // ${pick(rng, WORDS)}\n`);
      else if (roll < 0.55) writeFileSync(join(root, 'src', pick(rng, WORDS), `n${next}.ts`), module(rng, next));
      else if (roll < 0.7 && live.length > 40) rmSync(path);
      else if (roll < 0.8) renameSync(path, join(root, 'src', pick(rng, WORDS), `r${next}.ts`));
      else if (roll < 0.9) {
        server.child.stdin.write(`${JSON.stringify({ op: 'search', q: `${pick(rng, WORDS)} ${pick(rng, WORDS)}`, top_k: 5 })}\n`);
        const line = await answers.next();
        searches++;
        if (!(JSON.parse(line.value as string) as { ok: boolean }).ok) serverFailures++;
      } else {
        // A CLI sync racing the others: it syncs, waits its turn, or says a sync is running.
        const run = runCli(['sync', '--json', '--root', root]);
        if (run.code === 0) syncs++;
        else expect(run.stderr).toMatch(/sync is running|LOCKED|another process/);
      }
      next++;
      await new Promise((resolve) => setTimeout(resolve, Math.floor(rng() * 40)));
    }
    // What the run did, for the record (docs/benchmarks.md quotes the 120 s run).
    console.info(`concurrent writers: ${next - 1000} steps in ${SECONDS} s: ${searches} searches, ${syncs} CLI syncs, ${readdirSync(join(root, 'src'), { recursive: true }).length} paths under src/`);
    for (const watcher of watchers) watcher.child.kill('SIGINT');
    server.child.stdin.end();
    const exits = await Promise.all([...watchers.map((watcher) => watcher.exited), server.exited]);
    expect(exits, [...watchers, server].map((process) => process.stderr()).join('\n')).toEqual([0, 0, 0]);
    expect(searches).toBeGreaterThan(0);
    expect(serverFailures).toBe(0);
    for (const process of [...watchers, server]) expect(process.stderr()).not.toMatch(/damaged|corrupt|checksum|MaxListenersExceeded|internal error/i);

    // The index the writers left is sound, and after a last sync answers as a fresh build does.
    const verify = runCli(['verify', '--root', root]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const fresh = tempDir();
    cpSync(root, fresh, { recursive: true, filter: (source) => !source.includes('.repodex') });
    expect(existsSync(join(fresh, '.repodex'))).toBe(false);
    expect(runCli(['sync', '--root', fresh]).code).toBe(0);
    const queries = [...WORDS.slice(0, 10), 'retry backoff', 'session token cache', 'edit', 'input return', `edit${next - 1}`];
    expect(searchAll(root, queries)).toEqual(searchAll(fresh, queries));
    const list = (dir: string): unknown => runCli(['files', '--json', '--limit', '10000', '--indexing=off', '--root', dir]).json<{ files: { path: string; state: string }[] }>().files.map(({ path, state }) => [path, state]);
    expect(list(root)).toEqual(list(fresh));
    expect(syncs + searches).toBeGreaterThan(0);
  }), (SECONDS + 120) * 1000);
});
