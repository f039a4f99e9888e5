import type { InitReport, SearchReport } from '../../engine/engine.js';
import type { FetchReport } from '../../engine/fetch.js';
import type { FilesReport } from '../../engine/files.js';
import type { OpenReport } from '../../engine/open.js';
import type { OutlineReport } from '../../engine/outline.js';
import type { StatusReport } from '../../engine/status.js';
import type { SyncSummary } from '../../engine/sync.js';
import { type Style, formatBytes, formatCount, formatDuration, formatRelative } from './style.js';

/** Human output of `init`. */
export function printInit(report: InitReport): string {
  const lines = [`repodex initialized in ${report.root}`];
  for (const path of report.created) lines.push(`  created ${path}`);
  for (const path of report.existing) lines.push(`  kept    ${path} (already there)`);
  lines.push('next: `repodex sync` to build the index');
  return lines.join('\n');
}

/** Human output of `status`. */
export function printStatus(report: StatusReport, style: Style): string {
  const stateText =
    report.state === 'ready'
      ? style.green('ready (clean)')
      : report.state === 'missing'
        ? style.yellow('missing: no index yet')
        : report.state === 'indexing'
          ? style.yellow('indexing (a sync is running)')
          : style.yellow('stale: run `repodex sync`');
  const rows: [string, string][] = [['state', stateText]];
  if (report.indexed) {
    rows.push(['last sync', `${report.last_sync ? formatRelative(report.last_sync) : '?'} (generation ${report.generation})`]);
    rows.push(['files', `${formatCount(report.files_indexed)} indexed, ${formatCount(report.files - report.files_indexed)} skipped`]);
    rows.push(['chunks', `${formatCount(report.chunks)} (${formatCount(report.terms)} terms)`]);
    const ratio = report.source_bytes > 0 ? ` (${(report.size_on_disk / report.source_bytes).toFixed(2)}× source)` : '';
    rows.push(['size', `${formatBytes(report.size_on_disk)} on disk for ${formatBytes(report.source_bytes)} of source${ratio}`]);
  }
  if (report.git) {
    const head = `${report.git.branch ?? 'detached'} @ ${report.git.head?.slice(0, 10) ?? '(no commits)'}`;
    const indexed = report.indexed ? `, indexed ${report.git.indexed_commit?.slice(0, 10) ?? '(none)'}` : '';
    rows.push(['git', head + indexed]);
  }
  const width = Math.max(...rows.map(([key]) => key.length));
  const lines = [`repodex status — ${report.root}`, ...rows.map(([key, value]) => `  ${style.dim(key.padEnd(width))}  ${value}`)];
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

/** The one-line summary after a sync. */
export function printSyncSummary(summary: SyncSummary): string {
  const skipped = Object.entries(summary.skipped_by_reason)
    .map(([reason, count]) => `${reason}: ${count}`)
    .join(', ');
  const parts = [
    `indexed ${formatCount(summary.files_indexed)} files → ${formatCount(summary.chunks_total)} chunks`,
    `(${formatCount(summary.chunks_created)} new, ${formatCount(summary.chunks_unchanged)} unchanged, ${formatCount(summary.chunks_deleted)} deleted)`,
    `${formatCount(summary.terms)} terms in ${formatDuration(summary.duration_ms)}`,
  ];
  let line = parts.join(' ');
  if (summary.files_reused > 0) line += `; ${formatCount(summary.files_reused)} unchanged files reused`;
  if (summary.files_skipped > 0) line += `; skipped ${formatCount(summary.files_skipped)} (${skipped})`;
  const fallbacks = Object.entries(summary.text_fallbacks);
  if (fallbacks.length > 0) line += `; chunked as text: ${fallbacks.map(([reason, count]) => `${reason}: ${count}`).join(', ')}`;
  const lines = [line];
  // Name the first few problem files; --json lists them all (up to 50).
  for (const error of summary.errors.slice(0, SHOWN_WARNINGS)) lines.push(`  warning: ${error.path}: ${error.reason}`);
  if (summary.errors.length > SHOWN_WARNINGS) lines.push(`  … ${summary.errors.length - SHOWN_WARNINGS} more (repodex sync --json lists them)`);
  return lines.join('\n');
}

function highlight(text: string, terms: readonly string[], style: Style): string {
  if (terms.length === 0) return text;
  const escaped = terms.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return text.replace(new RegExp(`(${escaped.join('|')})`, 'gi'), (match) => style.yellow(match));
}

/** Human output of `search`: `path:start-end`, score and id, the snippet, the matched terms. */
export function printSearch(report: SearchReport, style: Style): string {
  const lines: string[] = [];
  if (report.results.length === 0) {
    lines.push(report.terms.length === 0 ? 'no searchable terms in the query' : `no results for ${report.terms.join(' ')}`);
  }
  for (const hit of report.results) {
    const where = style.cyan(`${hit.path}:${hit.start_line}-${hit.end_line}`);
    const stale = hit.stale ? style.yellow(' (file changed since sync)') : '';
    const symbol = hit.symbol ? `  ${style.bold(hit.symbol)}` : '';
    lines.push(`${where}${symbol}  ${style.dim(`score ${hit.score.toFixed(2)}  id ${hit.chunk_id}`)}${stale}`);
    for (const snippetLine of hit.snippet.split('\n')) lines.push(`    ${highlight(snippetLine, hit.why, style)}`);
    lines.push(`    ${style.dim(`matched: ${hit.why.join(', ')}`)}`);
  }
  if (report.results.length > 0) {
    lines.push(style.dim(`${report.results.length} of ${formatCount(report.matched)} matching chunks; fetch with: repodex fetch --ids ${report.results.slice(0, 5).map((hit) => hit.chunk_id).join(',')}`));
  }
  for (const warning of report.warnings) lines.push(style.yellow(`warning: ${warning}`));
  return lines.join('\n');
}

/** Human output of `fetch`: each chunk's numbered lines under a `path:start-end` header. */
export function printFetch(report: FetchReport, style: Style): string {
  const lines: string[] = [];
  for (const chunk of report.chunks) {
    if ('error' in chunk) {
      const label = chunk.blocked ? 'blocked' : 'error';
      lines.push(style.red(`── chunk ${chunk.chunk_id}${chunk.path ? ` (${chunk.path})` : ''}: ${label}: ${chunk.error}`));
      lines.push(style.dim(`   hint: ${chunk.hint}`));
      continue;
    }
    const notes = [chunk.truncated ? `first ${chunk.lines.length} lines` : '', chunk.stale ? 'file changed since sync' : '']
      .filter(Boolean)
      .join(', ');
    lines.push(style.cyan(`── ${chunk.path}:${chunk.start_line}-${chunk.end_line} (chunk ${chunk.chunk_id})${notes ? ` [${notes}]` : ''}`));
    lines.push(...chunk.lines);
  }
  if (report.ignored_ids.length > 0) lines.push(style.yellow(`warning: only the first 5 ids are fetched; ignored ${report.ignored_ids.join(', ')}`));
  return lines.join('\n');
}

/** Human output of `open`. */
export function printOpen(report: OpenReport, style: Style): string {
  if ('error' in report) {
    return [style.red(`${report.blocked ? 'blocked' : 'error'}: ${report.error}`), style.dim(`hint: ${report.hint}`)].join('\n');
  }
  const lines = [style.cyan(`── ${report.path}:${report.start_line}-${report.end_line} of ${report.total_lines}`), ...report.lines];
  if (report.next_start !== null) lines.push(style.dim(`… more from line ${report.next_start}: repodex open ${report.path} --start ${report.next_start}`));
  return lines.join('\n');
}

/** Human output of `files`: one aligned row per file. */
export function printFiles(report: FilesReport, style: Style): string {
  const lines = report.files.map((file) => {
    const state = file.state === 'indexed' ? `${file.chunks} chunks` : style.yellow(`skipped: ${file.state}`);
    return `${formatBytes(file.size).padStart(9)}  ${file.language.padEnd(10)}  ${file.path}  ${style.dim(state)}`;
  });
  lines.push(style.dim(`${report.files.length} of ${formatCount(report.total)} files${report.truncated ? ' (raise --limit for more)' : ''}`));
  return lines.join('\n');
}

/** Human output of `outline`: one line per declaration, indented by nesting, with its line range. */
export function printOutline(report: OutlineReport, style: Style): string {
  if ('error' in report) {
    return [style.red(`${report.blocked ? 'blocked' : 'error'}: ${report.error}`), style.dim(`hint: ${report.hint}`)].join('\n');
  }
  if (!report.parsed) return style.yellow(`${report.path}: does not parse as ${report.language}; no outline (nothing partial is shown)`);
  const width = String(Math.max(0, ...report.symbols.map((symbol) => symbol.end_line))).length;
  const lines = report.symbols.map((symbol) => {
    const depth = symbol.parent_symbol === null ? 0 : symbol.parent_symbol.split('.').length;
    const range = `${String(symbol.start_line).padStart(width)}-${String(symbol.end_line).padEnd(width)}`;
    const context = symbol.decl_context ? style.yellow(` [${symbol.decl_context}]`) : '';
    return `${style.dim(range)}  ${'  '.repeat(depth)}${style.cyan(symbol.kind)} ${symbol.signature || symbol.name}${context}`;
  });
  lines.push(style.dim(`${report.symbols.length} declarations in ${report.path} (${report.language}, from ${report.source === 'index' ? 'the index' : 'a fresh parse'})`));
  return lines.join('\n');
}
