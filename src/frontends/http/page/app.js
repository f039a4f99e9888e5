/* global document, window, location, history, localStorage, sessionStorage, HTMLElement, HTMLButtonElement, HTMLAnchorElement -- browser globals (eslint's shared config lists Node's) */
/**
 * The team server's page: search as you type over one repository, results grouped by file, a
 * file view with permalinks, and every repository's index status. Keyboard first: `/` searches,
 * the arrow keys walk the results, Enter opens one, Esc goes back.
 */
import { ApiError, api, onTokenNeeded } from './api.js';
import { h, replace } from './dom.js';
import { count, forThePage } from './format.js';
import { errorBox } from './errors.js';
import { FileView } from './file-view.js';
import { parsePermalink, permalink } from './permalink.js';
import { renderResults } from './results.js';
import { StatusPanel } from './status-panel.js';

const DEBOUNCE_MS = 180;
/** A search slower than this says what it is waiting for. */
const SLOW_MS = 400;
const TOP_K = 20;
const REPO_KEY = 'repodex.repo';

const $ = (id) => document.getElementById(id);
const ui = {
  q: $('q'),
  repo: $('repo'),
  mode: $('mode'),
  glob: $('glob'),
  form: $('query'),
  panes: $('panes'),
  tabs: $('tabs'),
  results: $('results'),
  note: $('results-note'),
  head: $('results-head'),
  fileView: $('file-view'),
  indexPanel: $('index-panel'),
  tokenDialog: $('token-dialog'),
  tokenForm: $('token-form'),
  tokenInput: $('token-input'),
  tokenError: $('token-error'),
};

const state = {
  repos: [],
  repoId: null,
  answer: null,
  items: [],
  selected: -1,
  view: 'results',
  side: 'index',
  searchTimer: undefined,
  searchSeq: 0,
  searching: undefined,
};

const statuses = new Map();
const files = new FileView(ui.fileView, { permalink: (path, start, end) => permalink(repoKey(state.repoId), path, start, end) });
const panel = new StatusPanel(ui.indexPanel, {
  onStatus(status) {
    statuses.set(status.repo_id, status);
    labelRepo(status.repo_id);
  },
  onRepos(repos) {
    state.repos = repos;
    fillPicker();
    if (!findRepo(state.repoId ?? '') && repos[0]) chooseRepo(repos[0].repo_id);
  },
});

// --- repositories -----------------------------------------------------------------------------

/** How permalinks name a repository: its name while no other has it, else its id. */
function repoKey(repoId) {
  const repo = state.repos.find((entry) => entry.repo_id === repoId);
  if (!repo) return repoId ?? '';
  return state.repos.filter((entry) => entry.name === repo.name).length === 1 ? repo.name : repo.repo_id;
}

function findRepo(key) {
  return state.repos.find((repo) => repo.repo_id === key) ?? state.repos.find((repo) => repo.name === key);
}

function labelRepo(repoId) {
  const option = [...ui.repo.options].find((entry) => entry.value === repoId);
  const repo = state.repos.find((entry) => entry.repo_id === repoId);
  if (!option || !repo) return;
  const status = statuses.get(repoId)?.index_status ?? repo.index_status;
  const note = { pending: ' (not indexed)', indexing: ' (indexing)', stale: ' (out of date)' }[status] ?? '';
  option.textContent = `${repo.name}${note}`;
}

async function loadRepos() {
  try {
    const answer = await api('/repos');
    state.repos = answer.repos;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    replace(ui.head);
    replace(ui.results);
    replace(ui.note, h('div', { class: 'pad' }, errorBox(error, 'The repositories could not be listed')));
    return;
  }
  fillPicker();
  const fromHash = parsePermalink(location.hash);
  const wanted = (fromHash && findRepo(fromHash.repo)) ?? findRepo(localStorage.getItem(REPO_KEY) ?? '') ?? state.repos[0];
  if (wanted) chooseRepo(wanted.repo_id, { search: false });
  panel.setRepos(state.repos, state.repoId);
  // A permalink opens its file beside what to type and the keys, not beside an empty pane.
  renderIdle();
  if (fromHash) applyHash();
}

function fillPicker() {
  replace(ui.repo, state.repos.map((repo) => h('option', { value: repo.repo_id }, repo.name)));
  ui.repo.disabled = state.repos.length === 0;
  if (state.repoId) ui.repo.value = state.repoId;
  for (const repo of state.repos) labelRepo(repo.repo_id);
}

function chooseRepo(repoId, { search = true } = {}) {
  if (state.repoId === repoId) return;
  state.repoId = repoId;
  ui.repo.value = repoId;
  localStorage.setItem(REPO_KEY, repoId);
  panel.select(repoId);
  if (search) void runSearch();
}

// --- search -----------------------------------------------------------------------------------

function scheduleSearch() {
  clearTimeout(state.searchTimer);
  state.searchTimer = setTimeout(runSearch, DEBOUNCE_MS);
}

/** Search now; an older search still running is cancelled (its answer would be stale). */
async function runSearch() {
  clearTimeout(state.searchTimer);
  state.searchTimer = undefined;
  state.searching?.abort();
  const query = ui.q.value.trim();
  const seq = ++state.searchSeq;
  // What the results show, for scripts and assistive tech: idle, searching, done or failed, and for which query.
  ui.results.dataset.query = query;
  ui.results.dataset.state = query && state.repoId ? 'searching' : 'idle';
  ui.results.setAttribute('aria-busy', String(ui.results.dataset.state === 'searching'));
  if (!query || !state.repoId) {
    state.searching = undefined;
    renderIdle();
    return;
  }
  const controller = new AbortController();
  state.searching = controller;
  const repoId = state.repoId;
  ui.panes.classList.add('is-searching');
  const slow = setTimeout(() => {
    const status = statuses.get(repoId)?.index_status;
    const waiting = status === 'ready' ? 'Searching…' : status === 'pending' ? 'Building the index first (this repository was never indexed); results follow…' : 'Bringing the index up to date first; results follow…';
    replace(ui.head, h('span', { class: 'muted' }, waiting));
    if (status !== 'ready') void panel.poll();
  }, SLOW_MS);
  const started = performance.now();
  try {
    const body = { repo_id: repoId, query, mode: ui.mode.value, top_k: TOP_K };
    const glob = ui.glob.value.trim();
    if (glob) body.glob = glob;
    const answer = await api('/search', { body, signal: controller.signal });
    if (seq !== state.searchSeq) return;
    showAnswer(answer, performance.now() - started);
    ui.results.dataset.state = 'done';
    if (answer.synced) void panel.poll();
  } catch (error) {
    if (error?.name === 'AbortError' || seq !== state.searchSeq) return;
    if (!(error instanceof ApiError)) throw error;
    state.answer = null;
    state.items = [];
    state.selected = -1;
    replace(ui.head);
    replace(ui.results);
    replace(ui.note, h('div', { class: 'pad' }, errorBox(error, 'The search failed')));
    ui.results.dataset.state = 'failed';
  } finally {
    clearTimeout(slow);
    if (seq === state.searchSeq) {
      ui.panes.classList.remove('is-searching');
      ui.results.setAttribute('aria-busy', 'false');
    }
  }
}

function showAnswer(answer, ms) {
  state.answer = answer;
  state.selected = -1;
  state.items = renderResults(ui.results, answer, {
    link: (hit) => permalink(repoKey(state.repoId), hit.path, hit.start_line, hit.end_line),
    onOpen: (index) => openHit(index),
  });
  const files = new Set(answer.results.map((hit) => hit.path)).size;
  const summary =
    answer.results.length === 0
      ? 'No results.'
      : `${answer.results.length} ${answer.results.length === 1 ? 'result' : 'results'} in ${files} ${files === 1 ? 'file' : 'files'}` + (answer.matched > answer.results.length ? ` · ${count(answer.matched)} chunks matched` : '');
  replace(
    ui.head,
    h('span', { class: 'summary' }, summary),
    h('span', { class: 'muted timing' }, `${answer.mode ?? ''} · ${Math.round(ms)} ms`),
    answer.synced && answer.synced.mode !== 'none' ? h('span', { class: 'note' }, 'index updated first') : null,
    (answer.warnings ?? []).length ? h('ul', { class: 'warnings' }, answer.warnings.map((warning) => h('li', {}, forThePage(warning)))) : null,
  );
  replace(
    ui.note,
    answer.results.length === 0
      ? h('div', { class: 'placeholder' }, h('p', {}, 'Nothing matched.'), h('p', { class: 'muted' }, ui.glob.value.trim() ? 'Check the path filter, or try other words.' : 'Try other words, or “Hybrid” ranking for a question in plain words.'))
      : null,
  );
  markOpen();
}

/** The page with no query: what to type, and the keys. */
function renderIdle() {
  state.answer = null;
  state.items = [];
  state.selected = -1;
  const repo = state.repos.find((entry) => entry.repo_id === state.repoId);
  replace(ui.head);
  replace(ui.results);
  ui.results.removeAttribute('aria-activedescendant');
  // Outside the listbox, which holds only results.
  replace(
    ui.note,
    h(
      'div',
      { class: 'placeholder idle' },
      h('p', {}, repo ? `Search ${repo.name} as you type: names, words, or a question.` : 'No repository to search yet.'),
      h(
        'dl',
        { class: 'keys' },
        [
          ['/', 'search'],
          ['↑ ↓', 'move through results'],
          ['Enter', 'open a result'],
          ['Esc', 'back'],
        ].map(([key, what]) => h('div', {}, h('dt', {}, h('kbd', {}, key)), h('dd', {}, what))),
      ),
    ),
  );
}

// --- selection and the file view --------------------------------------------------------------

function select(index) {
  if (state.items.length === 0) return;
  const next = Math.max(0, Math.min(state.items.length - 1, index));
  state.items[state.selected]?.setAttribute('aria-selected', 'false');
  state.selected = next;
  const item = state.items[next];
  item.setAttribute('aria-selected', 'true');
  ui.results.setAttribute('aria-activedescendant', item.id);
  item.scrollIntoView({ block: 'nearest' });
}

function openHit(index) {
  const item = state.items[index];
  if (!item) return;
  select(index);
  const target = item.getAttribute('href');
  if (location.hash === target) applyHash();
  else location.hash = target;
}

/** Mark the result whose lines the file view shows. */
function markOpen() {
  const view = files.view;
  for (const item of state.items) {
    const open = view && view.repoId === state.repoId && item.dataset.path === view.path && Number(item.dataset.start) === view.start && Number(item.dataset.end) === view.end;
    item.classList.toggle('is-open', Boolean(open));
  }
}

/** Show what the URL's hash names: a file view, or the results when it names nothing. */
function applyHash() {
  if (state.repos.length === 0) return; // loadRepos applies it once the repositories are known
  const link = parsePermalink(location.hash);
  if (!link) {
    if (state.view === 'file') setView('results');
    return;
  }
  const repo = findRepo(link.repo);
  if (!repo) {
    setView('file');
    replace(ui.fileView, h('div', { class: 'pad' }, errorBox({ message: `no repository named ${JSON.stringify(link.repo)} is served here`, hint: 'the link may come from another server, or the repository was removed', code: 'REPO_UNKNOWN' }, 'Unknown repository')));
    return;
  }
  if (repo.repo_id !== state.repoId) chooseRepo(repo.repo_id, { search: Boolean(ui.q.value.trim()) });
  setView('file');
  void files.show({ repoId: repo.repo_id, path: link.path, start: link.start, end: link.end, terms: state.answer?.terms ?? [] }).then(markOpen);
  markOpen();
}

function setView(view) {
  state.view = view;
  if (view === 'file' || view === 'index') state.side = view;
  ui.panes.dataset.view = view;
  ui.fileView.hidden = state.side !== 'file';
  ui.indexPanel.hidden = state.side !== 'index';
  for (const button of ui.tabs.querySelectorAll('button')) button.setAttribute('aria-pressed', String(button.dataset.view === view));
  for (const button of document.querySelectorAll('.side-tabs button')) button.setAttribute('aria-selected', String(button.dataset.side === state.side));
  if (view === 'index') void panel.poll();
}

// --- the token --------------------------------------------------------------------------------

onTokenNeeded(
  () =>
    new Promise((resolve) => {
      const wrong = sessionStorage.getItem('repodex.token') !== null;
      ui.tokenError.hidden = !wrong;
      ui.tokenError.textContent = wrong ? 'That token was refused; check it and try again.' : '';
      ui.tokenInput.value = '';
      ui.tokenDialog.showModal();
      ui.tokenInput.focus();
      const submit = (event) => {
        event.preventDefault();
        const value = ui.tokenInput.value.trim();
        if (!value) return;
        ui.tokenForm.removeEventListener('submit', submit);
        ui.tokenDialog.close();
        resolve(value);
      };
      ui.tokenForm.addEventListener('submit', submit);
    }),
);
// The API answers nothing without the token: the form cannot be dismissed.
ui.tokenDialog.addEventListener('cancel', (event) => event.preventDefault());

// --- keys and events --------------------------------------------------------------------------

function editable(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

document.addEventListener('keydown', (event) => {
  if (ui.tokenDialog.open || event.metaKey || event.ctrlKey || event.altKey) return;
  const inQuery = event.target === ui.q;
  const free = !editable(event.target);
  if (event.key === '/' && free) {
    event.preventDefault();
    setView(state.view === 'index' ? 'results' : state.view);
    ui.q.focus();
    ui.q.select();
  } else if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && (inQuery || free) && state.items.length > 0) {
    event.preventDefault();
    if (state.view !== 'results' && !wide()) setView('results');
    select(state.selected + (event.key === 'ArrowDown' ? 1 : -1));
  } else if (event.key === 'Enter' && (inQuery || free) && !(event.target instanceof HTMLButtonElement) && !(event.target instanceof HTMLAnchorElement)) {
    if (inQuery && state.searchTimer !== undefined) {
      event.preventDefault();
      void runSearch();
    } else if (state.selected >= 0) {
      event.preventDefault();
      openHit(state.selected);
    }
  } else if (event.key === 'Escape') {
    if (inQuery) ui.q.blur();
    else if (state.view !== 'results') {
      if (location.hash) history.pushState(null, '', location.pathname + location.search);
      setView('results');
      state.items[state.selected]?.focus({ preventScroll: true });
    }
  }
});

function wide() {
  return window.matchMedia('(min-width: 760px)').matches;
}

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  void runSearch();
});
ui.q.addEventListener('input', scheduleSearch);
ui.glob.addEventListener('input', scheduleSearch);
ui.mode.addEventListener('change', () => void runSearch());
ui.repo.addEventListener('change', () => chooseRepo(ui.repo.value));
window.addEventListener('hashchange', applyHash);
for (const button of ui.tabs.querySelectorAll('button')) button.addEventListener('click', () => setView(button.dataset.view));
for (const button of document.querySelectorAll('.side-tabs button')) button.addEventListener('click', () => setView(button.dataset.side));
// Relative times ("3 min ago") stay true while the page is open.
setInterval(() => {
  if (!document.hidden && !panel.busy()) panel.render();
}, 30_000);

setView('results');
if (wide()) ui.q.focus();
void loadRepos();
