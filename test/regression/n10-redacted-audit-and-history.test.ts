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

  it('N10: a credential in a bundle prompt, an op name, a tool name or a field name is stored nowhere under .repodex/', async () => {
    const root = makeRepo({ 'src/login.ts': 'export function login(user: string): boolean {\n  return user.length > 0;\n}\n' });
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const tokens = Array.from({ length: 4 }, () => TOKEN_SHAPES.gitlab());
    const bundle = runCli(['bundle', `fix login failing with token ${tokens[0]} for the admin user`, '--json', '--root', root]);
    expect(bundle.code, bundle.stderr).toBe(0);
    expect(bundle.json<{ prompt: string }>().prompt).toContain('[REDACTED:');
    const lines = [JSON.stringify({ op: tokens[1] }), JSON.stringify({ op: 'search', q: 'login', [tokens[2]!]: 1 }), JSON.stringify({ [tokens[3]!]: 1 })];
    runCli(['serve', '--stdio', '--root', root], { input: `${lines.join('\n')}\n` });
    const dataDir = join(root, '.repodex');
    for (const name of readdirSync(dataDir, { recursive: true }) as string[]) {
      let bytes: string;
      try {
        bytes = readFileSync(join(dataDir, name), 'latin1');
      } catch {
        continue; // a folder
      }
      for (const token of tokens) expect(bytes.includes(token) || bytes.toLowerCase().includes(token.toLowerCase()), `${name} holds ${token.slice(0, 6)}…`).toBe(false);
    }
  });

  it('N10: a credential in a line that is no request at all (quoted by the parser, or running past the preview) is not logged either', () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n' });
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const tokens = [TOKEN_SHAPES['github-classic'](), TOKEN_SHAPES['github-classic'](), TOKEN_SHAPES['github-classic']()];
    const lines = [
      tokens[0], // the parser's message quotes how the line began
      `${'x'.repeat(190)} ${tokens[1]}`, // across the 200-character preview
      `{"op":"search","q":"${'y'.repeat(150)} ${tokens[2]}", "broken"`,
    ];
    runCli(['serve', '--stdio', '--root', root], { input: `${lines.join('\n')}\n` });
    const log = readFileSync(join(root, '.repodex', 'audit.jsonl'), 'utf8');
    expect(log.split('\n').filter((line) => line.includes('"frontend":"jsonl"'))).toHaveLength(3);
    for (const token of tokens) {
      // Not the token, and not its first ten characters either.
      expect(log).not.toContain(token.slice(0, 10));
    }
  });
});
