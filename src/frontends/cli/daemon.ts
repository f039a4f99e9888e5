// `repodex daemon`: a background process per repository that keeps its index loaded and a file
// watcher running, so the one-shot commands an agent or a person types answer in milliseconds
// instead of starting the engine each time. A command finds it by its socket in `.repodex/` (see
// daemon-client.ts), sends its arguments, working folder and environment, and gets back exactly
// the output and exit code it would have produced itself. Calls run one at a time.
// Every daemon records itself in its user's registry (daemon-registry.ts): a starting daemon keeps
// the user's daemons under REPODEX_DAEMON_MAX and REPODEX_DAEMON_MEMORY_MB by asking the least
// recently used ones to leave, and `daemon stop`, `daemon status` and `clean` find daemons there.
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { lstatIfExists } from '../../core/stat.js';
import type { Server, Socket } from 'node:net';
import type { Writable as WritableStream } from 'node:stream';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ComposeOptions, type ServerEngine, createEngine, createServerEngine } from '../../compose.js';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import { DATA_DIR_NAME, discoverRoot } from '../../core/paths.js';
import { TOOL_VERSION } from '../../core/version.js';
import type { Engine } from '../../engine/engine.js';
import { helpersInBackground } from '../../engine/give-way.js';
import { rootOf } from './daemon-client.js';
import { LineSplitter } from '../lines.js';
import { type CallFrame, type ControlFrame, DAEMON_ENV, type DaemonStatus, PRESENTATION_ENV, type ReplyFrame, behaviourEnv, buildId, daemonMode, daemonTakes, socketPath } from './daemon-protocol.js';
import { DAEMON_MAX_ENV, DAEMON_MEMORY_ENV, type DaemonEntry, type DaemonLimits, DaemonRegistry, REPEATED_USE_MS, type StartedBy, daemonLimits, isRunning, isSameProcess, processIdentity, residentBytes } from './daemon-registry.js';

/** Minutes without a call after which a daemon stops, unless `--idle-minutes` says otherwise (0: never). */
export const DEFAULT_IDLE_MINUTES = 30;
/**
 * Minutes after which a daemon a command started stops when no command has used it yet: a script
 * that ran two commands in a repository and moved on does not keep it for DEFAULT_IDLE_MINUTES.
 */
export const UNUSED_IDLE_MINUTES = 5;
/** The daemon's own log (why it stopped, or failed to start), in `.repodex/`. */
export const LOG_NAME = 'daemon.log';
/** How often a daemon checks that its socket is still its own (`repodex clean` removes `.repodex/`). */
const SOCKET_CHECK_MS = 2000;
/** Longest first line a client may send (its arguments and environment). */
const MAX_CALL_BYTES = 1024 * 1024;
/** How long a control request (status, stop, leave) waits for a daemon's answer: one that gives none is stuck or stopped. */
const CONTROL_MS = 2000;
/** How long `daemon stop` waits for a daemon's process to exit (one still starting finishes loading first). */
const EXIT_WAIT_MS = 30_000;
/** Why a daemon declines to leave: it is answering a command, and the least recently used daemon is another. */
const BUSY = 'answering a command';

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
 * daemon stop`, SIGTERM or SIGINT, until its socket is removed or taken over, or until a starting
 * daemon asks it to make room. Resolves when it has stopped and removed its socket and its entry
 * in the registry. Told to stop while still loading, it stops once loaded, without serving.
 */
export async function runDaemon(root: string, options: { readonly idleMinutes: number; readonly cliFile: string; readonly runCli: RunCli; readonly log: (line: string) => void }): Promise<void> {
  let stopAsked: string | undefined;
  const onEarlySignal = (): void => void (stopAsked = 'signalled while starting');
  process.once('SIGTERM', onEarlySignal);
  process.once('SIGINT', onEarlySignal);
  let registry: DaemonRegistry | undefined;
  let limits: DaemonLimits | undefined;
  try {
    registry = DaemonRegistry.open();
    limits = daemonLimits();
  } catch (error) {
    options.log(`${errorMessage(error)}; this daemon counts toward no limit`);
  }
  // The start a command (or `daemon start`) claimed for this process: it says who asked for it;
  // without one, a person ran this daemon. The claim may not name this pid yet, a moment after the spawn.
  const claimOf = (at: string): DaemonEntry | undefined => {
    const claim = registry?.read(at);
    return claim?.state === 'starting' && (claim.pid === null || claim.pid === process.pid) ? claim : undefined;
  };
  const giveUpStart = (at: string): void => {
    const claim = claimOf(at);
    if (claim) registry?.removeIf(at, claim);
  };
  const startedBy: StartedBy = claimOf(resolve(root))?.started_by ?? 'daemon run';
  let server: ServerEngine;
  try {
    server = await createServerEngine({ root, requireRepository: true });
  } catch (error) {
    process.removeListener('SIGTERM', onEarlySignal);
    process.removeListener('SIGINT', onEarlySignal);
    giveUpStart(resolve(root));
    throw error;
  }
  const path = socketPath(server.engine.root);
  const build = buildId(options.cliFile);
  const env = behaviourEnv(process.env);
  const started = new Date();
  let calls = 0;
  /** Calls running or waiting to run. */
  let active = 0;
  /** Sync calls running or waiting to run. */
  let syncs = 0;
  let queue: Promise<unknown> = Promise.resolve();
  let idle: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolveStop) => (resolveStopped = resolveStop));
  let entry: DaemonEntry | undefined;
  const ownIdentity = registry ? (processIdentity(process.pid) ?? null) : null;

  const stop = (why: string): Promise<void> =>
    (stopping ??= (async () => {
      options.log(`stopping: ${why}`);
      clearInterval(checker);
      if (idle) clearTimeout(idle);
      if (entry) registry?.removeIf(entry.root, entry);
      serving.close();
      if (ownSocket()) rmSync(path, { force: true });
      await queue.catch(() => undefined);
      await server.close();
      resolveStopped();
    })());
  /** The idle minutes after which it stops now: fewer for a daemon a command started and none has used yet. */
  const idleMinutes = (): number => (startedBy === 'command' && calls === 0 ? Math.min(UNUSED_IDLE_MINUTES, options.idleMinutes || UNUSED_IDLE_MINUTES) : options.idleMinutes);
  const rearm = (): void => {
    if (idle) clearTimeout(idle);
    const minutes = idleMinutes();
    if (minutes > 0) idle = setTimeout(() => void stop(`idle for ${minutes} minutes${minutes !== options.idleMinutes ? ' since it started, used by no command' : ''}`), minutes * 60_000);
  };
  const status = (): DaemonStatus => ({ root: server.engine.root, pid: process.pid, started_at: started.toISOString(), calls, idle_minutes: idleMinutes(), watching: server.watchProblem === undefined, version: TOOL_VERSION });
  /** Record this daemon (its last use, calls and memory) in the registry: other daemons see it when they count. */
  const record = (): void => {
    if (!registry) return;
    const now = new Date().toISOString();
    entry = { root: server.engine.root, socket: path, state: 'serving', started_by: startedBy, pid: process.pid, process_start: ownIdentity, since: started.toISOString(), last_used: now, calls, rss: process.memoryUsage.rss(), idle_minutes: options.idleMinutes, version: TOOL_VERSION, ...(identity === undefined ? {} : { socket_id: identity }) };
    try {
      registry.write(entry);
    } catch (error) {
      options.log(`cannot record this daemon in ${registry.folder}: ${errorMessage(error)}`);
    }
  };

  // Load the index and warm the JIT before answering, so the first command is as quick as the rest.
  let listener: Server | undefined;
  try {
    if (stopAsked === undefined) await server.engine.warmUp();
    if (stopAsked !== undefined) {
      options.log(`stopping: ${stopAsked}`);
      await server.close();
      return;
    }
    helpersInBackground();
    listener = await listenOn(path);
  } catch (error) {
    await server.close();
    throw error;
  } finally {
    process.removeListener('SIGTERM', onEarlySignal);
    process.removeListener('SIGINT', onEarlySignal);
    if (listener === undefined) giveUpStart(server.engine.root);
  }
  const serving = listener;
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
  record();
  if (stopAsked !== undefined) void stop(stopAsked); // a signal while it began to listen
  options.log(`serving ${server.engine.root} (pid ${process.pid}, repodex ${TOOL_VERSION}, started by ${startedBy === 'command' ? 'a command' : startedBy})${server.watchProblem ? `; no file watcher (${server.watchProblem}): every call checks the tree by stats` : ''}`);

  serving.on('connection', (socket: Socket) => {
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
        if (frame.control === 'status') {
          reply(socket, { t: 'status', status: status() }, true);
        } else if (frame.control === 'leave' && active > 0) {
          // Never the daemon answering a command: the one asking makes room with another.
          options.log(`stays: asked to make room (${frame.why ?? 'no reason given'}) while ${BUSY}`);
          reply(socket, { t: 'declined', why: BUSY }, true);
        } else {
          reply(socket, { t: 'exit', code: 0 }, true);
          void stop(frame.control === 'leave' ? `asked to make room ${frame.why ?? 'no reason given'}` : 'asked to stop');
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
      active++;
      rearm();
      // At once, even behind another call: the client waits only so long for a daemon to take its call.
      reply(socket, { t: 'taken' });
      const call = frame;
      const isSync = call.argv[0] === 'sync';
      if (isSync) syncs++;
      queue = queue
        .then(() => runCall(call, socket, server, options.runCli, record))
        .catch((error: unknown) => options.log(`a call failed: ${errorMessage(error)}`))
        .finally(() => {
          active--;
          if (isSync) syncs--;
        });
    });
  });
  // Room under the limits is made once this daemon serves: the command that started it did not wait.
  if (registry && limits && entry) {
    const leave = await makeRoom(registry, entry, limits, build, options.log);
    if (leave !== undefined) void stop(leave);
  }
  try {
    await stopped;
  } finally {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
  }
}

/**
 * Keep this user's daemons under `limits` now that `self` serves: ask the least recently used
 * daemons a command started to leave, skipping any answering a command, until the count and the
 * memory fit. Daemons a person started (`daemon start`, `daemon run`) count but are never asked; a
 * daemon may always run alone, however large. Returns why `self` must leave when it cannot make
 * room and a command started it (it is then the newest and unused one), else undefined.
 */
async function makeRoom(registry: DaemonRegistry, self: DaemonEntry, limits: DaemonLimits, build: string, log: (line: string) => void): Promise<string | undefined> {
  const left = new Set<string>();
  const busy = new Set<string>();
  for (;;) {
    const others = registry.all().filter((entry) => entry.state === 'serving' && entry.root !== self.root && !left.has(entry.root));
    const count = others.length + 1;
    const memory = others.reduce((sum, entry) => sum + (residentBytes(entry) ?? 0), process.memoryUsage.rss());
    const over =
      count > limits.maxDaemons
        ? `${count} daemons would run, more than ${limits.maxDaemons} (${DAEMON_MAX_ENV})`
        : count > 1 && memory > limits.memoryBudgetMb * 1024 * 1024
          ? `${count} daemons would use ${megabytes(memory)} MB together, more than ${limits.memoryBudgetMb} MB (${DAEMON_MEMORY_ENV})`
          : undefined;
    if (over === undefined) {
      log(`${count} daemon${count === 1 ? '' : 's'} of this user run${count === 1 ? 's' : ''} now, ${megabytes(memory)} MB together (at most ${limits.maxDaemons} and ${limits.memoryBudgetMb} MB)`);
      return undefined;
    }
    const victim = others.find((entry) => entry.started_by === 'command' && !busy.has(entry.root));
    if (victim === undefined) return self.started_by === 'command' ? `no room: ${over}, and none of the others may be stopped now` : undefined;
    const outcome = await askToLeave(registry, victim, `for the daemon of ${self.root}: ${over}`, build);
    if (outcome === 'busy') busy.add(victim.root);
    else left.add(victim.root);
    log(outcome === 'busy' ? `the daemon for ${victim.root} (pid ${victim.pid}) is ${BUSY}: it stays` : `asked the daemon for ${victim.root} (pid ${victim.pid}) to stop: ${over}`);
  }
}

/**
 * Ask a daemon to leave (gracefully, over its socket): `busy` when it is answering a command. One
 * that does not answer is sent SIGTERM once its pid is proven to be that daemon's process.
 */
async function askToLeave(registry: DaemonRegistry, entry: DaemonEntry, why: string, build: string): Promise<'left' | 'busy'> {
  const answer = await askDaemon(entry.socket, { build, control: 'leave', why });
  if (answer?.t === 'declined' && answer.why === BUSY) return 'busy';
  // It stops (asked, or called by another build); or it gives no answer and is signalled, or is gone already.
  if (answer === undefined) {
    if (isSameProcess(entry)) signalStop(entry.pid!);
    else registry.removeIf(entry.root, entry);
  }
  return 'left';
}

/** SIGTERM (a daemon stops as `daemon stop` asks it to), then SIGCONT, for a process stopped with SIGSTOP to act on it. */
function signalStop(pid: number): void {
  for (const signal of ['SIGTERM', 'SIGCONT'] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return; // gone already
    }
  }
}

function megabytes(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

/** Run one call as the client's own process would: its folder, its terminal's colours, output relayed as written. */
async function runCall(call: CallFrame, socket: Socket, server: ServerEngine, runCli: RunCli, record: () => void): Promise<void> {
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
    record(); // before the answer: whoever the client tells next finds this call counted
    reply(socket, { t: 'exit', code }, true);
  } finally {
    for (const [name, value] of saved) setEnv(name, value);
    process.chdir(home);
  }
}

/** A frame of the shape a client sends: anything else is dropped unanswered. */
function wellFormed(frame: unknown): frame is CallFrame | ControlFrame {
  if (typeof frame !== 'object' || frame === null || typeof (frame as { build?: unknown }).build !== 'string') return false;
  if ('control' in frame) return (frame.control === 'status' || frame.control === 'stop' || frame.control === 'leave') && (!('why' in frame) || typeof frame.why === 'string');
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
  const lines = new LineSplitter(MAX_CALL_BYTES);
  const onData = (chunk: Buffer): void => {
    const [first] = lines.push(chunk);
    if (first === undefined && !lines.overLimit) return;
    socket.removeListener('data', onData);
    if (first?.kind === 'line') take(first.bytes.toString('utf8'));
    else socket.destroy();
  };
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

/** Send one control request to the daemon listening at `path`: its first answer, or undefined when none comes within CONTROL_MS. */
async function askDaemon(path: string, frame: ControlFrame): Promise<ReplyFrame | undefined> {
  if (socketIdentity(path) === undefined) return undefined;
  const { connect } = await import('node:net');
  return new Promise((resolveAnswer) => {
    const socket = connect(path);
    const lines = new LineSplitter();
    let answer: ReplyFrame | undefined;
    const unanswered = setTimeout(() => socket.destroy(), CONTROL_MS);
    socket.on('connect', () => socket.write(`${JSON.stringify(frame)}\n`));
    socket.on('data', (chunk: Buffer) => {
      const [first] = lines.push(chunk);
      if (first?.kind !== 'line' || answer !== undefined) return;
      try {
        answer = JSON.parse(first.bytes.toString('utf8')) as ReplyFrame;
      } catch {
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(unanswered);
      resolveAnswer(answer);
    });
  });
}

/** The status of `root`'s daemon; `other build` when one of another build answered (it stops now), undefined when none answers. */
export async function daemonStatus(root: string, cliFile: string): Promise<DaemonStatus | 'other build' | undefined> {
  const answer = await askDaemon(socketPath(root), { build: buildId(cliFile), control: 'status' });
  return answer?.t === 'status' ? answer.status : answer?.t === 'declined' ? 'other build' : undefined;
}

/** What `daemon stop` (or `clean`) did to a repository's daemon. */
export interface StopOutcome {
  readonly root: string;
  /** What it stopped: a daemon serving, one still starting, or none (none ran). */
  readonly was: 'serving' | 'starting' | 'none';
  readonly pid: number | null;
  /** Whether the daemon's process has exited (false: it did not within EXIT_WAIT_MS). */
  readonly exited: boolean;
}

/**
 * Stop `root`'s daemon, serving or still starting, and wait for its process to exit. One serving
 * is asked over its socket (it finishes the command it is answering); one still starting, or one
 * that does not answer, is sent SIGTERM once its pid is proven to be that daemon's process.
 */
export async function stopDaemon(root: string, cliFile: string, registry: DaemonRegistry | undefined): Promise<StopOutcome> {
  const path = socketPath(root);
  let entry = registry?.live(root);
  // A start claimed a moment ago: its process is about to be spawned.
  for (const deadline = Date.now() + CONTROL_MS; entry?.pid === null && Date.now() < deadline; entry = registry?.live(root)) await pause(25);
  const answer = await askDaemon(path, { build: buildId(cliFile), control: 'stop' });
  let was: StopOutcome['was'] = answer === undefined ? 'none' : 'serving';
  if (answer === undefined && entry?.pid != null) {
    if (isSameProcess(entry)) {
      signalStop(entry.pid);
      was = entry.state;
    } else {
      registry?.removeIf(root, entry); // that process is gone: its pid now names another
    }
  }
  // Stopped on purpose: the next daemon here waits for repeated use again.
  registry?.forgetUse(root);
  const pid = was === 'none' ? null : (entry?.pid ?? null);
  if (was === 'none') return { root, was, pid, exited: true };
  const exited = await waitExit(path, pid);
  if (exited && entry !== undefined) registry?.removeIf(root, entry); // killed before it could remove its entry itself
  return { root, was, pid, exited };
}

/** Wait (up to EXIT_WAIT_MS) for a stopping daemon's process to exit, or, its pid unknown, for its socket to go. */
async function waitExit(path: string, pid: number | null): Promise<boolean> {
  const gone = (): boolean => (pid === null ? socketIdentity(path) === undefined : !isRunning(pid));
  for (const deadline = Date.now() + EXIT_WAIT_MS; !gone(); ) {
    if (Date.now() > deadline) return false;
    await pause(25);
  }
  return true;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolvePause) => setTimeout(resolvePause, ms));
}

/**
 * Start a daemon for `root` in the background and wait until it answers. Its output goes to
 * `.repodex/daemon.log`; if it exits before answering, the log's end says why.
 */
export async function startDaemon(root: string, cliFile: string, launcher: string, idleMinutes: number): Promise<DaemonStatus> {
  const path = socketPath(root);
  requireSocketPathFits(path);
  const registry = DaemonRegistry.open();
  daemonLimits(); // a limit set wrong is told here, where a person reads it
  const running = await daemonStatus(root, cliFile);
  if (running !== undefined && running !== 'other build') throw new RepodexError('BAD_REQUEST', `a daemon already serves ${root} (pid ${running.pid}): repodex daemon stop, then start`, { selfContained: true });
  if (running === 'other build') await waitGone(path);
  mkdirSync(join(root, DATA_DIR_NAME), { recursive: true });
  const claim = registry.claim(root, path, 'daemon start');
  if (claim === undefined) {
    const other = registry.live(root);
    throw new RepodexError('BAD_REQUEST', `a daemon is ${other?.state === 'serving' ? 'already serving' : 'starting for'} ${root}${other?.pid ? ` (pid ${other.pid})` : ''}: repodex daemon status`, { selfContained: true });
  }
  const logPath = join(root, DATA_DIR_NAME, LOG_NAME);
  let exited: string | undefined;
  let child: ReturnType<typeof spawn>;
  try {
    child = spawnDaemon(root, launcher, idleMinutes, 'daemon start');
  } catch (error) {
    registry.removeIf(root, claim);
    throw error;
  }
  if (child.pid !== undefined) registry.started(root, child.pid);
  child.on('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  child.on('error', (error) => (exited = errorMessage(error)));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const status = await daemonStatus(root, cliFile);
    if (status !== undefined && status !== 'other build') return status;
    if (exited !== undefined) break;
    await pause(50);
  }
  const told = readFileSync(logPath, 'utf8').trim().split('\n').slice(-3).join('\n');
  throw new RepodexError('INTERNAL', `the daemon did not start${exited ? ` (${exited})` : ' within 30 s'}${told ? `: ${told}` : ''} (log: ${logPath})`, { selfContained: true });
}

/** The launcher (bin/repodex.js) of the built CLI, which a daemon is started with. */
export function launcherFile(): string {
  return fileURLToPath(new URL('../bin/repodex.js', import.meta.url));
}

/**
 * Start `repodex daemon run` for `root` as a process of its own, detached from this one, logging
 * to `.repodex/daemon.log` (afresh for `daemon start`, appended for a command), which first says
 * who started it: a line for every start, whether the daemon then serves or not.
 */
function spawnDaemon(root: string, launcher: string, idleMinutes: number, startedBy: Exclude<StartedBy, 'daemon run'>): ReturnType<typeof spawn> {
  const log = openSync(join(root, DATA_DIR_NAME, LOG_NAME), startedBy === 'daemon start' ? 'w' : 'a');
  try {
    const who = startedBy === 'command' ? `the second command in this repository within ${REPEATED_USE_MS / 60_000} minutes` : '`repodex daemon start`';
    writeSync(log, `${new Date().toISOString()} repodex daemon: starting for ${root}, asked by ${who} (pid ${process.pid})\n`);
    const child = spawn(process.execPath, [launcher, 'daemon', 'run', '--root', root, '--idle-minutes', String(idleMinutes)], { detached: true, stdio: ['ignore', 'ignore', log], env: { ...process.env } });
    child.unref();
    return child;
  } finally {
    closeSync(log);
  }
}

/**
 * After a one-shot command `argv` answered on its own (no daemon ran): start a daemon for its
 * repository in the background when this is its second such command within REPEATED_USE_MS, so
 * the next commands there answer from it (REPODEX_DAEMON, see daemon-protocol.ts). A `sync` does
 * not count: a script that builds an index and queries it once starts none. Does not wait for the
 * daemon. Returns the root it started one for, or undefined when it did not: daemons off or
 * manual, a command a daemon does not take, the first use, no index, a daemon already serving or
 * starting, another user's socket, the limit reached by daemons a person started, a path too
 * long for a socket, or Windows (no Unix sockets in `.repodex/`).
 */
export function autoStartDaemon(argv: readonly string[], launcher: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (process.platform === 'win32' || daemonMode(env) !== 'auto' || !daemonTakes(argv) || argv[0] === 'sync') return undefined;
  const root = rootOf(argv, process.cwd());
  if (root === undefined || !existsSync(join(root, DATA_DIR_NAME))) return undefined;
  const path = socketPath(root);
  if (!socketPathFits(path)) return undefined;
  const registry = DaemonRegistry.open(env);
  const limits = daemonLimits(env);
  // A daemon serving (that declined this call) or starting. A socket the registry knows nothing of
  // was most likely left by a daemon that died: the daemon started here replaces it, or, finding
  // that one answers, leaves it be. Never one of another user's, nor anything but a socket.
  if (registry.live(root) !== undefined) return undefined;
  const socket = lstatIfExists(path);
  if (socket !== undefined && (!socket.isSocket() || (process.getuid !== undefined && socket.uid !== process.getuid()))) return undefined;
  if (!registry.usedAgain(root)) return undefined;
  const others = registry.all().filter((entry) => entry.state === 'serving');
  if (others.length >= limits.maxDaemons && !others.some((entry) => entry.started_by === 'command')) return undefined;
  const claim = registry.claim(root, path, 'command');
  if (claim === undefined) return undefined;
  try {
    const child = spawnDaemon(root, launcher, DEFAULT_IDLE_MINUTES, 'command');
    child.on('error', () => undefined);
    if (child.pid !== undefined) registry.started(root, child.pid);
  } catch {
    registry.removeIf(root, claim); // `.repodex/` read-only, or no process to be had: commands run on their own
    return undefined;
  }
  return root;
}

/** The note a person at a terminal gets when a command started a daemon (agents and scripts get none). */
export function autoStartNote(root: string): string {
  return `repodex: started a daemon that keeps ${root}'s index loaded, so the next commands there answer faster; it stops after ${DEFAULT_IDLE_MINUTES} idle minutes, or sooner to make room for another (repodex daemon status lists yours; repodex daemon stop; ${DAEMON_ENV}=0 starts none)\n`;
}

/** Wait (up to 5 s) for a stopping daemon to remove its socket. */
export async function waitGone(path: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (socketIdentity(path) !== undefined && Date.now() < deadline) await pause(25);
}
