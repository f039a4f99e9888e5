import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, PROJECT_ROOT, makeRepo, runCli, tempDir } from '../helpers.js';
import { IGNORES_GENERATED, writeIgnoredChanges } from '../ignored-changes.js';
import { needsInotify } from '../inotify.js';

// `repodex watch` (seed 001 §2.7) as a real process: it keeps the index fresh as files change,
// ignores what the index ignores, turns a flood of events into one sync, and stops cleanly on
// SIGINT/SIGTERM with the lock released.

interface SyncLine {
  mode: string;
  files_scanned: number;
  files_removed: number;
}

/** A running `watch --json`: its sync summaries as they arrive, and its stderr. */
class Watch {
  readonly syncs: SyncLine[] = [];
  stderr = '';
  private readonly child: ChildProcessWithoutNullStreams;
  private partial = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(root: string, debounceMs: number) {
    this.child = spawn(process.execPath, [CLI, 'watch', '--json', '--debounce-ms', String(debounceMs), '--root', root], { cwd: PROJECT_ROOT, env: { ...process.env, NO_COLOR: '1' } });
    this.child.stdout.setEncoding('utf8').on('data', (text: string) => {
      const lines = (this.partial + text).split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.syncs.push(JSON.parse(line) as SyncLine);
    });
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Resolves once `test` holds (polled), or fails after `timeoutMs` naming what was seen. */
  async until(test: () => boolean, timeoutMs: number, what: string): Promise<number> {
    const started = performance.now();
    while (!test()) {
      if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}; syncs: ${JSON.stringify(this.syncs)}; stderr: ${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return performance.now() - started;
  }

  /** Started: the first sync is done and the watcher is on. */
  ready(): Promise<number> {
    return this.until(() => this.stderr.includes('watching '), 30_000, 'watch to start');
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

const running: Watch[] = [];
afterEach(async () => {
  for (const watch of running.splice(0)) {
    watch.kill('SIGKILL');
    await watch.exited;
  }
});

function watch(root: string, debounceMs: number): Watch {
  const started = new Watch(root, debounceMs);
  running.push(started);
  return started;
}

/** Search without letting the CLI sync by itself: only the watcher can have made a change searchable. */
function found(root: string, q: string): string[] {
  const run = runCli(['search', q, '--json', '--root', root], { env: { REPODEX_INDEXING: '0' } });
  return run.code === 0 ? (JSON.parse(run.stdout) as { results: { path: string }[] }).results.map((hit) => hit.path) : [];
}

/** Files the sync lines from `from` on say they scanned. */
const scanned = (w: Watch, from: number): number => w.syncs.slice(from).reduce((sum, sync) => sum + sync.files_scanned, 0);

describe('repodex watch', () => {
  it('makes an edit searchable (debounce 100 ms), re-reading just that file', needsInotify(async () => {
    const root = makeRepo({ 'src/a.ts': 'export const alpha = 1;\n', 'src/b.ts': 'export const beta = 2;\n' });
    const w = watch(root, 100);
    await w.ready();
    expect(w.syncs[0]).toMatchObject({ mode: 'full' });
    writeFileSync(join(root, 'src/a.ts'), 'export const alpha = 1;\nexport const wombatLantern = 3;\n');
    // How soon is for bench/ to measure (no timed assertions here): this only bounds the wait.
    await w.until(() => found(root, 'wombatLantern').includes('src/a.ts'), 10_000, 'the edit to be searchable');
    // Its summary line follows the commit by a moment.
    await w.until(() => w.syncs.length >= 2, 5000, 'the sync line');
    expect(w.syncs.slice(1)).toEqual([expect.objectContaining({ mode: 'incremental', files_scanned: 1 })]);
  }));

  // That changes to ignored paths start no sync at all is shown by count, where the watcher's own
  // proof that every event arrived is at hand: src/engine/watch.test.ts.
  it('turns a flood of changes into one sync, with the paths it ignores written just before, and indexes none of them', needsInotify(async () => {
    const outside = tempDir();
    const root = makeRepo({ 'src/keep.ts': 'export const keep = 1;\n', '.gitignore': IGNORES_GENERATED });
    symlinkSync(outside, join(root, 'linked-outside'));
    const w = watch(root, 300);
    await w.ready();
    const afterStart = w.syncs.length;
    writeIgnoredChanges(root, outside);

    // A flood (like a branch checkout): 150 files at once become one sync.
    mkdirSync(join(root, 'src/flood'));
    for (let i = 0; i < 150; i++) writeFileSync(join(root, `src/flood/file${i}.ts`), `export const floodValue${i} = ${i};\n`);
    await w.until(() => scanned(w, afterStart) >= 150, 15_000, 'the flood to be synced');
    // Then one edit, a sync of its own: no other sync ran in between (a second one for the flood,
    // say), or it would stand between the two.
    writeFileSync(join(root, 'src/keep.ts'), 'export const keep = 2;\n');
    await w.until(() => scanned(w, afterStart) > 150, 15_000, 'the edit after the flood to be synced');
    expect(w.syncs.slice(afterStart)).toEqual([expect.objectContaining({ files_scanned: 150 }), expect.objectContaining({ files_scanned: 1 })]);
    expect(found(root, 'floodValue149')[0]).toBe('src/flood/file149.ts');
    expect(found(root, 'escaped')).toEqual([]);
    expect(found(root, 'generated')).toEqual([]);
  }));

  it.each(['SIGINT', 'SIGTERM'] as const)('stops cleanly on %s, mid-sync, with the lock released and nothing half-written', async (signal) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`src/m${i}.ts`] = `export function handler${i}(input: number): number {\n${'  input += 1;\n'.repeat(40)}  return input;\n}\n`;
    const root = makeRepo(files);
    const w = watch(root, 100);
    // Stop it while its first (full) sync is still running: once it holds the writer lock, its
    // signal handlers are in place (a fixed delay raced the process's start on a loaded machine).
    await w.until(() => existsSync(join(root, '.repodex/lock')), 30_000, 'the first sync to take the lock');
    w.kill(signal);
    const exit = await w.exited;
    expect(exit, w.stderr).toEqual({ code: 0, signal: null });
    expect(existsSync(join(root, '.repodex/lock'))).toBe(false);
    // Whatever it got to, the index is sound: none yet, or a complete generation.
    const verify = runCli(['verify', '--json', '--root', root]);
    const report = JSON.parse(verify.stdout) as { ok: boolean; indexed: boolean };
    expect(report.ok || !report.indexed, verify.stdout).toBe(true);
    const sync = runCli(['sync', '--json', '--root', root]);
    expect(sync.code, sync.stderr).toBe(0);
  });
});
