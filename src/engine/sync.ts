import type { EmbedSummary } from './embed.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED_MARK } from '../index/fields.js';
import { looksGenerated } from '../scan/file-role.js';
import { dropHistory, historyTerms, keepHistory, loadHistory } from './history.js';
import { type ChunkParams, chunkHash, chunkParamsKey, makeSnippet } from '../chunk/chunker.js';
import { chunkDeclaredNames, chunkSymbolPath } from '../chunk/symbol-paths.js';
import { treeSitterChunker } from '../chunk/tree-sitter-chunker.js';
import { RepodexError, errorMessage, isRepodexError } from '../core/errors.js';
import { type GitHead, readGitHead } from '../core/git.js';
import { FEATURE_VERSION } from '../core/version.js';
import { lstatIfExists } from '../core/stat.js';
import { within } from '../core/within.js';
import { type FileState, NO_CONTENT_HASH, type NewChunk, type NewFile } from '../index/model.js';
import { hasAdapter } from '../lang/index.js';
import { languageOf } from '../scan/language.js';
import { LAYOUT_VERSION, type RepoLayout, isLayoutSource, learnLayout } from '../scan/layout.js';
import { type ReadLimits, readSource } from '../scan/read-source.js';
import { describeSecret } from '../safety/secrets.js';
import { configLimits, indexConfigKey } from '../core/config.js';
import { RepoScope } from '../scan/scope.js';
import { type Candidate, type SoftError, byPath } from '../scan/walker.js';
import type { Catalog, IndexStore, IndexView } from '../store/backend.js';
import { splitLines } from '../text/normalize.js';
import { queryTerms } from '../text/tokenizer.js';
import { pathRoleWeigher } from '../search/search.js';
import { bm25Idf, bm25Norm, bm25Weight } from '../search/scoring.js';
import { type Changes, changeCount, detectChanges, gitDirty, sameControls, usesGit, walkChanges } from './changes.js';
import { ChunkIdAllocator, identityKey } from './chunk-ids.js';
import type { RepoContext } from './context.js';
import { createParser } from './parse-pool.js';
import { type ParseOutcome, contentHashOf, parseCacheKey } from './prepare-file.js';
import { purgeForSecretRules } from './purge.js';
import { pausePoint } from '../core/crash.js';
import { systemFailure } from '../core/system-errors.js';

/** A step of a sync, for progress bars; servers ignore them. */
export type SyncEvent =
  | { readonly type: 'scan'; readonly files: number }
  | { readonly type: 'index'; readonly done: number; readonly total: number; readonly path: string }
  | { readonly type: 'write' }
  /** The builtin embedder is learning its table from this many chunks. */
  | { readonly type: 'train'; readonly chunks: number }
  /** Embedding: `done` of `total` chunks that had no vector. */
  | { readonly type: 'embed'; readonly done: number; readonly total: number }
  /** Adding `done` of `total` new vectors to the nearest-neighbour graph (large indexes only). */
  | { readonly type: 'graph'; readonly done: number; readonly total: number };

/** What a sync did (seed 001 §2.5 fields first). */
export interface SyncSummary {
  /**
   * The embedding run after the lexical sync (explicit syncs with embeddings on): what it did, or
   * why it could not run (lexical search is unaffected either way).
   */
  readonly embeddings?: EmbedSummary | { readonly error: string };
  /** Files read by this sync: new ones and those whose size or mtime changed. */
  readonly files_scanned: number;
  readonly chunks_created: number;
  /** Chunks the index already had that are still there (same path, position and content). */
  readonly chunks_unchanged: number;
  readonly chunks_deleted: number;
  readonly duration_ms: number;
  /** `none`: nothing had changed (nothing written); `incremental`: only changed files; `full`: every file. */
  readonly mode: 'none' | 'incremental' | 'full';
  /** Why a full rebuild ran (`--force`, first sync, config or rules changed, damaged index), or null. */
  readonly full_reason: string | null;
  /** How changed files were found: a full `walk`, `stat`s of the catalog, or `git`. */
  readonly found_by: 'walk' | 'stat' | 'git';
  /** Catalogued files whose stat was unchanged, so they were not read. */
  readonly files_unchanged: number;
  readonly files_removed: number;
  /** Of the files read: those the previous index did not have, and those it had (refresh_index's added / updated). */
  readonly files_added: number;
  readonly files_updated: number;
  /** When the generation now current was committed (ISO 8601): this sync's, or the unchanged one's. */
  readonly synced_at: string;
  /** Of the files read: those whose chunks and outline came from the parse cache instead of a parse. */
  readonly files_cached: number;
  /** Of the files read: those skipped, by reason (too-large, binary, unreadable, secret). */
  readonly skipped_by_reason: Record<string, number>;
  /** Of the files read: those with a language adapter chunked as text (parse errors, too large to parse). */
  readonly text_fallbacks: Record<string, number>;
  readonly files_indexed: number;
  readonly files_skipped: number;
  readonly chunks_total: number;
  readonly generation: number;
  /** True when this commit also merged segments (the small ones into one, or all of them). */
  readonly merged: boolean;
  /** A first sync that stopped at its time budget: it indexed `files` of the `of` files found (see FirstAnswer). */
  readonly partial?: { readonly files: number; readonly of: number };
  /** Problems with single files of this sync (first 50), parse fallbacks included. */
  readonly errors: SoftError[];
}

const PROGRESS_EVERY = 64;
const MAX_REPORTED_ERRORS = 50;
/** Files read and parsed ahead of the one being added, so parse workers never starve. */
const LOOKAHEAD = 64;

/** The chunking rules of a config: params and the key that is part of every chunk hash. */
export function chunkRules(params: ChunkParams): { params: ChunkParams; key: string } {
  return { params, key: chunkParamsKey(treeSitterChunker, params) };
}

/** The current generation, or why it cannot be built on (missing, damaged, other format). */
async function openBase(store: IndexStore): Promise<{ view: IndexView | undefined; problem: string | undefined }> {
  try {
    if (!(await store.readMeta())) return { view: undefined, problem: undefined };
    const integrity = await store.check();
    if (integrity.problems.length > 0) return { view: undefined, problem: `damaged index (${integrity.problems[0]})` };
    return { view: await store.open(), problem: undefined };
  } catch (error) {
    // A damaged or older-format index is simply replaced by a full rebuild.
    if (isRepodexError(error)) return { view: undefined, problem: error.message };
    throw error;
  }
}

/** Why the base cannot be updated incrementally, or undefined when it can. */
function fullReason(ctx: RepoContext, base: IndexView | undefined, problem: string | undefined, force: boolean, rulesKey: string): string | undefined {
  if (force) return '--force';
  if (problem) return problem;
  if (!base) return 'first sync';
  if (base.meta.feature_version !== FEATURE_VERSION) return `index built with other rules (feature version ${base.meta.feature_version}, now ${FEATURE_VERSION})`;
  if (base.meta.chunker.params_key !== rulesKey) return 'chunking settings changed';
  // Only settings that shape the index force a rebuild; indexes from before the key rebuild on any change.
  if (base.meta.config_hash !== ctx.loaded.hash && base.meta.index_config_key !== indexConfigKey(ctx.loaded.config)) return 'config.json changed';
  return undefined;
}

function sameHead(recorded: IndexView['meta']['git'], head: GitHead | undefined): boolean {
  return (recorded?.commit ?? null) === (head?.commit ?? null) && (recorded?.branch ?? null) === (head?.branch ?? null);
}

/** A file read and cut into chunks, ready to hand to the writer (or why it was skipped). */
interface Prepared {
  readonly candidate: Candidate;
  readonly state: FileState;
  readonly error?: string;
  readonly text?: string;
  readonly contentHash: string;
  readonly outcome?: ParseOutcome;
  readonly cached: boolean;
}

/**
 * How a first search on a large repository gets its answer soon (seed 003: show a partial index
 * during the initial build): the first sync indexes the files holding the query's words first,
 * and once it has spent `budgetMs` reading them it commits what it has, marked partial. The next
 * sync walks the tree and adds the rest. Only for a first sync (no index yet) of at least
 * `minBytes` of files.
 */
export interface FirstAnswer {
  readonly budgetMs: number;
  /** The query's terms (lower case, as the tokenizer makes them). */
  readonly words: readonly string[];
  readonly minBytes: number;
}

/**
 * Bring the index up to date with the working tree and commit the result as a new generation.
 * Incremental by default: only new files and files whose size or mtime changed are read (once
 * each), files that vanished are dropped, and the new versions go into one small segment; a
 * file whose content was parsed before (same content hash) takes its chunks and outline from the
 * parse cache. With nothing changed it returns without writing. A full rebuild (`force`, first
 * sync, changed rules, damaged index) reads every file, still through the parse cache. Chunk ids
 * stay stable throughout (see ChunkIdAllocator). The caller holds the writer lock.
 */
export async function* runSync(
  ctx: RepoContext,
  store: IndexStore,
  options: {
    readonly force?: boolean | undefined;
    readonly signal?: AbortSignal | undefined;
    /** Cores to leave free while parsing (a server answering requests keeps its thread's and its own). */
    readonly reservedCores?: number;
    readonly firstAnswer?: FirstAnswer | undefined;
    /** Called before each file is read: a server's sync gives way here while requests are being answered (see give-way.ts). */
    readonly giveWay?: (() => Promise<void> | undefined) | undefined;
  } = {},
): AsyncGenerator<SyncEvent, SyncSummary, undefined> {
  const started = performance.now();
  const { config } = ctx.loaded;
  const rules = chunkRules(config.chunk);
  // The config's own limits, never a server's overrides: every process builds the same index.
  const readLimits = { maxBytes: configLimits(config).max_file_bytes, allowHardLinks: config.allow_hard_links };
  const root = ctx.paths.root;
  // What an older repodex left on disk under other credential rules goes before anything is read.
  for (const line of await purgeForSecretRules(store.control)) await store.control.appendBuildLog(`purge: ${line}`);
  const head = readGitHead(root);
  const { view: base, problem } = await openBase(store);
  const why = fullReason(ctx, base, problem, options.force === true, rules.key);
  const scope = new RepoScope(root, config, ctx.denylist);
  const catalog = base?.catalog();
  // With no index to answer from, nothing waits on a free core: parse with all of them.
  const reserved = base ? (options.reservedCores ?? 0) : Math.min(options.reservedCores ?? 0, 1);
  // A first answer starts its parse threads before the walk: their start-up (runtime, credential
  // rules) overlaps it, and they load the common grammars once the walk has found the files.
  const early = !base && options.firstAnswer ? await createParser(rules.params, undefined, reserved) : undefined;
  let detected: { changes: Changes; dirtyNow: string[] | null };
  let loaded: Awaited<ReturnType<typeof loadHistory>>;
  try {
    detected =
      why === undefined && catalog ? detectChanges(scope, catalog, config.change_detection, base?.meta.git?.commit, base?.meta.partial !== undefined) : { changes: walkChanges(scope, undefined), dirtyNow: null };
    loaded = config.history.enabled && head?.commit ? await loadHistory(root, store.control, head.commit, config.history.max_commits) : undefined;
    if (!config.history.enabled) await dropHistory(store.control);
  } catch (error) {
    await early?.close();
    throw error;
  }
  const errors: SoftError[] = [...detected.changes.errors];
  const history = loaded?.history;
  // Unchanged files whose recent subjects changed (new commits touched them) are added again, for their history field.
  const changes: Changes = why === undefined && loaded && catalog ? withHistoryChanges(detected.changes, catalog, loaded.changed) : detected.changes;

  // A config edit that needs no rebuild still commits (an empty generation), to record the new config hash.
  // So does an index whose layout is missing (written before layouts were learned) or was learned by other rules, to learn it,
  // and one whose record of the control files' stats no longer holds, so that later checks need not walk the tree to prove the rules the same.
  if (
    why === undefined &&
    base &&
    catalog &&
    changeCount(changes) === 0 &&
    sameHead(base.meta.git, head) &&
    base.meta.config_hash === ctx.loaded.hash &&
    base.meta.layout?.version === LAYOUT_VERSION &&
    sameControls(catalog.tree, changes.tree)
  ) {
    // A damaged kept history read from git again changes no indexed file's field here: keep the sound one.
    if (loaded?.unkept) await keepHistory(store.control, loaded.history);
    await store.tidy();
    return noChange(base, changes, errors, started);
  }
  const incremental = why === undefined;
  const languages = changes.changed.map((file) => languageOf(file.path)).filter((language) => hasAdapter(language));
  let writer: Awaited<ReturnType<IndexStore['beginGeneration']>>;
  try {
    writer = await store.beginGeneration(incremental ? base : undefined);
  } catch (error) {
    await early?.close();
    throw error;
  }
  let committed = false;
  const parser = early ?? (await createParser(rules.params, languages, reserved));
  early?.expect(languages);
  try {
    yield { type: 'scan', files: changes.changed.length };
    // Chunks of the files this sync touches (removed or re-read), by identity: what keeps ids and counts unchanged chunks.
    const touched = new Set<string>([...changes.removed, ...changes.changed.map((file) => file.path)]);
    let previousChunks = 0;
    if (base) {
      if (incremental) {
        for (const path of changes.removed) await writer.remove(path);
        for (const path of touched) previousChunks += chunkCountOf(base, path);
      } else {
        previousChunks = base.stats.chunkCount;
      }
    }
    const allocator = new ChunkIdAllocator((id) => base !== undefined && base.docOf(id) >= 0);
    const cache = await store.parseCache();
    const skipped: Record<string, number> = {};
    const fallbacks: Record<string, number> = {};
    let created = 0;
    let matched = 0;
    let cachedFiles = 0;

    // A first answer stops at its budget, so the files most likely to answer it go first; their
    // segment still wants them in path order, so they are held and added once the reading stops.
    const first = !base && options.firstAnswer && sizeOf(changes.changed) >= options.firstAnswer.minBytes ? options.firstAnswer : undefined;
    const held: NewFile[] = [];
    const add = async (file: NewFile): Promise<void> => {
      if (first) held.push(file);
      else await writer.add(file);
    };
    // Read ahead and start parses LOOKAHEAD files beyond the one being added, in path order (or the first answer's order).
    const files = first ? holdingWordsFirst(root, changes.changed, first.words, readLimits.maxBytes) : changes.changed;
    let done = files.length;
    const reading = performance.now();
    const pending: Promise<Prepared>[] = [];
    let nextToStart = 0;
    const startUpTo = (limit: number): void => {
      for (; nextToStart < Math.min(limit, files.length); nextToStart++) {
        const started = prepare(files[nextToStart]!);
        // Awaited in order below; if the sync stops first (abort, an error), the rest are never awaited.
        started.catch(() => undefined);
        pending[nextToStart] = started;
      }
    };
    const prepare = async (candidate: Candidate): Promise<Prepared> => {
      const read = readSource(join(root, candidate.path), readLimits);
      if (!read.ok) return { candidate, state: read.state, error: read.state === 'unreadable' ? read.reason : undefined, contentHash: NO_CONTENT_HASH, cached: false };
      const language = languageOf(candidate.path);
      const contentHash = contentHashOf(read.text);
      const key = parseCacheKey(contentHash, language, rules.key, candidate.path);
      const hit = cache.get(key);
      if (hit) return { candidate, state: 'indexed', text: read.text, contentHash, outcome: hit, cached: true };
      const outcome = await parser.parse(read.text, language, candidate.path);
      // A credential is refused whole; the verdict is not cached (a cache hit means "scanned clean").
      if (outcome.secret) return { candidate, state: 'secret', error: `${describeSecret(outcome.secret)}: not indexed`, contentHash: NO_CONTENT_HASH, cached: false };
      cache.put(key, outcome);
      return { candidate, state: 'indexed', text: read.text, contentHash, outcome, cached: false };
    };

    for (let i = 0; i < files.length; i++) {
      if (options.signal?.aborted) throw new RepodexError('ABORTED', 'sync stopped before it committed');
      // A first answer reads files until its budget is spent, and waits for one only as long (for the first file, however long it takes).
      const deadline = first && i > 0 ? reading + first.budgetMs : undefined;
      if (deadline !== undefined && performance.now() >= deadline) {
        done = i;
        break;
      }
      if (i % PROGRESS_EVERY === 0) yield { type: 'index', done: i, total: files.length, path: files[i]!.path };
      const pause = options.giveWay?.();
      if (pause) await pause;
      startUpTo(i + LOOKAHEAD);
      const prepared = deadline !== undefined ? await within(pending[i]!, deadline - performance.now()) : await pending[i]!;
      if (prepared === undefined) {
        done = i;
        break;
      }
      delete pending[i];
      const { candidate } = prepared;
      const language = languageOf(candidate.path);
      const record = { ...candidate, state: prepared.state, language, contentHash: prepared.contentHash };
      if (prepared.state !== 'indexed' || !prepared.outcome || prepared.text === undefined) {
        skipped[prepared.state] = (skipped[prepared.state] ?? 0) + 1;
        if (prepared.error) errors.push({ path: candidate.path, reason: prepared.error });
        await add({ record, chunks: [], symbols: [], fallback: 'no-adapter' });
        continue;
      }
      if (prepared.cached) cachedFiles++;
      const { outcome } = prepared;
      if (outcome.fallback === 'parse-error' || outcome.fallback === 'too-large') {
        fallbacks[outcome.fallback] = (fallbacks[outcome.fallback] ?? 0) + 1;
        errors.push({ path: candidate.path, reason: outcome.fallback === 'parse-error' ? 'parse error: chunked as text, no outline' : 'too large to parse: chunked as text' });
      }
      const file = await buildFile(record, prepared.text, outcome, rules.key, base, allocator, historyTerms(history?.files.get(candidate.path)));
      created += file.created;
      matched += file.matched;
      await add(file.file);
    }
    held.sort((a, b) => byPath(a.record, b.record));
    for (const file of held) await writer.add(file);
    const partial = done < files.length ? { files: done, of: files.length } : undefined;
    // Every parse is done: stop the workers (their isolates, grammars and parse memory) before
    // the segment is encoded, so the two peaks do not add up.
    await parser.close();
    yield { type: 'write' };
    // A partial generation records its root folder with a time no folder has: whoever reads it
    // without knowing the mark (an older repodex) lists every folder again and finds the files it
    // has not read, instead of trusting folder times to say nothing was added.
    const tree = partial ? { dirs: [{ path: '', mtimeMs: -1, ctimeMs: -1 }], controls: changes.tree.controls } : changes.tree;
    await writer.setTree(tree, recordGitDirty(root, config.change_detection, changes, detected.dirtyNow, base?.meta.git?.commit, head));
    const layout = layoutOf(root, readLimits, incremental ? base : undefined, changes);
    const durationMs = Math.round(performance.now() - started);
    await pausePoint('before-commit');
    const result = await writer.commit({
      config_hash: ctx.loaded.hash,
      index_config_key: indexConfigKey(config),
      project_type: config.project_type,
      chunker: { name: treeSitterChunker.name, version: treeSitterChunker.version, params_key: rules.key },
      git: head ?? null,
      synced_at: new Date().toISOString(),
      duration_ms: durationMs,
      ...(partial ? { partial } : {}),
      layout,
    });
    committed = true;
    // Committed: what follows only saves work for the next sync, so a full or read-only disk there
    // is reported in the summary, never as a failed sync.
    const keep = async (name: string, then: string, work: () => Promise<void>): Promise<void> => {
      try {
        await work();
      } catch (error) {
        const known = isRepodexError(error) ? error : systemFailure(error);
        errors.unshift({ path: name, reason: `not saved (${known?.detail ?? errorMessage(error)}): ${then}` });
      }
    };
    // A history read from git this time is kept for the next sync; the kept copy itself needs no rewrite.
    if (loaded && !loaded.asKept) await keep(store.control.describe('history.json'), 'the next sync reads the history from git again', () => keepHistory(store.control, loaded.history));
    await keep('.repodex/parse-cache.rpdx', 'the next sync parses these files again', () => cache.flush(() => liveCacheKeys(store, rules.key)));
    const meta = result.meta;
    const read = files.slice(0, done);
    const added = base ? read.filter((file) => base.findFile(file.path) < 0).length : read.length;
    return {
      files_scanned: read.length,
      chunks_created: created,
      chunks_unchanged: (base ? base.stats.chunkCount : 0) - previousChunks + matched,
      chunks_deleted: previousChunks - matched,
      duration_ms: Math.round(performance.now() - started),
      mode: incremental ? 'incremental' : 'full',
      full_reason: why ?? null,
      found_by: changes.how,
      files_unchanged: changes.unchanged,
      files_removed: incremental ? changes.removed.length : removedInRebuild(base, files),
      files_added: added,
      files_updated: read.length - added,
      synced_at: meta.synced_at,
      files_cached: cachedFiles,
      skipped_by_reason: skipped,
      text_fallbacks: fallbacks,
      files_indexed: meta.counts.files_indexed,
      files_skipped: meta.counts.files_skipped,
      chunks_total: meta.counts.chunks,
      generation: meta.generation,
      merged: result.merged,
      ...(partial ? { partial } : {}),
      errors: errors.slice(0, MAX_REPORTED_ERRORS),
    };
  } finally {
    await parser.close();
    if (!committed) await writer.abort();
  }
}

/** The bytes of a list of files, by their stat. */
function sizeOf(files: readonly Candidate[]): number {
  let total = 0;
  for (const file of files) total += file.size;
  return total;
}

/**
 * The files in the order a first answer reads them: those whose text holds the query's words
 * first, best first by the score a search would give the whole file if each word were in it once
 * (BM25 over files, with the file's size as its length, so a long changelog holding every word
 * does not come before the short module holding the rare ones), times the role multiplier a
 * search applies (tests, docs, prose and examples below source); then the rest in path order. A
 * quick look at the bytes, not a parse: each word as written in lower case, capitalized or in
 * capitals (`retry`, `maxRetry`, `MAX_RETRY`).
 */
function holdingWordsFirst(root: string, files: readonly Candidate[], words: readonly string[], maxBytes: number): Candidate[] {
  const counted = words.slice(0, 31);
  const spellings = counted.map((word) => [...new Set([word, word[0]!.toUpperCase() + word.slice(1), word.toUpperCase()])].map((form) => Buffer.from(form, 'latin1')));
  const held = new Map<Candidate, number>(); // which words a file holds, as bits
  const filesWith = new Array<number>(counted.length).fill(0);
  for (const file of files) {
    if (file.size > maxBytes || counted.length === 0) continue;
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(root, file.path));
    } catch {
      continue; // the sync itself says why it could not read it
    }
    let bits = 0;
    spellings.forEach((forms, w) => {
      if (!forms.some((form) => bytes.includes(form))) return;
      bits |= 1 << w;
      filesWith[w]!++;
    });
    if (bits !== 0) held.set(file, bits);
  }
  const idf = filesWith.map((count) => bm25Idf(files.length, count));
  const averageSize = sizeOf(files) / Math.max(1, files.length);
  const roleWeight = pathRoleWeigher(counted);
  const weight = new Map<Candidate, number>();
  for (const [file, bits] of held) {
    const norm = bm25Norm(file.size, averageSize);
    let score = 0;
    for (let w = 0; w < counted.length; w++) if (bits & (1 << w)) score += bm25Weight(idf[w]!, 1, norm);
    weight.set(file, score * roleWeight(file.path, languageOf(file.path)));
  }
  return [...files].sort((a, b) => (weight.get(b) ?? 0) - (weight.get(a) ?? 0) || (weight.has(a) ? a.size - b.size : 0) || byPath(a, b));
}

/**
 * What git sees dirty against the commit this generation records, when the next sync may ask git
 * (null otherwise): the paths that differ now may be reverted later, and only this record lets git
 * see that. Reuses what git already said when HEAD has not moved.
 */
function recordGitDirty(
  root: string,
  mode: 'auto' | 'stat' | 'git',
  changes: Changes,
  dirtyNow: string[] | null,
  indexedCommit: string | null | undefined,
  head: GitHead | undefined,
): string[] | null {
  const commit = head?.commit;
  if (!commit || !usesGit(mode, changes.unchanged + changes.changed.length, commit)) return null;
  if (dirtyNow && indexedCommit === commit) return dirtyNow;
  return gitDirty(root, commit)?.dirty ?? null;
}

/**
 * The repository's layout for the new generation: the base's when no manifest or attribute file
 * changed, else learned again from every file the generation catalogues.
 */
function layoutOf(root: string, limits: ReadLimits, base: IndexView | undefined, changes: Changes): RepoLayout {
  const touches = changes.removed.some(isLayoutSource) || changes.changed.some((file) => isLayoutSource(file.path));
  if (base?.meta.layout?.version === LAYOUT_VERSION && !touches) return base.meta.layout;
  const paths = new Set(changes.changed.map((file) => file.path));
  if (base) {
    const catalog = base.catalog();
    const removed = new Set(changes.removed);
    for (let i = 0; i < catalog.count; i++) if (!removed.has(catalog.path(i))) paths.add(catalog.path(i));
  }
  return learnLayout([...paths], (path, maxBytes) => {
    const absolute = join(root, path);
    // Only a regular file in the tree is read: a symlinked .gitattributes (the root's is read even
    // when the walk left it out) may lead out of the repository.
    if (!lstatIfExists(absolute)?.isFile()) return undefined;
    const read = readSource(absolute, { ...limits, maxBytes: Math.min(maxBytes, limits.maxBytes) });
    return read.ok ? read.text : undefined;
  });
}

/** The summary of a sync that found nothing to do. */
function noChange(base: IndexView, changes: Changes, errors: SoftError[], started: number): SyncSummary {
  const meta = base.meta;
  return {
    files_scanned: 0,
    chunks_created: 0,
    chunks_unchanged: meta.counts.chunks,
    chunks_deleted: 0,
    duration_ms: Math.round(performance.now() - started),
    mode: 'none',
    full_reason: null,
    found_by: changes.how,
    files_unchanged: changes.unchanged,
    files_removed: 0,
    files_added: 0,
    files_updated: 0,
    synced_at: meta.synced_at,
    files_cached: 0,
    skipped_by_reason: {},
    text_fallbacks: {},
    files_indexed: meta.counts.files_indexed,
    files_skipped: meta.counts.files_skipped,
    chunks_total: meta.counts.chunks,
    generation: meta.generation,
    merged: false,
    errors: errors.slice(0, MAX_REPORTED_ERRORS),
  };
}

/** Files of the previous index a full rebuild no longer has. */
function removedInRebuild(base: IndexView | undefined, files: readonly Candidate[]): number {
  if (!base) return 0;
  const now = new Set(files.map((file) => file.path));
  const catalog = base.catalog();
  let removed = 0;
  for (let i = 0; i < catalog.count; i++) if (!now.has(catalog.path(i))) removed++;
  return removed;
}

function chunkCountOf(view: IndexView, path: string): number {
  const slot = view.findFile(path);
  if (slot < 0) return 0;
  const { from, to } = view.fileDocs(slot);
  return to - from;
}

/** Identity keys of a file's chunks in the base generation → their ids. */
async function previousIdentities(view: IndexView | undefined, path: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const slot = view ? view.findFile(path) : -1;
  if (!view || slot < 0) return out;
  const { from, to } = view.fileDocs(slot);
  for (const chunk of await view.chunks(Array.from({ length: to - from }, (_, i) => from + i))) out.set(identityKey(chunk.chunkIndex, chunk.hash), chunk.id);
  return out;
}

/**
 * A file's chunks as the writer takes them: text, hashes, snippets, symbol paths, field terms
 * and stable ids. Counts chunks new to the index and chunks it already had (same identity).
 */
async function buildFile(
  record: NewFile['record'],
  text: string,
  outcome: ParseOutcome,
  rulesKey: string,
  base: IndexView | undefined,
  allocator: ChunkIdAllocator,
  history: readonly string[],
): Promise<{ file: NewFile; created: number; matched: number }> {
  const lines = splitLines(text);
  const contents = outcome.spans.map((span) => lines.slice(span.startLine - 1, span.endLine).join('\n'));
  const hashes = contents.map((content) => chunkHash(content, rulesKey));
  const previous = await previousIdentities(base, record.path);
  const { ids, kept: matched } = allocator.assign(record.path, hashes, previous);
  const pathTerms = queryTerms(record.path);
  if (looksGenerated(text)) pathTerms.push(GENERATED_MARK);
  const chunks: NewChunk[] = outcome.spans.map((span, index) => ({
    id: ids[index]!,
    startLine: span.startLine,
    endLine: span.endLine,
    hash: hashes[index]!,
    snippet: makeSnippet(lines, span.startLine, span.endLine),
    symbol: chunkSymbolPath(outcome.symbols, span.startLine, span.endLine, lines),
    text: contents[index]!,
    fields: {
      path: pathTerms,
      names: queryTerms(chunkDeclaredNames(outcome.symbols, span.startLine, span.endLine).join(' ')),
      ...(index === 0 && history.length > 0 ? { history } : {}),
    },
  }));
  return { file: { record, chunks, symbols: outcome.symbols, fallback: outcome.fallback, outlineText: outcome.packed?.outlineText }, created: chunks.length - matched, matched };
}

/**
 * Changes plus the unchanged catalogued files in `paths` (their history changed): merged into
 * `changed` in path order, with their catalogued stat, as modified files.
 */
function withHistoryChanges(changes: Changes, catalog: Catalog, paths: readonly string[]): Changes {
  const already = new Set(changes.changed.map((file) => file.path));
  const removed = new Set(changes.removed);
  const extra: Candidate[] = [];
  for (const path of paths) {
    const i = catalog.find(path);
    if (i < 0 || already.has(path) || removed.has(path) || catalog.record(i).state !== 'indexed') continue;
    extra.push({ path, ...catalog.stamp(i) });
  }
  if (extra.length === 0) return changes;
  const changed = [...changes.changed, ...extra].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { ...changes, changed, modified: changes.modified + extra.length };
}

/** Parse-cache keys of every indexed file of the current generation: what the cache must keep. */
async function liveCacheKeys(store: IndexStore, rulesKey: string): Promise<Set<string>> {
  const keys = new Set<string>();
  const catalog = (await store.open()).catalog();
  for (let i = 0; i < catalog.count; i++) {
    const record = catalog.record(i);
    if (record.state === 'indexed') keys.add(parseCacheKey(record.contentHash, record.language, rulesKey, record.path));
  }
  return keys;
}
