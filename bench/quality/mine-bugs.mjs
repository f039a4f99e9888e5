#!/usr/bin/env node
/**
 * Mines issue-style tasks (see README.md): real bug reports, in their reporters' words, paired
 * with the source files their fix changed, over the tree the bug was reported against.
 *
 * Two public datasets supply them:
 * - BugsJS (JavaScript): bug reports of Express, ESLint and Karma as their GitHub issues were
 *   written (`Projects/<P>/<P>_issues.bin`, protobuf, in github.com/BugsJS/bug-dataset); the
 *   buggy tree is the `Bug-N` tag of BugsJS's fork of the project, the gold is what `Bug-N-fix`
 *   (the fix, source files only) changed.
 * - Defects4J (Java): the bug reports of Commons Lang and Mockito (titles and descriptions, as
 *   collected in github.com/Trustworthy-Software/Quatrain, `data/BugReport/<P>_bugreport.txt`);
 *   the buggy commit is `revision.id.buggy` in Defects4J's `active-bugs.csv`, the gold the files of
 *   its `patches/<N>.src.patch`, and the tree comes from the project's own repository.
 *
 * Deterministic: bugs are taken in id order, at evenly spaced positions, so the same inputs give
 * the same bug-tasks.json.
 *
 * Usage: node bench/quality/mine-bugs.mjs [--clones DIR] [--out FILE]
 *   --clones DIR  clones of the projects (one directory per repository name below) and of the
 *                 datasets (`bugsjs-data`, `defects4j`, `quatrain`); default $REPODEX_QUALITY_CLONES
 *                 or /work/scratch/quality. Bare repositories work.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSource } from './mine.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The projects bug reports come from; `take` is how many tasks each contributes. */
export const BUG_REPOS = [
  { name: 'express', url: 'https://github.com/BugsJS/express', exts: ['js'], dataset: 'bugsjs', project: 'Express', take: 15 },
  { name: 'eslint', url: 'https://github.com/BugsJS/eslint', exts: ['js'], dataset: 'bugsjs', project: 'Eslint', take: 20 },
  { name: 'karma', url: 'https://github.com/BugsJS/karma', exts: ['js'], dataset: 'bugsjs', project: 'Karma', take: 10 },
  { name: 'commons-lang', url: 'https://github.com/apache/commons-lang', exts: ['java'], dataset: 'defects4j', project: 'Lang', take: 15 },
  { name: 'mockito', url: 'https://github.com/mockito/mockito', exts: ['java'], dataset: 'defects4j', project: 'Mockito', take: 10 },
];

/** The datasets, as clones next to the projects'. */
export const DATASETS = {
  bugsjs: 'https://github.com/BugsJS/bug-dataset',
  defects4j: 'https://github.com/rjust/defects4j',
  quatrain: 'https://github.com/Trustworthy-Software/Quatrain',
};
const DATASET_DIRS = { bugsjs: 'bugsjs-data', defects4j: 'defects4j', quatrain: 'quatrain' };

function git(repo, args, encoding = 'utf8') {
  return execFileSync('git', ['-C', repo, ...args], { encoding, maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
}

function exists(repo, commit, file) {
  try {
    git(repo, ['cat-file', '-e', `${commit}:${file}`]);
    return true;
  } catch {
    return false;
  }
}

// --- protobuf, the little of it BugsJS's issue files need (project.proto in the dataset) ---

function varint(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}

/** The fields of one message: [field number, value] with value a number (varint) or bytes. */
function fields(bytes) {
  const out = [];
  let at = 0;
  while (at < bytes.length) {
    let key;
    [key, at] = varint(bytes, at);
    const type = key & 7;
    if (type === 0) {
      let value;
      [value, at] = varint(bytes, at);
      out.push([key >>> 3, value]);
    } else if (type === 2) {
      let length;
      [length, at] = varint(bytes, at);
      out.push([key >>> 3, bytes.subarray(at, at + length)]);
      at += length;
    } else {
      throw new Error(`unexpected protobuf wire type ${type}`);
    }
  }
  return out;
}

/** Bugs of a BugsJS project: id, the upstream issue number, its text. */
function bugsjsReports(data, project) {
  const bytes = git(data, ['show', `HEAD:Projects/${project}/${project}_issues.bin`], 'buffer');
  const bugs = [];
  for (const [field, value] of fields(bytes)) {
    if (field !== 3) continue;
    const bug = { id: 0, issue: 0, text: '' };
    for (const [f, v] of fields(value)) {
      if (f === 1) bug.id = v;
      else if (f === 2) bug.issue = v;
      else if (f === 5) bug.text = Buffer.from(v).toString('utf8');
    }
    if (bug.text.trim() !== '') bugs.push(bug);
  }
  // A bug linked to several issues is listed once per issue: keep its first report.
  bugs.sort((a, b) => a.id - b.id || a.issue - b.issue);
  return bugs.filter((bug, i) => i === 0 || bugs[i - 1].id !== bug.id);
}

/** A BugsJS bug as a task: the buggy tree is tag Bug-N, the gold what Bug-N-fix changed. */
function bugsjsTask(repo, clone, bug) {
  const buggy = git(clone, ['rev-parse', `Bug-${bug.id}^{commit}`]).trim();
  const fix = git(clone, ['rev-parse', `Bug-${bug.id}-fix^{commit}`]).trim();
  const changed = git(clone, ['diff', '--name-only', buggy, fix]).split('\n').filter(Boolean);
  const gold = changed.filter((file) => isSource(file, repo.exts) && exists(clone, buggy, file));
  return { commit: fix, parent: buggy, query: cleanReport(bug.text), gold, source: `BugsJS ${repo.project} bug ${bug.id} (issue #${bug.issue})` };
}

/** Bug reports of a Defects4J project, from Quatrain's collection: id → title and description. */
function defects4jReports(quatrain, project) {
  const text = git(quatrain, ['show', `HEAD:data/BugReport/${project}_bugreport.txt`]);
  const reports = new Map();
  for (const line of text.split('\n')) {
    const parts = line.split('$$');
    const m = /^([A-Za-z]+)-(\d+)$/.exec(parts[0] ?? '');
    if (!m || parts.length < 3) continue;
    reports.set(Number(m[2]), `${parts[1].trim()}\n\n${parts.slice(2).join('$$').trim()}`);
  }
  return reports;
}

/** A Defects4J bug as a task: the buggy revision from active-bugs.csv, the gold the files of its source patch. */
function defects4jTask(repo, clone, defects4j, id, report, buggy) {
  const patch = git(defects4j, ['show', `HEAD:framework/projects/${repo.project}/patches/${id}.src.patch`]);
  const files = [...new Set([...patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1]))];
  const gold = files.filter((file) => isSource(file, repo.exts) && exists(clone, buggy, file));
  return { commit: null, parent: buggy, query: cleanReport(report), gold, source: `Defects4J ${repo.project}-${id}` };
}

/** A report as a query: markdown images, HTML comments and issue-template checkboxes removed, nothing else. */
function cleanReport(text) {
  return text
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\r\n?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** `count` items of `list` at evenly spaced positions (all of them when there are fewer). */
function spread(list, count) {
  if (list.length <= count) return list;
  return Array.from({ length: count }, (_, i) => list[Math.floor(((i + 0.5) * list.length) / count)]);
}

function main() {
  const args = process.argv.slice(2);
  let clones = process.env.REPODEX_QUALITY_CLONES || '/work/scratch/quality';
  let out = path.join(HERE, 'bug-tasks.json');
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--clones') clones = args[++i];
    else if (args[i] === '--out') out = args[++i];
    else throw new Error(`unknown argument ${args[i]} (see the header of bench/quality/mine-bugs.mjs)`);
  }
  const data = (name) => path.join(clones, DATASET_DIRS[name]);
  const tasks = [];
  for (const repo of BUG_REPOS) {
    const clone = path.join(clones, repo.name);
    let candidates = [];
    if (repo.dataset === 'bugsjs') {
      candidates = bugsjsReports(data('bugsjs'), repo.project).map((bug) => () => bugsjsTask(repo, clone, bug));
    } else {
      const reports = defects4jReports(data('quatrain'), repo.project);
      const csv = git(data('defects4j'), ['show', `HEAD:framework/projects/${repo.project}/active-bugs.csv`]);
      for (const line of csv.split('\n').slice(1)) {
        const [id, buggy] = line.split(',');
        const report = reports.get(Number(id));
        if (report && buggy) candidates.push(() => defects4jTask(repo, clone, data('defects4j'), Number(id), report, buggy));
      }
    }
    // Only bugs whose fix changed at least one source file that existed in the buggy tree.
    const usable = candidates.map((make) => make()).filter((task) => task.gold.length > 0);
    const picked = spread(usable, repo.take);
    console.error(`${repo.name}: ${candidates.length} reports, ${usable.length} usable, ${picked.length} tasks`);
    picked.forEach((task, k) => tasks.push({ id: `${repo.name}-b${String(k + 1).padStart(2, '0')}`, repo: repo.name, kind: 'bug-report', ...task }));
  }
  writeFileSync(out, `${JSON.stringify(tasks, null, 2)}\n`);
  console.error(`wrote ${tasks.length} tasks to ${path.relative(process.cwd(), out) || out}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
