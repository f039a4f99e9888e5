// What a one-shot command and a repository's daemon say to each other (see daemon.ts).
// Kept free of the engine: the client side loads this and node's own modules only.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR_NAME } from '../../core/paths.js';

/** The socket of a repository's daemon, in its `.repodex/` folder (only its owner may connect). */
export const SOCKET_NAME = 'daemon.sock';

/** Where the daemon of `root` listens. */
export function socketPath(root: string): string {
  return join(root, DATA_DIR_NAME, SOCKET_NAME);
}

/** Commands a daemon runs for a one-shot CLI call; every other command runs in its own process. */
export const DAEMON_COMMANDS: ReadonlySet<string> = new Set(['status', 'sync', 'search', 'fetch', 'open', 'outline', 'files', 'bundle']);

/**
 * Flags that take a command elsewhere than the repository's own index (a team server, another
 * store) or only print help: such a call runs in its own process.
 */
export const LOCAL_FLAGS: readonly string[] = ['--store', '--repo', '--server', '--token-file', '--help', '-h'];

/** Whether a daemon runs `argv` (a command of DAEMON_COMMANDS without LOCAL_FLAGS): the client asks before calling, the daemon again before running. */
export function daemonTakes(argv: unknown): argv is string[] {
  if (!Array.isArray(argv) || !argv.every((arg) => typeof arg === 'string')) return false;
  const [name, ...rest] = argv as string[];
  const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  return name !== undefined && DAEMON_COMMANDS.has(name) && !flags.some((arg) => LOCAL_FLAGS.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
}

/**
 * Variables that change what a command does (which store, which ranking, automatic indexing,
 * which git config and ignore files apply): a call runs in the daemon only when its
 * values of these are the daemon's own. Presentation variables are passed per call.
 */
export function behaviourEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    // REPODEX_DAEMON and its limits (REPODEX_DAEMON_MAX, …) say how daemons run, not what a command answers.
    if (value === undefined || name === DAEMON_ENV || name.startsWith(`${DAEMON_ENV}_`)) continue;
    if (name.startsWith('REPODEX_') || name.startsWith('GIT_') || name === 'HOME' || name === 'XDG_CONFIG_HOME') kept[name] = value;
  }
  return kept;
}

/** Variables that only change how output looks (colours): set per call while it runs. */
export const PRESENTATION_ENV: readonly string[] = ['NO_COLOR', 'TERM'];

/**
 * Whether one-shot commands use a repository's daemon: unset (or `auto`), a command uses the
 * running one and, when none runs, starts one after it answers; `manual`, only one started with
 * `repodex daemon start` is used; `0` (or `off`), every command runs in its own process.
 */
export const DAEMON_ENV = 'REPODEX_DAEMON';

export type DaemonMode = 'auto' | 'manual' | 'off';

/** The mode `REPODEX_DAEMON` sets (see DAEMON_ENV); a value it does not know is the default. */
export function daemonMode(env: NodeJS.ProcessEnv): DaemonMode {
  const value = env[DAEMON_ENV]?.trim().toLowerCase();
  if (value === '0' || value === 'off' || value === 'false' || value === 'no') return 'off';
  return value === 'manual' ? 'manual' : 'auto';
}

/**
 * Which build of repodex a process runs, as the built CLI file's size and modification time: a
 * daemon started before an upgrade or a rebuild declines calls from the new build
 * (and stops), so no answer ever comes from older code than the command's own.
 */
export function buildId(cliFile: string): string {
  const stat = statSync(cliFile);
  return `${stat.size}:${stat.mtimeMs}`;
}

/** One call: everything the daemon needs to run the command as the client's process would. */
export interface CallFrame {
  readonly build: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly presentation: Record<string, string | undefined>;
  readonly stdout: { readonly isTTY: boolean; readonly columns: number | undefined };
  readonly stderr: { readonly isTTY: boolean; readonly columns: number | undefined };
}

/**
 * A control request: `status` and `stop` (`repodex daemon status|stop`), and `leave`, from a
 * daemon starting with the user's daemons at their limit: stop unless answering a command (`why`
 * goes to the log).
 */
export interface ControlFrame {
  readonly build: string;
  readonly control: 'stop' | 'status' | 'leave';
  readonly why?: string;
}

/** What the daemon sends back: that it took the call, output as it is written, then the exit code; or why it will not run the call. */
export type ReplyFrame =
  | { readonly t: 'taken' }
  | { readonly t: 'out'; readonly d: string }
  | { readonly t: 'err'; readonly d: string }
  | { readonly t: 'exit'; readonly code: number }
  | { readonly t: 'declined'; readonly why: string }
  | { readonly t: 'status'; readonly status: DaemonStatus };

/** What `repodex daemon status` shows. */
export interface DaemonStatus {
  readonly root: string;
  readonly pid: number;
  readonly started_at: string;
  readonly calls: number;
  readonly idle_minutes: number;
  readonly watching: boolean;
  readonly version: string;
}
