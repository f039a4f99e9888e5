/** How answers read on the page: highlighted terms, symbol paths, ranking reasons, times, hashes. */
import { h } from './dom.js';

/**
 * `text` as nodes with every occurrence of a query term marked — case-insensitively and inside
 * identifiers too (`parseConfig` holds `config`). Longer terms win where terms overlap.
 */
export function highlight(text, terms) {
  const pattern = termPattern(terms);
  if (!pattern) return [text];
  const out = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    out.push(h('mark', {}, match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const patterns = new Map();

function termPattern(terms) {
  const usable = [...new Set((terms ?? []).filter((term) => typeof term === 'string' && term.length > 0).map((term) => term.toLowerCase()))];
  if (usable.length === 0) return null;
  const key = usable.join('\u0000');
  let pattern = patterns.get(key);
  if (!pattern) {
    usable.sort((a, b) => b.length - a.length);
    pattern = new RegExp(usable.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'giu');
    patterns.set(key, pattern);
  }
  return pattern;
}

/**
 * A hit's declaration path (`class Router › match`): the outermost declaration's kind, then the
 * names from outside in, the innermost one strongest.
 */
export function symbolPath(symbol, terms) {
  if (!symbol) return null;
  const parts = symbol.split(' › ');
  const first = parts[0] ?? '';
  const space = first.indexOf(' ');
  const kind = space > 0 ? first.slice(0, space) : '';
  const names = [space > 0 ? first.slice(space + 1) : first, ...parts.slice(1)];
  const el = h('span', { class: 'symbol', title: symbol });
  if (kind) el.append(h('span', { class: 'symbol-kind' }, kind), ' ');
  names.forEach((name, i) => {
    if (i > 0) el.append(h('span', { class: 'symbol-sep' }, ' › '));
    el.append(h('span', { class: i === names.length - 1 ? 'symbol-name symbol-leaf' : 'symbol-name' }, highlight(name, terms)));
  });
  return el;
}

/** What each ranking signal in `why` means, for people. */
const SIGNALS = {
  path: (detail) => [`in path: ${detail}`, 'the file path holds this term'],
  name: (detail) => [`declares ${detail}`, 'a declared name here holds this term'],
  file: (detail) => [`file also: ${detail.replace(/^\+/, '')}`, 'the rest of the file holds this term too'],
  history: (detail) => [`commits: ${detail}`, 'recent commit messages touching this file mention this term'],
  form: (detail) => [detail.replace('→', ' → '), 'matched another form of the word'],
  mention: (detail) => [`mentioned ${detail}`, 'the query names this file'],
  role: (detail) => [detail.replace('×', ' ×'), 'weighed by what kind of file it is'],
  vector: (detail) => [`similarity ${detail}`, 'how close its meaning is to the query'],
};

/** A hit's `why` as chips: the matched terms first, then the signals that moved it. */
export function whyChips(why) {
  return (why ?? []).map((entry) => {
    const colon = entry.indexOf(':');
    if (colon < 0) return h('span', { class: 'chip chip-term', title: 'query term it matched' }, entry);
    const signal = entry.slice(0, colon);
    const describe = SIGNALS[signal];
    if (!describe) return h('span', { class: 'chip', title: entry }, entry);
    const [label, meaning] = describe(entry.slice(colon + 1));
    return h('span', { class: `chip chip-${signal}`, title: `${meaning} (${entry})` }, label);
  });
}

/** "3 min ago" for an ISO time (or "never"). */
export function ago(iso, now = Date.now()) {
  if (!iso) return 'never';
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 10) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return `${days} days ago`;
}

/** A local date and time for tooltips. */
export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '';
}

/** A commit hash as git shows it short. */
export function shortHash(hash) {
  return hash ? hash.slice(0, 7) : '—';
}

/** 12345 → "12,345". */
export function count(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '—';
}

/**
 * A server message worded for the command line ("no index yet: run `repodex sync`"), pointing at
 * what this page offers instead (its re-index buttons).
 */
export function forThePage(text) {
  return text
    .replace(/run `repodex sync` to rebuild it/g, 'rebuild it from scratch')
    .replace(/run `repodex sync` (to embed|for exact)/g, 're-index $1')
    .replace(/run `repodex sync`/g, 'search it or re-index');
}
