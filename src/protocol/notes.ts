import type { ResponseOf } from './responses.js';
import type { RequestOf } from './schemas.js';

/**
 * What an answer cannot say by itself, added to its `warnings` by the op's handler: a server limit
 * that cut what was asked for, a query in a script the index is not made of, a bundle strategy
 * that is not built. Silently answering less than was asked would mislead.
 */

/** What to say when a server limit cut what a request asked for. */
export function capNote(asked: number | undefined, given: number, noun: string, what: string, limit: string): string | undefined {
  if (asked === undefined || asked <= given) return undefined;
  return `asked for ${asked} ${noun}; ${what} at most ${given} here (limits.${limit} in .repodex/config.json, or --${limit.replace(/_/g, '-')} on serve)`;
}

/** Words in Latin script: what the index is made of (code, its English names and comments). */
const LATIN = /[a-z]/;

/** A search answer with what it cannot say by itself: a capped `top_k`, a query in another script that found nothing. */
export function searchNotes(request: RequestOf<'search'>, report: ResponseOf<'search'>): ResponseOf<'search'> {
  const notes: string[] = [];
  const capped = capNote(request.top_k, report.top_k, 'results', 'a search returns', 'max_search_hits');
  if (capped) notes.push(capped);
  if (report.results.length === 0 && report.terms.length > 0 && !report.terms.some((term) => LATIN.test(term))) {
    notes.push('the query has no words in Latin script, and code is named and commented mostly in English: ask again in English words or identifiers');
  }
  return withNotes(report, notes);
}

/**
 * A bundle with what it cannot say by itself: a capped `max_files`, and a strategy asked for that
 * is not the one that made it (`hybrid` is not built: every bundle is made by the deterministic
 * bundler, whose searches are bm25; its name is in `strategy`).
 */
export function bundleNotes(request: RequestOf<'bundle'>, report: ResponseOf<'bundle'>): ResponseOf<'bundle'> {
  const notes: string[] = [];
  const capped = capNote(request.max_files, report.budget.max_files, 'files', 'a bundle cites', 'max_bundle_files');
  if (capped) notes.push(capped);
  if (request.strategy !== undefined && !report.strategy.startsWith(request.strategy)) {
    notes.push(`strategy ${request.strategy} is not built: this bundle was made by ${report.strategy} (bm25 searches fused by rank), the one strategy there is`);
  }
  return withNotes(report, notes);
}

function withNotes<T extends { readonly warnings: string[] }>(report: T, notes: readonly string[]): T {
  return notes.length > 0 ? { ...report, warnings: [...report.warnings, ...notes] } : report;
}
