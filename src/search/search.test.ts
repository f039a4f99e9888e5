import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo } from '../../test/helpers.js';
import { createEngine } from '../compose.js';
import { STOPWORDS as TOKENIZER_STOPWORDS } from '../text/tokenizer.js';
import { PLAIN_BM25 } from './ranking.js';
import { stripIssueTemplate } from './search.js';
import type { Engine, SearchReport } from '../engine/engine.js';
import { handle } from '../protocol/index.js';
import { SearchRequest } from '../protocol/schemas.js';
import { queryTerms } from '../text/tokenizer.js';

// Property runs are seeded so every run is the same; FC_SEED=<n> explores (or replays) another seed.
fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20240601) });

// Ranking is checked against a naive reference computed here from the chunk texts alone (fetched
// back through the engine): our own regex tokenizer, our own N/df/tf/lengths, the formulas of
// seed 000 §4.1 (`idf`) and SPEC §3 (`bm25`), a full sort, then the caps.

// The stopword list is data of the spec, not logic under test: the reference shares it.
const STOPWORDS = TOKENIZER_STOPWORDS;

/** Naive tokenizer (SPEC §2) for ASCII text: whole identifier + camel/snake/kebab/digit parts. */
function naiveTokenize(text: string): string[] {
  const keep = (term: string): boolean => term.length >= 2 && !STOPWORDS.has(term);
  const out: string[] = [];
  for (const [word] of text.matchAll(/[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*/g)) {
    const terms: string[] = [];
    if (word.length <= 64 && keep(word.toLowerCase())) terms.push(word.toLowerCase());
    for (const segment of word.split(/[_-]+/)) {
      for (const [raw] of segment.matchAll(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g)) {
        const part = raw.toLowerCase();
        if (raw.length <= 40 && raw.length < word.length && keep(part) && !terms.includes(part)) terms.push(part);
      }
    }
    out.push(...terms);
  }
  return out;
}

const naiveQueryTerms = (q: string): string[] => [...new Set(naiveTokenize(q))].slice(0, 32);

interface RefChunk {
  readonly id: number;
  readonly path: string;
  readonly start: number;
  readonly end: number;
  readonly tf: Map<string, number>;
  readonly length: number;
}

interface RefHit {
  readonly id: number;
  readonly path: string;
  readonly start: number;
  readonly score: number;
  readonly why: string[];
}

/** Deterministic pseudo-random numbers, so the corpus is the same on every run. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) / 0x1000000;
  };
}

const VOCAB = [
  'alpha', 'beta', 'gamma', 'delta', 'parseURL', 'HTTPServer', 'loadConfig', 'max_file_bytes', 'render', 'token',
  'cache', 'lexer', 'buffer', 'stream', 'socket', 'retry', 'timeout', 'handler', 'router', 'schema', 'queue', 'worker',
  'digest', 'shard', 'IOError', 'content-type',
];

function corpus(): Record<string, string> {
  const rng = prng(20240601);
  const pick = (): string => VOCAB[Math.floor(rng() * VOCAB.length)]!;
  const files: Record<string, string> = {};
  for (let f = 0; f < 12; f++) {
    const dir = f % 3 === 0 ? 'src/core' : f % 3 === 1 ? 'src/net' : 'lib';
    const parts: string[] = [];
    const functions = 4 + Math.floor(rng() * 5);
    for (let j = 0; j < functions; j++) {
      const words = Array.from({ length: 2 + Math.floor(rng() * 8) }, pick).join(' ');
      parts.push(
        [
          `export function ${pick()}${j}(input: number) {`,
          `  const ${pick()}Value = ${pick()}(input);`,
          `  // ${words} shared`,
          `  return ${pick()}Value + ${Math.floor(rng() * 100)};`,
          '}',
        ].join('\n'),
      );
    }
    files[`${dir}/module-${String(f).padStart(2, '0')}.ts`] = `${parts.join('\n\n')}\n`;
  }
  // One file with many chunks that all match `widget` (over 4 × 120 lines, so any chunker must cut
  // it at least 5 times), and one more file that matches it once.
  const widgetFunction = (j: number): string =>
    [`export function widget${j}() {`, ...Array.from({ length: 48 }, (_, k) => `  // widget ${j} detail ${k}${' widget'.repeat((j + k) % 3)}`), '}'].join('\n');
  files['src/widgets.ts'] = `${Array.from({ length: 10 }, (_, j) => widgetFunction(j)).join('\n\n')}\n`;
  files['src/other-widget.ts'] = 'export const otherWidget = "widget";\n';
  // Identical chunks in several files and within one file: equal scores, so only the tie-break orders them.
  const tie = 'export const tiebreaker = 1;\n';
  files['ties/b.ts'] = tie;
  files['ties/a.ts'] = tie;
  files['ties/B.ts'] = tie;
  files['ties/sub/a.ts'] = tie;
  // Over 120 lines of identical functions: at least two chunks under any chunker, all matching.
  const tieFunction = ['export function tiebreaker() {', ...Array.from({ length: 22 }, () => '  // tiebreaker padding'), '}'].join('\n');
  files['ties/multi.ts'] = `${Array.from({ length: 6 }, () => tieFunction).join('\n\n')}\n`;
  // Other languages, for the language and glob filters.
  files['scripts/tool.py'] = 'def load_config(path):\n    # loadConfig for python, shared\n    return parse_url(path)\n';
  files['docs/guide.md'] = '# Guide\n\nHow the HTTPServer handles a retry and a timeout; shared notes.\n';
  files['docs/deep/more.md'] = '# More\n\nThe lexer and the buffer stream; shared notes on loadConfig.\n';
  files['README.md'] = '# Readme\n\nwidget render cache shared\n';
  // Small chunks, so files have many of them.
  files['.repodex/config.json'] = `${JSON.stringify({ chunk: { target_lines: 10 } })}\n`;
  return files;
}

let engine: Engine;
const chunks: RefChunk[] = [];
let df = new Map<string, number>();
let avgLength = 0;

beforeAll(async () => {
  const root = makeRepo(corpus());
  // The reference is plain BM25; the structure signals of the default profile are tested in ranking.test.ts.
  engine = createEngine({ root, ranking: PLAIN_BM25 });
  const summary = await engine.sync();
  expect(summary.files_indexed).toBe(Object.keys(corpus()).length - 1);
  const total = (await engine.status()).chunks;
  expect(total).toBeGreaterThan(40);
  const view = await engine.view();
  const ids = (await view.chunks(Array.from({ length: view.docCount }, (_, doc) => doc))).map((chunk) => chunk.id);
  expect(ids).toHaveLength(total);
  for (let i = 0; i < ids.length; i += 5) {
    const report = await engine.fetch(ids.slice(i, i + 5));
    for (const chunk of report.chunks) {
      if (!('lines' in chunk)) throw new Error(`chunk ${chunk.chunk_id} could not be fetched: ${chunk.error}`);
      expect(chunk.truncated).toBe(false);
      const text = chunk.lines
        .map((line, n) => {
          const match = /^(\d+)\| (.*)$/s.exec(line);
          expect(Number(match?.[1])).toBe(chunk.start_line + n);
          return match![2]!;
        })
        .join('\n');
      const tf = new Map<string, number>();
      const terms = naiveTokenize(text);
      for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
      chunks.push({ id: chunk.chunk_id, path: chunk.path, start: chunk.start_line, end: chunk.end_line, tf, length: terms.length });
    }
  }
  df = new Map();
  for (const chunk of chunks) for (const term of chunk.tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  avgLength = chunks.reduce((sum, chunk) => sum + chunk.length, 0) / chunks.length;
});

/** Result order of SPEC §3: score descending, then path, then start line. */
function resultOrder(a: RefHit, b: RefHit): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return a.start - b.start;
}

/**
 * A sum that depends only on the multiset of its terms (added smallest first), so two chunks whose
 * matched terms weigh the same get bit-identical scores: a mathematical tie stays a tie.
 */
function canonicalSum(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b).reduce((sum, value) => sum + value, 0);
}

function referenceScores(q: string, mode: 'bm25' | 'idf', allow: (path: string) => boolean = () => true): RefHit[] {
  const terms = naiveQueryTerms(q);
  const n = chunks.length;
  const hits: RefHit[] = [];
  for (const chunk of chunks) {
    if (!allow(chunk.path)) continue;
    const contributions: number[] = [];
    const why: string[] = [];
    for (const term of terms) {
      const tf = chunk.tf.get(term);
      if (tf === undefined) continue;
      why.push(term);
      const d = df.get(term)!;
      if (mode === 'idf') {
        contributions.push(Math.log(1 + n / d));
      } else {
        const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
        contributions.push((idf * tf * (1.2 + 1)) / (tf + 1.2 * (1 - 0.75 + (0.75 * chunk.length) / avgLength)));
      }
    }
    if (why.length > 0) hits.push({ id: chunk.id, path: chunk.path, start: chunk.start, score: canonicalSum(contributions), why });
  }
  return hits.sort(resultOrder);
}

function referenceSearch(q: string, mode: 'bm25' | 'idf', topK = 20, allow?: (path: string) => boolean): RefHit[] {
  const perFile = new Map<string, number>();
  const out: RefHit[] = [];
  for (const hit of referenceScores(q, mode, allow)) {
    const seen = perFile.get(hit.path) ?? 0;
    if (seen >= 2) continue;
    perFile.set(hit.path, seen + 1);
    out.push(hit);
    if (out.length === topK) break;
  }
  return out;
}

function expectMatchesReference(report: SearchReport, expected: RefHit[]): void {
  expect(report.results.map((hit) => [hit.chunk_id, hit.path, hit.start_line])).toEqual(expected.map((hit) => [hit.id, hit.path, hit.start]));
  report.results.forEach((hit, i) => {
    expect(hit.score).toBeCloseTo(expected[i]!.score, 9);
    expect(hit.why).toEqual(expected[i]!.why);
  });
}

async function search(q: string, options: { mode?: 'bm25' | 'idf'; top_k?: number; glob?: string; lang?: 'python' | 'markdown' | 'typescript' } = {}): Promise<SearchReport> {
  return engine.search({ q, ...options });
}

describe('idf scores (seed 000 §4.1), recomputed independently', () => {
  const queries = ['parseURL', 'loadConfig timeout', 'HTTPServer retry handler', 'alpha beta gamma delta', 'max_file_bytes', 'IOError content-type', 'the shared widget', 'url server'];
  it.each(queries)('%s', async (q) => {
    const report = await search(q, { mode: 'idf' });
    expect(report.mode).toBe('idf');
    expect(report.results.length).toBeGreaterThan(0);
    expectMatchesReference(report, referenceSearch(q, 'idf'));
  });

  it('score = Σ log(1 + N/df) over the matched unique query terms, spelled out for one hit', async () => {
    const report = await search('parseURL parseURL PARSEURL', { mode: 'idf' });
    const top = report.results[0]!;
    const n = chunks.length;
    const expected = top.why.reduce((sum, term) => sum + Math.log(1 + n / df.get(term)!), 0);
    expect(top.score).toBeCloseTo(expected, 12);
    expect(new Set(top.why).size).toBe(top.why.length);
  });
});

describe('bm25 scores (k1 = 1.2, b = 0.75), recomputed independently', () => {
  const queries = ['parseURL', 'loadConfig timeout', 'HTTPServer retry handler', 'widget', 'shared', 'socket stream buffer'];
  it.each(queries)('%s', async (q) => {
    const report = await search(q);
    expect(report.mode).toBe('bm25');
    expect(report.results.length).toBeGreaterThan(0);
    expectMatchesReference(report, referenceSearch(q, 'bm25'));
  });

  it('reports how many chunks matched', async () => {
    const report = await search('loadConfig timeout');
    expect(report.matched).toBe(referenceScores('loadConfig timeout', 'bm25').length);
  });
});

describe('caps', () => {
  it('at most 2 results per file, even when one file has many matching chunks', async () => {
    const matching = referenceScores('widget', 'bm25').filter((hit) => hit.path === 'src/widgets.ts');
    expect(matching.length).toBeGreaterThanOrEqual(4);
    for (const mode of ['bm25', 'idf'] as const) {
      const report = await search('widget', { mode });
      const perPath = new Map<string, number>();
      for (const hit of report.results) perPath.set(hit.path, (perPath.get(hit.path) ?? 0) + 1);
      expect(perPath.get('src/widgets.ts')).toBe(2);
      expect(Math.max(...perPath.values())).toBeLessThanOrEqual(2);
      // The two kept are that file's best two.
      const kept = report.results.filter((hit) => hit.path === 'src/widgets.ts').map((hit) => hit.chunk_id);
      expect(kept).toEqual(referenceScores('widget', mode).filter((hit) => hit.path === 'src/widgets.ts').slice(0, 2).map((hit) => hit.id));
      expectMatchesReference(report, referenceSearch('widget', mode));
    }
  });

  it('at most 2 per file holds for every query (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...VOCAB, 'shared', 'widget', 'tiebreaker'), { minLength: 1, maxLength: 5 }), async (words) => {
        const report = await search(words.join(' '));
        const perPath = new Map<string, number>();
        for (const hit of report.results) perPath.set(hit.path, (perPath.get(hit.path) ?? 0) + 1);
        for (const count of perPath.values()) expect(count).toBeLessThanOrEqual(2);
      }),
      { numRuns: 50 },
    );
  });

  it('top_k: default 20, values above 20 capped to 20 (the max_search_hits limit) by the engine', async () => {
    const eligible = referenceSearch('shared', 'bm25', 1000).length;
    expect(eligible).toBeGreaterThan(20);

    const byDefault = SearchRequest.parse({ op: 'search', q: 'shared' });
    const defaultReport = (await handle(engine, byDefault)) as SearchReport;
    expect(defaultReport.top_k).toBe(20);
    expect(defaultReport.results).toHaveLength(20);
    expectMatchesReference(defaultReport, referenceSearch('shared', 'bm25', 20));

    for (const asked of [21, 50, 1000, 2 ** 31]) {
      const request = SearchRequest.parse({ op: 'search', q: 'shared', top_k: asked });
      expect(request.top_k).toBe(asked); // the engine caps, at the limit in force, and says so
      const report = (await handle(engine, request)) as SearchReport;
      expect(report.top_k).toBe(20);
      expect(report.results).toHaveLength(20);
      expect(report.warnings).toContain(`asked for ${asked} results; a search returns at most 20 here (limits.max_search_hits in .repodex/config.json, or --max-search-hits on serve)`);
    }

    const five = (await handle(engine, SearchRequest.parse({ op: 'search', q: 'shared', top_k: 5, mode: 'idf' }))) as SearchReport;
    expect(five.results).toHaveLength(5);
    expectMatchesReference(five, referenceSearch('shared', 'idf', 5));
  });

  it('top_k below 1 or not an integer is rejected by the schema', () => {
    for (const top_k of [0, -1, 2.5, '5', null]) {
      expect(SearchRequest.safeParse({ op: 'search', q: 'shared', top_k }).success).toBe(false);
    }
  });
});

describe('why', () => {
  const wordArb = fc.oneof(
    fc.constantFrom(...VOCAB, 'shared', 'widget', 'tiebreaker', 'module', 'input', 'value', 'Guide'),
    fc.constantFrom('the', 'is', 'and', 'of', 'where', 'x', '42', 'zzznomatch', 'load', 'config', 'url', 'server', 'HTTP'),
  );
  const caseArb = fc.constantFrom<(word: string) => string>((w) => w, (w) => w.toUpperCase(), (w) => w.toLowerCase());
  const queryArb = fc
    .array(fc.tuple(wordArb, caseArb), { minLength: 1, maxLength: 6 })
    .map((pairs) => pairs.map(([word, recase]) => recase(word)).join(' '));

  it('property: why ⊆ the query terms, in query order, exactly the terms the chunk holds', async () => {
    await fc.assert(
      fc.asyncProperty(queryArb, fc.constantFrom('bm25' as const, 'idf' as const), async (q, mode) => {
        const report = await search(q, { mode });
        const terms = queryTerms(q);
        expect(report.terms).toEqual(terms);
        const byId = new Map(chunks.map((chunk) => [chunk.id, chunk]));
        for (const hit of report.results) {
          expect(hit.why.length).toBeGreaterThan(0);
          for (const term of hit.why) expect(terms).toContain(term);
          expect(hit.why).toEqual(terms.filter((term) => hit.why.includes(term)));
          expect(hit.why).toEqual(terms.filter((term) => byId.get(hit.chunk_id)!.tf.has(term)));
        }
        expectMatchesReference(report, referenceSearch(q, mode));
      }),
      { numRuns: 120 },
    );
  });

  it('a query with no searchable terms returns nothing, with a warning', async () => {
    const report = await search('the of and is');
    expect(report.terms).toEqual([]);
    expect(report.results).toEqual([]);
    expect(report.warnings.join(' ')).toMatch(/no searchable terms/);
  });
});

describe('deterministic tie-breaks', () => {
  it('equal scores are ordered by path, then start line (idf)', async () => {
    const report = await search('tiebreaker', { mode: 'idf' });
    const scores = new Set(report.results.map((hit) => hit.score));
    expect(scores.size).toBe(1);
    expect(report.results.map((hit) => `${hit.path}:${hit.start_line}`)).toEqual(
      referenceSearch('tiebreaker', 'idf').map((hit) => `${hit.path}:${hit.start}`),
    );
    const paths = report.results.map((hit) => hit.path);
    // Code-unit order: upper-case before lower-case, a folder's files after the shorter sibling names.
    expect([...new Set(paths)]).toEqual(['ties/B.ts', 'ties/a.ts', 'ties/b.ts', 'ties/multi.ts', 'ties/sub/a.ts']);
    const multi = report.results.filter((hit) => hit.path === 'ties/multi.ts');
    expect(multi).toHaveLength(2);
    expect(multi[0]!.start_line).toBe(1);
    expect(multi[0]!.start_line).toBeLessThan(multi[1]!.start_line);
  });

  it('equal scores are ordered by path, then start line (bm25)', async () => {
    const report = await search('tiebreaker');
    const single = report.results.filter((hit) => hit.path !== 'ties/multi.ts');
    expect(single.map((hit) => hit.path)).toEqual(['ties/B.ts', 'ties/a.ts', 'ties/b.ts', 'ties/sub/a.ts']);
    expect(new Set(single.map((hit) => hit.score)).size).toBe(1);
    expectMatchesReference(report, referenceSearch('tiebreaker', 'bm25'));
  });

  it('top_k cuts through a tie deterministically', async () => {
    const report = await search('tiebreaker', { mode: 'idf', top_k: 2 });
    expect(report.results.map((hit) => hit.path)).toEqual(['ties/B.ts', 'ties/a.ts']);
  });

  it('the same query gives the same results every time', async () => {
    const first = await search('shared widget loadConfig');
    for (let i = 0; i < 3; i++) expect(await search('shared widget loadConfig')).toEqual(first);
  });
});

describe('filters', () => {
  it('glob with a folder: only matching paths, same scores as unfiltered', async () => {
    const inSrcTs = (path: string): boolean => path.startsWith('src/') && path.endsWith('.ts');
    for (const mode of ['bm25', 'idf'] as const) {
      const report = await search('shared loadConfig', { mode, glob: 'src/**/*.ts' });
      expect(report.results.length).toBeGreaterThan(0);
      for (const hit of report.results) expect(inSrcTs(hit.path)).toBe(true);
      expectMatchesReference(report, referenceSearch('shared loadConfig', mode, 20, inSrcTs));
      expect(report.matched).toBe(referenceScores('shared loadConfig', mode, inSrcTs).length);
    }
  });

  it('glob without a slash matches the file name at any depth', async () => {
    const report = await search('shared loadConfig lexer', { glob: '*.md' });
    expect(report.results.map((hit) => hit.path).sort()).toEqual(['README.md', 'docs/deep/more.md', 'docs/guide.md']);
    expectMatchesReference(report, referenceSearch('shared loadConfig lexer', 'bm25', 20, (path) => path.endsWith('.md')));
  });

  it('lang keeps one language', async () => {
    const py = await search('loadConfig shared', { lang: 'python' });
    expect(py.results.map((hit) => hit.path)).toEqual(['scripts/tool.py']);
    const md = await search('shared', { lang: 'markdown', mode: 'idf' });
    expectMatchesReference(md, referenceSearch('shared', 'idf', 20, (path) => path.endsWith('.md')));
    const ts = await search('shared', { lang: 'typescript' });
    for (const hit of ts.results) expect(hit.path.endsWith('.ts')).toBe(true);
  });

  it('glob and lang combine; a filter nothing passes gives no results', async () => {
    const both = await search('shared', { lang: 'markdown', glob: 'docs/**' });
    expect(both.results.map((hit) => hit.path).sort()).toEqual(['docs/deep/more.md', 'docs/guide.md']);
    const none = await search('shared', { lang: 'python', glob: 'docs/**' });
    expect(none.results).toEqual([]);
    expect(none.matched).toBe(0);
    const noPath = await search('shared', { glob: 'nowhere/**' });
    expect(noPath.results).toEqual([]);
  });
});

describe('regression: mathematically equal scores are ties, whatever terms produced them', () => {
  // Chunks a.ts and b.ts match different query terms whose weights are equal (banana and damson
  // both have df 1), so both score w(apple) + w(cherry) + w(df 1). Summed in query order the two
  // floats differ in the last bit — (w1 + w2) + w3 vs (w1 + w3) + w2 — and that noise, not the
  // path, decided their order. Found by the `why` property test above (FC_SEED=4 or 6 hits it there).
  it('orders them by path, with the same score', async () => {
    const root = makeRepo({
      'a.ts': 'apple banana cherry\n',
      'b.ts': 'apple cherry damson\n',
      'c.ts': 'cherry\n',
      'd.ts': 'cherry\n',
      'e.ts': 'filler\n',
      'f.ts': 'filler\n',
    });
    const tiny = createEngine({ root });
    await tiny.sync();
    for (const mode of ['bm25', 'idf'] as const) {
      const report = await tiny.search({ q: 'apple banana cherry damson', mode });
      const [first, second] = report.results;
      expect([first?.path, second?.path], mode).toEqual(['a.ts', 'b.ts']);
      expect(first!.score, mode).toBe(second!.score);
    }
  });
});

describe('working buffers reused between queries', () => {
  // A query's per-chunk buffers are zeroed for the next one: chunk by chunk when it touched few,
  // all at once when it touched most of the index. Either way the next answer is as if it were first.
  it('a query touching every chunk, then narrower ones, answer as they do on a fresh engine', async () => {
    const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`src/m${i}.ts`, `export const common${i} = 'shared word';\n${i % 3 === 0 ? 'rare token here\n' : ''}`]));
    const root = makeRepo(files);
    const warm = createEngine({ root });
    await warm.sync();
    const broad = await warm.search({ q: 'shared word', top_k: 20 });
    expect(broad.matched).toBe(12);
    const queries = ['rare token', 'shared rare', 'common3 word', 'shared word'];
    const after = [];
    for (const q of queries) after.push(await warm.search({ q, top_k: 20 }));
    for (const [i, q] of queries.entries()) {
      const fresh = createEngine({ root });
      const first = await fresh.search({ q, top_k: 20 });
      expect(after[i]!.results.map((hit) => [hit.path, hit.score, hit.why]), q).toEqual(first.results.map((hit) => [hit.path, hit.score, hit.why]));
      expect(after[i]!.matched, q).toBe(first.matched);
    }
  });
});

describe('long queries (bug reports, stack traces)', () => {
  // Forty files share a vocabulary of template words; one holds the rare identifier the report is about.
  const boilerplate = ['environment', 'version', 'node', 'npm', 'parser', 'configuration', 'expected', 'actual', 'behavior', 'steps', 'reproduce', 'output', 'report', 'issue', 'running', 'command', 'result', 'default', 'setting', 'option', 'value', 'error', 'message', 'result', 'happens', 'instead', 'please', 'provide', 'details', 'information', 'context', 'example', 'problem', 'describe'];
  let engine: Engine;
  beforeAll(() => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/common${i}.ts`] = `// ${boilerplate.join(' ')}\nexport const common${i} = ${i};\n`;
    files['src/rules/padding.ts'] = 'export function checkPaddedBlocks(node: unknown): boolean {\n  return node !== null; // paddedBlocksRule\n}\n';
    engine = createEngine({ root: makeRepo(files) });
  });

  it('keep the terms that tell most: a rare identifier after 34 template words still finds its file', async () => {
    const report = `${boilerplate.map((word) => `${word}:`).join('\n')}\n\nThe paddedBlocksRule crashes:\n    at checkPaddedBlocks (src/rules/padding.ts:2:3)`;
    const result = (await handle(engine, SearchRequest.parse({ op: 'search', q: report, top_k: 3 }))) as SearchReport;
    expect(result.results[0]?.path).toBe('src/rules/padding.ts');
    expect(result.terms.length).toBeLessThanOrEqual(32);
    expect(result.terms).toContain('paddedblocksrule');
  });

  it('accept 64 KB of query text, and refuse more with the limit named', async () => {
    const filler = 'lorem ipsum dolor sit amet '.repeat(2500);
    const long = `checkPaddedBlocks ${filler}`.slice(0, 65_535).concat('z');
    expect(long).toHaveLength(65_536);
    const result = (await handle(engine, SearchRequest.parse({ op: 'search', q: long, top_k: 3 }))) as SearchReport;
    expect(result.results[0]?.path).toBe('src/rules/padding.ts');
    expect(SearchRequest.safeParse({ op: 'search', q: `${long}x` }).success).toBe(false);
  });
});

describe('issue-template boilerplate', () => {
  it('is dropped from pasted reports (checkboxes, the form\'s questions, version lines, comments); what the reporter wrote stays', () => {
    const report = [
      'What is the purpose of this pull request? (put an "X" next to item)',
      '[ ] Documentation update',
      '[X] Bug fix (template)',
      'Tell us about your environment',
      'ESLint Version: 3.19.0',
      'What parser (default, Babel-ESLint, etc.) are you using?',
      'babel-eslint',
      '<!-- describe the bug below -->',
      'The max-len rule ignores ignoreUrls when comments are long.',
      'Steps to reproduce: lint a file with a long URL in a comment.',
    ].join('\n');
    const kept = stripIssueTemplate(report);
    expect(kept).not.toMatch(/purpose of this pull request|Documentation update|Bug fix \(template\)|ESLint Version|What parser|describe the bug/);
    expect(kept).toContain('babel-eslint');
    expect(kept).toContain('The max-len rule ignores ignoreUrls when comments are long.');
    expect(kept).toContain('Steps to reproduce: lint a file with a long URL in a comment.');
    expect(stripIssueTemplate('what does parseConfig return?')).toBe('what does parseConfig return?'); // one line: a question, not a template
  });
});
