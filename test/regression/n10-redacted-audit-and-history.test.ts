import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOKEN_SHAPES } from '../credentials.js';
import { makeRepo, runCli } from '../helpers.js';

describe('N10: credentials in query text and commit subjects', () => {
  it('N10: a credential in query text is logged as [REDACTED:rule], and a token in a commit subject is stored neither in history.json nor in the index', () => {
    const root = makeRepo({ 'src/ci.ts': 'export function rotateToken(): void {}\n' });
    const git = (...args: string[]): string => execFileSync('git', ['-C', root, '-c', 'user.email=dev@example.invalid', '-c', 'user.name=Dev', ...args], { encoding: 'utf8' });
    const subjectToken = TOKEN_SHAPES['github-classic']();
    git('init', '-q');
    git('add', '-A');
    git('commit', '-q', '-m', `rotate CI token ${subjectToken}`);
    expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);
    const queryToken = TOKEN_SHAPES['github-classic']();
    runCli(['search', `fetch failed: 401 for Authorization: Bearer ${queryToken}`, '--root', root], { cwd: root });
    const audit = runCli(['audit', '--limit', '5', '--json', '--root', root], { cwd: root }).stdout;
    expect(audit).toContain('[REDACTED:');
    expect(audit).not.toContain(queryToken);
    expect(readFileSync(join(root, '.repodex', 'audit.jsonl'), 'utf8')).not.toContain(queryToken);
    const dataDir = join(root, '.repodex');
    const history = readFileSync(join(dataDir, 'history.json'), 'utf8');
    expect(history).toContain('rotate CI token [REDACTED:');
    for (const name of readdirSync(dataDir).filter((file) => file !== 'audit.jsonl')) {
      if (!name.includes('.')) continue;
      const bytes = readFileSync(join(dataDir, name), 'latin1');
      expect(bytes.includes(subjectToken) || bytes.toLowerCase().includes(subjectToken.toLowerCase()), name).toBe(false);
    }
  });
});
