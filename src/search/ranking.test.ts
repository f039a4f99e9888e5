import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTER_SOURCE, makeRepo } from '../../test/helpers.js';
import { createEngine } from '../compose.js';
import type { Engine } from '../engine/engine.js';
import { isTestPath } from '../scan/test-paths.js';
import { DEFAULT_RANKING, PLAIN_BM25, rankingFromEnv } from './ranking.js';

describe('rankingFromEnv', () => {
  it('defaults to the measured profile and REPODEX_BOOSTS=0 turns every structure signal off', () => {
    expect(rankingFromEnv({})).toEqual(DEFAULT_RANKING);
    expect(rankingFromEnv({ REPODEX_BOOSTS: '0' })).toEqual(PLAIN_BM25);
  });

  it('REPODEX_RANKING overrides single weights and rejects anything else with ENV_INVALID', () => {
    expect(rankingFromEnv({ REPODEX_RANKING: '{"path":2.5}' })).toEqual({ ...DEFAULT_RANKING, path: 2.5 });
    expect(rankingFromEnv({ REPODEX_BOOSTS: '0', REPODEX_RANKING: '{"name":1}' })).toEqual({ ...PLAIN_BM25, name: 1 });
    for (const bad of ['{"path":', '[1]', '{"speed":1}', '{"path":-1}', '{"path":"2"}']) {
      expect(() => rankingFromEnv({ REPODEX_RANKING: bad })).toThrow(expect.objectContaining({ code: 'ENV_INVALID' }));
    }
  });
});

/**
 * Each structure signal, shown on a corpus built so that plain BM25 prefers the wrong file: the
 * competitor repeats the query words in its body, the target carries them in its path or names.
 */
describe('structure signals change the ranking the way they claim', () => {
  const filler = (n: number): string => Array.from({ length: n }, (_, i) => `const filler${i} = ${i};`).join('\n');

  it('path: a query term in the file path lifts that file', async () => {
    const root = makeRepo({
      'src/retry/policy.ts': `export function schedule(attempts: number) {\n  return attempts * 2; // backoff\n}\n${filler(10)}\n`,
      'src/net/client.ts': `// retry policy retry policy retry policy\nexport function send() { return 1; }\n${filler(10)}\n`,
    });
    const plain = await createEngine({ root, ranking: PLAIN_BM25 }).search({ q: 'retry policy backoff' });
    const boosted = await createEngine({ root }).search({ q: 'retry policy backoff' });
    expect(plain.results[0]!.path).toBe('src/net/client.ts');
    expect(boosted.results[0]!.path).toBe('src/retry/policy.ts');
    expect(boosted.results[0]!.why.filter((entry) => !entry.startsWith('whole-file:'))).toEqual(['retry', 'policy', 'backoff', 'path:retry', 'path:policy']);
    expect(plain.results[0]!.why).toEqual(['retry', 'policy']);
  });

  it('name: a chunk that declares the queried name outranks one that only mentions it', async () => {
    const root = makeRepo({
      'src/a.ts': `export class TokenBucket {\n  refill(): void {}\n}\n${filler(10)}\n`,
      'src/b.ts': `// token bucket token bucket token bucket: see the limiter\nexport function limiter() { return 0; }\n${filler(10)}\n`,
    });
    const plain = await createEngine({ root, ranking: PLAIN_BM25 }).search({ q: 'token bucket' });
    const boosted = await createEngine({ root }).search({ q: 'token bucket' });
    expect(plain.results[0]!.path).toBe('src/b.ts');
    expect(boosted.results[0]!.path).toBe('src/a.ts');
    expect(boosted.results[0]!.symbol).toBe('class TokenBucket');
  });

  it('file: a chunk whose file matches the other query terms elsewhere outranks an equal chunk in a file that does not', async () => {
    const chunk = 'export function flushQueue(items: string[]) {\n  return items.length;\n}\n';
    const root = makeRepo({
      // Both files hold the same flushQueue chunk; only one also speaks of the scheduler elsewhere.
      'src/a/queue.ts': `${chunk}\n${filler(130)}\nexport function tick() { return 'scheduler deadline'; }\n`,
      'src/b/queue.ts': `${chunk}\n${filler(130)}\nexport function tock() { return 'unrelated words'; }\n`,
    });
    // The whole-file score also tells the two files apart: off too, to see this signal alone.
    const without = await createEngine({ root, ranking: { ...DEFAULT_RANKING, file: 0, whole: 0, coord: 0 } }).search({ q: 'flush queue scheduler deadline' });
    const withFile = await createEngine({ root }).search({ q: 'flush queue scheduler deadline' });
    const first = (report: typeof withFile) => report.results.find((hit) => hit.why.includes('flush'))!;
    expect(first(withFile).path).toBe('src/a/queue.ts');
    expect(first(withFile).score).toBeGreaterThan(withFile.results.find((hit) => hit.path === 'src/b/queue.ts' && hit.why.includes('flush'))!.score);
    // Without the signal the two flushQueue chunks tie on score (the path decides the order).
    const tie = without.results.filter((hit) => hit.why.includes('flush'));
    expect(tie[0]!.score).toBe(tie[1]!.score);
  });

  it('coordination: for a short query, a file covering more of its terms scores more; a long one (a pasted report) is left as it is', async () => {
    const root = makeRepo({
      'src/one.ts': 'export function parseHeader(raw: string) { return raw; }\n',
      'src/many.ts': 'export function other() { return "parse header cookie session token"; }\n',
    });
    const score = (report: Awaited<ReturnType<Engine['search']>>, path: string) => report.results.find((hit) => hit.path === path)!.score;
    const off = createEngine({ root, ranking: { ...DEFAULT_RANKING, coord: 0 } });
    const on = createEngine({ root });
    expect(DEFAULT_RANKING.coord).toBeGreaterThan(0);
    // The factor shrinks the file that covers 2 of 5 terms relative to the one covering all 5.
    const q = 'parse header cookie session token';
    expect(score(await on.search({ q }), 'src/one.ts') / score(await on.search({ q }), 'src/many.ts')).toBeLessThan(score(await off.search({ q }), 'src/one.ts') / score(await off.search({ q }), 'src/many.ts'));
    // Past coordUpTo terms no file holds them all: the scores are those without the factor.
    const long = `${q} ${Array.from({ length: DEFAULT_RANKING.coordUpTo }, (_, i) => `word${String.fromCharCode(97 + i)}`).join(' ')}`;
    const [withFactor, without] = [await on.search({ q: long }), await off.search({ q: long })];
    expect(withFactor.terms.length).toBeGreaterThan(DEFAULT_RANKING.coordUpTo);
    expect(withFactor.results.map((hit) => [hit.path, hit.score])).toEqual(without.results.map((hit) => [hit.path, hit.score]));
  });

  it('prose: the same text ranks lower in Markdown than in code', async () => {
    const text = 'export function renderWidget(frame: number) { return frame; }\n';
    const root = makeRepo({ 'notes/widget.md': text, 'lib/widget.ts': text });
    const boosted = await createEngine({ root }).search({ q: 'render widget frame' });
    expect(boosted.results.map((hit) => hit.path)).toEqual(['lib/widget.ts', 'notes/widget.md']);
    // The prose weight alone, every other signal off: without it the two tie; with it Markdown scores exactly that factor less.
    const q = { q: 'render widget frame' };
    const score = (report: typeof boosted, path: string) => report.results.find((hit) => hit.path === path)!.score;
    const plain = await createEngine({ root, ranking: PLAIN_BM25 }).search(q);
    const prose = await createEngine({ root, ranking: { ...PLAIN_BM25, prose: DEFAULT_RANKING.prose } }).search(q);
    expect(score(plain, 'notes/widget.md')).toBe(score(plain, 'lib/widget.ts'));
    expect(prose.results.map((hit) => hit.path)).toEqual(['lib/widget.ts', 'notes/widget.md']);
    expect(score(prose, 'notes/widget.md') / score(prose, 'lib/widget.ts')).toBeCloseTo(DEFAULT_RANKING.prose, 2);
  });

  it('idf mode ignores every structure signal (seed 000 formula exactly)', async () => {
    const root = makeRepo({
      'src/retry/policy.ts': 'export const a = 1; // backoff\n',
      'src/net/client.ts': 'export const b = 1; // backoff\n',
    });
    const report = await createEngine({ root }).search({ q: 'retry backoff', mode: 'idf' });
    expect(report.results.map((hit) => hit.why)).toEqual([['backoff'], ['backoff']]);
    expect(report.results[0]!.score).toBe(report.results[1]!.score);
  });
});

describe('isTestPath', () => {
  it('knows the test conventions of the common ecosystems', () => {
    for (const path of ['test/a.ts', 'src/__tests__/a.tsx', 'pkg/tests/test_api.py', 'lib/router.test.ts', 'lib/router.spec.js', 'test_util.py', 'server/handler_test.go', 'src/RouterTest.java', 'spec/models/user_spec.rb', 'e2e/login.ts']) {
      expect(isTestPath(path), path).toBe(true);
    }
    for (const path of ['src/router.ts', 'src/testing-library-adapter.ts', 'lib/contest.py', 'src/attestation.go', 'docs/latest.md']) {
      expect(isTestPath(path), path).toBe(false);
    }
  });
});

describe('test files', () => {
  it('the same code ranks lower in a test file than in the implementation', async () => {
    const code = 'export function parseInvoiceTotal(lines: string[]) { return lines.length; }\n';
    const root = makeRepo({ 'src/__tests__/invoice.ts': code, 'src/zinvoice.ts': code });
    const plain = await createEngine({ root, ranking: PLAIN_BM25 }).search({ q: 'parse invoice total' });
    const boosted = await createEngine({ root }).search({ q: 'parse invoice total' });
    expect(plain.results.map((hit) => hit.path)).toEqual(['src/__tests__/invoice.ts', 'src/zinvoice.ts']);
    expect(boosted.results.map((hit) => hit.path)).toEqual(['src/zinvoice.ts', 'src/__tests__/invoice.ts']);
  });
});

describe('inflections', () => {
  it('a short query finds the other inflections of its words, below the exact word, and why says so', async () => {
    const root = makeRepo({
      'src/retry.ts': 'export function retryRequest(attempts: number) { return attempts; } // retry once more\n',
      'src/queue.ts': 'export function drain(retries: number) { return retries; }\n',
      'src/other.ts': 'export const unrelated = 1;\n',
    });
    const report = await createEngine({ root }).search({ q: 'retry' });
    expect(report.results.map((hit) => hit.path)).toEqual(['src/retry.ts', 'src/queue.ts']);
    expect(report.results[1]!.why).toEqual(['retry', 'form:retries→retry']);
    expect(report.results[1]!.score).toBeLessThan(report.results[0]!.score);
    const off = await createEngine({ root, ranking: { ...DEFAULT_RANKING, forms: 0 } }).search({ q: 'retry' });
    expect(off.results.map((hit) => hit.path)).toEqual(['src/retry.ts']);
  });

  it('saved finds save and closed finds close; a query longer than formsUpTo terms keeps its exact words only', async () => {
    const root = makeRepo({ 'src/doc.ts': 'export function save(doc: string) { return doc; }\nexport function close() { return 0; }\n' });
    const engine = createEngine({ root });
    expect((await engine.search({ q: 'saved' })).results[0]?.why).toEqual(['saved', 'form:save→saved']);
    expect((await engine.search({ q: 'closed' })).results[0]?.why).toEqual(['closed', 'form:close→closed']);
    const long = 'saved alpha beta gamma delta epsilon zeta theta iota kappa';
    expect((await engine.search({ q: long })).results).toEqual([]);
  });
});

describe('query-aware snippets', () => {
  const licence = Array.from({ length: 12 }, (_, i) => `// Licensed under the Apache License, line ${i}`).join('\n');

  it('the snippet shows the lines that matched, not the licence header above them', async () => {
    const root = makeRepo({ 'src/pool.ts': `${licence}\nexport function drainConnectionPool(pool: string[]) {\n  return pool.length;\n}\n` });
    const report = await createEngine({ root }).search({ q: 'drain connection pool' });
    expect(report.results[0]!.snippet).toBe('export function drainConnectionPool(pool: string[]) {\n  return pool.length;\n}');
  });

  it('symbol names the declaration that matched inside a merged chunk', async () => {
    const root = makeRepo({
      'src/shapes.ts': 'export interface Shape {\n  area(): number;\n}\n\nexport class Square {\n  side = 1;\n}\n\nexport class Circle {\n  radius = 1;\n  area() { return 3.14 * this.radius; }\n}\n',
    });
    const report = await createEngine({ root }).search({ q: 'circle radius' });
    expect(report.results[0]!.start_line).toBe(1);
    expect(report.results[0]!.symbol).toBe('class Circle');
    expect(report.results[0]!.snippet.split('\n')[0]).toBe('export class Circle {');
  });

  it('a window that starts on a doc comment is named after the function the comment documents', async () => {
    const root = makeRepo({
      'src/ids.ts': 'function mix32(value: number): number {\n  return value ^ (value >>> 16);\n}\n\n/** The per-file part of a stable identifier: a hash of the path. */\nexport function pathHash(path: string): number {\n  return mix32(path.length);\n}\n',
    });
    const report = await createEngine({ root }).search({ q: 'stable identifier' });
    expect(report.results[0]!.snippet.split('\n')[0]).toBe('/** The per-file part of a stable identifier: a hash of the path. */');
    expect(report.results[0]!.symbol).toBe('function pathHash');
  });

  it('a window inside a class starts where the matches are, on the doc comment of a method, and names that method', async () => {
    const root = makeRepo({
      'src/router.ts': ROUTER_SOURCE,
    });
    const [hit] = (await createEngine({ root }).search({ q: 'find the handler registered' })).results;
    expect(hit!.snippet.split('\n')[0]).toBe('  /** Find the handler registered for a path. */');
    expect(hit!.symbol).toBe('class Router › match');
  });

  it('reads the chunk from the right place in a large CRLF file (past the first read block)', async () => {
    const filler = Array.from({ length: 1500 }, (_, i) => `export const value${i} = ${i}; // padding padding padding`).join('\r\n');
    const tail = `export function drainConnectionPool(pool: string[]) {\r\n  // licence-like lead-in\r\n  // more lead-in\r\n  // and more\r\n  return pool.splice(0).length; // drain\r\n}\r\n`;
    const root = makeRepo({ 'src/big.ts': `${filler}\r\n${tail}` });
    const report = await createEngine({ root }).search({ q: 'splice' });
    expect(report.results[0]!.snippet.split('\n')[0]).toBe('  return pool.splice(0).length; // drain');
    expect(report.results[0]!.symbol).toBe('function drainConnectionPool');
  });

  it('a file changed since indexing keeps its stored snippet and is flagged stale', async () => {
    const root = makeRepo({ 'src/pool.ts': `${licence}\nexport function drainConnectionPool() {}\n` });
    const engine = createEngine({ root });
    await engine.sync();
    writeFileSync(join(root, 'src/pool.ts'), `${licence}\nexport function drainConnectionPool() {}\n// edited\n`);
    process.env.REPODEX_INDEXING = '0';
    let report;
    try {
      report = await createEngine({ root }).search({ q: 'drain connection pool' });
    } finally {
      delete process.env.REPODEX_INDEXING;
    }
    expect(report.results[0]!.stale).toBe(true);
    expect(report.results[0]!.snippet.startsWith('// Licensed')).toBe(true);
  });
});

describe('file roles and mentions', () => {
  const code = 'export function parseInvoiceTotal(lines: string[]) { return lines.length; }\n';

  it('examples, vendored and generated code (by path or by a generated header) rank below the same code in source', async () => {
    const root = makeRepo({
      'examples/invoice.ts': code,
      'vendor/invoice.ts': code,
      'src/gen/invoice.ts': `// Code generated by protoc-gen-ts. DO NOT EDIT.\n${code}`,
      'src/zinvoice.ts': code,
    });
    const report = await createEngine({ root }).search({ q: 'parse invoice total' });
    expect(report.results[0]!.path).toBe('src/zinvoice.ts');
    const why = Object.fromEntries(report.results.map((hit) => [hit.path, hit.why]));
    expect(why['examples/invoice.ts']).toContain('role:example×0.5');
    expect(why['vendor/invoice.ts']).toContain('role:vendored×0.5');
    expect(why['src/gen/invoice.ts']).toContain('role:generated×0.5');
  });

  it('what the repository declares about its folders (workspaces, .gitattributes) ranks templates, apps and docs sites below its packages', async () => {
    const manifest = (fields: object): string => `${JSON.stringify(fields)}\n`;
    const root = makeRepo({
      'package.json': manifest({ private: true, workspaces: ['packages/*', 'apps/*'] }),
      'packages/core/package.json': manifest({ name: 'core' }),
      'packages/core/src/invoice.ts': code,
      'packages/create/package.json': manifest({ name: 'create', bin: 'index.js' }),
      'packages/create/starter-basic/package.json': manifest({ name: 'starter', private: true }),
      'packages/create/starter-basic/src/invoice.ts': code,
      'apps/try/package.json': manifest({ name: 'try', private: true, dependencies: { core: '*' } }),
      'apps/try/invoice.ts': code,
      '.gitattributes': 'manual/** linguist-documentation\n',
      'manual/invoice.ts': code,
    });
    const engine = createEngine({ root });
    const report = await engine.search({ q: 'parse invoice total' });
    expect(report.results[0]!.path).toBe('packages/core/src/invoice.ts');
    const why = Object.fromEntries(report.results.map((hit) => [hit.path, hit.why]));
    expect(why['packages/create/starter-basic/src/invoice.ts']).toContain('role:template×0.5');
    expect(why['apps/try/invoice.ts']).toContain('role:example×0.5');
    expect(why['manual/invoice.ts']).toContain('role:docs×0.5');
    // A query that names the role weighs it fully.
    const asked = await engine.search({ q: 'parse invoice total starter' });
    expect(asked.results.find((hit) => hit.path === 'packages/create/starter-basic/src/invoice.ts')!.why.some((entry) => entry.startsWith('role:'))).toBe(false);
    // A manifest edit is learned by the next sync: the app joins what the workspace publishes.
    writeFileSync(join(root, 'apps/try/package.json'), manifest({ name: 'try' }));
    await engine.sync();
    const again = await engine.search({ q: 'parse invoice total' });
    expect(again.results.find((hit) => hit.path === 'apps/try/invoice.ts')!.why.some((entry) => entry.startsWith('role:'))).toBe(false);
  });

  it('the first results come from distinct files: a second chunk of the top file waits its turn', async () => {
    const fn = (name: string, extra: string): string => `export function ${name}(invoice: Invoice) {\n${Array.from({ length: 40 }, (_, i) => `  const total${i} = invoice.total * ${i}; // ${extra}\n`).join('')}  return invoice.total;\n}\n`;
    const root = makeRepo({
      'src/alpha.ts': `${fn('first', 'invoice total')}\n${fn('second', 'invoice total')}`,
      'src/beta.ts': fn('third', 'unrelated'),
    });
    const paths = async (ranking?: typeof DEFAULT_RANKING): Promise<string[]> => (await createEngine({ root, ...(ranking ? { ranking } : {}) }).search({ q: 'invoice total' })).results.map((hit) => hit.path);
    expect(await paths({ ...DEFAULT_RANKING, distinct: 0 })).toEqual(['src/alpha.ts', 'src/alpha.ts', 'src/beta.ts']);
    expect(await paths()).toEqual(['src/alpha.ts', 'src/beta.ts', 'src/alpha.ts']);
  });

  it("whole file: a chunk's file scored as one document adds to its score, more for a file that is about the query throughout", async () => {
    const fn = (name: string, body: string): string => `export function ${name}() {\n${Array.from({ length: 40 }, (_, i) => `  const v${i} = ${i}; // ${body}\n`).join('')}}\n`;
    const root = makeRepo({
      'src/refunds.ts': `${fn('issueRefund', 'refund the invoice')}\n${fn('voidRefund', 'refund voided')}\n${fn('listRefunds', 'refund list')}`,
      'src/misc.ts': `${fn('issueRefundOnce', 'refund the invoice')}\n${fn('paint', 'colour')}\n${fn('draw', 'shape')}`,
    });
    const bonus = (why: readonly string[]): number => Number(why.find((entry) => entry.startsWith('whole-file:+'))?.slice('whole-file:+'.length) ?? 0);
    const report = await createEngine({ root }).search({ q: 'refund invoice' });
    const first = (path: string) => report.results.find((hit) => hit.path === path)!;
    expect(bonus(first('src/refunds.ts').why)).toBeGreaterThan(bonus(first('src/misc.ts').why));
    expect(bonus(first('src/misc.ts').why)).toBeGreaterThan(0);
    const off = await createEngine({ root, ranking: { ...DEFAULT_RANKING, whole: 0 } }).search({ q: 'refund invoice' });
    expect(off.results.every((hit) => hit.why.every((entry) => !entry.startsWith('whole-file:')))).toBe(true);
  });

  it('a long report is searched with the terms code holds, not those only a changelog holds', async () => {
    const rare = Array.from({ length: 40 }, (_, i) => `zq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}release`);
    const root = makeRepo({
      'CHANGELOG.md': `# Changes\n\n${rare.map((word) => `- ${word}`).join('\n')}\n`,
      'src/rules/hoisting.ts': 'export function checkHoisting(declaration) { return declaration.kind === "var"; }\n',
      'src/rules/scope.ts': 'export function declarationScope(declaration) { return declaration.scope; }\n',
      'src/rules/other.ts': 'export function hoistingOther(declaration) { return declaration; }\n',
    });
    const report = await createEngine({ root }).search({ q: `${rare.join(' ')} the declaration hoisting check of its kind and scope is wrong` });
    expect(report.results[0]!.path).toBe('src/rules/hoisting.ts');
    expect(report.results.map((hit) => hit.path)).not.toContain('CHANGELOG.md');
    // Where code holds too few of a long query's words, the rest are searched too.
    const docsOnly = await createEngine({ root }).search({ q: `${rare.join(' ')} hoisting` });
    expect(docsOnly.results.map((hit) => hit.path)).toContain('CHANGELOG.md');
  });

  it('a short query that names a role ("tests") weighs that role fully; a long report that says "test" in passing does not', async () => {
    const root = makeRepo({ 'src/__tests__/invoice.ts': code, 'src/zinvoice.ts': code });
    const engine = createEngine({ root });
    const asked = await engine.search({ q: 'parse invoice total tests' });
    expect(asked.results.find((hit) => hit.path === 'src/__tests__/invoice.ts')!.why.some((entry) => entry.startsWith('role:'))).toBe(false);
    const long = await engine.search({ q: 'parse invoice total test alpha beta gamma delta epsilon zeta' });
    expect(long.results.find((hit) => hit.path === 'src/__tests__/invoice.ts')!.why).toContain('role:test×0.5');
  });

  it('a file the query names (a stack frame) is lifted, and why says so', async () => {
    const root = makeRepo({ 'lib/alpha.js': 'function handle(req) { return req.body; }\n', 'lib/beta.js': 'function handle(req) { return req.body; }\n' });
    const report = await createEngine({ root }).search({ q: 'TypeError: handle req body\n    at handle (lib/beta.js:1:30)' });
    expect(report.results[0]!.path).toBe('lib/beta.js');
    expect(report.results[0]!.why).toContain('mention:×2');
    expect(report.results[1]!.why).not.toContain('mention:×2');
  });
});
