// Bundles the CLI into one ESM file (plus a lazily loaded chunk for the tree-sitter runtime): one
// module loads measurably faster than a tree of imports, and one-shot `repodex search` is
// startup-bound. The sync worker is a separate bundle: worker threads load a file, not a function,
// and sharing a chunk with the CLI would cost every CLI start one more module load.
import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const common = {
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  minify: process.env.REPODEX_BUILD_MINIFY !== "0",
  logLevel: 'warning',
  // The PostgreSQL store's migrations, bundled as text.
  loader: { '.sql': 'text' },
  // The watcher's native binding is found at run time among its platform packages: not bundleable.
  // So are onnxruntime (behind transformers.js) and usearch: both load prebuilt binaries; both are
  // optional dependencies, loaded only when the onnx embedder or the HNSW index is used.
  external: ['@parcel/watcher', '@huggingface/transformers', 'usearch', 'pg-native'],
  // Bundled CommonJS dependencies expect `require`; give the ESM bundle one.
  banner: { js: "import { createRequire as __repodexCreateRequire } from 'node:module'; const require = __repodexCreateRequire(import.meta.url);" },
};

rmSync('dist', { recursive: true, force: true });
await build({
  ...common,
  entryPoints: { cli: 'src/frontends/cli/bin.ts' },
  // Code reached only through dynamic import (the tree-sitter runtime) goes to its own chunk, so
  // commands that never parse do not compile it at startup.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
});
// The MCP server too: only `serve --mcp` loads it (and the MCP SDK in it); the team server
// (`serve --http`, with hono and the MCP SDK) likewise.
await build({
  ...common,
  entryPoints: { 'parse-worker': 'src/engine/parse-worker.ts', 'sync-worker': 'src/sync-worker.ts', 'mcp-server': 'src/frontends/mcp/server.ts', 'http-server': 'src/frontends/http/main.ts' },
});
// What a one-shot command needs to hand itself to a running `repodex daemon`: node's own modules
// only, so a command with no daemon to call pays almost nothing for looking.
await build({ ...common, entryPoints: { 'daemon-client': 'src/frontends/cli/daemon-client.ts' } });
// The team server's web page: plain files, served as they are (no build step for it).
cpSync('src/frontends/http/page', 'dist/page', { recursive: true });
