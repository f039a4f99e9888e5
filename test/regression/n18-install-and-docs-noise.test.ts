import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, makeRepo, runCli, tempDir } from '../helpers.js';

/** Run npm in `cwd` without the user's npm config, so the project's own files decide what it says. */
function npm(args: readonly string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const userconfig = join(tempDir('repodex-n18-npmrc-'), 'npmrc');
  writeFileSync(userconfig, '');
  const result = spawnSync('npm', [...args, '--userconfig', userconfig], { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' }, timeout: 120_000 });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('N18: installing and reading the help make no noise', () => {
  it('N18: npm install --package-lock-only leaves package-lock.json as committed, and no npm command warns about an unknown project config', () => {
    const copy = tempDir('repodex-n18-lock-');
    for (const name of ['package.json', 'package-lock.json', '.npmrc']) {
      if (existsSync(join(PROJECT_ROOT, name))) copyFileSync(join(PROJECT_ROOT, name), join(copy, name));
    }
    const before = readFileSync(join(copy, 'package-lock.json'), 'utf8');
    // A lock that agrees with package.json needs nothing from the registry: --offline must do.
    const run = npm(['install', '--package-lock-only', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], copy);
    expect(run.stderr).not.toMatch(/Unknown (project|user|env) config/);
    expect(run.code).toBe(0);
    expect(readFileSync(join(copy, 'package-lock.json'), 'utf8')).toBe(before);
  });

  it('N18: the lock file lists the optional dependencies exactly as package.json does', () => {
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const lock = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Record<string, Record<string, string> | undefined>> };
    const root = lock.packages['']!;
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) expect(root[field] ?? {}, field).toEqual(pkg[field] ?? {});
  });

  it('N18: every installed package with an install script is covered by allowScripts; onnxruntime-node downloads nothing', () => {
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    // Its script only fetches CUDA libraries from NuGet; the CPU runtime ships in the package.
    expect(pkg.allowScripts?.['onnxruntime-node']).toBe(false);
    const listed = npm(['install-scripts', 'ls'], PROJECT_ROOT);
    expect(listed.code).toBe(0);
    expect(listed.stdout + listed.stderr).toContain('No packages with unreviewed install scripts');
  });

  it('N18: no help text and no line of README.md or AGENTS.md speaks of "seed NNN"', () => {
    const main = runCli(['--help']);
    expect(main.code).toBe(0);
    const commands = [...main.stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((match) => match[1]!);
    expect(commands).toContain('index');
    const texts = [main.stdout, ...commands.map((command) => runCli([command, '--help']).stdout)];
    for (const text of texts) expect(text).not.toMatch(/\bseed\b/i);
    for (const doc of ['README.md', 'AGENTS.md']) {
      const lines = readFileSync(join(PROJECT_ROOT, doc), 'utf8').split('\n');
      expect(lines.filter((line) => /\bseed \d/i.test(line)), doc).toEqual([]);
    }
  });

  it('N18: one file and one chunk are counted in the singular ("read 1 file → 1 chunk")', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export const a = 1;\n' });
    const sync = runCli(['sync', '--root', root, '--embeddings', 'off']);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/read 1 file → 1 chunk \(/);
    const again = runCli(['sync', '--root', root]);
    expect(again.stdout).toContain('(1 file checked, 1 chunk)');
    expect(sync.stdout + again.stdout).not.toMatch(/\b1 (files|chunks)\b/);
  });
});
