import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { dirname, join } from 'node:path';
import type * as WebTreeSitter from 'web-tree-sitter';
import type { Language as Grammar, Parser } from 'web-tree-sitter';
import { RepodexError, errorMessage } from '../core/errors.js';

// Resolve the packages from this module, not from the bundle's folder: `createRequire` walks up
// node_modules the same way whether this runs from src/ (vitest) or from dist/cli.js (esbuild).
const require = createRequire(import.meta.url);

type TreeSitter = typeof WebTreeSitter;

let runtime: Promise<TreeSitter> | undefined;
let ready: TreeSitter | undefined;
const grammars = new Map<string, Grammar>();
const pending = new Map<string, Promise<Grammar>>();
const parsers = new Map<string, Parser>();
// Loading two grammars at once corrupts the runtime's dynamic linker (symbols of one grammar are
// looked up in the other), so loads run one after another on this chain.
let loadChain: Promise<unknown> = Promise.resolve();

/**
 * Compile WASM with V8's baseline compiler only, for the duration of `compile`. Grammars are
 * megabytes of WASM whose hot functions V8 would recompile with its optimizing tier; for the
 * seconds a sync or an outline runs, that costs more than it returns (measured on playwright: a
 * full sync takes ~40% less CPU). The flag is read when a module is compiled, so it is switched
 * back off afterwards: tree-sitter's modules keep baseline code, and nothing else the process
 * compiles later (an embedder's WASM, say) is affected. V8 flags are per process, not per thread.
 */
async function withBaselineCompiler<T>(compile: () => Promise<T>): Promise<T> {
  setFlagsFromString('--liftoff-only');
  try {
    return await compile();
  } finally {
    setFlagsFromString('--no-liftoff-only');
  }
}

/** Initializes the tree-sitter runtime once; later calls share the same promise. */
function initRuntime(): Promise<TreeSitter> {
  runtime ??= (async () => {
    // A dynamic import keeps the WASM runtime off the startup path of commands that never parse.
    const module = await import('web-tree-sitter');
    const wasm = require.resolve('web-tree-sitter/tree-sitter.wasm');
    await withBaselineCompiler(() => module.Parser.init({ locateFile: () => wasm }));
    ready = module;
    return module;
  })().catch((error: unknown) => {
    runtime = undefined;
    throw new RepodexError('INTERNAL', `cannot start tree-sitter: ${errorMessage(error)}`, { cause: error });
  });
  return runtime;
}

/**
 * Grammars taken from `@vscode/tree-sitter-wasm` (current builds, pinned with the package) instead
 * of `tree-sitter-wasms`, whose TypeScript grammar predates syntax that current code uses
 * (interface call signatures, `export type *`, …) and so falls back to text on such files.
 */
const CURRENT_GRAMMARS: ReadonlySet<string> = new Set(['tree-sitter-typescript.wasm', 'tree-sitter-tsx.wasm']);

/** Absolute path of a grammar file: from `@vscode/tree-sitter-wasm` for the current grammars, else `tree-sitter-wasms`. */
export function grammarPath(file: string): string {
  if (CURRENT_GRAMMARS.has(file)) return join(dirname(require.resolve('@vscode/tree-sitter-wasm/package.json')), 'wasm', file);
  return join(dirname(require.resolve('tree-sitter-wasms/package.json')), 'out', file);
}

/** Loads a grammar file (once; concurrent callers share the load) so that parsing it is synchronous afterwards. */
export function loadGrammar(file: string): Promise<Grammar> {
  const loaded = grammars.get(file);
  if (loaded) return Promise.resolve(loaded);
  let load = pending.get(file);
  if (!load) {
    const previous = loadChain;
    load = (async () => {
      const module = await initRuntime();
      await previous.catch(() => undefined);
      try {
        const grammar = await withBaselineCompiler(() => module.Language.load(grammarPath(file)));
        grammars.set(file, grammar);
        return grammar;
      } catch (error) {
        throw new RepodexError('INTERNAL', `cannot load tree-sitter grammar ${file}: ${errorMessage(error)}`, { cause: error });
      } finally {
        pending.delete(file);
      }
    })();
    pending.set(file, load);
    loadChain = load;
  }
  return load;
}

/** True once `loadGrammar(file)` has finished. */
export function isGrammarLoaded(file: string): boolean {
  return grammars.has(file);
}

/**
 * The parser for a loaded grammar, reused across calls (parsing is single-threaded per isolate).
 * Throws when the grammar was not loaded first: that is a wiring bug, not a file problem.
 */
export function parserFor(file: string): Parser {
  let parser = parsers.get(file);
  if (parser) return parser;
  const grammar = grammars.get(file);
  if (!grammar || !ready) throw new RepodexError('INTERNAL', `tree-sitter grammar ${file} is not loaded: await loadLanguages() first`);
  parser = new ready.Parser();
  parser.setLanguage(grammar);
  parsers.set(file, parser);
  return parser;
}
