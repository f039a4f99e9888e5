import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N20: a path over 4,096 characters makes a short warning', () => {
  it('N20: a sync names the unreadable deep path in one line of a few hundred characters, not two of ~5 KB', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export const a = 1;\n' });
    const name = 'd'.repeat(200);
    try {
      // Built one folder at a time from inside (the whole path is over PATH_MAX); rm -rf removes it the same way.
      const script = `for (let i = 0; i < 21; i++) { require('fs').mkdirSync('${name}'); process.chdir('${name}'); } require('fs').writeFileSync('x.ts', 'export const deep = 1;\\n');`;
      const made = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
      expect(made.stderr).toBe('');
      for (const args of [['sync'], ['sync', '--force']]) {
        const run = runCli([...args, '--root', root, '--embeddings', 'off']);
        expect(run.code).toBe(0);
        const warnings = run.stdout.split('\n').filter((line) => line.includes('warning:'));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]!.length).toBeLessThan(500);
        expect(warnings[0]).toContain('ENAMETOOLONG');
        expect(warnings[0]).toMatch(/\(4,\d{3} characters\)/);
      }
    } finally {
      spawnSync('rm', ['-rf', name], { cwd: root });
    }
  });
});
