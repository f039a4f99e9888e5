import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, ROUTER_SOURCE, committedRepo, runCli, runCliAsync, tempDir } from '../helpers.js';
import { daemonLog, entryFiles, entryOf, isRunning, rawCall, registered, until } from '../daemons.js';
import { runDaemon } from '../../src/frontends/cli/daemon.js';
import { DaemonRegistry, residentBytes } from '../../src/frontends/cli/daemon-registry.js';
import { behaviourEnv, buildId, socketPath } from '../../src/frontends/cli/daemon-protocol.js';

// A script that ran `repodex search` in 25 repositories in turn left 25 daemons (1.8 GB) for 30
// minutes. Now a user's daemons stay under a cap (REPODEX_DAEMON_MAX) and a memory budget
// (REPODEX_DAEMON_MEMORY_MB): a daemon starting beyond either asks the least recently used one a
// command started to stop, never one answering a command. Each describe has a registry of its own.

const LOCAL = { REPODEX_DAEMON: '0' };

/** A registry of this describe's own, for the CLI processes and the daemons run in this process; its daemons stopped afterwards. */
function ownRegistry(): void {
  const dir = tempDir('repodex-daemons-');
  beforeAll(() => {
    process.env.REPODEX_DAEMON_DIR = dir;
  });
  afterAll(() => {
    runCli(['daemon', 'stop', '--all'], { env: { REPODEX_DAEMON_DIR: dir } });
  });
}

/** Indexed repositories of one file each (none with a daemon yet). */
function repositories(count: number): string[] {
  return Array.from({ length: count }, () => {
    const root = committedRepo({ 'src/router.ts': ROUTER_SOURCE });
    expect(runCli(['sync', '--root', root], { env: LOCAL }).code).toBe(0);
    return root;
  });
}

/**
 * Use `root` as a script or agent does, twice in a row (the second command starts its daemon),
 * and wait until that daemon serves and has made room under the limits (its log's last word on them).
 */
async function startByUse(root: string, env: NodeJS.ProcessEnv = {}): Promise<number> {
  const before = daemonLog(root).length;
  for (let i = 0; i < 2; i++) expect((await runCliAsync(['search', 'router', '--root', root], { env: { REPODEX_DAEMON: 'auto', ...env } })).code).toBe(0);
  expect(await until(() => /daemons? of this user runs? now|stopping: no room/.test(daemonLog(root).slice(before)))).toBe(true);
  return entryOf(root)!.pid!;
}

/** The roots of the registered daemons, least recently used first. */
function roots(): string[] {
  return registered().map((entry) => entry.root);
}

describe('the cap on daemons (REPODEX_DAEMON_MAX)', () => {
  ownRegistry();

  it('leaves at most the cap running over a loop of six repositories, stopping the least recently used first', async () => {
    const repos = repositories(6);
    const env = { REPODEX_DAEMON_MAX: '3' };
    const pids: number[] = [];
    for (const root of repos.slice(0, 3)) pids.push(await startByUse(root, env));
    expect(roots()).toEqual(repos.slice(0, 3));
    // The first repository is used again (its daemon answers): the second is now the least recently used.
    const served = await runCliAsync(['search', 'router', '--json', '--root', repos[0]!], { env: { REPODEX_DAEMON: 'manual' } });
    expect(served.code).toBe(0);
    expect(entryOf(repos[0]!)?.calls).toBe(1);
    expect(roots()).toEqual([repos[1], repos[2], repos[0]]);

    const expected = [
      { newcomer: 3, stopped: 1, left: [2, 0, 3] },
      { newcomer: 4, stopped: 2, left: [0, 3, 4] },
      { newcomer: 5, stopped: 0, left: [3, 4, 5] },
    ];
    for (const { newcomer, stopped, left } of expected) {
      pids[newcomer] = await startByUse(repos[newcomer]!, env);
      expect(daemonLog(repos[newcomer]!)).toContain(`asked the daemon for ${repos[stopped]} (pid ${pids[stopped]}) to stop: 4 daemons would run, more than 3 (REPODEX_DAEMON_MAX)`);
      expect(await until(() => !isRunning(pids[stopped]!))).toBe(true);
      expect(daemonLog(repos[stopped]!)).toContain(`stopping: asked to make room for the daemon of ${repos[newcomer]}: 4 daemons would run, more than 3 (REPODEX_DAEMON_MAX)`);
      expect(roots()).toEqual(left.map((index) => repos[index]));
      expect(pids.filter((pid) => isRunning(pid))).toHaveLength(3);
    }
    // The stopped ones' sockets are gone: their next commands run on their own.
    for (const index of [0, 1, 2]) expect(existsSync(socketPath(repos[index]!))).toBe(false);
  });

  it('never stops a daemon answering a command: the next least recently used one goes', async () => {
    // This test's own limits: two daemons, none left from the test before.
    runCli(['daemon', 'stop', '--all']);
    const [busyRoot, idleRoot, newRoot] = repositories(3) as [string, string, string];
    const env = { REPODEX_DAEMON_MAX: '2' };
    // The least recently used daemon runs in this process, and is kept answering a command for as long as this test says.
    expect(DaemonRegistry.open().claim(busyRoot, socketPath(busyRoot), 'command')).toBeDefined();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const log: string[] = [];
    let answering = false;
    const cliFile = join(PROJECT_ROOT, 'dist', 'cli.js');
    const stopped = runDaemon(busyRoot, {
      idleMinutes: 0,
      cliFile,
      log: (line) => log.push(line),
      runCli: async () => {
        answering = true;
        await held;
        return 0;
      },
    });
    expect(await until(() => entryOf(busyRoot)?.state === 'serving')).toBe(true);
    const idlePid = await startByUse(idleRoot, env);
    expect(roots()).toEqual([busyRoot, idleRoot]);
    const answer = rawCall(socketPath(busyRoot), { build: buildId(cliFile), argv: ['search', 'router'], cwd: busyRoot, env: behaviourEnv(process.env), presentation: {}, stdout: { isTTY: false }, stderr: { isTTY: false } });
    expect(await until(() => answering)).toBe(true);

    await startByUse(newRoot, env);
    expect(log.some((line) => line.startsWith(`stays: asked to make room (for the daemon of ${newRoot}: 3 daemons would run, more than 2`))).toBe(true);
    expect(daemonLog(newRoot)).toContain(`the daemon for ${busyRoot} (pid ${process.pid}) is answering a command: it stays`);
    expect(daemonLog(newRoot)).toContain(`asked the daemon for ${idleRoot} (pid ${idlePid}) to stop`);
    expect(await until(() => !isRunning(idlePid))).toBe(true);
    expect(roots().sort()).toEqual([busyRoot, newRoot].sort());
    // The command it was answering finishes as if nothing happened.
    release();
    expect(await answer).toContain('"t":"exit","code":0');
    // Asked over its socket: a `daemon stop` run with spawnSync would hold this process, the daemon, from answering.
    expect(await rawCall(socketPath(busyRoot), { build: buildId(cliFile), control: 'stop' })).toContain('"t":"exit"');
    await stopped;
    expect(entryOf(busyRoot)).toBeUndefined();
  });
});

describe('the memory budget (REPODEX_DAEMON_MEMORY_MB)', () => {
  ownRegistry();

  it('stops the least recently used daemon when a new one would take the sum over the budget', async () => {
    const [first, second, third, fourth] = repositories(4) as [string, string, string, string];
    const firstPid = await startByUse(first);
    const secondPid = await startByUse(second);
    const bytes = registered().map((entry) => residentBytes(entry)!);
    expect(bytes).toHaveLength(2);
    // Room for these two and half of another: a third like them takes the sum over, and one must go.
    const budget = Math.round((bytes[0]! + bytes[1]! + bytes[0]! / 2) / (1024 * 1024));
    const thirdPid = await startByUse(third, { REPODEX_DAEMON_MEMORY_MB: String(budget) });
    expect(daemonLog(third)).toMatch(new RegExp(`asked the daemon for ${first} \\(pid ${firstPid}\\) to stop: 3 daemons would use \\d+ MB together, more than ${budget} MB \\(REPODEX_DAEMON_MEMORY_MB\\)`));
    expect(await until(() => !isRunning(firstPid))).toBe(true);
    expect(roots()).toEqual([second, third]);
    expect(isRunning(secondPid)).toBe(true);

    // A budget smaller than any daemon: every other one a command started leaves, and the newest runs alone.
    const fourthPid = await startByUse(fourth, { REPODEX_DAEMON_MEMORY_MB: '1' });
    expect(await until(() => !isRunning(secondPid) && !isRunning(thirdPid))).toBe(true);
    expect(roots()).toEqual([fourth]);
    expect(isRunning(fourthPid)).toBe(true);
  });
});

describe('the registry', () => {
  ownRegistry();

  it('drops a daemon killed with -9: it is no longer listed nor counted, and its repository gets a new one', async () => {
    const [killed, kept, next] = repositories(3) as [string, string, string];
    const env = { REPODEX_DAEMON_MAX: '2' };
    const killedPid = await startByUse(killed, env);
    const keptPid = await startByUse(kept, env);
    process.kill(killedPid, 'SIGKILL');
    expect(await until(() => !isRunning(killedPid))).toBe(true);
    expect(entryFiles()).toBe(2); // its entry is still there, until someone reads the registry
    // `daemon status` lists the live ones only, and prunes the entry of the one that died.
    const status = runCli(['daemon', 'status', '--json', '--root', killed]);
    expect(status.code).toBe(1);
    expect(status.json()).toMatchObject({ root: killed, running: false, max_daemons: 4, daemons: [{ root: kept, pid: keptPid, state: 'serving', started_by: 'command' }] });
    expect(entryFiles()).toBe(1);
    // A new daemon does not count the dead one: none is stopped to make room for it.
    await startByUse(next, env);
    expect(daemonLog(next)).toContain('2 daemons of this user run now');
    expect(daemonLog(next)).not.toContain('asked the daemon');
    expect(isRunning(keptPid)).toBe(true);
    // The repository whose daemon died gets a new one (its socket, left behind, is replaced), in place of the least recently used.
    const againPid = await startByUse(killed, env);
    expect(isRunning(againPid)).toBe(true);
    expect(daemonLog(killed)).toContain(`asked the daemon for ${kept} (pid ${keptPid}) to stop`);
    expect(await until(() => !isRunning(keptPid))).toBe(true);
    expect(roots()).toEqual([next, killed]);
  });

  it('does not keep a repository from ever getting a daemon again when a socket no entry names was left behind', async () => {
    const [root] = repositories(1) as [string];
    // A listener on the repository's socket, killed with -9 before any registry heard of it (a daemon of an older repodex, say).
    const path = socketPath(root);
    const listener = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('listening'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => listener.stdout.once('data', resolve));
    listener.kill('SIGKILL');
    expect(await until(() => listener.exitCode !== null || listener.signalCode !== null)).toBe(true);
    expect(existsSync(path)).toBe(true);
    const pid = await startByUse(root);
    expect(entryOf(root)).toMatchObject({ state: 'serving', pid });
    expect((await runCliAsync(['daemon', 'status', '--json', '--root', root])).stdout).toContain('"running":true');
  });

  it('is a folder only its user can read, with the entries listed by `daemon status` from anywhere', () => {
    const dir = process.env.REPODEX_DAEMON_DIR!;
    const status = runCli(['daemon', 'status'], { cwd: '/' });
    expect(status.code).toBe(0);
    const lines = status.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^repodex: 3 daemons of yours, \d+ MB; at most 4 and \d+ MB together \(REPODEX_DAEMON_MAX, REPODEX_DAEMON_MEMORY_MB\):$/);
    expect(lines.slice(1)).toHaveLength(3);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ {2}\/\S+ +pid \d+, \d+ MB, idle \d+ s, 0 commands, started by a command$/);
    for (const name of readdirSync(dir)) expect(name).toMatch(/^[0-9a-f]{24}\.(json|seen)$/);
    // A folder other users may open is refused, and left as it is; commands there start no daemon, and answer as ever.
    const open = tempDir('repodex-daemons-');
    chmodSync(open, 0o755);
    const refused = runCli(['daemon', 'status'], { cwd: '/', env: { REPODEX_DAEMON_DIR: open } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`repodex: cannot keep the list of daemons in ${open}: other users may open it (mode 755): chmod 700 ${open}, or set REPODEX_DAEMON_DIR to a folder of your own\n`);
    const [root] = repositories(1) as [string];
    for (let i = 0; i < 2; i++) expect(runCli(['search', 'router', '--root', root], { env: { REPODEX_DAEMON: 'auto', REPODEX_DAEMON_DIR: open } }).stdout).toContain('src/router.ts');
    expect(daemonLog(root)).toBe('');
    expect(statSync(open).mode & 0o777).toBe(0o755);
    expect(readdirSync(open)).toEqual([]);
    // A limit set wrong is told, with the fix.
    const wrong = runCli(['daemon', 'status'], { cwd: '/', env: { REPODEX_DAEMON_MAX: 'many' } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('REPODEX_DAEMON_MAX must be a whole number of daemons, at least 1, got "many" (unset it for the default)');
  });
});
