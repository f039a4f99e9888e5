import { RepodexError } from '../../core/errors.js';
import { discoverRoot } from '../../core/paths.js';
import type { CliIo } from './main.js';
import { DEFAULT_IDLE_MINUTES, type RunCli, type StopOutcome, daemonStatus, launcherFile, runDaemon, startDaemon, stopDaemon } from './daemon.js';
import { DAEMON_MAX_ENV, DAEMON_MEMORY_ENV, DaemonRegistry, daemonLimits, residentBytes } from './daemon-registry.js';
import { type FlagValues, boundedInt } from './flags.js';

/** `repodex daemon start|stop|status|run`. */
export async function runDaemonCommand(positionals: readonly string[], values: FlagValues, root: string | undefined, io: CliIo, json: boolean, cli: { readonly runCli: RunCli; readonly cliFile: string }): Promise<number> {
  const [action, ...extra] = positionals;
  if (action === undefined || !['start', 'stop', 'status', 'run'].includes(action) || extra.length > 0) {
    throw new RepodexError('BAD_REQUEST', `daemon takes one of start, stop, status or run${action === undefined ? '' : `, not ${JSON.stringify([action, ...extra].join(' '))}`}: repodex daemon start`);
  }
  for (const flag of ['store', 'indexing']) {
    if (values[flag] !== undefined) throw new RepodexError('BAD_REQUEST', `a daemon takes no --${flag}: it serves the repository as its config and environment set it up, and a command given --${flag} runs in its own process`);
  }
  const all = values.all === true;
  if (all && action !== 'stop') throw new RepodexError('BAD_REQUEST', `--all goes with daemon stop (every daemon of yours); daemon status always lists them all`);
  if (all && root !== undefined) throw new RepodexError('BAD_REQUEST', 'daemon stop --all stops every daemon of yours: leave out --root, or leave out --all to stop one');
  const idleMinutes = boundedInt('--idle-minutes', values['idle-minutes'], 0, 7 * 24 * 60) ?? DEFAULT_IDLE_MINUTES;
  // The built CLI identifies the build a daemon runs (see daemon-protocol.ts); the launcher starts one.
  const { cliFile, runCli } = cli;
  const out = (data: unknown, text: string): void => {
    io.stdout.write(`${json ? JSON.stringify(data) : text}\n`);
  };
  const idleText = (minutes: number): string => (minutes === 0 ? 'runs until stopped' : `stops after ${minutes} idle minutes`);
  switch (action) {
    case 'run':
      await runDaemon(discoverRoot(process.cwd(), root, true), { idleMinutes, cliFile, runCli, log: (line) => io.stderr.write(`${new Date().toISOString()} repodex daemon: ${line}\n`) });
      return 0;
    case 'start': {
      const status = await startDaemon(discoverRoot(process.cwd(), root, true), cliFile, launcherFile(), idleMinutes);
      out(status, `repodex: daemon started for ${status.root} (pid ${status.pid}): one-shot commands in this repository now use it; it ${idleText(status.idle_minutes)} (repodex daemon stop)`);
      return 0;
    }
    case 'stop': {
      if (all) {
        const registry = DaemonRegistry.open();
        const outcomes = await Promise.all(registry.all().map((entry) => stopDaemon(entry.root, cliFile, registry)));
        const stopped = outcomes.filter((outcome) => outcome.was !== 'none');
        const lines = stopped.length === 0 ? ['repodex: no daemon of yours runs'] : [`repodex: stopped ${stopped.length} daemon${stopped.length === 1 ? '' : 's'}:`, ...stopped.map((outcome) => `  ${stopLine(outcome)}`)];
        out({ stopped: stopped.map(stopJson) }, lines.join('\n'));
        return stopped.every((outcome) => outcome.exited) ? 0 : 1;
      }
      const outcome = await stopDaemon(discoverRoot(process.cwd(), root, true), cliFile, openRegistry());
      out(stopJson(outcome), `repodex: ${stopLine(outcome)}`);
      return outcome.exited ? 0 : 1;
    }
    default:
      return daemonStatusCommand(root, cliFile, json, io, idleText);
  }
}

/** `repodex daemon status`: this repository's daemon (exit 1 when none runs), then every daemon of this user. */
async function daemonStatusCommand(root: string | undefined, cliFile: string, json: boolean, io: CliIo, idleText: (minutes: number) => string): Promise<number> {
  const limits = daemonLimits();
  // Outside any repository the list alone: every daemon of this user.
  let here: string | undefined;
  try {
    here = discoverRoot(process.cwd(), root, true);
  } catch (error) {
    if (root !== undefined) throw error;
  }
  const answer = here === undefined ? undefined : await daemonStatus(here, cliFile);
  const running = answer !== undefined && answer !== 'other build' ? answer : undefined;
  const registry = DaemonRegistry.open(); // a folder it cannot use is told, with the fix
  const now = Date.now();
  const daemons = registry.all().map((entry) => {
    const rss = residentBytes(entry);
    const lastUse = Date.parse(entry.last_used ?? entry.since);
    return { root: entry.root, pid: entry.pid, state: entry.state, started_by: entry.started_by, since: entry.since, idle_seconds: entry.state === 'serving' ? Math.max(0, Math.round((now - lastUse) / 1000)) : null, calls: entry.calls ?? 0, rss_mb: rss === undefined ? null : Math.round(rss / (1024 * 1024)) };
  });
  if (json) {
    const mine = running ? { running: true, ...running } : { root: here ?? null, running: false };
    io.stdout.write(`${JSON.stringify({ ...mine, daemons, max_daemons: limits.maxDaemons, memory_budget_mb: limits.memoryBudgetMb })}\n`);
    return here !== undefined && !running ? 1 : 0;
  }
  const lines: string[] = [];
  if (running) {
    const minutes = Math.max(0, Math.round((now - Date.parse(running.started_at)) / 60_000));
    lines.push(`repodex: daemon for ${running.root}: pid ${running.pid}, running ${minutes} min, ${running.calls} command${running.calls === 1 ? '' : 's'} answered, ${running.watching ? 'file watcher on' : 'no file watcher (checks the tree by stats)'}; it ${idleText(running.idle_minutes)}`);
  } else if (here !== undefined) {
    const why = answer === 'other build' ? ' (one started by another build of repodex was running: it stops now)' : '';
    lines.push(`repodex: no daemon runs for ${here}${why}; start one: repodex daemon start`);
  }
  const total = daemons.reduce((sum, daemon) => sum + (daemon.rss_mb ?? 0), 0);
  const bounds = `at most ${limits.maxDaemons} and ${limits.memoryBudgetMb} MB together (${DAEMON_MAX_ENV}, ${DAEMON_MEMORY_ENV})`;
  lines.push(daemons.length === 0 ? `repodex: no daemon of yours runs; ${bounds}` : `repodex: ${daemons.length} daemon${daemons.length === 1 ? '' : 's'} of yours, ${total} MB; ${bounds}:`);
  const width = Math.max(0, ...daemons.map((daemon) => daemon.root.length));
  for (const daemon of daemons) {
    const facts =
      daemon.state === 'starting'
        ? ['starting', daemon.pid === null ? '' : `pid ${daemon.pid}`]
        : [`pid ${daemon.pid}`, daemon.rss_mb === null ? '' : `${daemon.rss_mb} MB`, `idle ${idleFor(daemon.idle_seconds ?? 0)}`, `${daemon.calls} command${daemon.calls === 1 ? '' : 's'}`];
    const by = daemon.started_by === 'command' ? 'started by a command' : `started with ${daemon.started_by}`;
    lines.push(`  ${daemon.root.padEnd(width)}  ${[...facts.filter((fact) => fact !== ''), by].join(', ')}${daemon.root === here ? ' (this repository)' : ''}`);
  }
  io.stdout.write(`${lines.join('\n')}\n`);
  return here !== undefined && !running ? 1 : 0;
}

/** This user's daemon registry, or undefined when its folder cannot be used (a daemon is then still found by its socket). */
export function openRegistry(): DaemonRegistry | undefined {
  try {
    return DaemonRegistry.open();
  } catch {
    return undefined;
  }
}

/** What `daemon stop` (or `clean`) did, in a line. */
export function stopLine(outcome: StopOutcome): string {
  const pid = outcome.pid === null ? '' : ` (pid ${outcome.pid})`;
  if (outcome.was === 'none') return `no daemon runs for ${outcome.root}`;
  if (!outcome.exited) return `asked the daemon for ${outcome.root}${pid} to stop, but it still runs after 30 s${outcome.pid === null ? '' : `: kill ${outcome.pid}`}`;
  return outcome.was === 'starting' ? `stopped the daemon for ${outcome.root}${pid}, which was still starting` : `stopped the daemon for ${outcome.root}${pid}`;
}

function stopJson(outcome: StopOutcome): { root: string; stopped: boolean; was: StopOutcome['was']; pid: number | null } {
  return { root: outcome.root, stopped: outcome.was !== 'none' && outcome.exited, was: outcome.was, pid: outcome.pid };
}

function idleFor(seconds: number): string {
  return seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${Math.floor(seconds / 60)} min` : `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

