import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bodyOf, pemLines, privateKey } from '../credential-shapes.js';
import { makeRepo, runCli } from '../helpers.js';

describe('M8: a bundle prompt holding a private key', () => {
  it('M8: loses the key block only; the task words stay, and the bundle finds the code they name', () => {
    const root = makeRepo({
      'src/cache.go': 'package cache\n\n// LoadKey reads the signing key for the cache loader.\nfunc LoadKey(path string) ([]byte, error) {\n\treturn nil, nil\n}\n',
      'src/other.go': 'package cache\n\nfunc Unrelated() {}\n',
    });
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const lines = pemLines(privateKey('rsa'));
    const bundle = runCli(['bundle', `fix the loader, it crashes on this key ${lines.join('\n')} in src/cache.go`, '--json', '--root', root]);
    expect(bundle.code, bundle.stderr).toBe(0);
    const report = bundle.json<{ prompt: string; keywords: string[]; excerpts: { path: string }[] }>();
    expect(report.prompt).toBe('fix the loader, it crashes on this key [REDACTED:private-key] in src/cache.go');
    expect(report.keywords.length).toBeGreaterThan(0);
    expect(report.excerpts.map((excerpt) => excerpt.path)).toContain('src/cache.go');
    const kept = readFileSync(join(root, '.repodex', 'last_bundle.md'), 'utf8');
    expect(kept).toContain('> fix the loader, it crashes on this key [REDACTED:private-key] in src/cache.go');
    expect(kept).not.toContain('keywords: (none)');
    for (const line of bodyOf(lines)) {
      expect(kept).not.toContain(line);
      expect(readFileSync(join(root, '.repodex', 'last_bundle.json'), 'utf8')).not.toContain(line);
      expect(readFileSync(join(root, '.repodex', 'audit.jsonl'), 'utf8')).not.toContain(line);
    }
  });
});
