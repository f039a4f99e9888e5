import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { checkJsonBytes, checkedJsonText, readCheckedJson } from '../core/checked-json.js';
import { errorMessage, isRepodexError } from '../core/errors.js';
import { credentialInPath, redactSecrets } from '../safety/secrets.js';
import type { ControlPlane, PartCheck } from '../store/control.js';
import { queryTerms } from '../text/tokenizer.js';

const run = promisify(execFile);

/** Subjects kept per file, newest first: what its history field is made of. */
export const SUBJECTS_PER_FILE = 16;
/** Terms a file's history field holds at most. */
export const MAX_HISTORY_TERMS = 128;
/** Bytes of `git log` output read at most (a bound on time and memory whatever the repository). */
const MAX_LOG_BYTES = 64 * 1024 * 1024;

/** Each file's recent commit subjects, as of one commit. */
export interface History {
  /** The commit the history runs up to. */
  readonly head: string;
  readonly maxCommits: number;
  /** Repository-relative path → subjects, newest first (at most SUBJECTS_PER_FILE). */
  readonly files: ReadonlyMap<string, readonly string[]>;
}

/** The history field of a file: the distinct terms of its recent subjects, bounded. */
export function historyTerms(subjects: readonly string[] | undefined): string[] {
  if (!subjects || subjects.length === 0) return [];
  return queryTerms(subjects.join('\n')).slice(0, MAX_HISTORY_TERMS);
}

/**
 * The history for `head`, incrementally: from the copy kept beside the index when it is for the
 * same head; by reading only the new commits when it is for an ancestor; else from the last
 * `maxCommits` commits. Merge commits are left out (their subjects describe branches, not
 * changes). `changed` lists the paths whose subjects differ from the kept copy's (what an
 * incremental sync adds again). `unkept`: there was no sound kept copy (none, damaged, an older
 * version's), so the caller keeps this one even when no file needs adding again. `asKept`: this is
 * the kept copy itself, so there is nothing new to keep. Undefined when git cannot say (not
 * installed, a shallow or broken repository).
 */
export async function loadHistory(
  root: string,
  control: ControlPlane,
  head: string,
  maxCommits: number,
): Promise<{ history: History; changed: string[]; unkept: boolean; asKept: boolean } | undefined> {
  const kept = await readKept(control);
  if (kept && kept.head === head && kept.maxCommits === maxCommits) return { history: kept, changed: [], unkept: false, asKept: true };
  let history: History;
  try {
    if (kept && kept.maxCommits === maxCommits && (await isAncestor(root, kept.head, head))) {
      const newer = await gitLog(root, [`${kept.head}..${head}`]);
      history = { head, maxCommits, files: prepend(newer, kept.files) };
    } else {
      history = { head, maxCommits, files: prepend(await gitLog(root, ['-n', String(maxCommits), head]), new Map()) };
    }
  } catch {
    return undefined;
  }
  return { history, changed: historyChanged(kept, history), unkept: kept === undefined, asKept: false };
}

/** Keep a history beside the index (after the generation built from it is committed), checksummed. */
export async function keepHistory(control: ControlPlane, history: History): Promise<void> {
  const files = Object.fromEntries(history.files);
  await control.writeDocument(HISTORY_FILE, checkedJsonText({ version: HISTORY_VERSION, head: history.head, max_commits: history.maxCommits, files }, 'compact'));
}

/** Remove the kept history (history turned off: its subjects have no business on disk any more). */
export async function dropHistory(control: ControlPlane): Promise<void> {
  await control.removeDocument(HISTORY_FILE);
}

/**
 * Check the kept history (`verify`, `status`): a damaged one is never used — the next sync reads
 * the history from git again and adds the files whose subjects it then finds again — and one an
 * older version wrote (no checksum) is set aside the same way.
 */
export async function checkHistory(control: ControlPlane): Promise<PartCheck> {
  let bytes: Buffer | undefined;
  try {
    bytes = await control.readDocument(HISTORY_FILE);
  } catch (error) {
    return { checked: [HISTORY_FILE], problems: [`cannot read ${HISTORY_FILE}: ${errorMessage(error)}`], notes: [] };
  }
  if (!bytes) return { checked: [], problems: [], notes: [] };
  // The checksum alone (no parse: status runs this on every call, and the file can be large).
  const why = checkJsonBytes(bytes, 'compact');
  if (why === undefined) return { checked: [HISTORY_FILE], problems: [], notes: [] };
  if (isOlder(bytes)) return { checked: [HISTORY_FILE], problems: [], notes: [`${HISTORY_FILE} was written by an older repodex, without a checksum: the next sync reads the history from git again`] };
  return { checked: [HISTORY_FILE], problems: [`${HISTORY_FILE} is damaged: ${why}; \`repodex sync\` reads the history from git again`], notes: [] };
}

/** Paths whose history field differs between two histories. */
function historyChanged(before: History | undefined, after: History): string[] {
  const out: string[] = [];
  for (const [path, subjects] of after.files) {
    const old = before?.files.get(path);
    if (!old || old.length !== subjects.length || old.some((subject, i) => subject !== subjects[i])) out.push(path);
  }
  if (before) for (const path of before.files.keys()) if (!after.files.has(path)) out.push(path);
  return out;
}

/** The history kept beside the index, if any and sound (a damaged or older one is read from git again). */
async function readKept(control: ControlPlane): Promise<History | undefined> {
  let bytes: Buffer | undefined;
  try {
    bytes = await control.readDocument(HISTORY_FILE);
  } catch {
    return undefined; // unreadable: read from git
  }
  if (!bytes) return undefined;
  if (lastKept?.bytes.equals(bytes)) return lastKept.history;
  const kept = decodeKept(bytes);
  if (typeof kept === 'string') return undefined;
  lastKept = { bytes, history: kept };
  return kept;
}

/**
 * The kept history this process read last, with its bytes: a watching server syncs on every save,
 * and each sync would otherwise check and parse the same file again (28 ms on kafka). Histories
 * are never changed once made, so sharing it is safe.
 */
let lastKept: { readonly bytes: Buffer; readonly history: History } | undefined;

/** The kept history in `bytes`; `older` for a file without a checksum (an older version's), else why it is damaged. */
function decodeKept(bytes: Buffer): History | 'older' | string {
  let body: Record<string, unknown>;
  try {
    body = readCheckedJson(bytes, HISTORY_FILE, 'compact');
  } catch (error) {
    if (isOlder(bytes)) return 'older';
    return isRepodexError(error) ? (error.detail ?? error.message) : errorMessage(error);
  }
  const { version, head, max_commits: maxCommits, files } = body as { version?: unknown; head?: unknown; max_commits?: unknown; files?: unknown };
  const valid =
    version === HISTORY_VERSION &&
    typeof head === 'string' &&
    typeof maxCommits === 'number' &&
    typeof files === 'object' &&
    files !== null &&
    Object.values(files).every((subjects) => Array.isArray(subjects) && subjects.every((subject) => typeof subject === 'string'));
  if (!valid) return `${HISTORY_FILE} is damaged: unexpected fields`;
  return { head, maxCommits, files: new Map(Object.entries(files as Record<string, string[]>)) };
}

/** A history.json an older version wrote: version 1, no checksum. */
function isOlder(bytes: Buffer): boolean {
  return bytes.toString('latin1', 0, 12) === '{"version":1' && !bytes.subarray(-40).includes('"checksum"');
}

const HISTORY_FILE = 'history.json' as const;
/**
 * Versions of history.json:
 *   1 — head, max_commits, files (path → subjects, newest first).
 *   2 — the same, as a checked JSON file (core/checked-json.ts).
 */
const HISTORY_VERSION = 2;

async function isAncestor(root: string, ancestor: string, head: string): Promise<boolean> {
  try {
    await run('git', ['-C', root, 'merge-base', '--is-ancestor', ancestor, head], { timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Commits of a range, newest first: each subject (credentials in it replaced by `[REDACTED:rule]`:
 * subjects are stored in history.json and their terms in the index) with the paths it touched,
 * but for paths with a name shaped like a credential (never indexed, so never named on disk).
 */
async function gitLog(root: string, range: readonly string[]): Promise<{ subject: string; paths: string[] }[]> {
  const { stdout } = await run('git', ['-C', root, '-c', 'core.quotePath=false', 'log', '--no-merges', '--no-renames', '--relative', '--format=%x00%s', '--name-only', ...range, '--'], {
    maxBuffer: MAX_LOG_BYTES,
    timeout: 60_000,
  });
  const commits: { subject: string; paths: string[] }[] = [];
  for (const block of stdout.split('\0').slice(1)) {
    const [subject = '', ...paths] = block.split('\n');
    commits.push({ subject: redactSecrets(subject.trim()), paths: paths.filter((path) => path !== '' && credentialInPath(path) === undefined) });
  }
  return commits;
}

/** Newer commits' subjects put in front of the kept ones, each file capped at SUBJECTS_PER_FILE. */
function prepend(newer: readonly { subject: string; paths: string[] }[], older: ReadonlyMap<string, readonly string[]>): Map<string, readonly string[]> {
  const files = new Map<string, string[]>();
  for (const { subject, paths } of newer) {
    if (subject === '') continue;
    for (const path of paths) {
      let list = files.get(path);
      if (!list) files.set(path, (list = []));
      if (list.length < SUBJECTS_PER_FILE) list.push(subject);
    }
  }
  const out = new Map<string, readonly string[]>(older);
  for (const [path, subjects] of files) out.set(path, [...subjects, ...(older.get(path) ?? [])].slice(0, SUBJECTS_PER_FILE));
  return out;
}
