import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, ROUTER_SOURCE, committedRepo, tempDir } from '../helpers.js';

// The built CLI is compiled from a code cache the build makes (src/frontends/cli/launch.ts). V8
// takes a cache only from a process with its own version and flags: whether it did is asked of a
// new `node`, as a command would run, not of this test's process.

/** Whether the CLI built in `dist` compiles from its cache, as a new process started with `flags` sees it. */
function takesCache(dist: string, flags: string[] = []): boolean {
  const check = `import(${JSON.stringify(pathToFileURL(join(dist, 'cli.js')).href)}).then((m) => process.stdout.write(String(m.compileCli(${JSON.stringify(dist)}).cached)))`;
  return execFileSync(process.execPath, [...flags, '-e', check], { encoding: 'utf8' }) === 'true';
}

/** Run a copy of the package's launcher and build (in `copy`) on `args`. */
function runCopy(copy: string, args: string[], cwd: string): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, [join(copy, 'bin', 'repodex.js'), ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', REPODEX_DAEMON: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const failed = error as { status: number; stdout: string; stderr: string };
    return { code: failed.status, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the CLI code cache', () => {
  let copy: string;
  let repo: string;

  beforeAll(() => {
    // A copy of the package whose dist/ this test may change: the launcher, the build, the manifest, the dependencies.
    copy = tempDir('repodex-package-');
    cpSync(join(PROJECT_ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
    cpSync(join(PROJECT_ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
    cpSync(join(PROJECT_ROOT, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'));
    repo = committedRepo({ 'src/router.ts': ROUTER_SOURCE, 'README.md': '# Router\n\nMatches request paths.\n' });
  });

  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('is made by the build, and V8 takes it in a process with default flags', () => {
    expect(readFileSync(join(PROJECT_ROOT, 'dist', 'cli.cache')).subarray(0, 21).toString()).toBe('repodex code cache 1\n');
    expect(takesCache(join(PROJECT_ROOT, 'dist'))).toBe(true);
  });

  it('is passed over, and the CLI answers the same, when V8 runs with other flags', () => {
    expect(takesCache(join(copy, 'dist'), ['--max-semi-space-size=2'])).toBe(false);
    const run = execFileSync(process.execPath, ['--max-semi-space-size=2', join(copy, 'bin', 'repodex.js'), '--version'], { encoding: 'utf8' });
    expect(run.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('is used only for the bundle it was made from', () => {
    const cache = join(copy, 'dist', 'cli.cache');
    const made = readFileSync(cache);
    const header = made.toString('latin1', 0, 21 + 65);
    // The same V8 data under another bundle's hash: not this bundle's cache, so not used.
    writeFileSync(cache, Buffer.concat([Buffer.from(header.replace(/[0-9a-f]{64}/, '0'.repeat(64)), 'latin1'), made.subarray(header.length)]));
    expect(takesCache(join(copy, 'dist'))).toBe(false);
    writeFileSync(cache, made);
    expect(takesCache(join(copy, 'dist'))).toBe(true);
  });

  it('runs every kind of command without one: sync (parsing), search, outline, serve', () => {
    rmSync(join(copy, 'dist', 'cli.cache'));
    expect(runCopy(copy, ['sync'], repo).code).toBe(0);
    const search = runCopy(copy, ['search', 'handler registered for a path', '--json'], repo);
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout).results[0].path).toBe('src/router.ts');
    expect(runCopy(copy, ['outline', 'src/router.ts'], repo).stdout).toContain('Router');
    const served = execFileSync(process.execPath, [join(copy, 'bin', 'repodex.js'), 'serve', '--stdio'], { cwd: repo, input: '{"op":"search","q":"router","top_k":1}\n', encoding: 'utf8', env: { ...process.env, REPODEX_DAEMON: '0' } });
    expect(JSON.parse(served.split('\n')[0]!).ok).toBe(true);
  });

  it('leaves the CLI loading the MCP server on demand (an ES module of its own)', () => {
    mkdirSync(join(repo, '.repodex'), { recursive: true });
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } } };
    const answered = execFileSync(process.execPath, [join(PROJECT_ROOT, 'bin', 'repodex.js'), 'serve', '--mcp'], { cwd: repo, input: `${JSON.stringify(initialize)}\n`, encoding: 'utf8', env: { ...process.env, REPODEX_DAEMON: '0' }, timeout: 20_000 });
    expect(JSON.parse(answered.split('\n')[0]!).result.serverInfo.name).toBe('repodex');
  });

  it('is made again without leaving anything in the temporary folder', () => {
    // The commands it runs to train the cache log calls as the process exits: its throwaway repository must go after them.
    mkdirSync(join(copy, 'scripts'), { recursive: true });
    cpSync(join(PROJECT_ROOT, 'scripts', 'code-cache.mjs'), join(copy, 'scripts', 'code-cache.mjs'));
    rmSync(join(copy, 'dist', 'cli.cache'), { force: true });
    const temporary = tempDir('repodex-tmpdir-');
    execFileSync(process.execPath, [join(copy, 'scripts', 'code-cache.mjs')], { env: { ...process.env, TMPDIR: temporary }, stdio: 'ignore' });
    expect(takesCache(join(copy, 'dist'))).toBe(true);
    expect(readdirSync(temporary)).toEqual([]);
  });
});
