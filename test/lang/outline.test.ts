import { beforeAll, describe, expect, it } from 'vitest';
import { analyze, hasAdapter, loadLanguages, outline } from '../../src/lang/index.js';
import type { OutlineSymbol } from '../../src/lang/index.js';
import { sortSymbols } from '../../src/lang/extract.js';
import { adapterLanguages } from '../../src/lang/registry.js';
import type { Language } from '../../src/scan/language.js';

// Seed 002 §14 outline tests: accuracy, nested scopes, conditional declarations without
// evaluation, ordering stable across runs, parent/scope metadata, unparseable → [].

beforeAll(async () => {
  await loadLanguages();
});

type Row = [kind: string, name: string, start: number, end: number, parent: string | null, scope: string, context: string | null];

/** The facts most tests assert on, one compact tuple per symbol. */
function rows(symbols: readonly OutlineSymbol[]): Row[] {
  return symbols.map((s) => [s.kind, s.name, s.start_line, s.end_line, s.parent_symbol, s.scope_kind, s.decl_context]);
}

function find(symbols: readonly OutlineSymbol[], name: string, kind?: string): OutlineSymbol {
  const found = symbols.filter((s) => s.name === name && (kind === undefined || s.kind === kind));
  expect(found, `exactly one ${kind ?? 'symbol'} named ${name}`).toHaveLength(1);
  return found[0]!;
}

const source = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('python outline', () => {
  const program = source(
    '"""Module doc."""', // 1
    'import os', // 2
    '', // 3
    'LIMIT = 10', // 4
    '', // 5
    'class Base:', // 6
    '    pass', // 7
    '', // 8
    '@register', // 9
    '@dataclass(frozen=True)', // 10
    'class Job(Base, metaclass=Meta, slots=True):', // 11
    '    """A job.', // 12
    '', // 13
    '    Longer text."""', // 14
    '    retries: int = 0', // 15
    '', // 16
    '    def run(self, *args, **kwargs) -> bool:', // 17
    '        def step(n):', // 18
    '            class Local:', // 19
    '                def go(self): ...', // 20
    '            return n', // 21
    '        return True', // 22
    '', // 23
    '    async def wait(self): ...', // 24
    '', // 25
    '    class Inner:', // 26
    '        def deep(self): ...', // 27
    '', // 28
    'def helper(x,', // 29
    '           y):', // 30
    "    '''Helps.'''", // 31
    '    local = 1', // 32
    '    return x', // 33
  );

  it('lists every declaration with kind, lines, parent and scope', () => {
    expect(rows(outline('python', program))).toEqual<Row[]>([
      ['variable', 'LIMIT', 4, 4, null, 'module', null],
      ['class', 'Base', 6, 7, null, 'module', null],
      ['class', 'Job', 9, 27, null, 'module', null],
      ['field', 'retries', 15, 15, 'Job', 'class', null],
      ['method', 'run', 17, 22, 'Job', 'class', null],
      ['function', 'step', 18, 21, 'Job.run', 'function', null],
      ['class', 'Local', 19, 20, 'Job.run.step', 'function', null],
      ['method', 'go', 20, 20, 'Job.run.step.Local', 'class', null],
      ['method', 'wait', 24, 24, 'Job', 'class', null],
      ['class', 'Inner', 26, 27, 'Job', 'class', null],
      ['method', 'deep', 27, 27, 'Job.Inner', 'class', null],
      ['function', 'helper', 29, 33, null, 'module', null],
    ]);
  });

  it('keeps bases and class keywords in class signatures, and collapses multi-line heads', () => {
    const symbols = outline('python', program);
    expect(find(symbols, 'Job').signature).toBe('class Job(Base, metaclass=Meta, slots=True)');
    expect(find(symbols, 'Base').signature).toBe('class Base');
    expect(find(symbols, 'run').signature).toBe('def run(self, *args, **kwargs) -> bool');
    expect(find(symbols, 'wait').signature).toBe('async def wait(self)');
    expect(find(symbols, 'helper').signature).toBe('def helper(x, y)');
  });

  it('takes the first docstring line as doc', () => {
    const symbols = outline('python', program);
    expect(find(symbols, 'Job').doc).toBe('A job.');
    expect(find(symbols, 'helper').doc).toBe('Helps.');
    expect(find(symbols, 'run').doc).toBeNull();
  });

  it('starts a decorated declaration at its first decorator', () => {
    expect(find(outline('python', program), 'Job').start_line).toBe(9);
  });

  it('lists conditional declarations without evaluating any condition', () => {
    const conditional = source(
      'if False:', // 1
      '    def never(): ...', // 2
      'elif 0:', // 3
      '    def zero(): ...', // 4
      'else:', // 5
      '    def otherwise(): ...', // 6
      'try:', // 7
      '    import json', // 8
      'except ImportError:', // 9
      '    def loads(s): ...', // 10
      'else:', // 11
      '    FAST = True', // 12
      'finally:', // 13
      '    def cleanup(): ...', // 14
      'with lock:', // 15
      '    def guarded(): ...', // 16
      'for name in names:', // 17
      '    def each(): ...', // 18
      'else:', // 19
      '    def done(): ...', // 20
      'while False:', // 21
      '    def spin(): ...', // 22
      'match command:', // 23
      '    case "go":', // 24
      '        def go(): ...', // 25
      'class C:', // 26
      '    if TYPE_CHECKING:', // 27
      '        def typed(self): ...', // 28
      '    def plain(self):', // 29
      '        if debug:', // 30
      '            def trace(): ...', // 31
    );
    const symbols = outline('python', conditional);
    const contexts = symbols.map((s) => [s.name, s.is_conditional, s.decl_context]);
    expect(contexts).toEqual([
      ['never', true, 'if'],
      ['zero', true, 'if>elif'],
      ['otherwise', true, 'if>else'],
      ['loads', true, 'try>except'],
      ['FAST', true, 'try>else'],
      ['cleanup', true, 'try>finally'],
      ['guarded', true, 'with'],
      ['each', true, 'for'],
      ['done', true, 'for>else'],
      ['spin', true, 'while'],
      ['go', true, 'match>case'],
      ['C', false, null],
      ['typed', true, 'if'],
      ['plain', false, null],
      ['trace', true, 'if'],
    ]);
    // Context is relative to the enclosing declaration: a method under `if` in a class is a method of that class.
    expect(find(symbols, 'typed')).toMatchObject({ kind: 'method', parent_symbol: 'C', scope_kind: 'class' });
    expect(find(symbols, 'trace')).toMatchObject({ kind: 'function', parent_symbol: 'C.plain', scope_kind: 'function' });
  });

  it('gives each overload its own symbol', () => {
    const overloads = source(
      'class Api:',
      '    @overload',
      '    def get(self, key: int) -> int: ...',
      '    @overload',
      '    def get(self, key: str) -> str: ...',
      '    def get(self, key): return key',
    );
    const gets = outline('python', overloads).filter((s) => s.name === 'get');
    expect(gets.map((s) => [s.start_line, s.end_line, s.signature])).toEqual([
      [2, 3, 'def get(self, key: int) -> int'],
      [4, 5, 'def get(self, key: str) -> str'],
      [6, 6, 'def get(self, key)'],
    ]);
  });

  it('does not list assignments inside functions', () => {
    expect(outline('python', program).some((s) => s.name === 'local')).toBe(false);
  });
});

describe('typescript outline', () => {
  const program = source(
    "import { x } from './x';", // 1
    '', // 2
    '/** A point. */', // 3
    'export interface Point { x: number; y: number }', // 4
    'export type Id = string | number;', // 5
    'export enum Color { Red, Green }', // 6
    'export namespace Geometry {', // 7
    '  export function area(p: Point): number { return p.x * p.y; }', // 8
    '}', // 9
    'export const add = (a: number, b: number): number => a + b;', // 10
    'export const ORIGIN: Point = { x: 0, y: 0 };', // 11
    'export function parse(text: string): Point;', // 12
    'export function parse(text: string, strict: boolean): Point;', // 13
    'export function parse(text: string, strict = false): Point {', // 14
    '  function digits(part: string) { return Number(part); }', // 15
    '  const [a, b] = text.split(",");', // 16
    '  return { x: digits(a), y: digits(b) };', // 17
    '}', // 18
    '@Component({ selector: "app" })', // 19
    'export class Widget<T> extends Base implements Drawable {', // 20
    '  private items: T[] = [];', // 21
    '  onClick = (event: Event) => { this.handle(event); };', // 22
    '  @Input()', // 23
    '  render(): string {', // 24
    '    const helper = () => 1;', // 25
    '    return String(helper());', // 26
    '  }', // 27
    '  static create(): Widget<unknown> { return new Widget(); }', // 28
    '}', // 29
    'describe("suite", () => {', // 30
    '  function insideCallback() {}', // 31
    '});', // 32
  );

  it('lists interfaces, types, enums, namespaces, arrow consts, overloads, classes and members', () => {
    expect(rows(outline('typescript', program))).toEqual<Row[]>([
      ['interface', 'Point', 4, 4, null, 'module', null],
      ['type', 'Id', 5, 5, null, 'module', null],
      ['enum', 'Color', 6, 6, null, 'module', null],
      ['namespace', 'Geometry', 7, 9, null, 'module', null],
      ['function', 'area', 8, 8, 'Geometry', 'module', null],
      ['function', 'add', 10, 10, null, 'module', null],
      ['constant', 'ORIGIN', 11, 11, null, 'module', null],
      ['function', 'parse', 12, 12, null, 'module', null],
      ['function', 'parse', 13, 13, null, 'module', null],
      ['function', 'parse', 14, 18, null, 'module', null],
      ['function', 'digits', 15, 15, 'parse', 'function', null],
      ['class', 'Widget', 19, 29, null, 'module', null],
      ['field', 'items', 21, 21, 'Widget', 'class', null],
      ['method', 'onClick', 22, 22, 'Widget', 'class', null],
      ['method', 'render', 23, 27, 'Widget', 'class', null],
      ['function', 'helper', 25, 25, 'Widget.render', 'function', null],
      ['method', 'create', 28, 28, 'Widget', 'class', null],
    ]);
  });

  it('writes signatures as declared, without bodies', () => {
    const symbols = outline('typescript', program);
    expect(find(symbols, 'Widget').signature).toBe('export class Widget<T> extends Base implements Drawable');
    expect(find(symbols, 'add').signature).toBe('export const add = (a: number, b: number): number =>');
    expect(find(symbols, 'Point').signature).toBe('export interface Point');
    expect(find(symbols, 'Id').signature).toBe('export type Id = string | number');
    expect(find(symbols, 'render').signature).toBe('render(): string');
    expect(symbols.filter((s) => s.name === 'parse').map((s) => s.signature)).toEqual([
      'export function parse(text: string): Point',
      'export function parse(text: string, strict: boolean): Point',
      'export function parse(text: string, strict = false): Point',
    ]);
  });

  it('reads JSDoc as doc and starts decorated members at the decorator', () => {
    const symbols = outline('typescript', program);
    expect(find(symbols, 'Point').doc).toBe('A point.');
    expect(find(symbols, 'Widget').start_line).toBe(19);
    expect(find(symbols, 'render').start_line).toBe(23);
  });

  it('lists declarations under control flow with their context', () => {
    const conditional = source(
      'if (typeof window === "undefined") {',
      '  function server() {}',
      '} else if (legacy) {',
      '  class Shim {}',
      '} else {',
      '  var browser = true;',
      '}',
      'try { function risky() {} } catch (e) { function recover() {} } finally { function always() {} }',
      'switch (mode) { case "a": function modeA() {} break; default: function modeB() {} }',
      'for (const k of keys) { function perKey() {} }',
      'while (false) { function never() {} }',
    );
    expect(outline('typescript', conditional).map((s) => [s.name, s.decl_context])).toEqual([
      ['server', 'if'],
      ['Shim', 'if>else>if'],
      ['browser', 'if>else>if>else'],
      ['always', 'try>finally'],
      ['recover', 'try>catch'],
      ['risky', 'try'],
      ['modeA', 'switch>case'],
      ['modeB', 'switch>default'],
      ['perKey', 'for'],
      ['never', 'while'],
    ]);
  });

  it('treats callbacks passed to calls as expressions, not scopes', () => {
    expect(outline('typescript', program).some((s) => s.name === 'insideCallback')).toBe(false);
  });

  it('names anonymous default exports `default`', () => {
    expect(rows(outline('typescript', source('export default function () {}', 'export default class extends Base {}')))).toEqual<Row[]>([
      ['function', 'default', 1, 1, null, 'module', null],
      ['class', 'default', 2, 2, null, 'module', null],
    ]);
  });

  it('counts lines and slices text correctly around non-ASCII characters', () => {
    const text = source('const greeting = "héllo 😀 wörld";', 'export function après(ß: string): string { return ß; }');
    expect(find(outline('typescript', text), 'après')).toMatchObject({ start_line: 2, signature: 'export function après(ß: string): string' });
  });
});

describe('outline ordering', () => {
  it('sorts by start line, end line descending, kind, then name', () => {
    const a = { signature: '', doc: null, parent_symbol: null, scope_kind: 'module', is_conditional: false, decl_context: null } as const;
    const sorted = sortSymbols([
      { ...a, kind: 'method', name: 'b', start_line: 2, end_line: 2 },
      { ...a, kind: 'function', name: 'z', start_line: 1, end_line: 3 },
      { ...a, kind: 'class', name: 'A', start_line: 1, end_line: 9 },
      { ...a, kind: 'method', name: 'a', start_line: 2, end_line: 2 },
      { ...a, kind: 'field', name: 'c', start_line: 2, end_line: 2 },
    ]);
    expect(sorted.map((s) => s.name)).toEqual(['A', 'z', 'c', 'a', 'b']);
  });

  it('is identical across repeated runs, with other files parsed in between', () => {
    const text = source('class A:', '    def b(self): ...', '    def a(self): ...', 'if x:', '    def f(): ...', 'else:', '    def f(): ...');
    const first = outline('python', text);
    outline('typescript', 'export class Noise { m() {} }\n');
    const second = outline('python', text);
    const third = outline('python', text);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(JSON.stringify(third)).toBe(JSON.stringify(first));
  });
});

describe('other languages', () => {
  const cases: { language: Language; text: string; expected: Row[] }[] = [
    {
      language: 'javascript',
      text: source('export class Bus {', '  on(event) {}', '}', 'export const once = (bus) => bus;', 'if (dev) { function trace() {} }'),
      expected: [
        ['class', 'Bus', 1, 3, null, 'module', null],
        ['method', 'on', 2, 2, 'Bus', 'class', null],
        ['function', 'once', 4, 4, null, 'module', null],
        ['function', 'trace', 5, 5, null, 'module', 'if'],
      ],
    },
    {
      language: 'tsx',
      text: source('export function App() {', '  const Row = () => <li />;', '  return <ul><Row /></ul>;', '}'),
      expected: [
        ['function', 'App', 1, 4, null, 'module', null],
        ['function', 'Row', 2, 2, 'App', 'function', null],
      ],
    },
    {
      language: 'go',
      text: source('package p', '', 'type Server struct{}', '', 'func (s *Server) Start() error {', '\treturn nil', '}', '', 'func New() *Server { return &Server{} }'),
      expected: [
        ['struct', 'Server', 3, 3, null, 'module', null],
        ['method', 'Start', 5, 7, 'Server', 'class', null],
        ['function', 'New', 9, 9, null, 'module', null],
      ],
    },
    {
      language: 'rust',
      text: source('pub struct Stack;', 'impl Stack {', '    pub fn push(&mut self) {}', '}', '#[cfg(test)]', 'mod tests {', '    fn it_works() {}', '}'),
      expected: [
        ['struct', 'Stack', 1, 1, null, 'module', null],
        ['impl', 'Stack', 2, 4, null, 'module', null],
        ['method', 'push', 3, 3, 'Stack', 'class', null],
        ['module', 'tests', 5, 8, null, 'module', 'cfg'],
        ['function', 'it_works', 7, 7, 'tests', 'module', null],
      ],
    },
    {
      language: 'java',
      text: source('class Repo {', '  void save(int id) {}', '  void save(String id) {}', '  static class Row {}', '}'),
      expected: [
        ['class', 'Repo', 1, 5, null, 'module', null],
        ['method', 'save', 2, 2, 'Repo', 'class', null],
        ['method', 'save', 3, 3, 'Repo', 'class', null],
        ['class', 'Row', 4, 4, 'Repo', 'class', null],
      ],
    },
    {
      language: 'c',
      text: source('struct point { int x; };', 'int area(struct point p);', '#ifdef DEBUG', 'void dump(void) {}', '#endif'),
      expected: [
        ['struct', 'point', 1, 1, null, 'module', null],
        ['function', 'area', 2, 2, null, 'module', null],
        ['function', 'dump', 4, 4, null, 'module', '#ifdef'],
      ],
    },
    {
      language: 'cpp',
      text: source('namespace app {', 'class Widget {', ' public:', '  void draw() const;', '};', 'void Widget::draw() const {}', '}'),
      expected: [
        ['namespace', 'app', 1, 7, null, 'module', null],
        ['class', 'Widget', 2, 5, 'app', 'module', null],
        ['method', 'draw', 4, 4, 'app.Widget', 'class', null],
        ['method', 'draw', 6, 6, 'app.Widget', 'class', null],
      ],
    },
    {
      language: 'csharp',
      text: source('namespace Shop {', '  public class Cart {', '    public int Count { get; }', '    public void Add(int id) { }', '  }', '}'),
      expected: [
        ['namespace', 'Shop', 1, 6, null, 'module', null],
        ['class', 'Cart', 2, 5, 'Shop', 'module', null],
        ['property', 'Count', 3, 3, 'Shop.Cart', 'class', null],
        ['method', 'Add', 4, 4, 'Shop.Cart', 'class', null],
      ],
    },
    {
      language: 'ruby',
      text: source('module Billing', '  class Invoice', '    def total; end', '    def self.build; end', '  end', 'end', 'if ENV["X"]', '  def patched; end', 'end'),
      expected: [
        ['module', 'Billing', 1, 6, null, 'module', null],
        ['class', 'Invoice', 2, 5, 'Billing', 'class', null],
        ['method', 'total', 3, 3, 'Billing.Invoice', 'class', null],
        ['method', 'build', 4, 4, 'Billing.Invoice', 'class', null],
        ['function', 'patched', 8, 8, null, 'module', 'if'],
      ],
    },
    {
      language: 'php',
      text: source('<?php', 'class Mailer {', '    public function send(): void {}', '}', "if (!function_exists('mail_now')) {", '    function mail_now() {}', '}'),
      expected: [
        ['class', 'Mailer', 2, 4, null, 'module', null],
        ['method', 'send', 3, 3, 'Mailer', 'class', null],
        ['function', 'mail_now', 6, 6, null, 'module', 'if'],
      ],
    },
  ];

  for (const { language, text, expected } of cases) {
    it(`${language}: declarations, parents and scopes`, () => {
      expect(rows(outline(language, text))).toEqual(expected);
    });
  }

  it('parses C headers that the C grammar rejects as C++', () => {
    const header = source('#pragma once', 'class Window {', ' public:', '  void show();', '};');
    expect(analyze('c', header)).toMatchObject({ ok: true });
    expect(rows(outline('c', header))).toEqual<Row[]>([
      ['class', 'Window', 2, 5, null, 'module', null],
      ['method', 'show', 4, 4, 'Window', 'class', null],
    ]);
  });

  it('does not report a C include guard as a condition', () => {
    const header = source('#ifndef POINT_H', '#define POINT_H', 'int area(int w, int h);', '#endif');
    expect(find(outline('c', header), 'area')).toMatchObject({ is_conditional: false, decl_context: null });
  });
});

describe('unparseable input', () => {
  const broken: Record<string, string> = {
    typescript: 'export class A {\n  method( {\n}\n',
    tsx: 'export const A = () => <div><span></div>;\n',
    javascript: 'function f( {\n  return 1;\n',
    python: 'def good():\n    pass\n\nclass Broken(:\n    pass\n',
    go: 'package p\n\nfunc Good() {}\n\nfunc Broken( {\n',
    rust: 'fn good() {}\nfn broken( {\n',
    java: 'class A { void good() {} void broken( { }\n',
    c: 'int good(void) { return 0; }\nint broken( {\n',
    cpp: 'class A { void good(); };\nint broken( {\n',
    csharp: 'class A { void Good() {} void Broken( { }\n',
    ruby: 'def good; end\ndef broken(\n',
    php: '<?php\nfunction good() {}\nfunction broken( {\n',
  };

  it('covers every adapter language', () => {
    expect(Object.keys(broken).sort()).toEqual([...adapterLanguages()].sort());
  });

  for (const [language, text] of Object.entries(broken)) {
    it(`${language}: returns no symbols and ok=false, never the declarations before the error`, () => {
      expect(analyze(language as Language, text)).toEqual({ ok: false, symbols: [] });
      expect(outline(language as Language, text)).toEqual([]);
    });
  }
});

describe('languages without an adapter', () => {
  it('have nothing to outline and are not parse failures', () => {
    expect(hasAdapter('markdown')).toBe(false);
    expect(hasAdapter('python')).toBe(true);
    expect(analyze('markdown', '# Title\n')).toEqual({ ok: true, symbols: [] });
  });
});

describe('TypeScript syntax newer than the grammar', () => {
  it('blanks `export type *` and variance annotations for a second parse, keeping every position and the real text in signatures', async () => {
    const { maskTypeScript } = await import('../../src/lang/adapters/ecmascript.js');
    const source = "export type * from './a';\ninterface P<out T> { x: T }\nclass C<in out E extends object = {}> {}\nfor (const k in obj) {}\nconst s = 'in T';\n";
    const masked = maskTypeScript(source)!;
    expect(masked).toHaveLength(source.length);
    expect(masked.split('\n').map((line) => line.length)).toEqual(source.split('\n').map((line) => line.length));
    expect(masked).not.toContain('export type *');
    expect(masked).toContain('interface P<    T>');
    expect(masked).toContain('class C<       E extends object');
    expect(masked).toContain('for (const k in obj)'); // not a type parameter: untouched
    expect(maskTypeScript('export const plain = 1;\n')).toBeUndefined();
    await loadLanguages(['typescript', 'javascript']);
    const result = analyze('typescript', source);
    expect(result.ok).toBe(true);
    expect(result.symbols.map((symbol) => symbol.signature)).toContain('interface P<out T>');
    // JavaScript has no such syntax: nothing is masked there.
    expect(analyze('javascript', 'export type * from "./a";\n').ok).toBe(false);
  });

  it('ends a member before a generic call signature on the next line, so overloads without `;` parse', async () => {
    const { maskTypeScript } = await import('../../src/lang/adapters/ecmascript.js');
    const source = [
      'interface Get {',
      '  <T>(key: string): T',
      '  <T, U = {}>(key: string, fallback: U): T | U',
      '}',
      'type Set = {',
      '  (key: string): void',
      '',
      '  <V>(key: string, value: V): void',
      '}',
      'export class Context {',
      '  get: Get = (key: string) => key',
      '}',
      '',
    ].join('\n');
    const masked = maskTypeScript(source)!;
    expect(masked.split('\n').map((line) => line.length)).toEqual(source.split('\n').map((line) => line.length));
    // After `{` nothing needs ending: only the second signature gets its `;`.
    expect(masked).toContain('{\n  <T>(key: string): T\n ;<T, U = {}>');
    expect(masked).toContain('\n ;<V>(key: string, value: V)');
    await loadLanguages(['typescript']);
    const result = analyze('typescript', source);
    expect(result.ok).toBe(true);
    expect(result.symbols.map((symbol) => [symbol.kind, symbol.name, symbol.start_line, symbol.end_line])).toEqual([
      ['interface', 'Get', 1, 4],
      ['type', 'Set', 5, 9],
      ['class', 'Context', 10, 12],
      ['method', 'get', 11, 11], // an arrow-function field outlines as a method
    ]);
  });
});
