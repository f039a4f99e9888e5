#!/usr/bin/env node
/**
 * Mines retrieval-quality tasks from the real history of public repositories (see README.md).
 *
 * A task is one non-merge commit: query = its cleaned description, gold = the non-test source
 * files it changed that already exist in its parent tree, corpus = the parent tree. Mining is
 * deterministic: history is read up to a pinned HEAD, filtered by fixed rules, and sampled at
 * evenly spaced positions, so the same clone always gives the same tasks.json.
 *
 * Usage: node bench/quality/mine.mjs [--clones DIR] [--per-repo N] [--out FILE] [--list REPO]
 *   --clones DIR  where the clones live, one directory per repository name (default
 *                 $REPODEX_QUALITY_CLONES or /work/scratch/quality)
 *   --list REPO   print every eligible commit of REPO instead of writing the tasks file
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The mined repositories: history is read up to `head` only, so newer clones mine the same tasks. */
export const REPOS = [
  {
    name: 'trpc',
    url: 'https://github.com/trpc/trpc',
    head: '340811ba5320637fbaf48fccf3dbfdd258bd34db',
    exts: ['ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs'],
  },
  {
    name: 'poetry',
    url: 'https://github.com/python-poetry/poetry',
    head: 'f46702336862f30050d5c641d5ed6f7568ded793',
    exts: ['py', 'pyi'],
  },
  {
    name: 'fzf',
    url: 'https://github.com/junegunn/fzf',
    head: '956562daaa82ddf55ea8f7aeab56883377b742c6',
    exts: ['go'],
  },
  {
    name: 'ripgrep',
    url: 'https://github.com/BurntSushi/ripgrep',
    head: '3fce3b5bb0236da2df6d99672afb8a719642eca7',
    exts: ['rs'],
  },
  {
    name: 'jsoup',
    url: 'https://github.com/jhy/jsoup',
    head: '46b620860af930eedc193a705eaf7cea5aec89a6',
    exts: ['java'],
  },
  // Two more Python libraries beside poetry, so Python is measured on as many tasks as
  // TypeScript's monorepos are: fix commits only, whose descriptions read like bug reports.
  ...[
    ['httpx', 'https://github.com/encode/httpx', 'ae1b9f66238f75ced3ced5e4485408435de10768'],
    ['click', 'https://github.com/pallets/click', '2c8cd3ac958a7eb316d67f2d316c27086c4c0369'],
  ].map(([name, url, head]) => ({ name, url, head, exts: ['py', 'pyi'], fixesOnly: true })),
  // Two Go libraries beside fzf, so Go is measured on more than a dozen tasks a half: fix commits only.
  ...[
    ['gin', 'https://github.com/gin-gonic/gin', 'dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9'],
    ['cobra', 'https://github.com/spf13/cobra', 'adbc8813901bba65827259daa8e22ff94ec1f30e'],
  ].map(([name, url, head]) => ({ name, url, head, exts: ['go'], fixesOnly: true })),
  // TypeScript monorepos with docs sites, benchmarks, project templates, examples and playgrounds
  // beside their packages, where a short fix description has to find the package's source among
  // them. Only fix commits (`fix:`, `fix(scope):`, "Fix …"), the kind of task agents get most.
  ...[
    ['svelte-kit', 'https://github.com/sveltejs/kit', 'aa810a04146b98b77592f7b384347140d29ff599'],
    ['nuxt', 'https://github.com/nuxt/nuxt', '4e0099839c3ea0483e6dc639e4be6d9bdffc3e56'],
    ['unocss', 'https://github.com/unocss/unocss', 'a441ef4d8b14a20c0b3551383ae1b1e96940c0d2'],
    ['astro', 'https://github.com/withastro/astro', '99d3d3dbbfa4fd7b128a056337f1a719437a7377'],
    // Four more, added when the held-back half had been looked at too often to still tell: their
    // held-back tasks were scored once, after the tuning on the rest was done.
    ['vitest', 'https://github.com/vitest-dev/vitest', 'c3ba16b35847d27fb9f01f38cdcb047c77e121f8'],
    ['tanstack-query', 'https://github.com/TanStack/query', '40321a0b1b3bdd0afa11f0e439642ab84cdf6afe'],
    ['react-router', 'https://github.com/remix-run/react-router', 'cab1a69054aa7dfba08a81b6e4b4d13957c82a38'],
    ['svelte', 'https://github.com/sveltejs/svelte', '15720b16a5ef33e3e1f4301c77b94ec375070e73'],
  ].map(([name, url, head]) => ({
    name,
    url,
    head,
    exts: ['ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs'],
    fixesOnly: true,
    // react-router keeps its end-to-end tests and their helpers in `integration/`, named `*-test.ts`.
    ...(name === 'react-router' ? { tests: /(^|\/)integration\/|-test\.[^./]+$/ } : {}),
  })),
];

/** Directory names whose files never count as source: tests, fixtures, docs, examples, tooling. */
const NON_SOURCE_DIRS = new Set([
  'test', 'tests', '__tests__', '__mocks__', '__testfixtures__', '__fixtures__', 'fixtures', 'testing',
  'e2e', 'docs', 'doc', 'www', 'examples', 'example', 'scripts', 'bench', 'benchmarks', 'benchmark', '.github',
  '.changeset', '.vscode', '.husky', 'playground', 'playgrounds', 'templates', 'template', '__snapshots__',
]);

/** Conventional-commit types (and area prefixes) whose commits are not code changes worth a task. */
const SKIP_TYPES = new Set([
  'chore', 'ci', 'docs', 'doc', 'build', 'release', 'test', 'tests', 'style', 'revert', 'deps', 'examples',
  'example', 'www', 'pre-commit', 'pre-commit.ci', 'readme', 'changelog', 'bench', 'benchmarks', 'lint',
]);

/** Subjects starting like this are housekeeping (bumps, releases, merges, reverts, lint runs). */
const SKIP_SUBJECT =
  /^(bump|release|releasing|prepare release|merge|revert|reapply|update (dependency|dependencies|deps|changelog|lock)|upgrade dependencies|v?\d+\.\d+|version \d|\[pre-commit|\[autofix|autofix|format|lint|fix lint|fix typo|typo)/i;

/** Descriptions about docs, typos, or earlier commits say nothing about the code they touch. */
const NON_CODE_WORDS = /\b(readme|docs|documentation|changelog|typos?|previous commit|last commit|wip)\b/i;

/** Body paragraphs starting like this are trailers or boilerplate, not prose. */
const SKIP_BODY = /^(co-authored-by|signed-off-by|closes|close|fixes|fix|resolves|resolve|ref|refs|see|related|this reverts|reverts|depends on|follow-?up|cc|part of)\b/i;

const SAMPLE_PER_REPO = 25;
const MIN_WORDS = 4;
const MIN_PLAIN_WORDS = 3;
const MAX_GOLD = 5;
const MAX_BODY_WORDS = 30;

function git(cwd, args) {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
}

/** Whether a changed path is a non-test source file of this repository (by extension and location). */
export function isSource(file, exts) {
  const base = path.posix.basename(file);
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || base.startsWith('.')) return false; // no extension, or a dotfile such as .eslintrc.js
  if (!exts.includes(base.slice(dot + 1).toLowerCase())) return false;
  const dirs = file.split('/').slice(0, -1);
  if (dirs.some((d) => NON_SOURCE_DIRS.has(d.toLowerCase()) || /^templates?-/i.test(d))) return false; // create-*/template-react
  if (/\.(test|spec|bench|stories|config)\.[^.]+$/i.test(base)) return false; // foo.test.ts, vitest.config.ts
  if (/\.test-d\.[^.]+$/i.test(base)) return false; // type tests
  if (/^(test_.*|.*_test|conftest)\.pyi?$/i.test(base)) return false;
  if (/_test\.go$/i.test(base)) return false; // Go tests live beside the code
  if (/(Test|Tests)\.java$/.test(base)) return false;
  if (/^(setup|noxfile|tasks)\.py$/i.test(base) && dirs.length === 0) return false; // packaging scripts
  return true;
}

/** Strip PR and issue references, URLs, and doubled spaces from a description. */
function stripRefs(text) {
  return text
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/\(\s*(#\d+|[\w.-]+\/[\w.-]+#\d+|gh-\d+)(\s*,\s*(#\d+|[\w.-]+\/[\w.-]+#\d+))*\s*\)/gi, ' ')
    .replace(/(^|[\s(])(closes|fixes|resolves|fix|close|resolve)?\s*([\w.-]+\/[\w.-]+)?#\d+\b\)?/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Split a subject into its leading prefix (`fix:`, `feat(server)!:`, `utils/env:`, `[docs]`) and
 * the description that follows. The prefix is returned lower-cased without scope, or '' if none.
 */
export function splitPrefix(subject) {
  let s = subject.trim();
  let type = '';
  const bracket = /^\[([^\]]+)\]\s*/.exec(s);
  if (bracket) {
    type = bracket[1].toLowerCase();
    s = s.slice(bracket[0].length);
  }
  const conv = /^([\w./-]+)(\([^:]{0,60}\)`?)?!?:\s+/.exec(s); // tolerates typos like fix(`next)`:
  if (conv) {
    type = type || conv[1].toLowerCase();
    s = s.slice(conv[0].length);
  }
  return { type, rest: s };
}

/** The first sentence of the body's first prose paragraph, if it is short and not boilerplate. */
function bodySentence(body) {
  const para = body
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .find((p) => p.length > 0);
  if (!para) return '';
  if (!/^[A-Za-z`]/.test(para) || SKIP_BODY.test(para)) return '';
  if (/[<>|]|\]\(|```|\bPR\b|pull request|this pr\b/i.test(para)) return '';
  const end = para.search(/[.!?](\s|$)/);
  const sentence = stripRefs(end >= 0 ? para.slice(0, end) : para);
  const words = sentence.split(/\s+/).filter(Boolean).length;
  return words >= 3 && words <= MAX_BODY_WORDS ? sentence : '';
}

/** The query for a commit, or '' when its description is not descriptive enough to be a task. */
export function queryFor(subject, body) {
  const { type, rest } = splitPrefix(subject);
  if (SKIP_TYPES.has(type) || type.startsWith('deps') || type.startsWith('chore')) return '';
  const desc = stripRefs(rest).replace(/[.\s]+$/, '');
  if (SKIP_SUBJECT.test(desc) || SKIP_SUBJECT.test(subject) || NON_CODE_WORDS.test(desc)) return '';
  const words = desc.split(/\s+/).filter((w) => /[A-Za-z]/.test(w));
  // Plain words outside code spans: "npm, `trpc`, github `trpcio`" has four words but says little.
  const plain = desc
    .replace(/`[^`]*`/g, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^[^A-Za-z]+|[^A-Za-z]+$/g, ''))
    .filter((w) => /^[A-Za-z]{2,}$/.test(w));
  if (words.length < MIN_WORDS || plain.length < MIN_PLAIN_WORDS) return '';
  const extra = bodySentence(body);
  return extra && !desc.toLowerCase().includes(extra.toLowerCase()) ? `${desc}. ${extra}` : desc;
}

/** Every eligible commit of one repository, oldest first, each with its query and gold files. */
export function eligible(repo, clone) {
  const SEP = '\u0001';
  const END = '\u0002';
  const log = git(clone, [
    'log', '--no-merges', '--reverse', '--topo-order', `--format=%H${SEP}%P${SEP}%s${SEP}%b${END}`, repo.head,
  ]);
  const out = [];
  for (const rec of log.split(END)) {
    const [hash, parents, subject, body] = rec.replace(/^\n+/, '').split(SEP);
    if (!hash || !parents || parents.includes(' ')) continue; // root or merge commit
    if (repo.fixesOnly && !isFix(subject)) continue;
    const query = queryFor(subject, body ?? '');
    if (!query) continue;
    const changed = git(clone, ['diff-tree', '--no-commit-id', '-r', '--no-renames', '--name-only', parents, hash])
      .split('\n')
      .filter(Boolean);
    const sources = changed.filter((f) => isSource(f, repo.exts) && !repo.tests?.test(f));
    if (sources.length === 0 || sources.length > MAX_GOLD) continue;
    out.push({ hash, parent: parents, subject, query, sources });
  }
  return out;
}

/** A fix commit: `fix:`, `fix(scope):`, `[fix]`, or a subject starting "Fix", "Fixes", "Fixed". */
export function isFix(subject) {
  const { type } = splitPrefix(subject);
  return type === 'fix' || (type === '' && /^fix(es|ed)?\b/i.test(subject.trim()));
}

/** Keep only sources that exist in the parent tree (pure additions have no gold yet). */
function goldInParent(clone, parent, sources) {
  const listed = git(clone, ['ls-tree', '-r', '--name-only', parent, '--', ...sources]).split('\n');
  const present = new Set(listed.filter(Boolean));
  return sources.filter((f) => present.has(f));
}

/** Evenly spaced, deterministic sample of `n` tasks over a chronological candidate list. */
function sample(clone, candidates, n) {
  const picked = [];
  const used = new Set();
  // Walk forward from each evenly spaced position to the first candidate with gold in its parent.
  for (let i = 0; i < n; i++) {
    let j = Math.floor(((i + 0.5) * candidates.length) / n);
    for (; j < candidates.length; j++) {
      if (used.has(j)) continue;
      const c = candidates[j];
      const gold = goldInParent(clone, c.parent, c.sources);
      if (gold.length > 0) {
        used.add(j);
        picked.push({ ...c, gold });
        break;
      }
    }
  }
  return picked;
}

function parseArgs(argv) {
  const opts = {
    clones: process.env.REPODEX_QUALITY_CLONES || '/work/scratch/quality',
    perRepo: SAMPLE_PER_REPO,
    out: path.join(HERE, 'tasks.json'),
    list: '',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--clones') opts.clones = next();
    else if (a === '--per-repo') opts.perRepo = Number(next());
    else if (a === '--out') opts.out = next();
    else if (a === '--list') opts.list = next();
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const tasks = [];
  for (const repo of REPOS) {
    if (opts.list && opts.list !== repo.name) continue;
    const clone = path.join(opts.clones, repo.name);
    const candidates = eligible(repo, clone);
    if (opts.list) {
      for (const c of candidates) console.log(`${c.hash.slice(0, 10)}  ${c.query}  ->  ${c.sources.join(' ')}`);
      console.error(`${candidates.length} eligible commits`);
      return;
    }
    const picked = sample(clone, candidates, opts.perRepo);
    console.error(`${repo.name}: ${candidates.length} eligible commits, ${picked.length} tasks`);
    picked.forEach((c, k) => {
      tasks.push({
        id: `${repo.name}-${String(k + 1).padStart(2, '0')}`,
        repo: repo.name,
        commit: c.hash,
        parent: c.parent,
        query: c.query,
        gold: c.gold,
      });
    });
  }
  if (opts.list) return;
  writeFileSync(opts.out, `${JSON.stringify(tasks, null, 2)}\n`);
  console.error(`wrote ${tasks.length} tasks to ${path.relative(process.cwd(), opts.out) || opts.out}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
