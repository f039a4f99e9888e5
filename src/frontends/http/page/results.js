/** The ranked hits of one search, grouped by file in rank order (a file sits where its best hit ranks). */
import { h } from './dom.js';
import { highlight, symbolPath, whyChips } from './format.js';

/** Snippet lines shown per hit: enough to recognise it, few enough to scan twenty. */
const SNIPPET_LINES = 4;

/**
 * Render `answer.results` into `container`. Returns the hit elements in display order (what the
 * arrow keys walk); `link(hit)` gives each hit's permalink, `onOpen(index)` opens one.
 */
export function renderResults(container, answer, { link, onOpen }) {
  const terms = answer.terms ?? [];
  const groups = new Map();
  for (const hit of answer.results) {
    let group = groups.get(hit.path);
    if (!group) groups.set(hit.path, (group = []));
    group.push(hit);
  }
  const items = [];
  const sections = [];
  for (const [path, hits] of groups) {
    const slash = path.lastIndexOf('/');
    const headId = `group-${sections.length}`;
    const head = h(
      'div',
      { class: 'group-head', id: headId, title: path },
      slash >= 0 ? h('span', { class: 'dir' }, highlight(path.slice(0, slash + 1), terms)) : null,
      h('span', { class: 'base' }, highlight(path.slice(slash + 1), terms)),
      h('span', { class: 'group-count' }, hits.length === 1 ? '1 hit' : `${hits.length} hits`),
    );
    const list = hits.map((hit) => {
      const index = items.length;
      const el = h(
        'a',
        { class: 'hit', role: 'option', id: `hit-${index}`, 'aria-selected': 'false', href: link(hit), 'data-index': index, 'data-path': hit.path, 'data-start': hit.start_line, 'data-end': hit.end_line, tabindex: '-1' },
        h(
          'div',
          { class: 'hit-meta' },
          h('span', { class: 'hit-lines' }, hit.start_line === hit.end_line ? `L${hit.start_line}` : `L${hit.start_line}–${hit.end_line}`),
          symbolPath(hit.symbol, terms) ?? h('span', { class: 'symbol symbol-none' }, 'no declaration'),
          h('span', { class: 'hit-score', title: 'score' }, formatScore(hit.score)),
        ),
        h('pre', { class: 'snippet' }, highlight(snippetOf(hit.snippet), terms)),
        hit.why?.length ? h('div', { class: 'why', 'aria-label': 'why it ranked here' }, whyChips(hit.why)) : null,
        hit.stale ? h('div', { class: 'hit-stale' }, 'changed since it was indexed') : null,
      );
      el.addEventListener('click', (event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        onOpen(index);
      });
      items.push(el);
      return el;
    });
    // A group of options, named by its file: what a listbox may hold besides options.
    sections.push(h('div', { class: 'group', role: 'group', 'aria-labelledby': headId, 'data-path': path }, head, list));
  }
  container.replaceChildren(...sections);
  return items;
}

function snippetOf(text) {
  const lines = (text ?? '').split('\n');
  while (lines.length > 1 && lines[lines.length - 1].trim() === '') lines.pop();
  return lines.slice(0, SNIPPET_LINES).join('\n');
}

function formatScore(score) {
  if (typeof score !== 'number') return '';
  return score >= 100 ? score.toFixed(0) : score >= 1 ? score.toFixed(1) : score.toFixed(2);
}
