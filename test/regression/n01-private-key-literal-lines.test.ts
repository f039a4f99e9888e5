import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyMaterial, pemAsLiterals, privateKeyLines } from '../credentials.js';
import { makeRepo, runCli } from '../helpers.js';

const LAYOUTS = {
  python: 'keys_test.py',
  js: 'concat_dq.js',
  'js-single': 'concat_sq.js',
  go: 'keys.go',
  java: 'Keys.java',
  rust: 'keys.rs',
  c: 'keys.c',
  // Also with the begin marker split in two literals: templates, Python with comments, Go raw strings.
  'ts-template': 'template_key.ts',
  'python-commented': 'commented_keys.py',
  'go-raw': 'raw_keys.go',
} as const;

describe('N1: private keys written one quoted literal per line', () => {
  it('N1: a key written one quoted literal per PEM line ("…\\n" +, implicit concatenation, concat!) is neither indexed nor served, in Python, JS, Go, Java, Rust and C', () => {
    const keys = Object.fromEntries(Object.keys(LAYOUTS).map((layout) => [layout, privateKeyLines()]));
    const root = makeRepo(Object.fromEntries(Object.entries(LAYOUTS).map(([layout, path]) => [path, pemAsLiterals(layout as keyof typeof LAYOUTS, keys[layout]!)])));
    expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);
    const index = readdirSync(join(root, '.repodex')).filter((name) => name.endsWith('.rpdx')).map((name) => readFileSync(join(root, '.repodex', name), 'latin1')).join('\n');
    for (const [layout, path] of Object.entries(LAYOUTS)) {
      const material = keyMaterial(keys[layout]!);
      const opened = runCli(['open', path, '--root', root], { cwd: root });
      expect(opened.code, `${layout}: ${opened.stdout}`).not.toBe(0);
      expect(opened.stdout + opened.stderr, layout).toMatch(/contains a credential \(private-key/);
      for (const line of material.slice(0, 3)) {
        expect(opened.stdout, layout).not.toContain(line);
        expect(index.includes(line) || index.includes(line.toLowerCase()), `${layout}: key material in the index`).toBe(false);
      }
    }
    const found = runCli(['search', 'TEST_KEY test_key testKey', '--json', '--root', root], { cwd: root });
    expect(found.json<{ results: unknown[] }>().results).toEqual([]);
  });
});
