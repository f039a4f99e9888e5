import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { type ComposeOptions, createEngine } from '../../compose.js';
import { RepodexError, errorMessage, isErrnoException, isRepodexError } from '../../core/errors.js';
import { normalizeRelativePath } from '../../safety/path-guard.js';
import {
  type CallError,
  type Engine,
  type FieldOf,
  type HandleOptions,
  type Op,
  type RequestOf,
  type ResponseOf,
  accept,
  call,
  cliField,
  flagOf,
  kindOf,
  refuseCall,
  requestFields,
} from '../../protocol/index.js';
import { stopDaemon } from './daemon.js';
import { openRegistry, stopLine } from './daemon-command.js';
import { reportFailure } from './failure.js';
import { type FlagValues, indexingFlag, toInt } from './flags.js';
import { humanSafe, printAudit, printBundle, printClean, printFetch, printFiles, printInit, printOpen, printOutline, printSearch, printStatus, printSyncSummary, printVerify, shellWord } from './printers.js';
import type { ProgressBar } from './progress.js';
import { DEFAULT_SERVER, ServerClient, runRemote } from './remote.js';
import { type Style, styleFor } from './style.js';

/**
 * The commands of the ops: each op's request is read from its flags and arguments as the op table
 * names them (protocol/ops.ts), goes through `accept` (parsed, refused in the flags' names, and
 * recorded in the audit log when refused) and `call` (or, with `--repo`, to a team server), and
 * its answer is printed by the op's presenter below, the one thing a new op adds here.
 */

/** A CLI option of a presenter's own (not a request field), with its help. */
export interface PresenterOption {
  readonly type: 'string' | 'boolean';
  /** What its value is called in `--help`. */
  readonly value?: string;
  /** What the usage line shows for the value (its choices). */
  readonly usage?: string;
  readonly help: string;
}

/** The words the command was given, as typed: hints and follow-up commands name a path the way it was typed. */
type Typed = readonly string[];

/** How the CLI shows one op's answer, and what it adds around the call. */
export interface Presenter<O extends Op> {
  /** The answer for people (`--json` prints the object itself). */
  readonly print: (data: ResponseOf<O>, style: Style, typed: Typed) => string;
  /** How a field is read from what was typed, where the CLI is more lenient than the protocol or resolves it from the current folder. */
  readonly read?: { readonly [F in FieldOf<O>]?: (text: string, root: string | undefined) => unknown };
  /** The answer of a local call adjusted for the terminal (a hint in the caller's frame) before it is printed. */
  readonly refine?: (data: ResponseOf<O>, root: string, typed: Typed) => ResponseOf<O>;
  /** The exit code of an answer that is no refusal (default 0). */
  readonly exit?: (data: ResponseOf<O>) => number;
  /** Options of the command's own. */
  readonly options?: Readonly<Record<string, PresenterOption>>;
  /** Whether its options ask for JSON (`--format json`), or undefined to leave it to `--json`. */
  readonly json?: (values: FlagValues) => boolean | undefined;
  /** Runs around the call (`clean` stops the repository's daemon first). */
  readonly around?: (root: string, context: { readonly stderr: NodeJS.WritableStream; readonly cliFile: string }, run: () => Promise<number>) => Promise<number>;
}

/** A path typed on the command line as a repository path: relative to the current folder (as git does), or absolute inside the root. */
export function cliPath(root: string, typed: string, cwd = process.cwd()): string {
  // Anything that is not a plain POSIX path (NUL, drive letters, UNC) goes to the guard as typed.
  if (typed.includes('\0') || /^[A-Za-z]:/.test(typed) || typed.startsWith('\\')) return typed;
  const rel = relative(root, resolve(cwd, typed)).split(sep).join('/');
  // Outside the root (or the root itself): the guard refuses the path as the user typed it.
  if (rel === '' || rel === '..' || rel.startsWith('../') || isAbsolute(rel)) return typed;
  return rel;
}

/**
 * A refused `open`/`outline` of a path typed in a subfolder, with a better hint when the typed path
 * names no file from here but does from the repository root (a root-relative path pasted into a
 * subfolder): "did you mean <root-relative path>?", with the command that works from this folder.
 */
export function withPathSuggestion<T extends { readonly path: string }>(report: T, root: string, typed: string, command: 'open' | 'outline', cwd = process.cwd()): T {
  if (!('error' in report) || (report as { blocked?: unknown }).blocked !== false) return report;
  const fromHere = resolve(cwd, typed);
  const fromRoot = normalizeRelativePath(typed);
  if (fromRoot === undefined || isAbsolute(typed) || existsSync(fromHere)) return report;
  const candidate = join(root, fromRoot);
  if (candidate === fromHere || !isFile(candidate)) return report;
  const hint = `did you mean ${fromRoot} (a path from the repository root)? Paths are relative to the current folder: from here, repodex ${command} ${shellWord(relative(cwd, candidate))}`;
  return { ...report, hint };
}

/** Whether a path names a regular file; any error (a file where a folder was expected, a name too long) means it does not. */
function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch (error) {
    if (isErrnoException(error)) return false;
    throw error;
  }
}

/** A path typed here, as the repository names it (on a server: as typed, from the repository's root). */
const repoPath = (text: string, root: string | undefined): string => (root === undefined ? text : cliPath(root, text));

/** The presenter of every op: a new op without one fails to compile. */
export const PRESENTERS: { readonly [O in Op]: Presenter<O> } = {
  init: { print: printInit },
  status: { print: printStatus },
  sync: { print: printSyncSummary },
  // A language as typed: `TypeScript` works as well as `typescript`.
  search: { print: printSearch, read: { lang: (text) => text.toLowerCase() } },
  fetch: { print: printFetch },
  open: {
    // Hints name the path as typed here: `repodex open fetch.ts --start 3` works from this folder.
    print: (report, style, typed) => printOpen(report, style, typed[0]),
    read: { path: repoPath },
    refine: (report, root, typed) => withPathSuggestion(report, root, typed[0]!, 'open'),
  },
  outline: { print: printOutline, read: { path: repoPath }, refine: (report, root, typed) => withPathSuggestion(report, root, typed[0]!, 'outline') },
  files: { print: printFiles },
  bundle: {
    print: printBundle,
    options: { format: { type: 'string', value: 'F', usage: 'md|json', help: 'md (default) or json (the same as --json)' } },
    json: (values) => {
      const format = values.format as string | undefined;
      if (format !== undefined && format !== 'md' && format !== 'json') throw new RepodexError('BAD_REQUEST', `--format must be md or json, got ${JSON.stringify(format)}`);
      return format === 'json' ? true : undefined;
    },
  },
  audit: { print: printAudit },
  verify: { print: printVerify, exit: (report) => (report.ok ? 0 : 1) },
  clean: {
    print: printClean,
    // The daemon goes first, serving or still starting: it holds the index's files open (their
    // space is not freed while it runs) and would answer from what is being removed.
    around: async (root, { stderr, cliFile }, run) => {
      const daemon = await stopDaemon(root, cliFile, openRegistry());
      const code = await run();
      if (daemon.was !== 'none') stderr.write(`repodex: ${stopLine(daemon)}\n`);
      return code;
    },
  },
};

/** What an op command is run with. */
export interface OpCommandContext {
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  /** The engine a command uses (a daemon's already loaded one); default: a new one. */
  readonly engineFor?: (options: ComposeOptions, command: string) => Engine;
  readonly values: FlagValues;
  readonly positionals: readonly string[];
  readonly json: boolean;
  readonly progress: ProgressBar | undefined;
  readonly signal: AbortSignal;
  /** The built CLI, which identifies the build a daemon runs (see daemon-protocol.ts). */
  readonly cliFile: string;
}

/** The outcome of one op, local (`call`) or on a server: the answer, split into what was served and refused by the op's refusal rule. */
interface Outcome<O extends Op> {
  readonly data: ResponseOf<O> | undefined;
  readonly served: ResponseOf<O> | undefined;
  readonly refused: ResponseOf<O> | undefined;
  readonly error: CallError | undefined;
  readonly warnings: readonly string[];
}

/** Failures already in the audit log (their command was refused by `accept` or `refuseCall`). */
const AUDITED = new WeakSet<object>();

/** The team server a client command talks to: --server, else REPODEX_SERVER, else the default address. */
export function serverUrl(values: FlagValues, env: NodeJS.ProcessEnv = process.env): string {
  return (values.server as string | undefined) ?? (env.REPODEX_SERVER || DEFAULT_SERVER);
}

/**
 * Run the command of `op`: on this repository's engine, or with `--repo ID` on a team server. A
 * refused read (a blocked or missing file, a chunk that is gone) exits 1 and, without --json, is
 * printed on stderr only: `repodex open x > out` never writes an error into `out`.
 */
export async function runOpCommand<O extends Op>(op: O, ctx: OpCommandContext): Promise<number> {
  const presenter = PRESENTERS[op] as Presenter<O>;
  const { values } = ctx;
  const json = presenter.json?.(values) ?? ctx.json;
  const root = values.root as string | undefined;
  const store = values.store as string | undefined;
  if (values.repo !== undefined) {
    if (root !== undefined || store !== undefined) throw new RepodexError('BAD_REQUEST', '--repo runs the command on a server, which has its own roots and store: leave out --root and --store');
    // Checked here, before the server is asked: a command refused here reached no repository, and is in no audit log.
    const request = takeRequest(op, ctx, undefined);
    const client = ServerClient.for(serverUrl(values), values['token-file'] as string | undefined);
    const outcome = await runRemote(client, op, String(values.repo), request);
    return render(op, outcome, ctx, json, undefined);
  }
  const engineOptions: ComposeOptions = { root, requireRepository: op !== 'init', store, autoIndex: indexingFlag(values.indexing as string | undefined), firstAnswer: op === 'search' };
  const local = ctx.engineFor ? ctx.engineFor(engineOptions, op) : createEngine(engineOptions);
  const request = takeRequest(op, ctx, local);
  const handleOptions: HandleOptions = { ...(json || !ctx.progress ? {} : { onEvent: ctx.progress.onEvent }), signal: ctx.signal };
  const run = async (): Promise<number> => render(op, await call(local, request, { ...handleOptions, frontend: 'cli' }), ctx, json, local);
  return presenter.around ? presenter.around(local.root, ctx, run) : run();
}

/**
 * The request of `op` from the command's flags and arguments, as the op table names them; a
 * command refused is recorded in the audit log of `local` (when it runs here) and throws.
 */
function takeRequest<O extends Op>(op: O, ctx: OpCommandContext, local: Engine | undefined): RequestOf<O> {
  const presenter = PRESENTERS[op] as Presenter<O>;
  const readers = (presenter.read ?? {}) as Readonly<Record<string, (text: string, root: string | undefined) => unknown>>;
  const fields: Record<string, unknown> = {};
  const typed: Record<string, unknown> = {};
  const refused = (error: RepodexError): RepodexError => {
    refuseCall(local, { frontend: 'cli' }, op, typed);
    AUDITED.add(error);
    return error;
  };
  for (const field of requestFields(op)) {
    const spec = cliField(op, field);
    const flag = flagOf(op, field);
    const kind = kindOf(op, field);
    const given = flag === undefined ? undefined : ctx.values[flag.slice(2)];
    let text: string | undefined = typeof given === 'string' ? given : undefined;
    if (spec.arguments === 'words') text ??= ctx.positionals.join(' ');
    else if (spec.arguments === 'one') text = ctx.positionals.length === 1 ? ctx.positionals[0] : undefined;
    else if (spec.arguments === 'list') text = [text ?? '', ...ctx.positionals].join(',');
    if (kind === 'boolean') {
      if (given === true) fields[field] = typed[field] = true;
      continue;
    }
    if (text !== undefined) typed[field] = text;
    const missing = spec.arguments === 'one' ? text === undefined : spec.arguments !== undefined && (text ?? '').replace(/,/g, '').trim() === '';
    if (missing) throw refused(new RepodexError('BAD_REQUEST', spec.missing ?? `${op} needs its ${field}`));
    if (text === undefined) continue;
    try {
      if (kind === 'integer') fields[field] = toInt(flag ?? field, text);
      else if (kind === 'integers') fields[field] = text.split(/[\s,]+/).filter(Boolean).map((id) => toInt(flag ?? field, id));
      else fields[field] = readers[field] ? readers[field](text, local?.root) : text;
    } catch (error) {
      throw isRepodexError(error) ? refused(error) : error;
    }
  }
  const taken = accept('cli', local, { frontend: 'cli' }, op, fields);
  if (!taken.ok) {
    const error = new RepodexError('BAD_REQUEST', taken.message);
    AUDITED.add(error);
    throw error;
  }
  return taken.request as RequestOf<O>;
}

/** Print an outcome as the command's output, and its exit code. */
function render<O extends Op>(op: O, outcome: Outcome<O>, ctx: OpCommandContext, json: boolean, local: Engine | undefined): number {
  const presenter = PRESENTERS[op] as Presenter<O>;
  ctx.progress?.clear();
  if (outcome.data === undefined) return reportFailure(outcome.error!.code, outcome.error!.message, json, ctx);
  const refine = (data: ResponseOf<O>): ResponseOf<O> => (local && presenter.refine ? presenter.refine(data, local.root, ctx.positionals) : data);
  const emit = (data: ResponseOf<O>): void => {
    ctx.stdout.write(`${json ? JSON.stringify(data) : presenter.print(humanSafe(data), styleFor(ctx.stdout), ctx.positionals)}\n`);
  };
  const data = refine(outcome.data);
  // A sync the answer needed first is told on stderr.
  const synced = (data as { synced?: ResponseOf<'sync'> }).synced;
  if (synced && !json) ctx.stderr.write(`${printSyncSummary(humanSafe(synced))}\n`);
  if (outcome.refused !== undefined && !json) {
    if (outcome.served !== undefined) emit(outcome.served);
    ctx.stderr.write(`${presenter.print(humanSafe(refine(outcome.refused)), styleFor(ctx.stderr), ctx.positionals)}\n`);
    return 1;
  }
  emit(data);
  const own = (data as { warnings?: unknown }).warnings;
  if (!json && !Array.isArray(own)) for (const warning of outcome.warnings) ctx.stderr.write(`repodex: warning: ${warning}\n`);
  if (outcome.error) return 1;
  return presenter.exit?.(data) ?? 0;
}

/**
 * Record an op command refused before its flags could be read (an unknown flag, a value missing)
 * in the repository's audit log, as `accept` records the others; nothing when no repository is
 * found or the failure was recorded already.
 */
export function recordRefusedCommand(op: Op, argv: readonly string[], error: unknown, engineFor: OpCommandContext['engineFor']): void {
  if (typeof error !== 'object' || error === null || AUDITED.has(error)) return;
  try {
    const where = { root: { type: 'string' }, store: { type: 'string' }, repo: { type: 'string' } } as const;
    const { values, positionals } = parseArgs({ args: [...argv], options: where, strict: false, allowPositionals: true });
    const root = typeof values.root === 'string' ? values.root : undefined;
    const store = typeof values.store === 'string' ? values.store : undefined;
    if (values.repo !== undefined) return; // bound for a server: no repository here
    const options: ComposeOptions = { root, requireRepository: true, store };
    const engine = engineFor ? engineFor(options, op) : createEngine(options);
    const { root: _root, store: _store, json: _json, ...flags } = values;
    refuseCall(engine, { frontend: 'cli' }, op, { ...flags, ...(positionals.length > 0 ? { arguments: positionals.join(' ') } : {}), problem: errorMessage(error) });
  } catch (failure) {
    // No repository (or none that opens): the command reached none, and no log records it.
    if (!isRepodexError(failure)) throw failure;
  }
}
