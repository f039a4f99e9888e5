import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

// `repodex outline PATH` and the JSONL `outline` op, run as real processes: answers from
// symbols.bin while a file is unchanged since the sync, from a fresh parse otherwise (or with no
// index at all), the same refusals as `open`, and the symbol paths search results carry.

/** Line numbers in the expectations below refer to these fixtures (1-based). */
const A_TS = [
  '/** A widget that draws itself. */', // 1
  'export class Widget {', // 2
  '  private count = 0;', // 3
  '', // 4
  '  /** Draw the widget. */', // 5
  '  render(): string {', // 6
  '    return `widget ${this.count}`;', // 7
  '  }', // 8
  '', // 9
  '  resize(width: number, height: number): void {', // 10
  '    this.count = width * height;', // 11
  '  }', // 12
  '}', // 13
  '', // 14
  'export interface WidgetOptions {', // 15
  '  label: string;', // 16
  '  width: number;', // 17
  '}', // 18
  '', // 19
  'export const makeWidget = (options: WidgetOptions): Widget => {', // 20
  '  return new Widget();', // 21
  '};', // 22
  '', // 23
  "if (typeof globalThis.window === 'undefined') {", // 24
  '  function serverOnlyHelper(): number {', // 25
  '    return 42;', // 26
  '  }', // 27
  '}', // 28
  '',
].join('\n');

const B_PY = [
  'import functools', // 1
  '', // 2
  '', // 3
  'class Handler(Base, metaclass=Meta):', // 4
  '    """Handle incoming requests."""', // 5
  '', // 6
  '    def outer(self, value):', // 7
  '        def inner(item):', // 8
  '            return item * 2', // 9
  '        return inner(value)', // 10
  '', // 11
  '    @functools.lru_cache(maxsize=None)', // 12
  '    def cached_lookup(self, key):', // 13
  '        return key', // 14
  '', // 15
  '', // 16
  'try:', // 17
  '    import ujson as json', // 18
  'except ImportError:', // 19
  '    def fallback_loads(text):', // 20
  '        return text', // 21
  '',
].join('\n');

/** Parses with errors: one error rejects the whole file, so even the valid function is not listed. */
const BROKEN_TS = 'export function fineBefore(): number {\n  return 1;\n}\n\nexport class {\n  method() {\n    return 2;\n';

/** `lines` numbered statements accumulating into `total`. */
function body(tag: string, lines: number): string[] {
  return Array.from({ length: lines }, (_, i) => `    total += ${i}; // ${tag} step ${i}`);
}

/** A class too long for one chunk (max 120 lines), so it is split at its methods. */
const WIDGET_TS = [
  'export class Widget {',
  '  private total = 0;',
  '',
  '  layout(): number {',
  '    let total = 0;',
  ...body('layout', 45),
  '    return total;',
  '  }',
  '',
  '  render(): number {',
  '    let total = 0;',
  '    const renderWidgetFrameMarker = 1;',
  ...body('render', 45),
  '    return total + renderWidgetFrameMarker;',
  '  }',
  '',
  '  dispose(): number {',
  '    let total = 0;',
  ...body('dispose', 45),
  '    return total;',
  '  }',
  '}',
  '',
].join('\n');

const EDIT_TS = 'export class Counter {\n  increment(): void {}\n}\n';

function fixture(): Record<string, string> {
  return {
    'src/a.ts': A_TS,
    'src/b.py': B_PY,
    'src/broken.ts': BROKEN_TS,
    'src/widget.ts': WIDGET_TS,
    'src/edit.ts': EDIT_TS,
    'README.md': '# Widgets\n\nNotes about the quarterly gizmo review.\n',
    '.env': 'API_TOKEN=not-a-real-secret\n',
  };
}

interface OutlineSymbol {
  kind: string;
  name: string;
  signature: string;
  start_line: number;
  end_line: number;
  doc: string | null;
  parent_symbol: string | null;
  scope_kind: 'module' | 'class' | 'function';
  is_conditional: boolean;
  decl_context: string | null;
}

interface Outline {
  path: string;
  language: string;
  parsed: boolean;
  source: 'index' | 'parse';
  symbols: OutlineSymbol[];
  blocked: false;
}

interface Refusal {
  path: string;
  blocked: boolean;
  error: string;
  hint: string;
}

/** The structural facts of a symbol, as [kind, name, start, end, parent, scope, conditional, context]. */
function facts(symbol: OutlineSymbol): unknown[] {
  return [symbol.kind, symbol.name, symbol.start_line, symbol.end_line, symbol.parent_symbol, symbol.scope_kind, symbol.is_conditional, symbol.decl_context];
}

const A_FACTS = [
  ['class', 'Widget', 2, 13, null, 'module', false, null],
  ['field', 'count', 3, 3, 'Widget', 'class', false, null],
  ['method', 'render', 6, 8, 'Widget', 'class', false, null],
  ['method', 'resize', 10, 12, 'Widget', 'class', false, null],
  ['interface', 'WidgetOptions', 15, 18, null, 'module', false, null],
  ['function', 'makeWidget', 20, 22, null, 'module', false, null],
  ['function', 'serverOnlyHelper', 25, 27, null, 'module', true, 'if'],
];

const B_FACTS = [
  ['class', 'Handler', 4, 14, null, 'module', false, null],
  ['method', 'outer', 7, 10, 'Handler', 'class', false, null],
  ['function', 'inner', 8, 9, 'Handler.outer', 'function', false, null],
  // The decorator belongs to the method: its range starts there.
  ['method', 'cached_lookup', 12, 14, 'Handler', 'class', false, null],
  ['function', 'fallback_loads', 20, 21, null, 'module', true, 'try>except'],
];

describe('repodex outline', () => {
  /** Synced once in beforeAll. */
  let indexed: string;
  /** Never synced: no .repodex at all. */
  let fresh: string;

  const outlineRun = (root: string, path: string): { code: number | null; report: Outline | Refusal } => {
    const run = runCli(['outline', path, '--json', '--root', root]);
    expect(run.stderr === '' || run.code !== 0, run.stderr).toBe(true);
    return { code: run.code, report: run.json<Outline | Refusal>() };
  };
  const outline = (root: string, path: string): Outline => {
    const { code, report } = outlineRun(root, path);
    expect(code, JSON.stringify(report)).toBe(0);
    expect('error' in report, JSON.stringify(report)).toBe(false);
    return report as Outline;
  };

  beforeAll(() => {
    indexed = makeRepo(fixture());
    fresh = makeRepo(fixture());
    const sync = runCli(['sync', '--json', '--root', indexed]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.json<{ text_fallbacks: Record<string, number> }>().text_fallbacks).toEqual({ 'parse-error': 1 });
  });

  it('answers a synced TypeScript file from the index with kinds, parents, scopes and conditions', () => {
    const report = outline(indexed, 'src/a.ts');
    expect(report).toMatchObject({ path: 'src/a.ts', language: 'typescript', parsed: true, source: 'index', blocked: false });
    expect(report.symbols.map(facts)).toEqual(A_FACTS);
    const [widget, , render] = report.symbols;
    expect(widget).toMatchObject({ signature: 'export class Widget', doc: 'A widget that draws itself.' });
    expect(render).toMatchObject({ signature: 'render(): string', doc: 'Draw the widget.' });
    expect(report.symbols.find((symbol) => symbol.name === 'makeWidget')!.signature).toBe('export const makeWidget = (options: WidgetOptions): Widget =>');
  });

  it('answers a synced Python file from the index: bases, nested defs, decorators, try/except', () => {
    const report = outline(indexed, 'src/b.py');
    expect(report).toMatchObject({ path: 'src/b.py', language: 'python', parsed: true, source: 'index' });
    expect(report.symbols.map(facts)).toEqual(B_FACTS);
    expect(report.symbols[0]).toMatchObject({ signature: 'class Handler(Base, metaclass=Meta)', doc: 'Handle incoming requests.' });
    // The import under `try:` declares nothing.
    expect(report.symbols.map((symbol) => symbol.name)).not.toContain('json');
  });

  it('parses a file edited since the sync, and the index again after the next sync', () => {
    expect(outline(indexed, 'src/edit.ts')).toMatchObject({ source: 'index', symbols: [{ name: 'Counter' }, { name: 'increment' }] });
    const editedText = ['export function makeCounter(): Counter {', '  return new Counter();', '}', '', 'export class Counter {', '  increment(): void {}', '', '  decrement(): void {}', '}', ''];
    writeFileSync(join(indexed, 'src/edit.ts'), editedText.join('\n'));
    const edited = outline(indexed, 'src/edit.ts');
    expect(edited).toMatchObject({ parsed: true, source: 'parse' });
    expect(edited.symbols.map(facts)).toEqual([
      ['function', 'makeCounter', 1, 3, null, 'module', false, null],
      ['class', 'Counter', 5, 9, null, 'module', false, null],
      ['method', 'increment', 6, 6, 'Counter', 'class', false, null],
      ['method', 'decrement', 8, 8, 'Counter', 'class', false, null],
    ]);
    const sync = runCli(['sync', '--json', '--root', indexed]);
    expect(sync.code, sync.stderr).toBe(0);
    const resynced = outline(indexed, 'src/edit.ts');
    expect(resynced.source).toBe('index');
    expect(resynced.symbols).toEqual(edited.symbols);
  });

  it('works without any index, by parsing, and builds none (only the audit log is written)', () => {
    const a = outline(fresh, 'src/a.ts');
    expect(a).toMatchObject({ path: 'src/a.ts', parsed: true, source: 'parse' });
    expect(a.symbols.map(facts)).toEqual(A_FACTS);
    const b = outline(fresh, 'src/b.py');
    expect(b).toMatchObject({ parsed: true, source: 'parse' });
    expect(b.symbols.map(facts)).toEqual(B_FACTS);
    expect(readdirSync(join(fresh, '.repodex')).sort()).toEqual(['.gitignore', 'audit.jsonl']);
  });

  it('is deterministic: the same symbols twice, from the index and from a parse', () => {
    for (const path of ['src/a.ts', 'src/b.py', 'src/widget.ts']) {
      const fromIndex = outline(indexed, path);
      const fromParse = outline(fresh, path);
      expect(fromIndex.source).toBe('index');
      expect(fromParse.source).toBe('parse');
      expect(outline(indexed, path).symbols).toEqual(fromIndex.symbols);
      expect(outline(fresh, path).symbols).toEqual(fromParse.symbols);
      expect(fromIndex.symbols).toEqual(fromParse.symbols);
    }
  });

  it('gives an empty outline for a file that does not parse, never partial content (exit 0)', () => {
    for (const [root, source] of [
      [indexed, 'index'],
      [fresh, 'parse'],
    ] as const) {
      const { code, report } = outlineRun(root, 'src/broken.ts');
      expect(code).toBe(0);
      expect(report).toEqual({ path: 'src/broken.ts', language: 'typescript', parsed: false, source, symbols: [], blocked: false });
    }
  });

  it('refuses markdown, paths outside the root and secrets (exit 1)', () => {
    const cases: [string, boolean, RegExp][] = [
      ['README.md', false, /^no outline for markdown files$/],
      ['../x.ts', true, /not a path inside the repository/],
      ['/etc/passwd', true, /not a path inside the repository/],
      ['.env', true, /denylist/],
      ['src/missing.ts', false, /does not exist/],
    ];
    for (const root of [indexed, fresh]) {
      for (const [path, blocked, error] of cases) {
        const { code, report } = outlineRun(root, path);
        expect(code, path).toBe(1);
        expect(report, path).toMatchObject({ path, blocked, error: expect.stringMatching(error) as string, hint: expect.any(String) as string });
        expect(report, path).not.toHaveProperty('symbols');
      }
    }
    // Without --json the refusal is still exit 1, and nothing of the secret is printed.
    const human = runCli(['outline', '.env', '--root', indexed]);
    expect(human.code).toBe(1);
    expect(human.stdout + human.stderr).not.toContain('not-a-real-secret');
  });

  it('serves outline over JSONL: symbols, and refusals as ok:false answers that still carry blocked/error/hint', () => {
    const requests = [
      { op: 'outline', path: 'src/a.ts', id: 1 },
      { op: 'outline', path: '../x.ts', id: 2 },
      { op: 'outline', path: '.env', id: 3 },
      { op: 'outline', path: 'README.md', id: 4 },
      { op: 'outline', id: 5 },
    ];
    const run = runCli(['serve', '--stdio', '--root', indexed], { input: requests.map((request) => `${JSON.stringify(request)}\n`).join('') });
    expect(run.code, run.stderr).toBe(0);
    const replies = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { ok: boolean; op: string; id: number; data?: Outline | Refusal; error?: string; code?: string });
    expect(replies.map((reply) => [reply.id, reply.ok, reply.op])).toEqual([
      [1, true, 'outline'],
      [2, false, 'outline'],
      [3, false, 'outline'],
      [4, false, 'outline'],
      [5, false, 'outline'],
    ]);
    const [a, outside, secret, markdown, missing] = replies;
    expect(a!.data).toMatchObject({ path: 'src/a.ts', parsed: true, source: 'index' });
    expect((a!.data as Outline).symbols.map(facts)).toEqual(A_FACTS);
    // A refused path is ok:false (as the CLI exits 1), and still carries blocked/error/hint.
    expect(outside).toMatchObject({ ok: false, code: 'BLOCKED', blocked: true });
    expect(outside!.data).toMatchObject({ path: '../x.ts', blocked: true, error: expect.stringContaining('not a path inside the repository') as string });
    expect(markdown).toMatchObject({ ok: false, code: 'REFUSED', blocked: false });
    expect(secret!.data).toMatchObject({ path: '.env', blocked: true });
    expect(JSON.stringify(secret)).not.toContain('not-a-real-secret');
    expect(markdown!.data).toMatchObject({ blocked: false, error: 'no outline for markdown files' });
    // A request without a path is malformed: that one is a protocol error.
    expect(missing).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
  });

  it('search results carry the symbol path of their chunk', () => {
    const widget = outline(indexed, 'src/widget.ts').symbols;
    const render = widget.find((symbol) => symbol.name === 'render')!;
    expect(render).toMatchObject({ kind: 'method', parent_symbol: 'Widget' });

    const search = (query: string): { path: string; start_line: number; end_line: number; symbol: string | null }[] => {
      const run = runCli(['search', query, '--json', '--root', indexed], { env: { REPODEX_INDEXING: '0' } });
      expect(run.code, run.stderr).toBe(0);
      return run.json<{ results: { path: string; start_line: number; end_line: number; symbol: string | null }[] }>().results;
    };
    // The method's chunk lies inside render: its path is the class, then the method.
    expect(search('renderWidgetFrameMarker')[0]).toMatchObject({
      path: 'src/widget.ts',
      start_line: render.start_line,
      end_line: render.end_line,
      symbol: 'class Widget › render',
    });
    // The small file is one chunk holding several declarations: the hit is named after the one that matched.
    expect(search('serverOnlyHelper')[0]).toMatchObject({ path: 'src/a.ts', start_line: 1, end_line: 28, symbol: 'function serverOnlyHelper' });
    // Python: the whole small file is one chunk too; the match is in a method of the class.
    expect(search('cached_lookup')[0]).toMatchObject({ path: 'src/b.py', symbol: 'class Handler › cached_lookup' });
    // No declarations: markdown and unparseable files have none.
    expect(search('quarterly gizmo')[0]).toMatchObject({ path: 'README.md', symbol: null });
    expect(search('fineBefore')[0]).toMatchObject({ path: 'src/broken.ts', symbol: null });
  });
});
