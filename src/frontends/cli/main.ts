import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type ComposeOptions, distributeStore } from '../../compose.js';
import type { Engine } from '../../engine/engine.js';
import { RepodexError, isRepodexError } from '../../core/errors.js';
import { TOOL_VERSION } from '../../core/version.js';
import { OPS, type Op } from '../../protocol/index.js';
import { GLOBAL_OPTIONS, commandHelp, commandSpec, COMMAND_NAMES, mainHelp } from './commands.js';
import { runDaemonCommand } from './daemon-command.js';
import { isArgError, reportError } from './failure.js';
import { recordRefusedCommand, runOpCommand, serverUrl } from './op-commands.js';
import { humanSafe, printDistribute } from './printers.js';
import { progressBar } from './progress.js';
import { ServerClient, runRepoCommand } from './remote.js';
import { runServer } from './serve-command.js';

/** Output streams, injectable for tests. */
export interface CliIo {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  /** The engine a command uses (a daemon's already loaded one); default: a new one. */
  readonly engineFor?: (options: ComposeOptions, command: string) => Engine;
  /** Stops the command as Ctrl-C would (a daemon's client went away). */
  readonly signal?: AbortSignal;
}

/** `index build|query|status|clean|verify` (the names of the semantic-search plan) as the commands they stand for. */
function indexAlias(args: readonly string[]): string[] {
  const [sub = '', ...rest] = args;
  const routes: Record<string, string> = { build: 'sync', query: 'search', status: 'status', clean: 'clean', verify: 'verify' };
  const target = routes[sub];
  if (!target) throw new RepodexError('BAD_REQUEST', `index ${sub}: the index commands are ${Object.keys(routes).join(', ')} (see repodex index --help)`);
  const out = rest.flatMap((arg) => {
    if (target !== 'search') return [arg];
    if (arg === '--show-snippets') return [];
    if (arg === '-k') return ['--top-k'];
    if (arg.startsWith('-k=')) return [`--top-k=${arg.slice(3)}`];
    return [arg];
  });
  if (target === 'search' && !out.some((arg) => arg === '--mode' || arg.startsWith('--mode='))) out.push('--mode', 'hybrid');
  // Building the semantic index makes vectors: with embeddings off, it turns the builtin embedder on.
  if (target === 'sync' && !out.some((arg) => arg === '--embeddings' || arg.startsWith('--embeddings='))) out.push('--embeddings', 'on');
  return [target, ...out];
}

/** A clear error for a misspelt flag, naming the closest real one. */
function unknownOption(command: string, arg: string, known: readonly string[]): RepodexError {
  const flag = arg.slice(2).split('=')[0]!;
  const squash = (text: string): string => text.replace(/[-_]/g, '').toLowerCase();
  const near = known.find((option) => squash(option) === squash(flag) || squash(option).startsWith(squash(flag)));
  const hint = near ? `did you mean --${near}?` : `options: ${known.map((option) => `--${option}`).join(', ')}`;
  return new RepodexError('BAD_REQUEST', `unknown option --${flag} for ${command}; ${hint} (see repodex ${command} --help)`);
}

/** Run the CLI; resolves to the process exit code (0 ok, 1 user error, 2 internal error, 130 interrupted). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const out = (text: string): void => {
    io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    out(mainHelp());
    return 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    out(TOOL_VERSION);
    return 0;
  }
  if (name === 'index') {
    if (rest[0] === undefined || rest[0] === '--help' || rest[0] === '-h') {
      out(commandHelp(commandSpec('index')!));
      return rest[0] === undefined ? 1 : 0;
    }
    let routed: string[];
    try {
      routed = indexAlias(rest);
    } catch (error) {
      return reportError(error, rest.includes('--json'), io);
    }
    return runCli(routed, io);
  }
  const spec = commandSpec(name);
  if (!spec) {
    io.stderr.write(`repodex: unknown command ${JSON.stringify(name)}; commands: ${COMMAND_NAMES.join(', ')} (see repodex --help)\n`);
    return 1;
  }
  const op = Object.hasOwn(OPS, name) ? (name as Op) : undefined;
  let json = rest.includes('--json');
  const progress = progressBar(io.stderr);
  // Ctrl-C stops a running sync at the next file: nothing is committed, the lock is released.
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  io.signal?.addEventListener('abort', onSignal, { once: true });
  // The built CLI identifies the build a daemon runs (see daemon-protocol.ts).
  const cliFile = fileURLToPath(import.meta.url);
  try {
    const options = { ...GLOBAL_OPTIONS, ...spec.options };
    const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest; // after `--` everything is positional
    const unknown = flags.find((arg) => arg.startsWith('--') && !(arg.slice(2).split('=')[0]! in options));
    if (unknown !== undefined) throw unknownOption(name, unknown, Object.keys(options));
    const parsed = parseArgs({ args: [...rest], options, allowPositionals: true, strict: true });
    const values = parsed.values as Record<string, string | boolean | undefined>;
    const positionals = parsed.positionals;
    json = values.json === true;
    if (values.help) {
      out(commandHelp(spec));
      return 0;
    }
    const root = values.root as string | undefined;
    if (op !== undefined) return await runOpCommand(op, { ...io, values, positionals, json, progress, signal: interrupt.signal, cliFile });
    if (name === 'watch' || name === 'serve') return await runServer(name, values, root, io, interrupt.signal, json, positionals);
    if (name === 'daemon') return await runDaemonCommand(positionals, values, root, io, json, { runCli, cliFile });
    if (name === 'db') {
      if (positionals[0] !== 'distribute') {
        const asked = positionals[0] === undefined ? 'repodex db needs a subcommand' : `unknown db command ${JSON.stringify(positionals[0])}`;
        throw new RepodexError('BAD_REQUEST', `${asked}: use \`repodex db distribute --store URL\``, { selfContained: true });
      }
      const report = await distributeStore({ root, store: values.store as string | undefined });
      out(json ? JSON.stringify(report) : printDistribute(humanSafe(report)));
      return 0;
    }
    if (name === 'repo') {
      const client = ServerClient.for(serverUrl(values), values['token-file'] as string | undefined);
      const output = await runRepoCommand(client, positionals[0], positionals.slice(1), { name: values.name as string | undefined, json });
      if (output.stdout !== undefined) out(output.stdout);
      return output.code;
    }
    throw new RepodexError('INTERNAL', `command ${name} has no handler`);
  } catch (error) {
    progress?.clear();
    // An op's command refused before its request could be read is a call too: the audit log records it.
    if (op !== undefined && (isArgError(error) || (isRepodexError(error) && error.code === 'BAD_REQUEST'))) recordRefusedCommand(op, rest, error, io.engineFor);
    return reportError(error, json, io, `repodex ${name}`);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    io.signal?.removeEventListener('abort', onSignal);
  }
}
