/* global location, navigator, window -- browser globals (eslint's shared config lists Node's) */
/**
 * One file's numbered lines around a hit (GET /open answers at most 120 lines at a time), the hit's
 * lines highlighted, more lines on request above and below, and a permalink to what is shown.
 */
import { ApiError, get } from './api.js';
import { h, replace } from './dom.js';
import { highlight } from './format.js';
import { errorBox } from './errors.js';

/** Most lines one request returns (the server's limit for open). */
const PAGE = 120;
/** Lines of context shown above a hit. */
const ABOVE = 12;

/** The file pane: `show(view)` loads and renders `{repoId, repoKey, path, start?, end?, terms}`. */
export class FileView {
  constructor(container, { permalink }) {
    this.el = container;
    this.permalink = permalink;
    this.view = null;
    this.lines = new Map();
    this.loaded = { from: 0, to: 0, total: 0 };
    this.seq = 0;
    this.empty();
  }

  /** The placeholder before any file is open. */
  empty() {
    this.view = null;
    replace(this.el, h('div', { class: 'placeholder' }, h('p', {}, 'Open a result to read its file here.'), h('p', { class: 'muted' }, 'Each view has a link you can share: it opens the same lines.')));
  }

  /** Show a file; reuses the loaded lines when only the highlighted range changes. */
  async show(view) {
    const same = this.view && this.view.repoId === view.repoId && this.view.path === view.path && this.lines.size > 0;
    const inside = same && (!view.start || (view.start >= this.loaded.from && (view.end ?? view.start) <= this.loaded.to));
    this.view = view;
    if (inside) {
      this.render();
      this.scrollToHit();
      return;
    }
    this.lines = new Map();
    const from = view.start ? Math.max(1, view.start - ABOVE) : 1;
    const seq = ++this.seq;
    replace(this.el, this.header(), h('div', { class: 'loading' }, 'Loading…'));
    try {
      const answer = await get('/open', { repo_id: view.repoId, path: view.path, start: from, end: from + PAGE - 1 });
      if (seq !== this.seq) return;
      this.take(answer);
      this.render();
      this.scrollToHit();
    } catch (error) {
      if (seq !== this.seq) return;
      this.refused(error);
    }
  }

  take(answer) {
    for (const line of answer.lines) {
      const match = /^(\d+)\| ?/.exec(line);
      if (match) this.lines.set(Number(match[1]), line.slice(match[0].length));
    }
    const numbers = [...this.lines.keys()];
    this.loaded = { from: Math.min(...numbers), to: Math.max(...numbers), total: answer.total_lines, cut: answer.long_lines_cut };
    if (numbers.length === 0) this.loaded = { from: 1, to: 0, total: answer.total_lines };
  }

  async more(direction) {
    const view = this.view;
    const seq = this.seq;
    const from = direction < 0 ? Math.max(1, this.loaded.from - PAGE) : this.loaded.to + 1;
    const to = direction < 0 ? this.loaded.from - 1 : this.loaded.to + PAGE;
    try {
      const answer = await get('/open', { repo_id: view.repoId, path: view.path, start: from, end: to });
      if (seq !== this.seq) return;
      const anchor = direction < 0 ? this.el.querySelector('.code .line') : null;
      const before = anchor?.getBoundingClientRect().top;
      this.take(answer);
      this.render();
      if (anchor && before !== undefined) {
        // Keep the line that was first on screen where it was.
        const again = this.el.querySelector(`.code .line[data-line="${anchor.dataset.line}"]`);
        const scroller = this.el.querySelector('.code');
        if (again && scroller) scroller.scrollTop += again.getBoundingClientRect().top - before;
      }
    } catch (error) {
      if (seq === this.seq) this.refused(error);
    }
  }

  header() {
    const view = this.view;
    const slash = view.path.lastIndexOf('/');
    const link = this.permalink(view.path, view.start, view.end);
    const range = view.start ? (view.end && view.end !== view.start ? `L${view.start}–L${view.end}` : `L${view.start}`) : 'whole file';
    const copy = h('button', { type: 'button', class: 'ghost', title: 'Copy a link to these lines' }, 'Copy link');
    copy.addEventListener('click', () => copyLink(copy, new URL(link, location.href).href));
    return h(
      'div',
      { class: 'file-head' },
      h('div', { class: 'file-path', title: view.path }, slash >= 0 ? h('span', { class: 'dir' }, view.path.slice(0, slash + 1)) : null, h('span', { class: 'base' }, view.path.slice(slash + 1))),
      h('div', { class: 'file-tools' }, h('a', { class: 'permalink', href: link, title: 'Permalink to these lines' }, range), this.loaded.total && this.lines.size ? h('span', { class: 'muted' }, `${this.loaded.total.toLocaleString('en-US')} lines`) : null, copy),
    );
  }

  render() {
    const view = this.view;
    const start = view.start ?? 0;
    const end = view.end ?? start;
    const rows = [];
    for (let n = this.loaded.from; n <= this.loaded.to; n++) {
      const text = this.lines.get(n);
      if (text === undefined) continue;
      const hit = n >= start && n <= end;
      rows.push(
        h(
          'div',
          { class: hit ? 'line is-hit' : 'line', 'data-line': n },
          h('a', { class: 'ln', href: this.permalink(view.path, n, n), 'data-line': n, 'aria-label': `line ${n}` }, String(n)),
          h('span', { class: 'text' }, highlight(text, view.terms)),
        ),
      );
    }
    const code = h('div', { class: 'code', role: 'region', 'aria-label': `${view.path}, numbered lines`, tabindex: '0' });
    if (this.loaded.from > 1) code.append(this.moreButton(-1, `Show lines ${Math.max(1, this.loaded.from - PAGE)}–${this.loaded.from - 1}`));
    const body = h('div', { class: 'lines' }, rows);
    body.addEventListener('click', (event) => this.lineClick(event));
    code.append(body);
    if (this.loaded.to < this.loaded.total) code.append(this.moreButton(1, `Show lines ${this.loaded.to + 1}–${Math.min(this.loaded.total, this.loaded.to + PAGE)} of ${this.loaded.total.toLocaleString('en-US')}`));
    if (this.lines.size === 0) code.append(h('p', { class: 'muted pad' }, 'This file is empty.'));
    if (this.loaded.cut) code.append(h('p', { class: 'muted pad' }, 'Very long lines are cut short.'));
    replace(this.el, this.header(), code);
  }

  /** Shift-click on a line number extends the highlighted range (as code hosts do). */
  lineClick(event) {
    const number = event.target.closest?.('a.ln');
    if (!number || !event.shiftKey || !this.view.start) return;
    event.preventDefault();
    const n = Number(number.dataset.line);
    const start = Math.min(this.view.start, n);
    const end = Math.max(this.view.end ?? this.view.start, n);
    location.hash = this.permalink(this.view.path, start, end);
  }

  moreButton(direction, label) {
    const button = h('button', { type: 'button', class: 'more' }, label);
    button.addEventListener('click', () => {
      button.disabled = true;
      button.textContent = 'Loading…';
      void this.more(direction);
    });
    return button;
  }

  scrollToHit() {
    const hit = this.el.querySelector('.line.is-hit');
    const scroller = this.el.querySelector('.code');
    if (!hit || !scroller) return;
    scroller.scrollTop = Math.max(0, hit.offsetTop - scroller.offsetTop - 48);
  }

  refused(error) {
    if (!(error instanceof ApiError)) throw error;
    const title = error.blocked ? 'This file is not shown' : error.status === 404 ? 'This file cannot be opened' : 'The file could not be read';
    replace(this.el, this.header(), h('div', { class: 'pad' }, errorBox(error, title)));
  }
}

async function copyLink(button, url) {
  try {
    await navigator.clipboard.writeText(url);
    button.textContent = 'Copied';
  } catch {
    // No clipboard on a page served over plain HTTP to another machine: show the link to copy by hand.
    window.prompt('Copy this link', url);
  }
  setTimeout(() => (button.textContent = 'Copy link'), 1500);
}
