import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

let root: string;

beforeAll(() => {
  root = makeRepo({
    'src/router.ts': 'export class Router {\n  /** Match a path. */\n  matchRoute(path: string): string {\n    return path;\n  }\n}\n',
    'README.md': '# Demo\n\nRoutes are matched by the router.\n',
  });
  expect(runCli(['sync', '--root', root]).code).toBe(0);
});

describe('repodex CLI for people', () => {
  it('prints help for the tool and for every command', () => {
    const main = runCli(['--help']);
    expect(main.code).toBe(0);
    for (const command of ['init', 'status', 'sync', 'search', 'fetch', 'open', 'outline', 'files', 'serve', 'clean']) {
      expect(main.stdout).toContain(`  ${command} `);
      const help = runCli([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toContain(`repodex ${command}`);
    }
    expect(runCli(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('names the closest flag for a misspelt one, and rejects unknown commands, with exit code 1', () => {
    const misspelt = runCli(['search', 'router', '--topk', '3', '--root', root]);
    expect(misspelt.code).toBe(1);
    expect(misspelt.stderr).toContain('did you mean --top-k?');
    const unknown = runCli(['serch', 'router']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown command "serch"');
  });

  it('prints results as path:start-end with the symbol, snippet, matched terms and signals', () => {
    const run = runCli(['search', 'match route', '--root', root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/src\/router\.ts:\d+-\d+ {2}class Router/);
    expect(run.stdout).toMatch(/why: match, route(, [a-z]+:\S+)*\n/);
    expect(run.stdout).toMatch(/fetch with: repodex fetch --ids \d+/);
  });

  it('with --json, prints the protocol object on success and an error object on failure', () => {
    const ok = runCli(['search', 'router', '--json', '--root', root]).json<{ results: { path: string }[] }>();
    expect(ok.results.length).toBeGreaterThan(0);
    const bad = runCli(['fetch', '--ids', 'x', '--json', '--root', root]);
    expect(bad.code).toBe(1);
    expect(bad.json()).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
  });

  it('clean removes the index but keeps config and ignore; the next search rebuilds it', () => {
    const cleaned = runCli(['clean', '--json', '--root', root]).json<{ removed: string[] }>();
    expect(cleaned.removed).toContain('meta.json');
    const status = runCli(['status', '--json', '--root', root]).json<{ indexed: boolean }>();
    expect(status.indexed).toBe(false);
    expect(runCli(['search', 'router', '--json', '--root', root]).json<{ synced?: unknown }>().synced).toBeDefined();
  });

  it('--indexing=off answers from the index as it is and says it is stale; --indexing=on refreshes it even where REPODEX_INDEXING=0', () => {
    const repo = makeRepo({ 'src/a.ts': 'export const alphaMarker = 1;\n' });
    expect(runCli(['sync', '--root', repo]).code).toBe(0);
    writeFileSync(join(repo, 'src/b.ts'), 'export const quokkaZebra = 2;\n');
    const manual = runCli(['search', 'quokkaZebra', '--json', '--indexing=off', '--root', repo]).json<{ results: unknown[]; warnings: string[]; synced?: unknown }>();
    expect(manual.results).toEqual([]);
    expect(manual.synced).toBeUndefined();
    expect(manual.warnings.join(' ')).toMatch(/index is stale/);
    const forced = runCli(['search', 'quokkaZebra', '--json', '--indexing=on', '--root', repo], { env: { REPODEX_INDEXING: '0' } }).json<{ results: { path: string }[] }>();
    expect(forced.results[0]?.path).toBe('src/b.ts');
    expect(runCli(['search', 'x', '--indexing=maybe', '--root', repo]).stderr).toMatch(/--indexing must be on or off/);
  });
});
