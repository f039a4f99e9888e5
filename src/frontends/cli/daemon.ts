// `repodex daemon`: a background process per repository that keeps its index loaded and a file
// watcher running, so the one-shot commands an agent or a person types answer in milliseconds
// instead of starting the engine each time. A command finds it by its socket in `.repodex/` (see
// daemon-client.ts), sends its arguments, working folder and environment, and gets back exactly
// the output and exit code it would have produced itself. Calls run one at a time.
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { lstatIfExists } from '../../core/stat.js';
import type { Server, Socket } from 'node:net';
import type { Writable as WritableStream } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ComposeOptions, type ServerEngine, createEngine, createServerEngine } from '../../compose.js';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import { DATA_DIR_NAME, discoverRoot } from '../../core/paths.js';
import { TOOL_VERSION } from '../../core/version.js';
import type { Engine } from '../../engine/engine.js';
import { helpersInBackground } from '../../engine/give-way.js';
import { rootOf } from './daemon-client.js';
import { type CallFrame, type ControlFrame, DAEMON_ENV, type DaemonStatus, PRESENTATION_ENV, type ReplyFrame, behaviourEnv, buildId, daemonMode, daemonTakes, socketPath } from './daemon-protocol.js';

/** Minutes without a call after which a daemon stops, unless `--idle-minutes` says otherwise (0: never). */
export const DEFAULT_IDLE_MINUTES = 30;
/** The daemon's own log (why it stopped, or failed to start), in `.repodex/`. */
export const LOG_NAME = 'daemon.log';
/**
 * Left in `.repodex/` by a command starting a daemon, removed by the daemon once it listens (or
 * fails to): commands finishing at the same moment start one daemon, not one each.
 */
const STARTING_NAME = 'daemon.starting';
/** A start marker older than this belongs to a start that never finished: it no longer holds others back. */
const STARTING_STALE_MS = 60_000;
/** How often a daemon checks that its socket is still its own (`repodex clean` removes `.repodex/`). */
const SOCKET_CHECK_MS = 2000;
/** Longest first line a client may send (its arguments and environment). */
const MAX_CALL_BYTES = 1024 * 1024;

/** What a daemon runs a call with: the CLI itself, given streams and the engine to use. */
export type RunCli = (argv: readonly string[], io: DaemonIo) => Promise<number>;

/** The streams and engine a call runs with in a daemon. */
export interface DaemonIo {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  /** The engine for a command: the daemon's own for its repository, a new one for anything else. */
  readonly engineFor: (options: ComposeOptions, command: string) => Engine;
  /** Aborted when the client goes away (Ctrl-C): a sync stops at the next file. */
  readonly signal: AbortSignal;
}

/**
 * Serve one-shot commands for `root` until idle for `idleMinutes` (0: until stopped), `repodex
 * daemon stop`, SIGTERM or SIGINT, or until its socket is removed or taken over. Resolves when it
 * has stopped and removed its socket.
 */
export async function runDaemon(root: string, options: { readonly idleMinutes: number; readonly cliFile: string; readonly runCli: RunCli; readonly log: (line: string) => void }): Promise<void> {
  const server = await createServerEngine({ root, requireRepository: true });
  const path = socketPath(server.engine.root);
  const build = buildId(options.cliFile);
  const env = behaviourEnv(process.env);
  const started = new Date();
  let calls = 0;
  /** Sync calls running or waiting to run. */
  let syncs = 0;
  let queue: Promise<unknown> = Promise.resolve();
  let idle: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolveStop) => (resolveStopped = resolveStop));

  const stop = (why: string): Promise<void> =>
    (stopping ??= (async () => {
      options.log(`stopping: ${why}`);
      clearInterval(checker);
      if (idle) clearTimeout(idle);
      listener.close();
      if (ownSocket()) rmSync(path, { force: true });
      await queue.catch(() => undefined);
      await server.close();
      resolveStopped();
    })());
  const rearm = (): void => {
    if (idle) clearTimeout(idle);
    if (options.idleMinutes > 0) idle = setTimeout(() => void stop(`idle for ${options.idleMinutes} minutes`), options.idleMinutes * 60_000);
  };
  const status = (): DaemonStatus => ({ root: server.engine.root, pid: process.pid, started_at: started.toISOString(), calls, idle_minutes: options.idleMinutes, watching: server.watchProblem === undefined, version: TOOL_VERSION });

  // Load the index and warm the JIT before answering, so the first command is as quick as the rest.
  let listener: Server;
  try {
    await server.engine.warmUp();
    helpersInBackground();
    listener = await listenOn(path);
  } catch (error) {
    await server.close();
    throw error;
  } finally {
    rmSync(join(server.engine.root, DATA_DIR_NAME, STARTING_NAME), { force: true });
  }
  const identity = socketIdentity(path);
  const ownSocket = (): boolean => identity !== undefined && socketIdentity(path) === identity;
  const checker = setInterval(() => {
    if (!ownSocket()) void stop('its socket was removed or replaced');
  }, SOCKET_CHECK_MS);
  checker.unref();
  rearm();
  const onSignal = (): void => void stop('signalled');
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  options.log(`serving ${server.engine.root} (pid ${process.pid}, repodex ${TOOL_VERSION})${server.watchProblem ? `; no file watcher (${server.watchProblem}): every call checks the tree by stats` : ''}`);

  listener.on('connection', (socket: Socket) => {
    socket.on('error', () => undefined);
    readFirstLine(socket, (line) => {
      let frame: CallFrame | ControlFrame;
      try {
        frame = JSON.parse(line) as CallFrame | ControlFrame;
      } catch {
        socket.destroy();
        return;
      }
      if (!wellFormed(frame)) {
        socket.destroy();
        return;
      }
      if (frame.build !== build) {
        // A newer (or older) repodex is calling: it runs the command itself, and this daemon, now out of date, stops.
        reply(socket, { t: 'declined', why: 'another build of repodex' }, true);
        void stop('a call came from another build of repodex');
        return;
      }
      if ('control' in frame) {
        if (frame.control === 'status') reply(socket, { t: 'status', status: status() }, true);
        else {
          reply(socket, { t: 'exit', code: 0 }, true);
          void stop('asked to stop');
        }
        return;
      }
      // Calls run one at a time: behind a sync (seconds, on a large change) a search would wait,
      // where on its own it answers at once from the index as it was. So while a sync runs or
      // waits here, other calls go back to run in their own processes.
      const why = stopping ? 'stopping' : !sameEnv(frame.env, env) ? 'another environment' : !daemonTakes(frame.argv) ? 'a command a daemon does not run' : syncs > 0 ? 'busy with a sync' : undefined;
      if (why !== undefined) {
        reply(socket, { t: 'declined', why }, true);
        return;
      }
      calls++;
      rearm();
      // At once, even behind another call: the client waits only so long for a daemon to take its call.
      reply(socket, { t: 'taken' });
      const call = frame;
      const isSync = call.argv[0] === 'sync';
      if (isSync) syncs++;
      queue = queue
        .then(() => runCall(call, socket, server, options.runCli))
        .catch((error: unknown) => options.log(`a call failed: ${errorMessage(error)}`))
        .finally(() => {
          if (isSync) syncs--;
        });
    });
  });
  try {
    await stopped;
  } finally {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
  }
}

/** Run one call as the client's own process would: its folder, its terminal's colours, output relayed as written. */
async function runCall(call: CallFrame, socket: Socket, server: ServerEngine, runCli: RunCli): Promise<void> {
  if (socket.destroyed) return;
  const abort = new AbortController();
  socket.on('close', () => abort.abort());
  const home = process.cwd();
  const saved = PRESENTATION_ENV.map((name) => [name, process.env[name]] as const);
  try {
    process.chdir(call.cwd);
  } catch {
    reply(socket, { t: 'declined', why: 'cannot enter the working folder' }, true);
    return;
  }
  try {
    const { Readable, Writable } = await import('node:stream'); // loaded by daemons only, not by every command
    for (const name of PRESENTATION_ENV) setEnv(name, call.presentation[name]);
    const engineFor = (options: ComposeOptions, command: string): Engine => {
      // An explicit sync runs as it would on its own (embedding, if on, in the foreground); so does a
      // command for another store or repository, or with its own indexing setting. The rest use the loaded index.
      if (command === 'sync' || options.store !== undefined || options.autoIndex !== undefined) return createEngine(options);
      let root: string;
      try {
        root = discoverRoot(process.cwd(), options.root, options.requireRepository ?? false);
      } catch {
        return createEngine(options); // it reports why, as it would on its own
      }
      return root === server.engine.root ? server.engine : createEngine(options);
    };
    const code = await runCli(call.argv, {
      stdout: frameStream(Writable, socket, 'out', call.stdout),
      stderr: frameStream(Writable, socket, 'err', call.stderr),
      stdin: Readable.from([]) as unknown as NodeJS.ReadStream,
      engineFor,
      signal: abort.signal,
    });
    // A command on its own writes its query counts as it exits: so does the daemon's answer to it,
    // or a command run on its own right after would report counts without this one's.
    await server.engine.analytics.flush();
    reply(socket, { t: 'exit', code }, true);
  } finally {
    for (const [name, value] of saved) setEnv(name, value);
    process.chdir(home);
  }
}

/** A frame of the shape a client sends: anything else is dropped unanswered. */
function wellFormed(frame: unknown): frame is CallFrame | ControlFrame {
  if (typeof frame !== 'object' || frame === null || typeof (frame as { build?: unknown }).build !== 'string') return false;
  if ('control' in frame) return frame.control === 'status' || frame.control === 'stop';
  const call = frame as Partial<Record<keyof CallFrame, unknown>>;
  const record = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  const tty = (value: unknown): boolean => record(value) && typeof value.isTTY === 'boolean' && (value.columns === undefined || typeof value.columns === 'number');
  return (
    typeof call.cwd === 'string' &&
    record(call.env) &&
    Object.values(call.env).every((value) => typeof value === 'string') &&
    record(call.presentation) &&
    Object.values(call.presentation).every((value) => value === undefined || typeof value === 'string') &&
    tty(call.stdout) &&
    tty(call.stderr)
  );
}

function setEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

function sameEnv(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/** A stream whose writes go to the client as frames, with the client's terminal facts. */
function frameStream(Writable: typeof WritableStream, socket: Socket, t: 'out' | 'err', tty: CallFrame['stdout']): NodeJS.WriteStream {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (!socket.destroyed) socket.write(`${JSON.stringify({ t, d: chunk.toString() } satisfies ReplyFrame)}\n`);
      done();
    },
  });
  return Object.assign(stream, { isTTY: tty.isTTY, columns: tty.columns }) as unknown as NodeJS.WriteStream;
}

function reply(socket: Socket, frame: ReplyFrame, end = false): void {
  if (socket.destroyed) return;
  const line = `${JSON.stringify(frame)}\n`;
  if (end) socket.end(line);
  else socket.write(line);
}

/** The first line a client sends, then `take` it; a client that sends more than MAX_CALL_BYTES without a newline is dropped. */
function readFirstLine(socket: Socket, take: (line: string) => void): void {
  let buffered = '';
  const onData = (text: string): void => {
    buffered += text;
    const newline = buffered.indexOf('\n');
    if (newline >= 0) {
      socket.removeListener('data', onData);
      take(buffered.slice(0, newline));
    } else if (buffered.length > MAX_CALL_BYTES) {
      socket.destroy();
    }
  };
  socket.setEncoding('utf8');
  socket.on('data', onData);
}

/** The socket file's identity (device and inode), or undefined when it is gone. */
function socketIdentity(path: string): string | undefined {
  const stat = lstatIfExists(path);
  return stat?.isSocket() ? `${stat.dev}:${stat.ino}` : undefined;
}

/**
 * Listen on `path`, readable and writable by this user only. A socket file left by a daemon that
 * died is replaced; one that answers belongs to a running daemon, and this one does not start.
 */
async function listenOn(path: string): Promise<Server> {
  requireSocketPathFits(path);
  if (socketIdentity(path) !== undefined) {
    if (await answers(path)) throw new RepodexError('BAD_REQUEST', `a daemon already serves this repository (${path}): repodex daemon status`, { selfContained: true });
    rmSync(path, { force: true });
  }
  const { createServer } = await import('node:net'); // loaded by daemons only, not by every command
  const listener = createServer();
  // The socket is made private before any client could connect: created under a umask that leaves others out.
  const mask = process.umask(0o177);
  try {
    await new Promise<void>((resolveListen, rejectListen) => {
      listener.once('error', rejectListen);
      listener.listen(path, () => {
        listener.removeListener('error', rejectListen);
        resolveListen();
      });
    });
  } catch (error) {
    if (isErrnoException(error, 'EADDRINUSE')) throw new RepodexError('BAD_REQUEST', `a daemon already serves this repository (${path}): repodex daemon status`, { selfContained: true });
    throw new RepodexError('BAD_REQUEST', `cannot listen on ${path}: ${errorMessage(error)}`, { selfContained: true });
  } finally {
    process.umask(mask);
  }
  chmodSync(path, 0o600);
  return listener;
}

/** Longest socket path every supported system takes (Linux 107 bytes, macOS 103). */
const MAX_SOCKET_PATH_BYTES = 103;

/** Whether the system can bind a socket at `path` (the limit is the kernel's). */
function socketPathFits(path: string): boolean {
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES;
}

/** Refuse a repository whose socket path the system cannot bind. */
function requireSocketPathFits(path: string): void {
  if (!socketPathFits(path)) {
    throw new RepodexError('BAD_REQUEST', `the repository's path is too long for a daemon: its socket ${path} would be ${Buffer.byteLength(path)} bytes, and a socket path can be at most ${MAX_SOCKET_PATH_BYTES}; commands still run on their own`, { selfContained: true });
  }
}

/** Whether something answers on the socket at `path`. */
async function answers(path: string): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolveAnswer) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolveAnswer(true);
    });
    socket.once('error', () => resolveAnswer(false));
  });
}

/** Ask the daemon of `root` for its status, or to stop; undefined when none answers. */
export async function controlDaemon(root: string, cliFile: string, control: 'status' | 'stop'): Promise<DaemonStatus | 'stopped' | 'other build' | undefined> {
  const path = socketPath(root);
  if (socketIdentity(path) === undefined) return undefined;
  const { connect } = await import('node:net');
  return new Promise((resolveControl) => {
    const socket = connect(path);
    let pending = '';
    let answer: DaemonStatus | 'stopped' | 'other build' | undefined;
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ build: buildId(cliFile), control } satisfies ControlFrame)}\n`));
    socket.on('data', (text: string) => {
      pending += text;
      const newline = pending.indexOf('\n');
      if (newline < 0) return;
      const frame = JSON.parse(pending.slice(0, newline)) as ReplyFrame;
      answer = frame.t === 'status' ? frame.status : frame.t === 'declined' ? 'other build' : 'stopped';
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolveControl(answer));
  });
}

/**
 * Start a daemon for `root` in the background and wait until it answers. Its output goes to
 * `.repodex/daemon.log`; if it exits before answering, the log's end says why.
 */
export async function startDaemon(root: string, cliFile: string, launcher: string, idleMinutes: number): Promise<DaemonStatus> {
  requireSocketPathFits(socketPath(root));
  const running = await controlDaemon(root, cliFile, 'status');
  if (running && running !== 'stopped' && running !== 'other build') throw new RepodexError('BAD_REQUEST', `a daemon already serves ${root} (pid ${running.pid}): repodex daemon stop, then start`, { selfContained: true });
  if (running === 'other build') await waitGone(socketPath(root));
  mkdirSync(join(root, DATA_DIR_NAME), { recursive: true });
  const logPath = join(root, DATA_DIR_NAME, LOG_NAME);
  let exited: string | undefined;
  const child = spawnDaemon(root, launcher, idleMinutes, 'w');
  child.on('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  child.on('error', (error) => (exited = errorMessage(error)));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const status = await controlDaemon(root, cliFile, 'status');
    if (status && status !== 'stopped' && status !== 'other build') return status;
    if (exited !== undefined) break;
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
  const told = readFileSync(logPath, 'utf8').trim().split('\n').slice(-3).join('\n');
  throw new RepodexError('INTERNAL', `the daemon did not start${exited ? ` (${exited})` : ' within 30 s'}${told ? `: ${told}` : ''} (log: ${logPath})`, { selfContained: true });
}

/** The launcher (bin/repodex.js) of the built CLI, which a daemon is started with. */
export function launcherFile(): string {
  return fileURLToPath(new URL('../bin/repodex.js', import.meta.url));
}

/** Start `repodex daemon run` for `root` as a process of its own, detached from this one, logging to `.repodex/daemon.log` (`w`: afresh, `a`: appended). */
function spawnDaemon(root: string, launcher: string, idleMinutes: number, logFlags: 'w' | 'a'): ReturnType<typeof spawn> {
  const log = openSync(join(root, DATA_DIR_NAME, LOG_NAME), logFlags);
  try {
    const child = spawn(process.execPath, [launcher, 'daemon', 'run', '--root', root, '--idle-minutes', String(idleMinutes)], { detached: true, stdio: ['ignore', 'ignore', log], env: { ...process.env } });
    child.unref();
    return child;
  } finally {
    closeSync(log);
  }
}

/**
 * After a one-shot command `argv` answered on its own (no daemon ran): start a daemon for its
 * repository in the background, so the next commands there answer from it (REPODEX_DAEMON, see
 * daemon-protocol.ts). Does not wait for it. Returns the root it started one for, or undefined
 * when it did not: daemons off or manual, a command a daemon does not take, no index, a socket
 * already there (a daemon runs, or one declined the call), another command starting one, a path
 * too long for a socket, or Windows (no Unix sockets in `.repodex/`).
 */
export function autoStartDaemon(argv: readonly string[], launcher: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (process.platform === 'win32' || daemonMode(env) !== 'auto' || !daemonTakes(argv)) return undefined;
  const root = rootOf(argv, process.cwd());
  if (root === undefined || !existsSync(join(root, DATA_DIR_NAME))) return undefined;
  const path = socketPath(root);
  if (!socketPathFits(path) || lstatIfExists(path) !== undefined) return undefined;
  if (!claimStart(join(root, DATA_DIR_NAME, STARTING_NAME))) return undefined;
  try {
    spawnDaemon(root, launcher, DEFAULT_IDLE_MINUTES, 'a').on('error', () => undefined);
  } catch {
    rmSync(join(root, DATA_DIR_NAME, STARTING_NAME), { force: true });
    return undefined;
  }
  return root;
}

/** Create the start marker `path` unless another start holds a fresh one: whether this process may start the daemon. */
function claimStart(path: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
      return true;
    } catch (error) {
      if (!isErrnoException(error, 'EEXIST')) return false;
      const held = lstatIfExists(path);
      if (held !== undefined && Date.now() - held.mtimeMs < STARTING_STALE_MS) return false;
      rmSync(path, { force: true }); // left by a start that never finished
    }
  }
  return false;
}

/** The note a person at a terminal gets when a command started a daemon (agents and scripts get none). */
export function autoStartNote(root: string): string {
  return `repodex: started a daemon that keeps ${root}'s index loaded, so the next commands there answer faster; it stops after ${DEFAULT_IDLE_MINUTES} idle minutes (repodex daemon stop; ${DAEMON_ENV}=0 starts none)\n`;
}

/** Wait (up to 5 s) for a stopping daemon to remove its socket. */
export async function waitGone(path: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (socketIdentity(path) !== undefined && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 25));
}
