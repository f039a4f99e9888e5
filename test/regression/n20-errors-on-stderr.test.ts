import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N20: errors go to stderr only; --json answers still go to stdout', () => {
  it('N20: a refused open prints nothing on stdout, so `repodex open x > out` never writes the error into out', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export const a = 1;\n', '.env': 'TOKEN=x\n' });
    for (const path of ['missing.ts', '.env']) {
      const run = runCli(['open', path, '--root', root]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/(error|blocked): /);
      expect(run.stderr).toContain('hint: ');
      const json = runCli(['open', path, '--root', root, '--json']);
      expect(json.code).toBe(1);
      expect(json.json<{ error: string }>().error).toContain(path);
    }
  });

  it('N20: fetch prints the chunks it read on stdout and the ids it refused on stderr', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export function alpha() {\n  return 1;\n}\n' });
    const hit = runCli(['search', 'alpha', '--root', root, '--json']).json<{ results: { chunk_id: number }[] }>().results[0]!;
    const run = runCli(['fetch', '--ids', `${hit.chunk_id},999999`, '--root', root]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('export function alpha()');
    expect(run.stdout).not.toContain('999999');
    expect(run.stderr).toContain('chunk 999999 is gone: search again');
  });
});
