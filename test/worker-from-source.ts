import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** tsx's ESM API (its `register`), found through the exports its package declares. */
function tsxApi(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href;
}

/**
 * A worker script that runs the TypeScript module `source` from the sources, compiled as it loads
 * (by tsx): the unit tests of the thread managers test the worker as it is now, with no build.
 */
export function workerFromSource(source: URL): URL {
  if (!existsSync(fileURLToPath(source))) throw new Error(`no worker source at ${fileURLToPath(source)}: point the test at the worker's module`);
  const code = `import { register } from ${JSON.stringify(tsxApi())};\nregister();\nawait import(${JSON.stringify(source.href)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
