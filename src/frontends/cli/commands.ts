import { TOOL_VERSION } from '../../core/version.js';
import { LIMITS, LIMIT_NAMES } from '../../core/limits.js';
import { OPS, type Op, choicesOf, cliField, flagOf, kindOf, opsOn, requestFields, serves } from '../../protocol/index.js';
import { DEFAULT_MAX_DAEMONS } from './daemon-registry.js';
import { PRESENTERS } from './op-commands.js';

/**
 * The CLI's commands and their help. An op's command (its usage line, its flags, their help) is
 * generated from the op table (protocol/ops.ts) and the CLI's presenter of it (op-commands.ts);
 * the commands that are no op (watch, serve, repo, index, db, daemon) are written out here.
 */

/** A flag as node's argument parser takes it. */
export type OptionSpec = { readonly type: 'string' | 'boolean'; readonly short?: string };

/** Options of the commands that can run on a team server (`--repo ID`). */
export const REMOTE_OPTIONS = { repo: { type: 'string' }, server: { type: 'string' }, 'token-file': { type: 'string' } } as const;

/** Options every command takes. */
export const GLOBAL_OPTIONS = {
  root: { type: 'string' },
  store: { type: 'string' },
  json: { type: 'boolean' },
  indexing: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** One command: its help and its options. */
export interface CommandSpec {
  readonly summary: string;
  readonly usage: string;
  readonly details: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
}

/** Lines of at most `width` characters, continuation lines indented as the first line's text after its label. */
function wrapped(text: string, width = 110, indent = 10): string[] {
  const lead = /^ */.exec(text)![0];
  const lines: string[] = [];
  let line = lead;
  for (const word of text.slice(lead.length).split(' ')) {
    if (line.trim() !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = ' '.repeat(indent);
    }
    line = line.trim() === '' ? `${line}${word}` : `${line} ${word}`;
  }
  return [...lines, line];
}

/** The commands that are no op. */
const OTHER_COMMANDS: Readonly<Record<string, CommandSpec>> = {
  watch: {
    summary: 'keep the index fresh while files change (until Ctrl-C)',
    usage: 'repodex watch [--debounce-ms N]',
    details: [
      'Syncs once, then re-indexes the changed files whenever files have been quiet for the debounce period',
      '(a burst of changes, such as a branch checkout, becomes one sync). One line per sync; --json prints',
      'each sync summary as a JSON line. Ignored and skipped paths never trigger a sync; symlinks are not followed.',
      '  --debounce-ms N   quiet period before re-indexing a burst of changes; a save or two waits a tenth of it\n                    (default: config watch.debounce_ms, 500)',
    ].join('\n'),
    options: { 'debounce-ms': { type: 'string' } },
  },
  serve: {
    summary: 'serve agents and people: MCP (--mcp) or JSONL (--stdio) on stdin/stdout, or a team server over HTTP (--http)',
    usage: 'repodex serve --mcp|--stdio [--watch] [--debounce-ms N] [--tool-names dotted|underscore] [limit flags]\n       repodex serve --http [ROOT…] [--port 7800] [--host 127.0.0.1] [--store URL] [--token-file F] [server flags]',
    details: [
      ...wrapped(`--mcp     an MCP server: tools ${opsOn('mcp').map((op) => OPS[op].mcp!.tool).join(', ')} (AGENTS.md: client set-up).`),
      ...wrapped(`--stdio   the JSONL protocol: one JSON request per line in, one response per line out, in order. Ops: ${opsOn('jsonl').join(', ')}.`),
      'A read on a stale index syncs first (as the CLI does), in a worker thread; a watcher notices changes.',
      '  --watch                re-index changes in the background as they happen; requests meanwhile answer',
      '                         from the previous index with a warning instead of waiting',
      '  --debounce-ms N        quiet period before a background re-index of a burst of changes; a save or two\n                         waits a tenth of it (default 500)',
      '  --tool-names N         dotted (repo.search, default) or underscore (repo_search) for clients that reject dots',
      '',
      '--http    a team server for many repositories: a JSON API (GET /openapi.json describes it), MCP over',
      '          HTTP at /mcp?repo_id=ID, and a web page at /. Each ROOT given is registered (as `repodex repo',
      '          add ROOT` would). Repositories stay registered across restarts: on the embedded store in',
      '          DIR/repos.json, on PostgreSQL in the database.',
      '  --port N               port (default 7800; 0 picks a free one)',
      '  --host H               address to listen on (default 127.0.0.1); any other needs --token-file',
      '  --token-file F         a file holding the bearer token every request must send (Authorization: Bearer …).',
      '                         Without it the server makes one, DIR/token (readable by you only; kept across',
      '                         restarts), and prints the page\'s address with it; repodex repo and --repo find it',
      '  --no-token             ask for no token: trusts every user and process on this machine (127.0.0.1 only)',
      '  --data-dir DIR         the server\'s folder: its token, its registry (embedded store) and its own audit log',
      '                         (default $XDG_STATE_HOME/repodex/server, or ~/.local/state/repodex/server)',
      '  --allow-roots D,D      only repositories inside these folders may be registered',
      '  --sync-threads N       threads re-indexing repositories, shared by all of them (default 1)',
      '  --answer-threads N     threads answering searches, fetches and outlines (default: cores - 1, 1 to 4;',
      '                         0: the thread talking to clients answers them too)',
      '  --debounce-ms N        quiet period before a watched repository re-indexes a burst of changes; a save\n                         or two waits a tenth of it (default: its config, 500)',
      '  --rate-limit N         requests a minute per client (default 6000; 0: no limit)',
      '  --max-body-bytes N     largest request body (default 1048576)',
      '  --request-timeout-ms N longest a request waits for its answer (default 30000; index runs 10 minutes)',
      '  --cors-origin URL      let pages of this origin call the API (off by default)',
      'Limits (default < .repodex/config.json limits.* < these flags):',
      ...LIMIT_NAMES.map((limit) => `  ${`${LIMITS[limit].flag} N`.padEnd(37)}${LIMITS[limit].min}–${LIMITS[limit].max}, default ${LIMITS[limit].default}`),
    ].join('\n'),
    options: {
      stdio: { type: 'boolean' },
      mcp: { type: 'boolean' },
      http: { type: 'boolean' },
      watch: { type: 'boolean' },
      'debounce-ms': { type: 'string' },
      'tool-names': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'token-file': { type: 'string' },
      'no-token': { type: 'boolean' },
      'data-dir': { type: 'string' },
      'allow-roots': { type: 'string' },
      'sync-threads': { type: 'string' },
      'answer-threads': { type: 'string' },
      'rate-limit': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'request-timeout-ms': { type: 'string' },
      'cors-origin': { type: 'string' },
      ...Object.fromEntries(LIMIT_NAMES.map((limit) => [LIMITS[limit].flag.slice(2), { type: 'string' as const }])),
    },
  },
  repo: {
    summary: 'the repositories of a team server: repo add PATH | list | remove ID | watch ID | unwatch ID | status ID',
    usage: 'repodex repo add PATH [--name N] | list | remove ID | watch ID | unwatch ID | status ID  [--server URL]',
    details: [
      'Talks to a team server (repodex serve --http): --server URL, else REPODEX_SERVER, else http://127.0.0.1:7800.',
      'A bearer token comes from --token-file F, else REPODEX_TOKEN, else (a server on this machine run by you)',
      'the token a server keeps in the default --data-dir. ID is a repository id or its name.',
      '  add PATH        register the repository at PATH (as the server sees it: the server must be able to read it)',
      '  list            every repository, with its state (ready, indexing done/total, stale, pending)',
      '  remove ID       stop serving it (its index stays)',
      '  watch ID        re-index it as files change (kept across server restarts); unwatch ID stops that',
      '  status ID       its index status: state, indexed commit vs HEAD, files, chunks, vectors, progress',
      'Other commands run on a server with --repo ID: repodex search --repo app "retry logic", repodex sync --repo app.',
    ].join('\n'),
    options: { ...REMOTE_OPTIONS, name: { type: 'string' } },
  },
  index: {
    summary: 'other names: index build|query|status|clean|verify (= sync, search --mode hybrid, status, clean, verify)',
    usage: 'repodex index build [--force] [--embeddings P] | query "TEXT" [-k N] | status | clean | verify',
    details: [
      '  index build    = repodex sync --embeddings on (lexical index, then vectors; turns the builtin embedder',
      '                   on when embeddings are off)',
      '  index query    = repodex search --mode hybrid (-k N is --top-k N; --show-snippets is accepted: snippets are always shown)',
      '  index status   = repodex status',
      '  index clean    = repodex clean',
      '  index verify   = repodex verify',
    ].join('\n'),
    options: {},
  },
  db: {
    summary: 'set up a PostgreSQL store for scale-out: db distribute --store URL',
    usage: 'repodex db distribute --store postgres://user@host:5432/db',
    details: [
      'On a Citus coordinator, spread repodex\'s tables over the worker nodes: every table is',
      'distributed by repository (one repository\'s queries go to one node), the repository list',
      'is copied to every node. Safe to run again, and before or after the first sync. On plain',
      'PostgreSQL it changes nothing and says so.',
    ].join('\n'),
    options: {},
  },
  daemon: {
    summary: "keep this repository's index loaded in the background, so one-shot commands answer at once",
    usage: 'repodex daemon start|stop|status|run [--idle-minutes N] | daemon stop --all',
    details: [
      'A daemon is a background process for one repository. While it runs, status, sync, search, fetch,',
      'open, outline, files and bundle, run here or in any folder of the repository, are answered by it: the',
      'same output and exit code, without loading the engine and the index each time, and with a file',
      'watcher instead of a walk of the tree to prove the index fresh.',
      'The second of those commands (sync aside) to run in its own process in a repository within 10 minutes',
      'starts a daemon after it answers, so the next ones are quick (a person at a terminal is told); one that',
      'no command uses stops after 5 idle minutes. A script that passes through a repository once starts none.',
      'REPODEX_DAEMON=manual uses only a daemon started with `daemon start`; REPODEX_DAEMON=0 runs every',
      'command in its own process.',
      `At most ${DEFAULT_MAX_DAEMONS} daemons of yours run at once (REPODEX_DAEMON_MAX), using at most 1 GB of memory together,`,
      'or an eighth of the memory where that is less (REPODEX_DAEMON_MEMORY_MB, in MB): a daemon starting beyond',
      'either asks the least recently used one a command started to stop, never one answering a command.',
      'Daemons started with `daemon start` or `daemon run` count, but are never stopped to make room.',
      'start        start one now, and return once it answers.',
      'stop         stop it, serving or still starting (it also stops after --idle-minutes without a command,',
      '             30 by default; 0: never).',
      'stop --all   stop every daemon of yours (after a script or an evaluation run).',
      'status       this repository\'s daemon (exit 1: none runs), then every daemon of yours: memory, idle time.',
      'run          the same in the foreground, logging to stderr (for a service manager).',
      'A command runs in its own process when no daemon runs, with --store, --repo or --server, when its',
      'REPODEX_*, GIT_*, HOME or XDG_CONFIG_HOME differ from the daemon\'s, and while the daemon runs a sync.',
      'A daemon stops when another build of repodex calls it (after an upgrade), when its socket is removed,',
      'and on `repodex clean`. Its socket is .repodex/daemon.sock, usable by this user only; its log',
      '.repodex/daemon.log. The list of your daemons is kept in $XDG_RUNTIME_DIR/repodex (else',
      '~/.local/state/repodex/daemons; REPODEX_DAEMON_DIR sets another folder).',
    ].join('\n'),
    options: { 'idle-minutes': { type: 'string' }, all: { type: 'boolean' } },
  },
};

/** Help lines of flags: each flag and its value, then its help, continuation lines under the first. */
function flagLines(flags: readonly { readonly label: string; readonly help: string }[]): string[] {
  const width = Math.max(0, ...flags.map((flag) => flag.label.length)) + 3;
  return flags.flatMap(({ label, help }) => help.split('\n').map((line, i) => `  ${(i === 0 ? label : '').padEnd(width)}${line}`));
}

/** The command of an op: usage, options and help from the op table and the CLI's presenter of it. */
function opCommand(op: Op): CommandSpec {
  const cli = OPS[op].cli;
  const options: Record<string, OptionSpec> = serves('http', op) ? { ...REMOTE_OPTIONS } : {};
  const usage: string[] = [`repodex ${op}`];
  const flags: { label: string; help: string }[] = [];
  for (const field of requestFields(op)) {
    const spec = cliField(op, field);
    const flag = flagOf(op, field);
    const boolean = kindOf(op, field) === 'boolean';
    const choices = choicesOf(op, field);
    const shown = choices !== undefined && choices.length <= 5 ? choices.join('|') : (spec.value ?? 'X');
    if (spec.arguments !== undefined) usage.push(spec.argument ?? spec.value ?? field.toUpperCase());
    if (flag === undefined) continue;
    options[flag.slice(2)] = { type: boolean ? 'boolean' : 'string' };
    if (spec.arguments === undefined) usage.push(`[${flag}${boolean ? '' : ` ${shown}`}]`);
    flags.push({ label: `${flag}${boolean ? '' : ` ${spec.value ?? 'X'}`}`, help: spec.help ?? '' });
  }
  for (const [name, option] of Object.entries(PRESENTERS[op].options ?? {})) {
    options[name] = { type: option.type };
    usage.push(`[--${name}${option.usage ? ` ${option.usage}` : ''}]`);
    flags.push({ label: `--${name}${option.value ? ` ${option.value}` : ''}`, help: option.help });
  }
  const details = [...(cli.about ? [cli.about] : []), ...flagLines(flags)].join('\n');
  return { summary: cli.summary, usage: usage.join(' '), details, options };
}

/** The commands, in the order help lists them: the ops' (clean last), then the others. */
export const COMMAND_NAMES: readonly string[] = [...(Object.keys(OPS) as Op[]).filter((op) => op !== 'clean'), ...Object.keys(OTHER_COMMANDS), 'clean'];

/** A command's spec, or undefined for a name that is no command. */
export function commandSpec(name: string): CommandSpec | undefined {
  if (Object.hasOwn(OPS, name)) return opCommand(name as Op);
  return Object.hasOwn(OTHER_COMMANDS, name) ? OTHER_COMMANDS[name] : undefined;
}

/** `repodex --help`. */
export function mainHelp(): string {
  const width = Math.max(...COMMAND_NAMES.map((name) => name.length));
  return [
    `repodex ${TOOL_VERSION} — a local code index and retrieval engine for AI coding agents`,
    '',
    'usage: repodex <command> [options]',
    '',
    'commands:',
    ...COMMAND_NAMES.map((name) => `  ${name.padEnd(width)}  ${commandSpec(name)!.summary}`),
    '',
    'options for every command:',
    '  --root DIR   the repository (default: found from the current folder upwards)',
    '  --store URL  where the index lives: fs (.repodex/ in the repository, the default) or a',
    '               PostgreSQL URL such as postgres://user@host:5432/db (also REPODEX_STORE, or',
    '               `store` in .repodex/config.json)',
    '  --json       print the result as JSON (the same object the JSONL protocol returns)',
    '  --indexing=off  never build or refresh the index automatically (as REPODEX_INDEXING=0)',
    '  -h, --help   help for a command',
    ...wrapped(`  --repo ID    run the command on a team server (${opsOn('http').join(', ')}): --server URL or REPODEX_SERVER, default http://127.0.0.1:7800`, 100, 15),
    '',
    'quick start: repodex search "where is the config loaded"',
  ].join('\n');
}

/** `repodex <command> --help`. */
export function commandHelp(spec: CommandSpec): string {
  return [`${spec.usage}`, '', spec.summary, '', spec.details, '', 'also: --root DIR, --store URL, --json, --indexing=off, --help'].join('\n');
}
