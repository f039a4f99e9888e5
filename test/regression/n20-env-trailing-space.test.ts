import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N20: .env with a trailing space', () => {
  it('N20: ".env " and ".env. " are refused like .env (and never indexed)', () => {
    const root = makeRepo({ '.env ': 'API_KEY=TRAILING_SPACE_SECRET\n', 'config/.env. ': 'API_KEY=TRAILING_DOT_SECRET\n', 'src/app.ts': 'export const app = 1;\n' });
    expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);
    for (const path of ['.env ', 'config/.env. ']) {
      const opened = runCli(['open', path, '--root', root], { cwd: root });
      expect(opened.code, JSON.stringify(path)).not.toBe(0);
      expect(opened.stdout + opened.stderr).toMatch(/denylist/);
      expect(opened.stdout).not.toMatch(/TRAILING_/);
    }
    const jsonl = runCli(['serve', '--stdio', '--root', root], { cwd: root, input: `${JSON.stringify({ id: 1, op: 'open', path: '.env ' })}\n` }).stdout;
    expect(jsonl).toMatch(/"blocked":true/);
    expect(jsonl).not.toContain('TRAILING_SPACE_SECRET');
  });
});
