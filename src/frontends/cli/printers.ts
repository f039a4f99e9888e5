import { bundleMarkdown } from '../../bundle/markdown.js';
import type { ResponseOf } from '../../protocol/index.js';
import { type Style, formatBytes, formatCount, formatDuration, formatNoun, formatRelative } from './style.js';

/** Human output of `init`. */
export function printInit(report: ResponseOf<'init'>): string {
  const lines = [`repodex initialized in ${report.root}`];
  for (const path of report.created) lines.push(`  created ${path}`);
  for (const path of report.existing) lines.push(`  kept    ${path} (already there)`);
  lines.push('next: `repodex sync` to build the index');
  return lines.join('\n');
}

const STATE_TEXT: Record<ResponseOf<'status'>['state'], string> = {
  ready: 'ready (clean)',
  pending: 'pending: no index yet',
  indexing: 'indexing (a sync is running)',
  stale: 'stale: run `repodex sync`',
};

/** Human output of `status`. */
export function printStatus(report: ResponseOf<'status'>, style: Style): string {
  // Damage beside a fresh index (the parse cache, the vectors, …) is never used, but is never hidden behind "clean" either.
  const stateText =
    report.state === 'ready' && report.damage.length > 0
      ? style.yellow('ready, but damaged (see below)')
      : report.state === 'ready'
        ? style.green(STATE_TEXT.ready)
        : style.yellow(STATE_TEXT[report.state]);
  const rows: [string, string][] = [['state', stateText]];
  if (report.sync_owner) rows.push(['sync', `running: pid ${report.sync_owner.pid} on ${report.sync_owner.host}, since ${report.sync_owner.started}`]);
  if (report.indexed) {
    rows.push(['last sync', `${report.last_sync ? formatRelative(report.last_sync) : '?'} (generation ${report.generation})`]);
    rows.push(['files', `${formatCount(report.files_indexed)} indexed, ${formatCount(report.files - report.files_indexed)} skipped`]);
    rows.push(['chunks', `${formatCount(report.chunks)} in ${formatNoun(report.segments, 'segment')}`]);
    const ratio = report.source_bytes > 0 ? ` (${(report.size_on_disk / report.source_bytes).toFixed(2)}× source)` : '';
    rows.push(['size', `${formatBytes(report.size_on_disk)} on disk for ${formatBytes(report.source_bytes)} of source${ratio}`]);
  }
  const parts = Object.entries(report.size_by_part).sort(([, a], [, b]) => b - a);
  if (parts.length > 0) rows.push(['by part', parts.map(([part, bytes]) => `${part} ${formatBytes(bytes)}`).join(', ')]);
  if (report.git) {
    const head = `${report.git.branch ?? 'detached'} @ ${report.git.head?.slice(0, 10) ?? '(no commits)'}`;
    const indexed = report.indexed ? `, indexed ${report.git.indexed_commit?.slice(0, 10) ?? '(none)'}` : '';
    rows.push(['git', head + indexed]);
  }
  if (!report.auto_index) rows.push(['indexing', 'manual (REPODEX_INDEXING=0 or auto_index: false): searches do not refresh the index']);
  const semantic = report.semantic;
  if (semantic) {
    // The vectors' panel: state, last indexed, model and dimension, vectors and files, size, analytics.
    const stateName = { ready: 'Ready', building: 'Building', stale: 'Stale', missing: 'Missing', off: 'Off' }[semantic.state];
    const colored = semantic.state === 'ready' ? style.green(stateName) : semantic.state === 'off' ? style.dim(stateName) : style.yellow(stateName);
    // Missing vectors with a known cause say that cause: a sync would not help (too few chunks, an embedder that cannot run).
    const why = semantic.state === 'missing' && semantic.problem ? semantic.problem : undefined;
    const hint = why ? `: ${why}` : semantic.state === 'missing' || semantic.state === 'stale' ? ' (run `repodex sync` to embed)' : semantic.state === 'off' ? ' (embeddings.provider: off)' : '';
    rows.push(['vectors', `${colored}${hint}`]);
    if (semantic.state !== 'off') {
      rows.push(['last embedded', semantic.last_indexed ? formatRelative(semantic.last_indexed) : 'never']);
      rows.push(['model', `${semantic.engine ?? '?'} ${semantic.model ?? ''}${semantic.dim ? ` (${semantic.dim}-D)` : ''}`]);
      rows.push(['coverage', `${formatCount(semantic.vectors)} of ${formatNoun(semantic.chunks, 'chunk')}, ${formatNoun(semantic.files, 'file')}, ${formatBytes(semantic.size_on_disk)} on disk`]);
      if (semantic.search) rows.push(['search', semantic.search === 'graph' ? 'nearest-neighbour graph (HNSW)' : 'exact scan of every vector']);
      if (semantic.problem && !why) rows.push(['embedder', style.red(semantic.problem)]);
    }
    const a = semantic.analytics;
    rows.push(['queries', a.queries === 0 ? 'none yet' : `${formatCount(a.queries)}, hit ratio ${Math.round((a.hit_ratio ?? 0) * 100)}% (${formatCount(a.misses)} without results), last ${a.last_query_ts ? formatRelative(a.last_query_ts) : '?'}`]);
  }
  const width = Math.max(...rows.map(([key]) => key.length));
  const lines = [`repodex status — ${report.root}`, ...rows.map(([key, value]) => `  ${style.dim(key.padEnd(width))}  ${value}`)];
  if (report.damage.length > 0) {
    lines.push(style.red('damaged:'));
    for (const problem of report.damage) lines.push(`  - ${problem}`);
  }
  if (report.reasons.length > 0) {
    lines.push('dirty because:');
    for (const reason of report.reasons) lines.push(`  - ${reason}`);
  }
  if (report.changes && report.changes.examples.length > 0) {
    for (const example of report.changes.examples) lines.push(`    ${style.dim(example.change.padEnd(8))} ${example.path}`);
  }
  return lines.join('\n');
}

const SHOWN_WARNINGS = 5;

/** Longest path or reason a warning line shows whole: a path can be 4,096 characters and more. */
const MAX_WARNING_CHARS = 160;

/** A system error's reason without the path it repeats (`…, stat '/abs/<path>'`): the warning names the path already. */
function withoutOwnPath(reason: string, path: string): string {
  const quoted = /, \w+ '([^']*)'$/.exec(reason);
  return quoted && quoted[1]!.endsWith(path) ? reason.slice(0, quoted.index) : reason;
}

/** Text cut in its middle to MAX_WARNING_CHARS, keeping both ends (where a path says most) and saying how long it was. */
function shortened(text: string): string {
  if (text.length <= MAX_WARNING_CHARS) return text;
  const half = Math.floor((MAX_WARNING_CHARS - 2) / 2);
  return `${text.slice(0, half)}…${text.slice(text.length - half)} (${formatNoun(text.length, 'character')})`;
}

/** The embedding part of a sync summary: one line. */
function printEmbedLine(embeddings: NonNullable<ResponseOf<'sync'>['embeddings']>): string {
  if ('error' in embeddings) return `vectors: not updated: ${embeddings.error}`;
  if (embeddings.reason !== undefined && embeddings.vectors === 0) return `vectors: none, ${embeddings.reason}`;
  const learned = embeddings.trained ? ', table learned from the repository' : '';
  return `vectors: ${formatCount(embeddings.vectors)} of ${formatNoun(embeddings.chunks, 'chunk')} (${formatCount(embeddings.embedded)} embedded, ${formatCount(embeddings.reused)} reused${embeddings.skipped ? `, ${formatCount(embeddings.skipped)} skipped` : ''}${learned}) by ${embeddings.engine} ${embeddings.model} in ${formatDuration(embeddings.duration_ms)}`;
}

/** The summary after a sync: one line, then the first few problem files. */
export function printSyncSummary(summary: ResponseOf<'sync'>): string {
  let line: string;
  if (summary.mode === 'none') {
    line = `index up to date: nothing changed (${formatNoun(summary.files_unchanged, 'file')} checked, ${formatNoun(summary.chunks_total, 'chunk')}) in ${formatDuration(summary.duration_ms)}`;
  } else {
    const what = summary.mode === 'full' ? `rebuilt (${summary.full_reason ?? 'full'}): read ${formatNoun(summary.files_scanned, 'file')}` : `read ${formatNoun(summary.files_scanned, 'changed file')}`;
    line = [
      what + (summary.files_removed > 0 ? `, dropped ${formatCount(summary.files_removed)} removed` : ''),
      `→ ${formatNoun(summary.chunks_total, 'chunk')} (${formatCount(summary.chunks_created)} new, ${formatCount(summary.chunks_unchanged)} unchanged, ${formatCount(summary.chunks_deleted)} deleted)`,
      `in ${formatDuration(summary.duration_ms)}`,
    ].join(' ');
    const notes: string[] = [];
    if (summary.files_cached > 0) notes.push(`${formatCount(summary.files_cached)} parsed before (cached)`);
    const skipped = Object.entries(summary.skipped_by_reason);
    if (skipped.length > 0) notes.push(`skipped ${skipped.map(([reason, count]) => `${reason}: ${count}`).join(', ')}`);
    const fallbacks = Object.entries(summary.text_fallbacks);
    if (fallbacks.length > 0) notes.push(`chunked as text: ${fallbacks.map(([reason, count]) => `${reason}: ${count}`).join(', ')}`);
    if (summary.merged) notes.push('segments merged');
    if (summary.partial) notes.push(`a first answer: ${formatCount(summary.partial.files)} of ${formatCount(summary.partial.of)} files read so far, the rest follows`);
    if (notes.length > 0) line += `; ${notes.join('; ')}`;
  }
  const lines = [line];
  if (summary.embeddings) lines.push(printEmbedLine(summary.embeddings));
  // Name the first few problem files, one line each; --json lists every problem (up to 50).
  const byPath = new Map<string, string[]>();
  for (const error of summary.errors) byPath.set(error.path, [...(byPath.get(error.path) ?? []), withoutOwnPath(error.reason, error.path)]);
  for (const [path, reasons] of [...byPath].slice(0, SHOWN_WARNINGS)) lines.push(`  warning: ${shortened(path)}: ${shortened(reasons.join('; '))}`);
  if (byPath.size > SHOWN_WARNINGS) lines.push(`  … ${byPath.size - SHOWN_WARNINGS} more (repodex sync --json lists them)`);
  return lines.join('\n');
}

function highlight(text: string, terms: readonly string[], style: Style): string {
  if (terms.length === 0) return text;
  const escaped = terms.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return text.replace(new RegExp(`(${escaped.join('|')})`, 'gi'), (match) => style.yellow(match));
}

/** Human output of `search`: `path:start-end`, score and id, the snippet, why (matched terms, then signals). */
export function printSearch(report: ResponseOf<'search'>, style: Style): string {
  const lines: string[] = [];
  if (report.results.length === 0) {
    lines.push(report.terms.length === 0 ? 'no searchable terms in the query' : `no results for ${report.terms.join(' ')}`);
  }
  for (const hit of report.results) {
    const where = style.cyan(`${hit.path}:${hit.start_line}-${hit.end_line}`);
    const stale = hit.stale ? style.yellow(' (file changed since sync)') : '';
    const symbol = hit.symbol ? `  ${style.bold(hit.symbol)}` : '';
    lines.push(`${where}${symbol}  ${style.dim(`score ${hit.score.toFixed(2)}  id ${hit.chunk_id}`)}${stale}`);
    // Highlight the matched terms, not the `signal:detail` entries that follow them.
    const terms = hit.why.filter((entry) => !entry.includes(':'));
    for (const snippetLine of hit.snippet.split('\n')) lines.push(`    ${highlight(snippetLine, terms, style)}`);
    lines.push(`    ${style.dim(`why: ${hit.why.join(', ')}`)}`);
  }
  if (report.results.length > 0) {
    lines.push(style.dim(`${report.results.length} of ${formatNoun(report.matched, 'matching chunk')}; fetch with: repodex fetch --ids ${report.results.slice(0, 5).map((hit) => hit.chunk_id).join(',')}`));
  }
  for (const warning of report.warnings) lines.push(style.yellow(`warning: ${warning}`));
  return lines.join('\n');
}

/** Human output of `fetch`: each chunk's numbered lines under a `path:start-end` header. */
export function printFetch(report: ResponseOf<'fetch'>, style: Style): string {
  const lines: string[] = [];
  for (const chunk of report.chunks) {
    if ('error' in chunk) {
      const label = chunk.blocked ? 'blocked' : 'error';
      lines.push(style.red(`── chunk ${chunk.chunk_id}${chunk.path ? ` (${chunk.path})` : ''}: ${label}: ${chunk.error}`));
      lines.push(style.dim(`   hint: ${chunk.hint}`));
      continue;
    }
    const notes = [chunk.truncated ? (chunk.lines.length === 1 ? 'first line' : `first ${chunk.lines.length} lines`) : '', chunk.stale ? 'file changed since sync' : ''].filter(Boolean).join(', ');
    lines.push(style.cyan(`── ${chunk.path}:${chunk.start_line}-${chunk.end_line} (chunk ${chunk.chunk_id})${notes ? ` [${notes}]` : ''}`));
    lines.push(...chunk.lines);
  }
  if (report.ignored_ids.length > 0) lines.push(style.yellow(`warning: only the first 5 ids are fetched; ignored ${report.ignored_ids.join(', ')}`));
  for (const warning of report.warnings) lines.push(style.yellow(`warning: ${warning}`));
  return lines.join('\n');
}

/** A word as a shell needs it typed: as it is when plain, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/**
 * Human output of `open`. `typed` is the path as the user typed it (relative to their folder):
 * the command that reads on names the file that way, so it works where it was typed.
 */
export function printOpen(report: ResponseOf<'open'>, style: Style, typed?: string): string {
  if ('error' in report) {
    return [style.red(`${report.blocked ? 'blocked' : 'error'}: ${report.error}`), style.dim(`hint: ${report.hint}`)].join('\n');
  }
  const lines = [style.cyan(`── ${report.path}:${report.start_line}-${report.end_line} of ${report.total_lines}`), ...report.lines];
  if (report.next_start !== null) lines.push(style.dim(`… more from line ${report.next_start}: repodex open ${shellWord(typed ?? report.path)} --start ${report.next_start}`));
  return lines.join('\n');
}

/** Human output of `files`: one aligned row per file. */
export function printFiles(report: ResponseOf<'files'>, style: Style): string {
  const lines = report.files.map((file) => {
    const state = file.state === 'indexed' ? formatNoun(file.chunks, 'chunk') : style.yellow(file.reason ? `withheld: ${file.reason}` : `skipped: ${file.state}`);
    return `${formatBytes(file.size).padStart(9)}  ${file.language.padEnd(10)}  ${file.path}  ${style.dim(state)}`;
  });
  if (report.blocked && report.total === 0) lines.push(style.dim('nothing is withheld as a secret'));
  else lines.push(style.dim(`${formatCount(report.files.length)} of ${formatNoun(report.total, report.blocked ? 'withheld file' : 'file')}${report.truncated ? ' (raise --limit for more)' : ''}`));
  if (!report.blocked && report.files.some((file) => file.state === 'secret')) lines.push(style.dim('`repodex files --blocked` says what each secret holds (rule and line), and lists the files left out for their names'));
  for (const warning of report.warnings) lines.push(style.yellow(`warning: ${warning}`));
  return lines.join('\n');
}

/** Human output of `outline`: one line per declaration, indented by nesting, with its line range. */
export function printOutline(report: ResponseOf<'outline'>, style: Style): string {
  if ('error' in report) {
    return [style.red(`${report.blocked ? 'blocked' : 'error'}: ${report.error}`), style.dim(`hint: ${report.hint}`)].join('\n');
  }
  if (!report.parsed) return style.yellow(`${report.path}: does not parse as ${report.language}; no outline (nothing partial is shown)`);
  const width = String(Math.max(0, ...report.symbols.map((symbol) => symbol.end_line))).length;
  const lines = report.symbols.map((symbol) => {
    const depth = symbol.parent_symbol === null ? 0 : symbol.parent_symbol.split('.').length;
    const range = `${String(symbol.start_line).padStart(width)}-${String(symbol.end_line).padEnd(width)}`;
    const context = symbol.decl_context ? style.yellow(` [${symbol.decl_context}]`) : '';
    // A signature usually names its kind already ("export class Router", "const k = 1", "def run"): then it is shown alone.
    const signature = symbol.signature || symbol.name;
    const named = namesItsKind(signature, symbol.kind, symbol.name) ? signature : `${style.cyan(symbol.kind)} ${signature}`;
    return `${style.dim(range)}  ${'  '.repeat(depth)}${named}${context}`;
  });
  lines.push(style.dim(`${formatNoun(report.symbols.length, 'declaration')} in ${report.path} (${report.language}, from ${report.source === 'index' ? 'the index' : 'a fresh parse'})`));
  return lines.join('\n');
}

/** The keywords that declare each kind, in the languages outlined: a signature holding one needs no kind label. */
const KIND_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  constant: ['const', 'let', 'var', 'val', 'final', 'define', '#define'],
  variable: ['const', 'let', 'var', 'val'],
  function: ['function', 'def', 'fn', 'func', 'fun', 'sub'],
  method: ['def', 'fn', 'func', 'fun'],
  type: ['type', 'typedef'],
  module: ['module', 'mod', 'package'],
  namespace: ['namespace', 'module', 'package'],
  macro: ['macro_rules!', '#define'],
};

/**
 * True when `signature` says its own kind: the kind's name or one of its keywords, as a word
 * before the declared `name` (in `const fn = …`, `fn` is the name, not Rust's keyword).
 */
export function namesItsKind(signature: string, kind: string, name: string): boolean {
  const words = signature.split(/[^\w#!$]+/);
  const at = words.indexOf(name);
  const head = new Set(at < 0 ? words : words.slice(0, at));
  return head.has(kind) || (KIND_KEYWORDS[kind] ?? []).some((keyword) => head.has(keyword));
}

/** Human output of `verify`. */
export function printVerify(report: ResponseOf<'verify'>, style: Style): string {
  if (!report.indexed) return style.yellow('no index to verify: run `repodex sync`');
  const lines: string[] = [];
  if (report.ok) lines.push(style.green(`index sound: generation ${report.generation}, ${formatNoun(report.checked.length, 'file')} checked (${report.checked.join(', ')})`));
  else {
    lines.push(style.red(`index damaged (${formatNoun(report.problems.length, 'problem')}):`));
    for (const problem of report.problems) lines.push(`  - ${problem}`);
    lines.push('fix: as each line says: `repodex sync` repairs all of it but the audit log');
  }
  for (const warning of report.warnings) lines.push(style.yellow(`warning: ${warning}`));
  return lines.join('\n');
}

/** Human output of `clean`. */
/** Human output of `db distribute`. */
export function printDistribute(report: { readonly citus: boolean; readonly changed: readonly string[]; readonly unchanged: readonly string[]; readonly workers: number; readonly where: string }): string {
  if (!report.citus) return `${report.where} is plain PostgreSQL (no Citus extension): nothing to distribute; one server holds every repository`;
  const done = report.changed.length === 0 ? 'already distributed' : `distributed ${report.changed.join(', ')}${report.unchanged.length > 0 ? ` (${report.unchanged.join(', ')} already were)` : ''}`;
  return `${report.where}: ${done}, by repository over ${report.workers} worker node(s)`;
}

export function printClean(report: ResponseOf<'clean'>): string {
  return report.removed.length === 0 ? 'nothing to remove: no index here' : `removed ${report.removed.join(', ')} from .repodex (config.json and ignore kept)`;
}

/** One line per sync of `watch`: when, what changed, how long. */
export function printWatchSync(summary: ResponseOf<'sync'>, now: Date = new Date()): string {
  const time = now.toTimeString().slice(0, 8);
  if (summary.mode === 'none') return `${time} nothing to re-index`;
  return `${time} ${printSyncSummary(summary)}`;
}

/** Human output of `bundle`: the same Markdown as `.repodex/last_bundle.md`. */
export function printBundle(report: ResponseOf<'bundle'>): string {
  const warnings = report.warnings.map((warning) => `warning: ${warning}`);
  return [bundleMarkdown(report).trimEnd(), ...warnings].join('\n');
}

/** Human output of `audit`: one line per call, oldest first. */
export function printAudit(report: ResponseOf<'audit'>, style: Style): string {
  const warnings = (report.warnings ?? []).map((warning) => style.yellow(`warning: ${warning}`));
  if (report.entries.length === 0) return [`no calls recorded${report.total > 0 ? ' in that period' : ''} (${report.path})`, ...warnings].join('\n');
  const lines = report.entries.map((entry) => {
    const outcome = entry.outcome === 'ok' ? style.green('ok') : style.red(entry.outcome);
    const args = Object.entries(entry.args)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value)}`)
      .join(' ');
    const who = entry.client !== undefined ? ` ${style.dim(`from ${entry.client}`)}` : '';
    return `${style.dim(entry.time)}  ${entry.frontend.padEnd(5)} ${(entry.tool ?? (entry.op || '(no op)')).padEnd(24)} ${outcome}${entry.blocked ? style.yellow(' blocked') : ''}  ${style.dim(`${entry.duration_ms} ms`)}${who}  ${args}`;
  });
  lines.push(style.dim(`${formatCount(report.entries.length)} of ${formatNoun(report.total, 'call')} (${report.path})`), ...warnings);
  return lines.join('\n');
}

/** Fields whose text may span lines in human output (everything else is one line: a newline in it is escaped). */
const MULTILINE_FIELDS = new Set(['snippet', 'prompt', 'rationale']);

/**
 * Data made safe for a terminal: control characters (ANSI escapes, carriage returns, NUL, C1) in
 * any string are shown escaped (`\x1b`), and a newline too wherever a value is a single line
 * (paths, names): a file named `x.ts\n── .env:1-1` cannot fake an output line or color the
 * terminal. Paths that needed escaping are quoted, as git quotes them. `--json` output is not
 * touched: JSON escapes them itself.
 */
export function humanSafe<T>(value: T, key = ''): T {
  if (typeof value === 'string') {
    const multiline = MULTILINE_FIELDS.has(key);
    // Control characters are what this matches on purpose.
    // eslint-disable-next-line no-control-regex
    const pattern = multiline ? /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g : /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;
    if (!pattern.test(value)) return value;
    pattern.lastIndex = 0;
    const escaped = value.replace(pattern, (ch) => (ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`));
    return (key === 'path' || key === 'citation' ? `"${escaped.replace(/"/g, '\\"')}"` : escaped) as T;
  }
  if (Array.isArray(value)) return value.map((item) => humanSafe(item, key === 'lines' ? 'line' : key)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, humanSafe(item, name)])) as T;
  }
  return value;
}
