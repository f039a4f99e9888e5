// The one-shot side of `repodex daemon`: a command a repository's daemon can run is sent to it,
// and its output and exit code come back as if this process had run it. Loads node's own modules
// only (its own bundle, dist/daemon-client.js): without a daemon, a command pays one stat for it.
import { lstatSync } from 'node:fs';
import type { connect as connectSocket } from 'node:net';
import { resolve } from 'node:path';
import { DATA_DIR_NAME, findUp } from '../../core/paths.js';
import { LineSplitter } from '../lines.js';
import { type CallFrame, DAEMON_ENV, PRESENTATION_ENV, type ReplyFrame, behaviourEnv, buildId, daemonMode, daemonTakes, socketPath } from './daemon-protocol.js';

/**
 * Run `argv` in the repository's daemon, if one runs and takes it: resolves to the exit code,
 * or undefined when this process should run the command itself (no daemon, a command or flag a
 * daemon does not take, another build or environment, a daemon gone before it answered).
 */
export async function callDaemon(argv: readonly string[], cliFile: string): Promise<number | undefined> {
  if (daemonMode(process.env) === 'off') return undefined;
  if (!daemonTakes(argv)) return undefined;
  const root = rootOf(argv, process.cwd());
  if (root === undefined) return undefined;
  const path = socketPath(root);
  if (!ownSocket(path)) return undefined;
  let build: string;
  try {
    build = buildId(cliFile);
  } catch {
    return undefined;
  }
  const presentation: Record<string, string | undefined> = {};
  for (const variable of PRESENTATION_ENV) presentation[variable] = process.env[variable];
  const call: CallFrame = {
    build,
    argv,
    cwd: process.cwd(),
    env: behaviourEnv(process.env),
    presentation,
    stdout: { isTTY: process.stdout.isTTY === true, columns: process.stdout.columns },
    stderr: { isTTY: process.stderr.isTTY === true, columns: process.stderr.columns },
  };
  // The reader of our output went away (`repodex files | head -1`): stop quietly, as the CLI does.
  if (!process.stdout.listeners('error').includes(quietOnEpipe)) process.stdout.on('error', quietOnEpipe);
  const { connect } = await import('node:net'); // only with a daemon to call
  return exchange(connect, path, call);
}

/**
 * Whether `path` is a socket this user made: a call carries the command's arguments and its
 * REPODEX_* variables (an embeddings key among them), so a socket another user left in a shared
 * checkout's `.repodex/` is never called.
 */
function ownSocket(path: string): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  return stat !== undefined && stat.isSocket() && (process.getuid === undefined || stat.uid === process.getuid());
}

function quietOnEpipe(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
}

/** The root the command `argv` would use: `--root` as given, else the nearest folder upwards holding `.repodex/` (as the CLI finds it). */
export function rootOf(argv: readonly string[], cwd: string): string | undefined {
  const flags = argv.includes('--') ? argv.slice(1, argv.indexOf('--')) : argv.slice(1);
  for (let i = 0; i < flags.length; i++) {
    const arg = flags[i]!;
    if (arg === '--root') return flags[i + 1] === undefined ? undefined : resolve(cwd, flags[i + 1]!);
    if (arg.startsWith('--root=')) return resolve(cwd, arg.slice('--root='.length));
  }
  return findUp(resolve(cwd), DATA_DIR_NAME);
}

/**
 * How long a daemon may take to take a call (it says so at once when its process is running): one
 * that does not (stopped, or stuck) leaves the command to run on its own instead of waiting forever.
 */
const TAKE_MS = 3000;

/** Send the call and relay what comes back; undefined when nothing was written yet and this process should run it. */
function exchange(connect: typeof connectSocket, path: string, call: CallFrame): Promise<number | undefined> {
  return new Promise((resolveCall) => {
    const socket = connect(path);
    let wrote = false;
    let settled = false;
    const lines = new LineSplitter();
    const untaken = setTimeout(() => settle(undefined), TAKE_MS);
    const settle = (code: number | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(untaken);
      process.removeListener('SIGINT', interrupted);
      socket.destroy();
      resolveCall(code);
    };
    // Ctrl-C: closing the connection stops the command in the daemon (a sync stops at the next file, writing nothing).
    const interrupted = (): void => settle(130);
    process.once('SIGINT', interrupted);
    socket.on('connect', () => socket.write(`${JSON.stringify(call)}\n`));
    socket.on('data', (chunk: Buffer) => {
      for (const line of lines.push(chunk)) {
        if (line.kind !== 'line') continue;
        let frame: ReplyFrame;
        try {
          frame = JSON.parse(line.bytes.toString('utf8')) as ReplyFrame;
        } catch {
          continue;
        }
        clearTimeout(untaken); // any answer: the daemon has the call
        if (frame.t === 'out' || frame.t === 'err') {
          wrote = true;
          (frame.t === 'out' ? process.stdout : process.stderr).write(frame.d);
        } else if (frame.t === 'exit') {
          settle(frame.code);
        } else if (frame.t === 'declined') {
          settle(undefined);
        }
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (settled) return;
      if (!wrote) return settle(undefined);
      process.stderr.write(`repodex: the daemon stopped while answering; run the command again (${DAEMON_ENV}=0 runs it without the daemon)\n`);
      settle(2);
    });
  });
}
