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
    const hits = runCli(['search', 'inner', '--json', '--root', root], { cwd: root }).json<{ results: { path: string; chunk_id: number }[] }>().results;
    for (const hit of hits) {
      const fetched = runCli(['fetch', '--ids', String(hit.chunk_id), '--root', root], { cwd: root }).stdout;
      if (hit.path.includes('\\')) expect(fetched).not.toContain('other = 2');
    }
    expect(hits.filter((hit) => hit.path.includes('\\'))).toEqual([]);
    // The other file is still itself.
    expect(runCli(['open', 'a/b.ts', '--root', root], { cwd: root }).stdout).toContain('other = 2');
  });
});
