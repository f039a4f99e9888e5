// Bundles the CLI into one file, compiled at startup from a code cache: one file loads measurably
// faster than a tree of imports, and one-shot `repodex search` is startup-bound. The sync worker
// is a separate bundle: worker threads load a file, not a function, and sharing a chunk with the
// CLI would cost every CLI start one more module load.
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
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
// The CLI, as one CommonJS file (dist/cli.cjs): dist/cli.js compiles it with a code cache made
// below, which V8 takes only for a classic script, not for an ES module. Code it reaches only on
// demand (the tree-sitter runtime) costs a command that never calls it nothing: the cache holds
// what the commands run below compiled, and the rest is compiled when first called.
await build({
  ...common,
  format: 'cjs',
  entryPoints: { cli: 'src/frontends/cli/bin.ts' },
  outExtension: { '.js': '.cjs' },
  // A compiled script has no `import()` in Node 20: modules loaded on demand are required
  // instead (what is an ES module of its own goes through core/import-module.ts).
  supported: { 'dynamic-import': false },
  // `import.meta.url` in the bundle is dist/cli.js's URL: its neighbours and packages are found from there.
  define: { 'import.meta.url': '__repodexModuleUrl' },
  // The tree-sitter runtime's CommonJS build: its ES module build makes its own `require` from `import()`.
  plugins: [{ name: 'commonjs-tree-sitter', setup: (build) => build.onResolve({ filter: /^web-tree-sitter$/ }, () => ({ path: createRequire(import.meta.url).resolve('web-tree-sitter') })) }],
  banner: { js: "var __repodexModuleUrl = require('node:url').pathToFileURL(require('node:path').join(__dirname, 'cli.js')).href;" },
});
await build({ ...common, entryPoints: { cli: 'src/frontends/cli/launch.ts' } });
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
// The CLI's code cache, made by running a few commands (a separate process: V8 takes a cache only
// from a process with the same flags as its own). Without it the CLI still runs, only slower to start.
const cache = spawnSync(process.execPath, [fileURLToPath(new URL('./code-cache.mjs', import.meta.url))], { stdio: ['ignore', 'inherit', 'inherit'] });
if (cache.status !== 0) process.stderr.write('repodex build: could not make the CLI\'s code cache (dist/cli.cache); commands will start more slowly\n');
