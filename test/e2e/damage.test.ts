import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/compose.js';
import { isRepodexError } from '../../src/core/errors.js';
import type { SearchReport } from '../../src/engine/engine.js';
import { AnnGraph } from '../../src/vector/ann-graph.js';
import { TOPICS, git, makeRepo, prng, runCli, tempDir, yieldToEventLoop } from '../helpers.js';

// Byte flips in every kind of file under .repodex/: `verify` finds every one and names the file,
// `status` reports it as damage (never by failing), no search answers from the damaged file (it
// answers as the pristine index does, or says it fell back, or repairs first, or refuses), and the
// fix `verify` names works. Also: an index whose chunks repeat verifies clean when fresh.

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
const FLIPS = 120;
const QUERIES = ['continue a partial transfer', 'evict the stale lru entry'] as const;
const MODES = ['bm25', 'vector', 'hybrid'] as const;
/** The kinds a vector search reads: damage in them shows in its warnings. */
const SEMANTIC_KINDS = new Set(['builtin table', 'vector log', 'graph sidecar', 'graph']);

/** 72 one-topic files (enough chunks for the builtin embedder to learn from), and copies of four of them: identical chunks. */
function files(): Record<string, string> {
  const out: Record<string, string> = {};
  for (let f = 0; f < 72; f++) {
    const words = TOPICS[f % TOPICS.length]!;
    out[`src/${words[0]}/mod${f}.ts`] = [0, 1].map((i) => {
      const [a, b, c, d] = [words[(i + f) % 6]!, words[(i + f + 1) % 6]!, words[(i + f + 2) % 6]!, words[(i + f + 3) % 6]!];
      return `/** Handles the ${a} and ${b} of a ${c}. */\nexport function ${a}${b[0]!.toUpperCase()}${b.slice(1)}${f}_${i}(${c}: number, ${d}: string): string {\n  // the ${d} decides the ${b}\n  return ${d}.repeat(${c}) + '${b}';\n}\n`;
    }).join('\n');
  }
  for (let f = 0; f < 4; f++) out[`vendor/copy${f}.ts`] = out[`src/${TOPICS[f % TOPICS.length]![0]}/mod${f}.ts`]!;
  return out;
}

/** Files under .repodex/ that no answer depends on: the user's own settings, and what is written only for people. */
// checked.json only says which files an earlier check found sound, as which version: damage to it
// makes the next checks read those files again, and can never vouch for a changed file.
const NOT_INDEX = new Set(['config.json', 'ignore', '.gitignore', 'build.log', 'last_bundle.json', 'last_bundle.md', 'checked.json']);

/** Every file kind an index can hold, by a pattern over its path inside .repodex/. */
const KINDS: readonly { readonly kind: string; readonly pattern: RegExp }[] = [
  { kind: 'meta', pattern: /^meta\.json$/ },
  { kind: 'generation', pattern: /^gen-\d+\.rpdx$/ },
  { kind: 'segment', pattern: /^seg-\d+\.rpdx$/ },
  { kind: 'parse cache', pattern: /^parse-cache\.rpdx$/ },
  { kind: 'history', pattern: /^history\.json$/ },
  { kind: 'analytics', pattern: /^analytics\.json$/ },
  { kind: 'audit log', pattern: /^audit\.jsonl$/ },
  { kind: 'vector manifest', pattern: /^vectors\/manifest\.json$/ },
  { kind: 'builtin table', pattern: /^vectors\/builtin-table\.bin$/ },
  { kind: 'vector log', pattern: /^vectors\/[^/]+\/vectors\.bin$/ },
  { kind: 'graph sidecar', pattern: /^vectors\/[^/]+\/graph\.json$/ },
  { kind: 'graph', pattern: /^vectors\/[^/]+\/graph\.usearch$/ },
  { kind: 'credential rules marker', pattern: /^secret-rules\.json$/ },
];

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const visit = (at: string): void => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) visit(path);
      else out.push(relative(dir, path));
    }
  };
  visit(dir);
  return out.sort();
}

/** A search's answer as compared with the pristine index's: the mode and every hit's place and id. */
function answerOf(report: SearchReport): string {
  return JSON.stringify([report.mode, report.results.map((hit) => `${hit.path}:${hit.start_line}-${hit.end_line}#${hit.chunk_id}@${hit.score.toFixed(6)}`)]);
}

type Outcome = { readonly answer: string; readonly warnings: string[]; readonly synced: boolean } | { readonly refused: string };

async function searchOutcome(root: string, q: string, mode: (typeof MODES)[number]): Promise<Outcome> {
  const engine = createEngine({ root });
  try {
    const report = await engine.search({ q, mode, top_k: 5 });
    return { answer: answerOf(report), warnings: report.warnings, synced: report.synced !== undefined };
  } catch (error) {
    // Refused, never answered from: a section whose checksum fails when a search reads it.
    if (isRepodexError(error) && error.code === 'INDEX_CORRUPT') return { refused: error.message };
    throw error;
  } finally {
    engine.analytics.flush();
  }
}

describe.skipIf(!HAS_GIT)('damage: a byte flipped in any file under .repodex/', () => {
  it(`is found by verify and status, never answered from, and repaired by the fix verify names (${FLIPS} flips over every file kind)`, { timeout: 900_000 }, async () => {
    const root = makeRepo(files());
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'upload and cookie handling');
    writeFileSync(join(root, 'src/upload/mod0.ts'), `${readFileSync(join(root, 'src/upload/mod0.ts'), 'utf8')}\n// resume from the last offset\n`);
    git(root, 'commit', '-q', '-am', 'resume an interrupted transfer');
    // Every index is "large" from one vector on: the embedding run keeps a nearest-neighbour graph.
    makeRepo({ '.repodex/config.json': JSON.stringify({ embeddings: { provider: 'builtin', ann_from: 1 } }) }, root);
    const synced = runCli(['sync', '--json', '--root', root]);
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.json<{ embeddings: { vectors: number } }>().embeddings.vectors).toBeGreaterThan(0);
    for (const q of QUERIES) expect(runCli(['search', q, '--json', '--root', root]).code).toBe(0); // analytics, audit lines
    expect(runCli(['bundle', 'resume an upload', '--root', root]).code).toBe(0); // last_bundle.*, which no answer reads

    const dataDir = join(root, '.repodex');
    const pristine = join(tempDir(), 'pristine');
    cpSync(dataDir, pristine, { recursive: true });
    const restore = (): void => {
      rmSync(dataDir, { recursive: true, force: true });
      cpSync(pristine, dataDir, { recursive: true });
    };

    // Every file is of a known kind (a new kind must be added here, and to verify), and every kind is present.
    const all = listFiles(pristine).filter((path) => !NOT_INDEX.has(path));
    const kindOf = (path: string): string => KINDS.find(({ pattern }) => pattern.test(path))?.kind ?? `unknown: ${path}`;
    const present = new Set(all.map(kindOf));
    const expected = KINDS.map(({ kind }) => kind).filter((kind) => AnnGraph.available() || !kind.startsWith('graph'));
    expect([...present].sort()).toEqual([...expected].sort());
    if (!AnnGraph.available()) console.warn('the nearest-neighbour graph (usearch) does not load here: its two file kinds are not flipped');

    // The pristine index verifies (its chunks repeat: the log holds fewer vectors than chunks use), and its answers.
    const clean = await createEngine({ root }).verify();
    expect(clean, clean.problems.join('\n')).toMatchObject({ ok: true, problems: [] });
    expect(clean.checked.filter((name) => all.includes(name)).sort()).toEqual([...all].sort());
    const manifest = JSON.parse(readFileSync(join(pristine, 'vectors/manifest.json'), 'utf8')) as { records: number; counts: { vectors: number } };
    expect(manifest.records).toBeLessThan(manifest.counts.vectors);
    const baseline = new Map<string, string>();
    for (const q of QUERIES) {
      for (const mode of MODES) {
        const outcome = await searchOutcome(root, q, mode);
        if ('refused' in outcome) throw new Error(`the pristine index refused ${mode} ${q}: ${outcome.refused}`);
        expect(outcome.warnings, `${mode} ${q}`).toEqual([]);
        baseline.set(`${mode} ${q}`, outcome.answer);
      }
    }
    const auditEntries = (await createEngine({ root }).audit(undefined, 1000)).entries.length;
    restore();

    const rng = prng(20261125);
    const byKind = new Map<string, number>();
    for (let flip = 0; flip < FLIPS; flip++) {
      await yieldToEventLoop();
      const path = all[flip % all.length]!;
      const name = path;
      const kind = kindOf(path);
      byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
      const file = join(dataDir, path);
      const bytes = readFileSync(file);
      const at = Math.floor(rng() * bytes.length);
      bytes[at]! ^= 1 << Math.floor(rng() * 8);
      writeFileSync(file, bytes);
      const what = `flip ${flip}: ${name} byte ${at}`;

      const verify = await createEngine({ root }).verify();
      expect(verify.ok, what).toBe(false);
      expect(verify.problems.join('\n'), what).toContain(name);
      const status = await createEngine({ root }).status();
      expect(status.damage.join('\n'), what).toContain(name);
      // Analytics are shown as they were, or from zero: never what a damaged file says.
      expect([0, QUERIES.length], what).toContain(status.semantic?.analytics.queries);

      for (const q of QUERIES) {
        for (const mode of MODES) {
          const outcome = await searchOutcome(root, q, mode);
          if ('refused' in outcome) {
            expect(outcome.refused, `${what}: ${mode} ${q}`).toMatch(/damaged|checksum|does not match/);
            continue;
          }
          // A damaged file a vector search reads is said to be damaged, whatever the answer.
          if (mode !== 'bm25' && SEMANTIC_KINDS.has(kind)) expect(outcome.warnings.join('\n'), `${what}: ${mode} ${q}`).toContain(`${name} is damaged`);
          if (outcome.answer === baseline.get(`${mode} ${q}`)) continue;
          // Another answer only after repairing (a rebuild), or with a warning saying why it fell back.
          if (outcome.synced) continue;
          expect(outcome.warnings.join('\n'), `${what}: ${mode} ${q} answered otherwise without saying why`).toMatch(/damaged/);
        }
      }
      if (kind === 'audit log') {
        const audit = await createEngine({ root }).audit(undefined, 1000);
        expect(audit.entries.length, what).toBe(auditEntries - 1);
        expect(audit.warnings?.join('\n'), what).toMatch(/1 damaged line\(s\) of the audit log left out/);
      }

      // The fix verify names works: `repodex sync` (an audit log cannot be rebuilt: its message says to delete it).
      if (kind === 'audit log') {
        expect(verify.problems.join('\n'), what).toMatch(/keep a copy of the file if you need it and delete it/);
        rmSync(file);
      } else {
        expect(verify.problems.join('\n'), what).toMatch(/`repodex sync`/);
        const engine = createEngine({ root });
        await engine.sync();
        engine.analytics.flush();
      }
      const after = await createEngine({ root }).verify();
      expect(after.problems, `${what}: after the fix`).toEqual([]);
      // A sample through the real CLI: the same verdicts, from a process of its own.
      if (flip % 12 === 0) {
        restore();
        writeFileSync(file, bytes);
        const cliVerify = runCli(['verify', '--root', root]);
        expect(cliVerify.code, what).toBe(1);
        expect(cliVerify.stdout, what).toContain(name);
        const cliStatus = runCli(['status', '--json', '--root', root]);
        expect(cliStatus.code, `${what}: ${cliStatus.stderr}`).toBe(0);
        expect(cliStatus.json<{ damage: string[] }>().damage.join('\n'), what).toContain(name);
        const hybrid = runCli(['search', QUERIES[0], '--mode', 'hybrid', '--top-k', '5', '--json', '--root', root]);
        if (hybrid.code === 0) {
          const report = hybrid.json<SearchReport>();
          if (answerOf(report) !== baseline.get(`hybrid ${QUERIES[0]}`) && report.synced === undefined) expect(report.warnings.join('\n'), what).toMatch(/damaged/);
        } else {
          expect(hybrid.stdout + hybrid.stderr, what).toMatch(/index is damaged/);
        }
      }
      restore();
    }
    // Every kind was flipped several times.
    for (const kind of expected) expect(byKind.get(kind) ?? 0, kind).toBeGreaterThanOrEqual(Math.floor(FLIPS / all.length));
  });
});

describe('N4 on a fresh build', () => {
  it('an index whose chunks repeat verifies clean', () => {
    const root = makeRepo(files());
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const verify = runCli(['verify', '--json', '--root', root]);
    expect(verify.code, verify.stdout).toBe(0);
  });
});
