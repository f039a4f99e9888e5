import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N20: a bundle over very long lines is cut to shorter excerpts, not to none', () => {
  it('N20: files of 2,500-character lines still give excerpts within the response cap', () => {
    const files: Record<string, string> = { '.git/HEAD': 'ref: refs/heads/main\n' };
    for (let i = 1; i <= 10; i++) {
      files[`src/f${i}.ts`] = Array.from({ length: 40 }, (_, j) => `export const v${j} = "${'retry backoff '.repeat(178)}";`).join('\n') + '\n';
    }
    const root = makeRepo(files);
    const run = runCli(['bundle', 'retry backoff', '--root', root, '--json']);
    expect(run.code).toBe(0);
    expect(Buffer.byteLength(run.stdout.trim())).toBeLessThanOrEqual(49152);
    const bundle = run.json<{ excerpts: { lines: string[]; start_line: number; end_line: number; citation: string; truncated: boolean }[]; used: { lines: number }; warnings: string[]; omitted: { reason: string }[] }>();
    expect(bundle.excerpts.length).toBeGreaterThan(0);
    for (const excerpt of bundle.excerpts) {
      expect(excerpt.lines.length).toBeGreaterThan(0);
      expect(excerpt.end_line - excerpt.start_line + 1).toBe(excerpt.lines.length);
      expect(excerpt.citation).toMatch(new RegExp(`:${excerpt.start_line}-${excerpt.end_line}$`));
    }
    expect(bundle.used.lines).toBe(bundle.excerpts.reduce((sum, excerpt) => sum + excerpt.lines.length, 0));
    expect(bundle.warnings.join('\n')).toMatch(/kept [1-9]\d* of \d+ excerpts/);
    expect(bundle.omitted.some((entry) => entry.reason.startsWith('response cap'))).toBe(true);
  });
});
