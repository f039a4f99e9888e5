import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsParseCache, verifyParseCache } from '../../src/store/fs/parse-cache.js';
import { CLI, PROJECT_ROOT, prng, runCli, tempDir } from '../helpers.js';
import { flipByte, topicRepo } from './damage-fixtures.js';
import { needsInotify } from '../inotify.js';

const parsed = (lines: number) => ({ spans: [{ startLine: 1, endLine: lines }], symbols: [], fallback: null });
const key = (n: number): string => n.toString(16).padStart(64, '0');

/** The JSON lines `child` writes to stdout, parsed as they arrive. */
function lines(child: ChildProcess): unknown[] {
  const parsed: unknown[] = [];
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    const whole = (partial + text).split('\n');
    partial = whole.pop()!;
    for (const line of whole) if (line.trim() !== '') parsed.push(JSON.parse(line));
  });
  return parsed;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

describe('N8: several writers on one repository', () => {
  it('N8: a process appending to the parse cache after another changed it appends after what is on disk, never at its own stale offset', async () => {
    const dir = tempDir();
    const path = join(dir, 'parse-cache.rpdx');
    const seed = new FsParseCache(path, dir);
    seed.put(key(1), parsed(1));
    await seed.flush(async () => new Set());
    // Two processes (a watcher and a server) each hold the log in memory from the same moment.
    const watcher = new FsParseCache(path, dir);
    const server = new FsParseCache(path, dir);
    watcher.put(key(2), { ...parsed(2), symbols: Array.from({ length: 40 }, (_, i) => ({ kind: 'function', name: `f${i}`, signature: `f${i}()`, start_line: i + 1, end_line: i + 1, doc: null, parent_symbol: null, scope_kind: 'module', is_conditional: false, decl_context: null })) });
    await watcher.flush(async () => new Set());
    server.put(key(3), parsed(3));
    await server.flush(async () => new Set());
    watcher.put(key(4), parsed(4));
    await watcher.flush(async () => new Set());
    // Before: the watcher wrote its record past the end the server had left, leaving a hole of
    // zeros ("bad record length at offset …").
    expect(verifyParseCache(path)).toEqual({ problems: [], notes: [] });
    const reader = new FsParseCache(path, dir);
    for (const n of [1, 3, 4]) expect(reader.get(key(n)), `record ${n}`).toBeDefined();
  });

  it('N8: a sync that finds nothing to index still drops a damaged parse-cache record, as verify says it will', () => {
    const root = topicRepo();
    writeFileSync(join(root, 'README.md'), '# topics\n');
    mkdirSync(join(root, '.repodex'), { recursive: true });
    writeFileSync(join(root, '.repodex/config.json'), JSON.stringify({ embeddings: { provider: 'off' } }));
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const size = readFileSync(join(root, '.repodex/parse-cache.rpdx')).length;
    flipByte(root, 'parse-cache.rpdx', Math.floor(size / 2), 0x01);
    const damaged = runCli(['verify', '--root', root]);
    expect(damaged.code).toBe(1);
    expect(damaged.stdout).toContain('parse-cache.rpdx');
    const sync = runCli(['sync', '--json', '--root', root]);
    expect(sync.json<{ mode: string }>().mode).toBe('none');
    const after = runCli(['verify', '--root', root]);
    expect(after.stdout).toMatch(/^index sound/);
    expect(after.code).toBe(0);
  });

  it('N8: `repodex watch` and `repodex serve --stdio --watch` on one repository, with files changing, leave a sound index', { timeout: 180_000 }, needsInotify(async () => {
    const root = topicRepo();
    mkdirSync(join(root, '.repodex'), { recursive: true });
    writeFileSync(join(root, '.repodex/config.json'), JSON.stringify({ embeddings: { provider: 'off' }, watch: { debounce_ms: 50 } }));
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const env = { ...process.env, NO_COLOR: '1' };
    const watch = spawn(process.execPath, [CLI, 'watch', '--json', '--debounce-ms', '50', '--root', root], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const serve = spawn(process.execPath, [CLI, 'serve', '--stdio', '--watch', '--debounce-ms', '50', '--root', root], { cwd: PROJECT_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const synced = lines(watch) as { generation: number }[];
    const answers = lines(serve) as { data?: { generation: number; freshness: { dirty: boolean }; results: { path: string }[] } }[];
    try {
      const rng = prng(8);
      for (let n = 0; n < 120; n++) {
        const file = join(root, `src/${['upload', 'cookie', 'retry', 'parser', 'cache', 'render'][Math.floor(rng() * 6)]}`, `mod${Math.floor(rng() * 12) * 6 + Math.floor(rng() * 6)}.ts`);
        // Each edit adds new declarations: new content, parsed and cached by whichever process
        // syncs it. Large and small edits alternate, so one process's appends can end before the
        // offset where the other's stale view of the log ends.
        const declarations = n % 2 === 0 ? 1 : 60;
        try {
          appendFileSync(file, Array.from({ length: declarations }, (_, d) => `\nexport function edited${n}_${d}(value: number): number {\n  return value + ${n * 100 + d};\n}\n`).join(''));
        } catch {
          continue; // that topic has no such module
        }
        serve.stdin.write(`${JSON.stringify({ op: 'search', q: 'edited value', top_k: 3 })}\n`);
        await new Promise((resolve) => setTimeout(resolve, 60 + rng() * 120));
      }
      // Both have caught up with every edit before they stop: the server answers, fresh, with a
      // file written after the last edit, and the watcher has synced to that generation or later.
      writeFileSync(join(root, 'src/after-the-edits.ts'), 'export const afterTheEdits = 1;\n');
      const caughtUp = (): number | undefined => answers.find((answer) => answer.data?.results[0]?.path === 'src/after-the-edits.ts' && !answer.data.freshness.dirty)?.data?.generation;
      for (let asked = 0; caughtUp() === undefined; asked++) {
        if (asked > 600) throw new Error('the server never answered with the last file');
        serve.stdin.write(`${JSON.stringify({ op: 'search', q: 'afterTheEdits', top_k: 1 })}\n`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (let waited = 0; !synced.some((sync) => sync.generation >= caughtUp()!); waited++) {
        if (waited > 600) throw new Error(`the watcher never synced to generation ${caughtUp()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      serve.stdin.end();
      watch.kill('SIGINT');
      await Promise.all([exited(watch), exited(serve)]);
    }
    const verify = runCli(['verify', '--root', root]);
    expect(verify.stdout).toMatch(/^index sound/);
    expect(verify.code).toBe(0);
  }));
});
