/* global document -- browser globals (eslint's shared config lists Node's) */
/**
 * Each repository's index: its state, when it was last indexed, the indexed commit against HEAD,
 * what it holds, a progress bar while it indexes, and re-index buttons. Polls while anything
 * indexes (quickly) and otherwise now and then.
 */
import { ApiError, api } from './api.js';
import { h, replace } from './dom.js';
import { ago, count, forThePage, shortHash, when } from './format.js';
import { errorBox } from './errors.js';

const FAST_MS = 600;
/** While a re-index this page asked for runs: its answer comes when it is done, so look more often. */
const RUN_MS = 300;
const SLOW_MS = 15_000;

const STATES = { pending: 'Not indexed yet', indexing: 'Indexing', ready: 'Ready', stale: 'Out of date' };

const PHASES = {
  starting: 'Starting…',
  scan: 'Looking for changed files',
  index: 'Reading and indexing files',
  write: 'Writing the index',
  train: 'Learning term vectors',
  embed: 'Embedding chunks',
  graph: 'Building the vector graph',
};

/** The panel over `container`; `onStatus(status)` hears every status it reads, `onRepos(repos)` of repositories added or removed. */
export class StatusPanel {
  constructor(container, { onStatus, onRepos }) {
    this.el = container;
    this.onStatus = onStatus;
    this.onRepos = onRepos;
    this.repos = [];
    this.selected = null;
    this.statuses = new Map();
    this.errors = new Map();
    this.runs = new Map(); // repo_id → {force, result?, error?, running}
    this.timer = undefined;
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden) this.poll();
    });
  }

  /** Show these repositories (and poll them). */
  setRepos(repos, selected) {
    this.repos = repos;
    this.selected = selected;
    this.render();
    void this.poll();
  }

  /** Put the selected repository first and mark it. */
  select(repoId) {
    this.selected = repoId;
    this.render();
  }

  /** Read one repository's status now (after a search brought its index up to date, say). */
  async refresh(repoId) {
    try {
      const status = await api(`/index/status/${encodeURIComponent(repoId)}`);
      this.statuses.set(repoId, status);
      this.errors.delete(repoId);
      this.onStatus(status);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.errors.set(repoId, error);
    }
  }

  running() {
    for (const run of this.runs.values()) if (run.running) return true;
    return false;
  }

  busy() {
    if (this.running()) return true;
    for (const status of this.statuses.values()) if (status.index_status === 'indexing') return true;
    return false;
  }

  /**
   * Read the statuses, draw, and come back soon while something indexes. One GET /repos says
   * every repository's state; the full status is read only for those whose state moved, that
   * index, or that are selected — a server with a hundred repositories is not asked a hundred
   * questions every few seconds.
   */
  async poll() {
    clearTimeout(this.timer);
    if (document.hidden) return;
    let listed = this.repos;
    try {
      listed = (await api('/repos')).repos;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
    if (listed.map((repo) => repo.repo_id).join() !== this.repos.map((repo) => repo.repo_id).join()) {
      // Registered or removed meanwhile (POST /repos, DELETE /repos/:id).
      this.repos = listed;
      this.onRepos(listed);
    }
    const wanted = listed.filter((repo) => {
      const known = this.statuses.get(repo.repo_id);
      return !known || known.index_status !== repo.index_status || repo.index_status === 'indexing' || repo.repo_id === this.selected || this.runs.get(repo.repo_id)?.running;
    });
    await Promise.all(wanted.map((repo) => this.refresh(repo.repo_id)));
    this.render();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), this.running() ? RUN_MS : this.busy() ? FAST_MS : SLOW_MS);
  }

  /** POST /index/run: it answers when the sync is done; the status shows its progress meanwhile. */
  async reindex(repoId, force) {
    if (this.runs.get(repoId)?.running) return;
    const run = { force, running: true };
    this.runs.set(repoId, run);
    this.render();
    setTimeout(() => void this.poll(), 150);
    try {
      run.result = await api('/index/run', { body: { repo_id: repoId, force } });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      run.error = error;
    }
    run.running = false;
    await this.poll();
  }

  render() {
    const focused = document.activeElement?.closest?.('[data-action]');
    const focusKey = focused ? `${focused.closest('[data-repo]')?.dataset.repo}:${focused.dataset.action}` : null;
    const ordered = [...this.repos].sort((a, b) => (a.repo_id === this.selected ? -1 : b.repo_id === this.selected ? 1 : 0));
    if (ordered.length === 0) {
      replace(this.el, h('div', { class: 'placeholder' }, h('p', {}, 'No repository is registered on this server.'), h('p', { class: 'muted' }, 'Register one with `repodex serve --http PATH` or POST /repos {"root": "/path/to/checkout"}.')));
      return;
    }
    replace(this.el, h('h2', { class: 'panel-title' }, 'Index status'), ordered.map((repo) => this.card(repo)));
    if (focusKey) {
      const [repo, action] = focusKey.split(':');
      [...this.el.querySelectorAll('[data-repo]')].find((card) => card.dataset.repo === repo)?.querySelector(`[data-action="${action}"]`)?.focus();
    }
  }

  card(repo) {
    const status = this.statuses.get(repo.repo_id);
    const error = this.errors.get(repo.repo_id);
    const run = this.runs.get(repo.repo_id);
    // A re-index this page asked for is running until its answer comes, whatever an older status said.
    const state = run?.running ? 'indexing' : (status?.index_status ?? repo.index_status);
    const differs = status && status.current_head && status.last_indexed_commit !== status.current_head;
    const facts = status
      ? [
          fact('Last indexed', h('span', { title: when(status.last_indexed_at) }, ago(status.last_indexed_at))),
          fact('Indexed commit', h('code', { title: status.last_indexed_commit ?? 'none' }, shortHash(status.last_indexed_commit))),
          fact(
            'HEAD',
            status.current_head ? h('code', { title: status.current_head }, shortHash(status.current_head)) : h('span', { class: 'muted' }, 'not a git checkout'),
            differs ? h('span', { class: 'flag', title: 'HEAD has moved since the last index: the next search or re-index catches up' }, status.last_indexed_commit ? 'differs' : 'not indexed') : null,
          ),
          fact('Files', count(status.files_indexed)),
          fact('Chunks', count(status.chunk_count)),
          fact('Vectors', count(status.chunks_with_embeddings)),
        ]
      : [];
    const busy = run?.running || state === 'indexing';
    return h(
      'article',
      { class: repo.repo_id === this.selected ? 'repo-card is-selected' : 'repo-card', 'data-repo': repo.repo_id, 'aria-label': `${repo.name} index` },
      h(
        'header',
        { class: 'repo-head' },
        h('h3', { class: 'repo-name' }, repo.name),
        h('span', { class: `state state-${state}`, 'data-state': state }, STATES[state] ?? state),
        status?.watcher_active ? h('span', { class: 'tag', title: 'Re-indexes as files change' }, 'watching') : null,
      ),
      h('p', { class: 'repo-root', title: repo.root }, repo.root),
      facts.length ? h('dl', { class: 'facts' }, facts) : null,
      status?.vectors_note && status.chunks_with_embeddings < status.chunk_count && !status.progress ? h('p', { class: 'vectors-note muted' }, `No vectors for semantic search: ${status.vectors_note}. Keyword search is unaffected.`) : null,
      status?.progress ? progress(status.progress) : run?.running ? progress({ phase: 'starting', done: null, total: null }) : null,
      status?.reasons?.length && state !== 'ready' ? h('ul', { class: 'reasons' }, status.reasons.map((reason) => h('li', {}, forThePage(reason)))) : null,
      status?.damage?.length ? h('ul', { class: 'damage' }, status.damage.map((line) => h('li', {}, line))) : null,
      error ? errorBox(error) : null,
      h(
        'div',
        { class: 'repo-actions' },
        h('button', { type: 'button', class: 'primary', 'data-action': 'reindex', disabled: busy, title: 'Index what changed since the last run', onclick: () => void this.reindex(repo.repo_id, false) }, run?.running && !run.force ? 'Re-indexing…' : 'Re-index'),
        h('button', { type: 'button', 'data-action': 'rebuild', disabled: busy, title: 'Read every file again and rebuild the index from scratch', onclick: () => void this.reindex(repo.repo_id, true) }, run?.running && run.force ? 'Rebuilding…' : 'Rebuild from scratch'),
      ),
      run && !run.running ? runOutcome(run) : null,
    );
  }
}

function fact(label, ...value) {
  return h('div', { class: 'fact' }, h('dt', {}, label), h('dd', {}, value));
}

function progress(p) {
  const known = typeof p.done === 'number' && typeof p.total === 'number' && p.total > 0;
  const fraction = known ? Math.min(1, p.done / p.total) : 0;
  const bar = h('div', { class: known ? 'meter-fill' : 'meter-fill is-indeterminate' });
  if (known) bar.style.width = `${(fraction * 100).toFixed(1)}%`;
  return h(
    'div',
    { class: 'progress', 'data-phase': p.phase },
    h('div', { class: 'progress-label' }, h('span', {}, PHASES[p.phase] ?? p.phase), known ? h('span', { class: 'muted' }, `${count(p.done)} / ${count(p.total)}`) : typeof p.total === 'number' ? h('span', { class: 'muted' }, `${count(p.total)} in all`) : null),
    h('div', { class: 'meter', role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': known ? String(Math.round(fraction * 100)) : undefined, 'aria-label': PHASES[p.phase] ?? p.phase }, bar),
  );
}

/** What the last run did, in a line (and the files it could not index). */
function runOutcome(run) {
  if (run.error) return h('div', { class: 'run-outcome' }, errorBox(run.error, 'Re-indexing failed'));
  const r = run.result ?? {};
  const seconds = typeof r.duration_ms === 'number' ? `${(r.duration_ms / 1000).toFixed(1)} s` : '';
  const line =
    r.mode === 'none'
      ? 'Already up to date: nothing changed.'
      : `${r.mode === 'full' ? 'Rebuilt' : 'Updated'}: ${count(r.files_added ?? 0)} files added, ${count(r.files_updated ?? 0)} changed, ${count(r.files_removed ?? 0)} removed; ${count(r.chunks_created ?? 0)} chunks written${seconds ? ` in ${seconds}` : ''}.`;
  const skipped = Array.isArray(r.errors) ? r.errors : [];
  return h(
    'div',
    { class: 'run-outcome' },
    h('p', {}, line),
    skipped.length
      ? h('details', {}, h('summary', {}, `${skipped.length} ${skipped.length === 1 ? 'file was' : 'files were'} not indexed`), h('ul', { class: 'skipped' }, skipped.map((e) => h('li', {}, h('code', {}, e.path), ' — ', e.reason))))
      : null,
  );
}
