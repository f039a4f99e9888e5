import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, makeRepo, runCli } from '../helpers.js';
import { needsInotify } from '../inotify.js';

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function start(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1', ...env } });
  children.push(child);
  return child;
}

/**
 * N12: a server with automatic indexing off kept warning "index is stale (N change(s) seen by the
 * file watcher since the last sync)" after a `repodex watch` in another terminal had already
 * indexed the change — while its own `status` said ready. Events another process's generation
 * holds are settled once stats show the tree matches it.
 */
describe('N12: no stale warning for changes another process already indexed', () => {
  it('serve with indexing off, beside repodex watch: the answer holds the change and says dirty:false', needsInotify(async () => {
    const root = makeRepo({ 'seed.ts': 'export const seed = 1;\n' });
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const watch = start(['watch', '--json', '--debounce-ms', '50', '--root', root]);
    const syncs = createInterface({ input: watch.stdout })[Symbol.asyncIterator]();
    await syncs.next(); // its first sync
    const server = start(['serve', '--stdio', '--root', root], { REPODEX_INDEXING: '0' });
    const answers = createInterface({ input: server.stdout })[Symbol.asyncIterator]();
    const ask = async (request: object): Promise<{ data: Record<string, unknown> }> => {
      server.stdin.write(`${JSON.stringify(request)}\n`);
      return JSON.parse((await answers.next()).value as string) as { data: Record<string, unknown> };
    };
    expect((await ask({ op: 'status' })).data.state).toBe('ready');

    writeFileSync(join(root, 'late.ts'), 'export const lateArrival = 1;\n');
    for (;;) {
      const line = await syncs.next(); // the watcher's sync of late.ts
      if ((JSON.parse(line.value as string) as { files_scanned: number }).files_scanned > 0) break;
    }
    const search = (await ask({ op: 'search', q: 'lateArrival', top_k: 1 })).data as { results: { path: string }[]; freshness: { dirty: boolean }; warnings: string[] };
    expect(search.results.map((hit) => hit.path)).toEqual(['late.ts']);
    expect(search.freshness.dirty).toBe(false);
    expect(search.warnings).toEqual([]);
    const status = (await ask({ op: 'status' })).data;
    expect(status).toMatchObject({ state: 'ready', reasons: [] });
  }), 60_000);
});
