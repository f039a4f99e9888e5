/**
 * `import()` of an ES module by absolute URL, for the modules the CLI loads on demand that are ES
 * modules of their own (the MCP and team server bundles). The CLI's bundle runs as a classic
 * script compiled from a code cache (see frontends/cli/launch.ts), where Node 20 has no `import()`
 * to offer: its launcher, an ES module, lends its own (`lendImport`).
 */
export function importModule(url: string): Promise<unknown> {
  const lent = (globalThis as { [HOST_IMPORT]?: (url: string) => Promise<unknown> })[HOST_IMPORT];
  return lent ? lent(url) : import(url);
}

/** Make `importer` what `importModule` calls (the CLI's launcher lends its own `import()`). */
export function lendImport(importer: (url: string) => Promise<unknown>): void {
  (globalThis as { [HOST_IMPORT]?: (url: string) => Promise<unknown> })[HOST_IMPORT] = importer;
}

const HOST_IMPORT = Symbol.for('repodex.import');
