import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N13: a name holding a backslash', () => {
  it('N13: open of a\\b.ts never serves a/b.ts, and no chunk id of a\\b.ts answers with a/b.ts (such names are refused everywhere)', () => {
    const root = makeRepo({ 'a\\b.ts': 'export const inner = 1;\n', 'a/b.ts': 'export const other = 2;\n' });
    expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);
    const opened = runCli(['open', 'a\\b.ts', '--root', root], { cwd: root });
    expect(opened.stdout).not.toContain('other = 2');
    expect(opened.code).not.toBe(0);
    expect(opened.stdout + opened.stderr).toMatch(/holds a backslash/);
    const search = (q: string) => runCli(['search', q, '--json', '--root', root], { cwd: root }).json<{ results: { path: string; chunk_id: number }[] }>().results;
    // a\b.ts is never indexed: no chunk (so no chunk id) stands for its text...
    expect(search('inner')).toEqual([]);
    // ...and the one chunk there is answers, by its id, with its own file and text.
    const hits = search('inner other');
    expect(hits.map((hit) => hit.path)).toEqual(['a/b.ts']);
    const fetched = runCli(['fetch', '--ids', String(hits[0]!.chunk_id), '--json', '--root', root], { cwd: root }).json<{ chunks: { path: string; lines: string[] }[] }>().chunks;
    expect(fetched).toMatchObject([{ path: 'a/b.ts', lines: ['1| export const other = 2;'] }]);
    // The other file is still itself.
    expect(runCli(['open', 'a/b.ts', '--root', root], { cwd: root }).stdout).toContain('other = 2');
  });
});
