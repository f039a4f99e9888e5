// Bundles the CLI into one ESM file: a single module loads measurably faster than a
// tree of imports, and one-shot `repodex search` is startup-bound.
import { build } from 'esbuild';

await build({
  // The sync worker is its own entry: worker threads load a file, not a function.
  entryPoints: { cli: 'src/frontends/cli/main.ts', 'sync-worker': 'src/engine/sync-worker.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  // Code reached only through dynamic import (the tree-sitter runtime) goes to its own chunk, so
  // commands that never parse do not compile it at startup.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  minify: true,
  logLevel: 'warning',
  // Bundled CommonJS dependencies expect `require`; give the ESM bundle one.
  banner: { js: "import { createRequire as __repodexCreateRequire } from 'node:module'; const require = __repodexCreateRequire(import.meta.url);" },
});
