import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

const FETCH = Array.from({ length: 10 }, (_, i) => `export const line${i + 1} = ${i + 1};`).join('\n') + '\n';

function repo(): string {
  return makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'packages/core/src/fetch.ts': FETCH, 'README.md': '# r\n' });
}

describe('N14: open and outline speak in the frame of the folder they were typed in', () => {
  it("N14: open's continuation hint from a subfolder is a command that works there", () => {
    const root = repo();
    const cwd = join(root, 'packages/core/src');
    const first = runCli(['open', 'fetch.ts', '--end', '2'], { cwd });
    expect(first.code).toBe(0);
    const hint = /… more from line 3: (repodex open .*)$/m.exec(first.stdout);
    expect(hint?.[1]).toBe('repodex open fetch.ts --start 3');
    const next = runCli(['open', 'fetch.ts', '--start', '3', '--end', '4'], { cwd });
    expect(next.code).toBe(0);
    expect(next.stdout).toContain('3| export const line3 = 3;');
  });

  it('N14: a root-relative path typed in a subfolder gets "did you mean", with the command that works from there', () => {
    const root = repo();
    const cwd = join(root, 'packages/core/src');
    for (const command of ['open', 'outline']) {
      const run = runCli([command, 'packages/core/src/fetch.ts'], { cwd });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('did you mean packages/core/src/fetch.ts');
      expect(run.stderr).toContain(`from here, repodex ${command} fetch.ts`);
      expect(run.stderr).not.toContain('repodex sync');
    }
  });

  it('N14: a missing path never gets "run `repodex sync`" from open or outline, on the CLI or over JSONL (they read the disk)', () => {
    const root = repo();
    const open = runCli(['open', 'src/gone.ts', '--root', root, '--json']).json<{ hint: string }>();
    expect(open.hint).not.toContain('sync');
    expect(open.hint).toContain('**/gone.ts');
    const outline = runCli(['outline', 'src/gone.ts', '--root', root, '--json']).json<{ hint: string }>();
    expect(outline.hint).not.toContain('sync');
    const served = runCli(['serve', '--stdio', '--root', root], { input: '{"op":"open","path":"nope/x.ts"}\n{"op":"outline","path":"nope/x.ts"}\n' });
    const answers = served.stdout.trim().split('\n').map((line) => JSON.parse(line) as { ok: boolean; hint: string });
    expect(answers).toHaveLength(2);
    for (const answer of answers) {
      expect(answer.ok).toBe(false);
      expect(answer.hint).not.toContain('sync');
    }
  });
});
