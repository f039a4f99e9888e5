import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CLI, makeRepo } from '../helpers.js';
import { needsInotify } from '../inotify.js';

/**
 * N17: `serve --stdio --watch` printed "MaxListenersExceededWarning: Possible EventTarget memory
 * leak detected. 11 abort listeners added to [AbortSignal]": every background sync added a
 * listener to the watch loop's one signal and never removed it.
 */
describe('N17: a long-lived watching server does not gather abort listeners', () => {
  it('fifteen background syncs, no leak warning', needsInotify(async () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 0;\n' });
    const server = spawn(process.execPath, [CLI, 'serve', '--stdio', '--watch', '--debounce-ms', '20', '--root', root], { env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const answers = createInterface({ input: server.stdout })[Symbol.asyncIterator]();
    const ask = async (request: object): Promise<{ data: { generation: number | null } }> => {
      server.stdin.write(`${JSON.stringify(request)}\n`);
      return JSON.parse((await answers.next()).value as string) as { data: { generation: number | null } };
    };
    let generation = (await ask({ op: 'status' })).data.generation ?? 0;
    for (let i = 1; i <= 15; i++) {
      appendFileSync(join(root, 'src/a.ts'), `export const edit${i} = ${i};\n`);
      // Wait for the background sync of this edit to commit.
      for (let polls = 0; ; polls++) {
        const now = (await ask({ op: 'status' })).data.generation ?? 0;
        if (now > generation) {
          generation = now;
          break;
        }
        if (polls > 500) throw new Error(`edit ${i} was never synced; stderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    server.stdin.end();
    await new Promise((resolve) => server.once('exit', resolve));
    expect(generation).toBeGreaterThanOrEqual(16);
    expect(stderr).not.toContain('MaxListenersExceededWarning');
  }), 90_000);
});
