// Makes dist/cli.cache, the code cache dist/cli.js compiles the CLI from (see launch.ts): loads the
// bundled CLI, runs the commands people and agents run most in a small throwaway repository, in
// this process, and saves what V8 compiled for them. Run by scripts/build.mjs after bundling.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const { CACHE_NAME, codeCacheOf, compileCli } = await import(new URL('../dist/cli.js', import.meta.url).href);

const FILES = {
  'src/router.ts': [
    '/** Matches request paths against the routes it was given. */',
    'export class Router {',
    '  private readonly routes = new Map<string, () => string>();',
    '  add(path: string, handler: () => string): void {',
    '    this.routes.set(path, handler);',
    '  }',
    '  /** The handler of `path`, or undefined. */',
    '  match(path: string): (() => string) | undefined {',
    '    return this.routes.get(path);',
    '  }',
    '}',
    '',
  ],
  'src/cache.py': ['class Cache:', '    """Keeps recent values."""', '', '    def get(self, key):', '        return self.values.get(key)', ''],
  'README.md': ['# Example', '', 'The router matches request paths; the cache keeps recent values.', ''],
};

const root = mkdtempSync(join(tmpdir(), 'repodex-code-cache-'));
try {
  for (const [path, lines] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), lines.join('\n'));
  }
  const git = (...args) => execFileSync('git', ['-c', 'user.name=repodex', '-c', 'user.email=build@repodex.invalid', ...args], { cwd: root, stdio: 'ignore' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'Route requests and cache values');

  // The index is built by a process of its own: parsing switches a V8 flag off and on again, and
  // V8 refuses a cache made after any flag was set (see withBaselineCompiler in src/lang/loader.ts).
  execFileSync(process.execPath, [fileURLToPath(new URL('../bin/repodex.js', import.meta.url)), 'sync', '--root', root], { stdio: 'ignore', env: { ...process.env, REPODEX_DAEMON: '0' } });
  const compiled = compileCli(dist, false);
  const sink = () => Object.assign(new Writable({ write: (_chunk, _encoding, done) => done() }), { isTTY: false, columns: 100 });
  const io = { stdout: sink(), stderr: sink(), stdin: Readable.from([]) };
  const commands = [
    ['--version'],
    ['--help'],
    ['search', '--help'],
    ['sync'], // nothing changed: no file is parsed
    ['status'],
    ['status', '--json'],
    ['search', 'router match path'],
    ['search', 'recent values cache', '--json'],
    ['files'],
    ['outline', 'src/router.ts'],
    ['open', 'src/router.ts', '--start', '1', '--end', '8'],
    ['bundle', 'where are request paths matched'],
    ['verify'],
  ];
  for (const argv of commands) {
    const code = await compiled.cli.runCli(argv.includes('--version') || argv.includes('--help') ? argv : [...argv, '--root', root], io);
    if (code !== 0) process.stderr.write(`repodex build: \`repodex ${argv.join(' ')}\` exited with ${code} while making the code cache\n`);
  }
  writeFileSync(join(dist, CACHE_NAME), codeCacheOf(compiled));
  // A cache V8 would refuse (a flag set while the commands ran) only costs reading it: check, in a new process.
  const check = `import(${JSON.stringify(new URL('../dist/cli.js', import.meta.url).href)}).then((m) => process.stdout.write(String(m.compileCli(${JSON.stringify(dist)}).cached)))`;
  if (execFileSync(process.execPath, ['-e', check], { encoding: 'utf8' }) !== 'true') {
    rmSync(join(dist, CACHE_NAME), { force: true });
    process.stderr.write('repodex build: V8 refused the code cache it made; the CLI will load without one\n');
  }
} finally {
  // The commands' audit and analytics lines are written as the process exits (after the exit
  // listeners the commands registered): removed now, the folder would be made again then.
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
}
// The commands may leave timers behind (an idle engine's): the cache is written, so stop here.
process.exit(0);
