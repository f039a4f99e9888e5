import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lchownSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_NICE } from '../../src/engine/give-way.js';
import { runDaemon } from '../../src/frontends/cli/daemon.js';
import { PROJECT_ROOT, ROUTER_SOURCE, committedRepo, git, makeRepo, runCli, runCliAsync, tempDir, threadNices } from '../helpers.js';
import { daemonLog, entryOf, isRunning, isolatedDaemons, rawCall, registered, starts, until } from '../daemons.js';

// `repodex daemon`: one-shot commands answered by a background process that keeps the index
// loaded. What a command prints and its exit code must not depend on whether a daemon answered.

// Every daemon here is listed in a registry of this file's own: the limits never reach another's.
isolatedDaemons();

const LOCAL = { REPODEX_DAEMON: '0' };
/** Use a running daemon, start none (the test runner's default is REPODEX_DAEMON=0: see vitest.config.ts). */
const SERVED = { REPODEX_DAEMON: 'manual' };

/** Fields that say how or when an answer was made, not what it is. */
// The audit log grows by every command, whoever runs it.
const VOLATILE = new Set(['freshness', 'synced', 'duration_ms', 'elapsed_ms', 'checked_at', 'last_sync_ago', 'request_id', 'audit log']);

function stable(text: string): unknown {
  return JSON.parse(text, (key, value: unknown) => (VOLATILE.has(key) ? undefined : value));
}

function daemonStatus(root: string): { running: boolean; calls?: number; pid?: number } {
  return JSON.parse(runCli(['daemon', 'status', '--json', '--root', root]).stdout) as { running: boolean; calls?: number; pid?: number };
}

describe('repodex daemon', () => {
  let root: string;
  let socket: string;

  beforeAll(() => {
    root = committedRepo({
      'src/router.ts': ROUTER_SOURCE,
      'src/retry.ts': 'export function retryWithBackoff(attempts: number): number {\n  // wait longer after each failed attempt\n  return attempts * 2;\n}\n',
      'README.md': '# Demo\n\nA router and a retry helper.\n',
    });
    socket = join(root, '.repodex', 'daemon.sock');
    expect(runCli(['sync', '--root', root], { env: LOCAL }).code).toBe(0);
    const started = runCli(['daemon', 'start', '--root', root]);
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/daemon started for .* \(pid \d+\)/);
  });

  afterAll(() => {
    const status = existsSync(socket) ? daemonStatus(root) : { running: false };
    if (status.running) runCli(['daemon', 'stop', '--root', root]);
  });

  it('listens on a socket only its user can use', () => {
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(daemonStatus(root)).toMatchObject({ running: true, calls: 0 });
    // Listed in the registry, which only its user can read; started by a person, so never stopped to make room.
    expect(registered()).toMatchObject([{ root, state: 'serving', started_by: 'daemon start', pid: daemonStatus(root).pid }]);
    expect(statSync(process.env.REPODEX_DAEMON_DIR!).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!existsSync('/proc/self/task'))("answers on its own thread at the command's priority, with its helper threads at the syncs' lower one", () => {
    const { pid } = daemonStatus(root);
    const nices = threadNices(pid!);
    expect(nices.get(pid!)).toBe(getPriority());
    expect([...nices].filter(([thread, nice]) => thread !== pid && nice === Math.max(getPriority(), BACKGROUND_NICE)).length).toBeGreaterThanOrEqual(4);
  });

  it('answers every command it takes exactly as the command would answer on its own', () => {
    const ids = (runCli(['search', 'router handler', '--json', '--root', root], { env: LOCAL }).json() as { results: { chunk_id: number }[] }).results.map((hit) => hit.chunk_id);
    const commands = [
      ['search', 'router handler', '--json'],
      ['search', 'retry backoff attempts', '--top-k', '3', '--json'],
      ['outline', 'src/router.ts', '--json'],
      ['open', 'src/retry.ts', '--start', '1', '--end', '3', '--json'],
      ['files', '--json'],
      ['fetch', '--ids', ids.join(','), '--json'],
      ['bundle', 'add a route to the router', '--json'],
      ['status', '--json'],
    ];
    for (const args of commands) {
      const alone = runCli([...args, '--root', root], { env: LOCAL });
      const served = runCli([...args, '--root', root], { env: SERVED });
      expect(served.code, args.join(' ')).toBe(alone.code);
      expect(served.stderr, args.join(' ')).toBe(alone.stderr);
      expect(stable(served.stdout), args.join(' ')).toEqual(stable(alone.stdout));
    }
    // Human output too, and from a folder inside the repository (the path typed is from there).
    const human = ['search', 'retry backoff'];
    expect(runCli(human, { cwd: join(root, 'src'), env: SERVED }).stdout).toBe(runCli(human, { cwd: join(root, 'src'), env: LOCAL }).stdout);
    const opened = ['open', 'router.ts', '--start', '2', '--end', '4'];
    expect(runCli(opened, { cwd: join(root, 'src'), env: SERVED }).stdout).toBe(runCli(opened, { cwd: join(root, 'src'), env: LOCAL }).stdout);
    // Every one of those came through the daemon.
    expect(daemonStatus(root).calls).toBe(commands.length + 2);
  });

  it('fails the way the command fails on its own: same message, same exit code', () => {
    const alone = runCli(['open', 'src/missing.ts', '--root', root], { env: LOCAL });
    const served = runCli(['open', 'src/missing.ts', '--root', root], { env: SERVED });
    expect(alone.code).toBe(1);
    expect(served.code).toBe(1);
    expect(served.stderr).toBe(alone.stderr);
    expect(served.stdout).toBe(alone.stdout);
  });

  it('never answers from before a change: a file written just before the command is found', () => {
    writeFileSync(join(root, 'src', 'quota.ts'), 'export function enforceQuotaLimit(used: number): boolean {\n  return used < 100;\n}\n');
    // status does not sync: it reports the new file, as it would on its own.
    const status = runCli(['status', '--json', '--root', root], { env: SERVED }).json() as { state: string; changes: { added: number } };
    expect(status.state).toBe('stale');
    expect(status.changes.added).toBe(1);
    const found = runCli(['search', 'enforceQuotaLimit', '--json', '--root', root], { env: SERVED });
    expect(found.code).toBe(0);
    expect((found.json() as { results: { path: string }[] }).results[0]?.path).toBe('src/quota.ts');
  });

  it('leaves a command with another environment, another store or a team server to run on its own', () => {
    const before = daemonStatus(root).calls!;
    expect(runCli(['search', 'router', '--json', '--root', root], { env: { ...SERVED, REPODEX_RANKING: '{"whole":0}' } }).code).toBe(0);
    expect(runCli(['search', 'router', '--json', '--root', root, '--store', 'fs'], { env: SERVED }).code).toBe(0);
    expect(runCli(['search', 'router', '--json', '--root', root], { env: LOCAL }).code).toBe(0);
    expect(daemonStatus(root).calls).toBe(before);
  });

  it('runs only the commands it takes, whatever a client sends', async () => {
    const cli = statSync(join(PROJECT_ROOT, 'dist', 'cli.js'));
    const call = (argv: string[]) => ({ build: `${cli.size}:${cli.mtimeMs}`, argv, cwd: root, env: {}, presentation: {}, stdout: { isTTY: false }, stderr: { isTTY: false } });
    for (const argv of [['serve', '--stdio'], ['clean'], ['daemon', 'run'], ['search', 'router', '--store', 'fs']]) {
      const reply = await rawCall(socket, { ...call(argv), env: behaviourEnvOf(process.env) });
      expect(JSON.parse(reply.trim()), argv.join(' ')).toMatchObject({ t: 'declined', why: 'a command a daemon does not run' });
    }
    expect(existsSync(join(root, '.repodex', 'meta.json'))).toBe(true); // `clean` did not run
    // Frames of another shape are dropped unanswered, and the daemon carries on.
    for (const frame of [null, 5, 'status', { build: 1 }, { ...call(['status']), env: { HOME: 5 } }, { ...call(['status']), stdout: null }, { build: 'x', control: 'restart' }]) {
      expect(await rawCall(socket, frame as object), JSON.stringify(frame)).toBe('');
    }
    expect(daemonStatus(root).running).toBe(true);
  });

  it('stops when another build of repodex calls it, and that call runs on its own', async () => {
    const reply = await rawCall(socket, { build: 'another build', control: 'status' });
    expect(JSON.parse(reply.trim())).toMatchObject({ t: 'declined' });
    expect(await until(() => !existsSync(socket))).toBe(true);
    expect(daemonStatus(root).running).toBe(false);
  });

  it('is not needed: a daemon killed without warning leaves commands working on their own', async () => {
    expect(runCli(['daemon', 'start', '--root', root]).code).toBe(0);
    const { pid } = daemonStatus(root);
    process.kill(pid!, 'SIGKILL');
    expect(await until(() => !isRunning(pid!))).toBe(true);
    expect(existsSync(socket)).toBe(true); // left behind
    const search = runCli(['search', 'router', '--root', root], { env: SERVED });
    expect(search.code).toBe(0);
    expect(search.stderr).toBe('');
    expect(search.stdout).toContain('src/router.ts');
    // Starting again replaces the dead one's socket.
    expect(runCli(['daemon', 'start', '--root', root]).code).toBe(0);
    expect(daemonStatus(root).running).toBe(true);
  });

  it('is not waited for when it cannot take a call (its process stopped): the command runs on its own', async () => {
    const { pid } = daemonStatus(root);
    process.kill(pid!, 'SIGSTOP');
    try {
      const served = runCli(['search', 'retry backoff', '--json', '--root', root], { env: SERVED });
      // The daemon was stopped the whole time (it could answer nothing): the answer is the command's own.
      if (existsSync(`/proc/${pid}/stat`)) expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/^\d+ \(.*\) T /);
      const alone = runCli(['search', 'retry backoff', '--json', '--root', root], { env: LOCAL });
      expect(served.code).toBe(0);
      expect(stable(served.stdout)).toEqual(stable(alone.stdout));
    } finally {
      process.kill(pid!, 'SIGCONT');
    }
    expect(daemonStatus(root).running).toBe(true);
  });

  it('is stopped by `repodex clean` (which says so), and the next search builds the index again on its own', () => {
    const { pid } = daemonStatus(root);
    const clean = runCli(['clean', '--root', root]);
    expect(clean.code).toBe(0);
    expect(clean.stderr).toBe(`repodex: stopped the daemon for ${root} (pid ${pid})\n`);
    expect(isRunning(pid!)).toBe(false);
    expect(existsSync(socket)).toBe(false);
    expect(entryOf(root)).toBeUndefined();
    const search = runCli(['search', 'retryWithBackoff', '--json', '--root', root], { env: SERVED });
    expect(search.code).toBe(0);
    expect((search.json() as { results: { path: string }[] }).results[0]?.path).toBe('src/retry.ts');
    expect(runCli(['daemon', 'start', '--root', root]).code).toBe(0);
  });

  it('refuses flags it would not honour, naming why', () => {
    const withStore = runCli(['daemon', 'start', '--store', 'fs', '--root', root]);
    expect(withStore.code).toBe(1);
    expect(withStore.stderr).toContain('a daemon takes no --store');
    expect(runCli(['daemon', 'restart', '--root', root]).stderr).toContain('daemon takes one of start, stop, status or run, not "restart"');
    // A socket path has a kernel limit: a repository too deep for one is told so, and its commands still work.
    const deep = makeRepo({ 'a.ts': 'export const deepConstant = 1;\n' }, join(tempDir(), 'd'.repeat(60), 'e'.repeat(40)));
    git(deep, 'init', '-q');
    const tooLong = runCli(['daemon', 'start', '--root', deep]);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain("the repository's path is too long for a daemon");
    // Nor do commands there try to start one, however often they run.
    for (let i = 0; i < 2; i++) {
      const alone = runCli(['search', 'deepConstant', '--root', deep], { env: { REPODEX_DAEMON: 'auto' } });
      expect(alone.code).toBe(0);
      expect(alone.stderr).not.toContain('daemon');
    }
    expect(starts(deep)).toBe(0);
    expect(entryOf(deep)).toBeUndefined();
  });

  it('stops when its socket is removed, and with `repodex daemon stop`', async () => {
    rmSync(socket);
    expect(await until(() => readFileSync(join(root, '.repodex', 'daemon.log'), 'utf8').includes('its socket was removed or replaced'))).toBe(true);
    expect(runCli(['daemon', 'status', '--root', root]).code).toBe(1);
    expect(runCli(['daemon', 'start', '--root', root]).code).toBe(0);
    const stopped = runCli(['daemon', 'stop', '--root', root]);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain('stopped');
    expect(existsSync(socket)).toBe(false);
    const status = runCli(['daemon', 'status', '--root', root]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain('no daemon runs');
  });
});

describe('a daemon started by a command (REPODEX_DAEMON unset or auto)', () => {
  const AUTO = { REPODEX_DAEMON: 'auto' };
  let root: string;
  let socket: string;
  const serving = (): number => daemonLog(root).split('\n').filter((line) => line.includes('repodex daemon: serving')).length;

  beforeAll(() => {
    root = committedRepo({ 'src/router.ts': ROUTER_SOURCE, 'src/quota.ts': 'export function enforceQuotaLimit(used: number): boolean {\n  return used < 100;\n}\n' });
    socket = join(root, '.repodex', 'daemon.sock');
  });

  afterAll(() => {
    if (existsSync(socket)) runCli(['daemon', 'stop', '--root', root]);
  });

  it('starts after the second command that answers on its own (a sync does not count), and answers the next ones', async () => {
    // The sync that makes the index, then a search: each answers as before, says nothing of a
    // daemon to a script, and starts none. A command spawns a daemon before it exits, so once it
    // has exited, its log line is there or never will be.
    for (const argv of [['sync', '--json'], ['search', 'router', '--json']]) {
      const run = runCli([...argv, '--root', root], { env: AUTO });
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(starts(root)).toBe(0);
    }
    // The second search in the repository starts one.
    const second = runCli(['search', 'router', '--json', '--root', root], { env: AUTO });
    expect(second.stderr).toBe('');
    expect(starts(root)).toBe(1);
    expect(await until(() => entryOf(root)?.state === 'serving')).toBe(true);
    // Used by no command yet, it stops after 5 idle minutes; once used, after 30.
    expect(daemonStatus(root)).toMatchObject({ running: true, calls: 0, idle_minutes: 5 });
    expect(entryOf(root)).toMatchObject({ started_by: 'command', pid: daemonStatus(root).pid });
    const alone = runCli(['search', 'enforceQuotaLimit', '--json', '--root', root], { env: LOCAL });
    const served = runCli(['search', 'enforceQuotaLimit', '--json', '--root', root], { env: AUTO });
    expect(stable(served.stdout)).toEqual(stable(alone.stdout));
    expect(daemonStatus(root)).toMatchObject({ calls: 1, idle_minutes: 30 });
    expect(serving()).toBe(1);
  });

  it('starts one daemon when several commands finish at once', async () => {
    expect(runCli(['daemon', 'stop', '--root', root]).code).toBe(0);
    expect(runCli(['search', 'router', '--root', root], { env: AUTO }).code).toBe(0); // the first use
    const before = starts(root);
    const runs = await Promise.all([0, 1, 2, 3].map(() => runCliAsync(['search', 'router', '--json', '--root', root], { env: AUTO })));
    expect(runs.map((run) => run.code)).toEqual([0, 0, 0, 0]);
    // All four have exited: one of them spawned a daemon, and none of the others did.
    expect(starts(root)).toBe(before + 1);
    expect(await until(() => entryOf(root)?.state === 'serving')).toBe(true);
    expect(daemonLog(root)).not.toContain('already serves');
  });

  it('tells a person at a terminal that it started, and how to stop it', async () => {
    expect(runCli(['daemon', 'stop', '--root', root]).code).toBe(0);
    expect(runCli(['search', 'router', '--root', root], { env: AUTO }).code).toBe(0); // the first use
    // `script` gives the command a terminal (util-linux; Debian's bsdutils, there by default).
    const shown = spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(join(PROJECT_ROOT, 'bin', 'repodex.js'))} search router --root ${JSON.stringify(root)}`, '/dev/null'], {
      encoding: 'utf8',
      env: { ...process.env, ...AUTO, NO_COLOR: '1' },
      timeout: 60_000,
    });
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain('src/router.ts');
    expect(shown.stdout).toContain(`repodex: started a daemon that keeps ${root}'s index loaded, so the next commands there answer faster; it stops after 30 idle minutes, or sooner to make room for another (repodex daemon status lists yours; repodex daemon stop; REPODEX_DAEMON=0 starts none)`);
    expect(await until(() => entryOf(root)?.state === 'serving')).toBe(true);
  });

  it('is not started with REPODEX_DAEMON=manual or 0, nor after a command that failed, nor by a sync', () => {
    expect(runCli(['daemon', 'stop', '--root', root]).code).toBe(0);
    const before = starts(root);
    for (let i = 0; i < 2; i++) {
      expect(runCli(['search', 'router', '--root', root], { env: { REPODEX_DAEMON: 'manual' } }).code).toBe(0);
      expect(runCli(['status', '--root', root], { env: { REPODEX_DAEMON: '0' } }).code).toBe(0);
      expect(runCli(['open', 'src/missing.ts', '--root', root], { env: AUTO }).code).toBe(1);
      expect(runCli(['sync', '--root', root], { env: AUTO }).code).toBe(0);
      // Nor by commands a daemon does not run.
      expect(runCli(['verify', '--root', root], { env: AUTO }).code).toBe(0);
    }
    // Every one of those has exited, and none spawned a daemon.
    expect(starts(root)).toBe(before);
    expect(entryOf(root)).toBeUndefined();
    // Nor did they count as uses: the next command is a first use, and only the one after starts a daemon.
    expect(runCli(['search', 'router', '--root', root], { env: AUTO }).code).toBe(0);
    expect(starts(root)).toBe(before);
    expect(runCli(['search', 'router', '--root', root], { env: AUTO }).code).toBe(0);
    expect(starts(root)).toBe(before + 1);
    expect(runCli(['daemon', 'stop', '--root', root]).code).toBe(0);
  });

  it('sends calls back to run on their own while a sync runs in it, so nothing waits behind a sync', async () => {
    expect(existsSync(socket)).toBe(false);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const stopped = runDaemon(root, {
      idleMinutes: 0,
      cliFile: join(PROJECT_ROOT, 'dist', 'cli.js'),
      log: () => undefined,
      runCli: async (argv) => {
        ran.push(argv[0]!);
        if (argv[0] === 'sync') await held;
        return 0;
      },
    });
    expect(await until(() => existsSync(socket))).toBe(true);
    const cli = statSync(join(PROJECT_ROOT, 'dist', 'cli.js'));
    const call = (argv: string[]) => ({ build: `${cli.size}:${cli.mtimeMs}`, argv, cwd: root, env: behaviourEnvOf(process.env), presentation: {}, stdout: { isTTY: false }, stderr: { isTTY: false } });
    const syncing = rawCall(socket, call(['sync']));
    expect(await until(() => ran.includes('sync'))).toBe(true);
    for (const argv of [['search', 'router'], ['status'], ['sync']]) {
      expect(JSON.parse((await rawCall(socket, call(argv))).trim()), argv.join(' ')).toMatchObject({ t: 'declined', why: 'busy with a sync' });
    }
    release();
    // A call it takes: `taken` at once, then (this runCli writes nothing) the exit code.
    expect(frames(await syncing)).toEqual([{ t: 'taken' }, { t: 'exit', code: 0 }]);
    expect(frames(await rawCall(socket, call(['search', 'router'])))).toEqual([{ t: 'taken' }, { t: 'exit', code: 0 }]);
    expect(ran).toEqual(['sync', 'search']);
    await rawCall(socket, { build: call([]).build, control: 'stop' });
    await stopped;
    expect(existsSync(socket)).toBe(false);
  });
});

describe('a socket another user left in .repodex/', () => {
  // Only root can give a socket to another user: elsewhere this is skipped (and says so).
  it.skipIf(process.getuid?.() !== 0)('is never called: the command runs on its own and its variables go nowhere', async () => {
    const root = committedRepo({ 'src/router.ts': ROUTER_SOURCE });
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const path = join(root, '.repodex', 'daemon.sock');
    const heard: string[] = [];
    let connections = 0;
    const listener = createServer((socket) => {
      connections++;
      socket.on('data', (data) => heard.push(data.toString()));
    });
    await new Promise<void>((resolve) => listener.listen(path, resolve));
    try {
      chmodSync(path, 0o666);
      lchownSync(path, 4242, 4242);
      const search = runCli(['search', 'router', '--json', '--root', root], { env: { REPODEX_DAEMON: 'auto', REPODEX_EMBEDDINGS_API_KEY: 'sk-test-never-sent' } });
      expect(search.code).toBe(0);
      expect((search.json() as { results: { path: string }[] }).results[0]?.path).toBe('src/router.ts');
      // Twice: nor does a command start a daemon of its own over it.
      expect(runCli(['search', 'router', '--json', '--root', root], { env: { REPODEX_DAEMON: 'auto' } }).code).toBe(0);
      // Connections are taken in the order they came: once one made now has been heard, one that
      // either command had made would have been taken before it.
      const probe = connect(path, () => probe.write('probe'));
      expect(await until(() => heard.includes('probe'))).toBe(true);
      probe.destroy();
      expect(connections).toBe(1);
      expect(heard).toEqual(['probe']);
      expect(starts(root)).toBe(0);
      expect(entryOf(root)).toBeUndefined();
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});

/** The frames of a daemon's answer, one JSON object a line. */
function frames(text: string): unknown[] {
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

/** The variables a daemon compares (as the CLI's client sends them): the test process's, with NO_COLOR as runCli sets it. */
function behaviourEnvOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && name !== 'REPODEX_DAEMON' && !name.startsWith('REPODEX_DAEMON_') && (name.startsWith('REPODEX_') || name.startsWith('GIT_') || name === 'HOME' || name === 'XDG_CONFIG_HOME')) kept[name] = value;
  }
  return kept;
}

