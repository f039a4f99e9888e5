import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N15: a repository too small to learn the builtin table says so, and no longer recommends a sync', () => {
  it('N15: the sync summary, status and vector/hybrid searches name the reason and how many chunks are needed', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export function zebra() {\n  return 1;\n}\n', 'b.md': '# zebra notes\n' });
    const sync = runCli(['sync', '--embeddings', 'builtin', '--root', root]);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/vectors: none, too few chunks for the builtin embedder to learn from: it needs at least 50, this index has 2/);
    const summary = runCli(['sync', '--force', '--root', root, '--json']).json<{ embeddings: { vectors: number; reason?: string } }>();
    expect(summary.embeddings.vectors).toBe(0);
    expect(summary.embeddings.reason).toMatch(/needs at least 50/);

    const status = runCli(['status', '--root', root]);
    expect(status.stdout).toMatch(/vectors +Missing: too few chunks .*needs at least 50, this index has 2/);
    expect(runCli(['status', '--root', root, '--json']).json<{ semantic: { problem: string | null } }>().semantic.problem).toMatch(/needs at least 50/);

    for (const mode of ['vector', 'hybrid']) {
      const search = runCli(['search', 'zebra', '--mode', mode, '--root', root, '--json']).json<{ mode: string; warnings: string[] }>();
      expect(search.mode).toBe('bm25');
      expect(search.warnings.join('\n')).toMatch(/too few chunks .*needs at least 50/);
    }
    const outputs = [sync.stdout, status.stdout, runCli(['search', 'zebra', '--mode', 'vector', '--root', root]).stdout];
    for (const output of outputs) expect(output).not.toContain('run `repodex sync` to embed');
  });
});
