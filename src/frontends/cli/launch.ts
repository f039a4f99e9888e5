// The CLI's entry in the build (dist/cli.js): compiles the bundled CLI (dist/cli.cjs) from the
// code cache the build made for it (dist/cli.cache), so a one-shot command does not parse and
// compile a megabyte of JavaScript before it starts. Node 20 keeps no compile cache of its own.
// Loads node's own modules only.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { lendImport } from '../../core/import-module.js';
import type { CliIo } from './main.js';

/** What the bundled CLI exports (src/frontends/cli/bin.ts). */
export interface BundledCli {
  /** Run the command line `argv` and set the process's exit code. */
  main(argv: readonly string[]): void;
  runCli(argv: readonly string[], io: CliIo): Promise<number>;
}

/** The bundled CLI, compiled, and the script it was compiled as (to make a code cache of). */
export interface CompiledCli {
  readonly cli: BundledCli;
  readonly script: vm.Script;
  /** SHA-256 of the bundle, hex: a code cache is used only for the bundle it was made from. */
  readonly sourceHash: string;
  /** Whether V8 took the code cache (false when there was none, or it was made by another V8 or with other flags). */
  readonly cached: boolean;
}

export const BUNDLE_NAME = 'cli.cjs';
export const CACHE_NAME = 'cli.cache';
/** A cache file starts with this line, then the bundle's hash and a newline, then V8's data. */
const CACHE_MAGIC = 'repodex code cache 1\n';

/** The code cache in `file` when it was made for the bundle whose hash is `sourceHash`, else undefined. */
function cacheFor(file: string, sourceHash: string): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const header = `${CACHE_MAGIC}${sourceHash}\n`;
  return bytes.length > header.length && bytes.toString('latin1', 0, header.length) === header ? bytes.subarray(header.length) : undefined;
}

/** A code cache file's bytes for `compiled`: what V8 compiled so far (functions run since loading included). */
export function codeCacheOf(compiled: CompiledCli): Buffer {
  return Buffer.concat([Buffer.from(`${CACHE_MAGIC}${compiled.sourceHash}\n`, 'latin1'), compiled.script.createCachedData()]);
}

/**
 * Compile and load the bundled CLI in `dir` as a CommonJS module, from its code cache when there
 * is one for this bundle (`useCache`). V8 checks the cache against its own version and flags and
 * compiles from source when it does not match; the hash in the cache's header ties it to the bundle.
 */
export function compileCli(dir: string, useCache = true): CompiledCli {
  const file = join(dir, BUNDLE_NAME);
  const bytes = readFileSync(file);
  const sourceHash = createHash('sha256').update(bytes).digest('hex');
  const cachedData = useCache ? cacheFor(join(dir, CACHE_NAME), sourceHash) : undefined;
  const script = new vm.Script(Module.wrap(bytes.toString('utf8')), { filename: file, ...(cachedData ? { cachedData } : {}) });
  // A compiled script has no `import()` of its own in Node 20 (the bundle requires what it can): lend this module's.
  lendImport((url) => import(url));
  const module = { exports: {} as BundledCli };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dir);
  return { cli: module.exports, script, sourceHash, cached: cachedData !== undefined && !script.cachedDataRejected };
}

/** Run the command line `argv` with the CLI bundled next to this file. */
export function main(argv: readonly string[]): void {
  compileCli(dirname(fileURLToPath(import.meta.url))).cli.main(argv);
}
