import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/compose.js';
import { checkedJsonText } from '../../src/core/checked-json.js';
import { AnnGraph } from '../../src/vector/ann-graph.js';
import { startFakeEmbeddingServer } from '../../src/vector/providers/fake-openai-server.js';
import { writeTinyOnnxModel } from '../../src/vector/providers/tiny-onnx-model.js';
import { TOPICS, makeRepo, runCli, tempDir } from '../helpers.js';

/** A repository of 72 small files (one chunk each), each about one topic: enough chunks for the builtin embedder to learn from. */
function topicRepo(provider?: 'builtin'): string {
  const files: Record<string, string> = {};
  for (let f = 0; f < 72; f++) {
    const words = TOPICS[f % TOPICS.length]!;
    const fns = [0, 1, 2].map((i) => {
      const [a, b, c, d] = [words[(i + f) % 6]!, words[(i + f + 1) % 6]!, words[(i + f + 2) % 6]!, words[(i + f + 3) % 6]!];
      return [
        `/** Handles the ${a} and ${b} of a ${c}. */`,
        `export function ${a}${b[0]!.toUpperCase()}${b.slice(1)}${f}_${i}(${c}: number, ${d}: string): string {`,
        `  const ${a}Value = ${c} + ${f};`,
        `  // the ${d} decides the ${b}`,
        `  return ${d}.repeat(${a}Value) + '${b}';`,
        '}',
        '',
      ].join('\n');
    });
    files[`src/${TOPICS[f % TOPICS.length]![0]}/mod${f}.ts`] = fns.join('\n');
  }
  // Embeddings are off by default: a repository that wants them says so, as a user would.
  if (provider) files['.repodex/config.json'] = JSON.stringify({ embeddings: { provider } });
  return makeRepo(files);
}

interface SyncJson {
  chunks_total: number;
  embeddings?: { embedded: number; reused: number; vectors: number; chunks: number; trained: boolean; engine: string; model: string } | { error: string };
}

interface SearchJson {
  mode: string;
  results: { path: string; why: string[] }[];
  warnings: string[];
}

function embedded(summary: SyncJson): Exclude<SyncJson['embeddings'], { error: string } | undefined> {
  const e = summary.embeddings;
  if (!e || 'error' in e) throw new Error(`no embedding summary: ${JSON.stringify(e)}`);
  return e;
}

if (!AnnGraph.available()) console.warn('SKIPPED: the nearest-neighbour graph test needs usearch (an optional dependency), which does not load here');

describe.skipIf(!AnnGraph.available())('semantic layer: the nearest-neighbour graph of large indexes', () => {
  it('is built by the embedding run from embeddings.ann_from vectors, searched, and extended after an edit', () => {
    const root = topicRepo();
    // Every index is "large" from one vector on.
    mkdirSync(join(root, '.repodex'), { recursive: true });
    writeFileSync(join(root, '.repodex/config.json'), JSON.stringify({ embeddings: { provider: 'builtin', ann_from: 1 } }));
    const first = embedded(runCli(['sync', '--json', '--root', root]).json<SyncJson>());
    const folder = join(root, '.repodex/vectors', `builtin-${first.model}-128`);
    const graphMeta = (): { records: number; connectivity: number } => JSON.parse(readFileSync(join(folder, 'graph.json'), 'utf8')) as { records: number; connectivity: number };
    expect(graphMeta().records).toBe(first.embedded);
    expect(readFileSync(join(root, '.repodex/build.log'), 'utf8')).toMatch(/graph over \d+ vectors/);

    const status = runCli(['status', '--json', '--root', root]).json<{ semantic: { state: string; search: string } }>();
    expect(status.semantic).toMatchObject({ state: 'ready', search: 'graph' });
    expect(runCli(['status', '--root', root]).stdout).toMatch(/search\s+nearest-neighbour graph/);
    const vector = runCli(['search', 'continue a partial transfer', '--mode', 'vector', '--json', '--root', root]).json<SearchJson>();
    expect(vector).toMatchObject({ mode: 'vector', warnings: [] });
    expect(vector.results[0]!.path).toMatch(/^src\/upload\//);

    // A new file: its chunk is embedded and added to the graph, not the graph rebuilt from nothing.
    writeFileSync(join(root, 'src/cache/extra.ts'), 'export function evictStale(capacity: number): number {\n  // evict the stale lru entry when over capacity\n  return capacity - 1;\n}\n');
    const after = embedded(runCli(['sync', '--json', '--root', root]).json<SyncJson>());
    expect(after.embedded).toBe(1);
    expect(graphMeta().records).toBe(first.embedded + 1);
    const cache = runCli(['search', 'evict the stale lru entry', '--mode', 'vector', '--json', '--root', root]).json<SearchJson>();
    expect(cache.results.slice(0, 3).map((hit) => hit.path)).toContain('src/cache/extra.ts');

    // With the default threshold the same index is small: an exact scan.
    writeFileSync(join(root, '.repodex/config.json'), JSON.stringify({ embeddings: { provider: 'builtin' } }));
    expect(runCli(['status', '--json', '--root', root]).json<{ semantic: { search: string } }>().semantic.search).toBe('exact');
  });
});

describe('semantic layer: the builtin embedder, for real, through the CLI', () => {
  it('learns from the repository, embeds every chunk once, and serves vector and hybrid searches', () => {
    const root = topicRepo('builtin');
    const first = runCli(['sync', '--json', '--root', root]).json<SyncJson>();
    const e1 = embedded(first);
    expect(e1.engine).toBe('builtin');
    expect(e1.trained).toBe(true);
    expect(e1.vectors).toBe(first.chunks_total);
    expect(e1.embedded).toBe(first.chunks_total);

    // Nothing changed: every vector is reused, nothing embedded again; so after --force.
    expect(embedded(runCli(['sync', '--json', '--root', root]).json<SyncJson>())).toMatchObject({ embedded: 0, reused: first.chunks_total });
    const forced = embedded(runCli(['sync', '--force', '--json', '--root', root]).json<SyncJson>());
    expect(forced).toMatchObject({ embedded: 0, trained: false });

    const vector = runCli(['search', 'continue a partial transfer', '--mode', 'vector', '--json', '--root', root]).json<SearchJson>();
    expect(vector.mode).toBe('vector');
    expect(vector.warnings).toEqual([]);
    expect(vector.results[0]!.path).toMatch(/^src\/upload\//);
    expect(vector.results[0]!.why[0]).toMatch(/^vector:[01]\.\d\d$/);

    const hybrid = runCli(['search', 'resume an upload', '--mode', 'hybrid', '--json', '--root', root]).json<SearchJson>();
    expect(hybrid.mode).toBe('hybrid');
    expect(hybrid.results[0]!.path).toMatch(/^src\/upload\//);
    expect(hybrid.results.some((hit) => hit.why.some((entry) => entry.startsWith('vector:')))).toBe(true);

    // A one-file edit embeds only that file's changed chunk.
    const edited = join(root, 'src/cookie/mod1.ts');
    writeFileSync(edited, `${readFileSync(edited, 'utf8')}// the domain of a cookie, once more\n`);
    const after = embedded(runCli(['sync', '--json', '--root', root]).json<SyncJson>());
    expect(after.embedded).toBe(1);
    expect(after.vectors).toBe(after.chunks);
  });

  it('shows seed 003 status, answers the index aliases, and verify catches damaged vectors', () => {
    const root = topicRepo();
    const build = runCli(['index', 'build', '--json', '--root', root]);
    expect(build.code).toBe(0);
    const query = runCli(['index', 'query', 'cookie session expiry', '-k', '3', '--show-snippets', '--json', '--root', root]).json<SearchJson>();
    expect(query.mode).toBe('hybrid');
    expect(query.results.length).toBe(3);
    runCli(['index', 'query', 'zzzqqq nothing matches', '--mode', 'bm25', '--json', '--root', root]);
    const status = runCli(['index', 'status', '--json', '--root', root]).json<{ semantic: { state: string; vectors: number; chunks: number; model: string; analytics: { queries: number; hits: number; misses: number } } }>();
    expect(status.semantic).toMatchObject({ state: 'ready', analytics: { queries: 2, hits: 1, misses: 1 } });
    expect(status.semantic.vectors).toBe(status.semantic.chunks);
    const analytics = JSON.parse(readFileSync(join(root, '.repodex/analytics.json'), 'utf8')) as Record<string, unknown>;
    expect(analytics).toMatchObject({ queries: 2, hits: 1, misses: 1 });
    expect(typeof analytics.last_query_ts).toBe('string');
    const human = runCli(['status', '--root', root]).stdout;
    expect(human).toMatch(/vectors\s+Ready/);
    expect(human).toMatch(/model\s+builtin repo-lsa-128@[0-9a-f]{12} \(128-D\)/);
    const manifest = JSON.parse(readFileSync(join(root, '.repodex/vectors/manifest.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(manifest)).toEqual(expect.arrayContaining(['version', 'engine', 'model', 'dim', 'metric', 'chunk', 'repo', 'counts', 'created_at', 'last_refresh']));
    expect(runCli(['index', 'verify', '--root', root]).code).toBe(0);
    // Status answers from the manifest while it describes the vectors (nothing loaded), and the
    // same as from the vectors themselves: without its stamp it has to load them.
    // (size_on_disk aside: the rewritten manifest is itself smaller.)
    const panel = (): unknown => ({ ...runCli(['status', '--json', '--root', root]).json<{ semantic: Record<string, unknown> }>().semantic, size_on_disk: 0 });
    const fromManifest = panel();
    const manifestPath = join(root, '.repodex/vectors/manifest.json');
    const { checksum: _checksum, vectors_stamp: _stamp, ...withoutStamp } = manifest;
    writeFileSync(manifestPath, checkedJsonText(withoutStamp));
    expect(panel()).toEqual(fromManifest);
    // The manifest is checksummed: one that is not as repodex wrote it is damage, reported as such.
    writeFileSync(manifestPath, JSON.stringify(manifest));
    expect(runCli(['status', '--json', '--root', root]).json<{ damage: string[] }>().damage.join('\n')).toMatch(/vectors\/manifest\.json is damaged/);
    writeFileSync(manifestPath, checkedJsonText(Object.fromEntries(Object.entries(manifest).filter(([key]) => key !== 'checksum'))));
    expect(runCli(['verify', '--root', root]).code).toBe(0);

    // Flip a byte inside the first vector record: verify names the log and exits 1.
    const log = join(root, '.repodex/vectors', `builtin-${String(manifest.model).replace(/[^A-Za-z0-9._@-]+/g, '_')}-128`, 'vectors.bin');
    const bytes = readFileSync(log);
    bytes[16 + 40] = bytes[16 + 40]! ^ 0xff;
    writeFileSync(log, bytes);
    const verify = runCli(['verify', '--json', '--root', root]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/vectors\.bin/);
    // The next sync re-embeds what the damage cost.
    const repaired = embedded(runCli(['sync', '--json', '--root', root]).json<SyncJson>());
    expect(repaired.vectors).toBe(repaired.chunks);
    expect(runCli(['index', 'clean', '--json', '--root', root]).code).toBe(0);
    expect(runCli(['status', '--json', '--root', root]).json<{ semantic: { state: string } }>().semantic.state).toBe('missing');
  });

  it('answers vector and hybrid with bm25 and says why when there are no vectors', () => {
    // Embeddings on, but the index was built by a search (which never waits for vectors).
    const root = topicRepo('builtin');
    const none = runCli(['search', 'resume an upload', '--mode', 'hybrid', '--json', '--root', root]).json<SearchJson>();
    expect(none.mode).toBe('bm25');
    expect(none.warnings.join(' ')).toMatch(/no chunk vectors .* run `repodex sync`/);
    expect(none.results.length).toBeGreaterThan(0);
  });

  it('is off by default: a sync makes no vectors, and vector or hybrid searches answer with bm25 and say how to turn embeddings on', () => {
    const root = topicRepo();
    const summary = runCli(['sync', '--json', '--root', root]).json<SyncJson>();
    expect(summary.embeddings).toBeUndefined();
    expect(existsSync(join(root, '.repodex/vectors'))).toBe(false);
    expect(runCli(['status', '--json', '--root', root]).json<{ semantic: { state: string } }>().semantic.state).toBe('off');
    for (const mode of ['vector', 'hybrid']) {
      const off = runCli(['search', 'resume an upload', '--mode', mode, '--json', '--root', root]).json<SearchJson>();
      expect(off.mode).toBe('bm25');
      expect(off.warnings.join(' ')).toMatch(/embeddings are off.*`repodex sync --embeddings builtin`/);
      expect(off.results.length).toBeGreaterThan(0);
    }
    // `index build` (the semantic-search plan's name for it) builds the vectors: it turns the builtin embedder on.
    const built = embedded(runCli(['index', 'build', '--json', '--root', root]).json<SyncJson>());
    expect(built).toMatchObject({ engine: 'builtin', vectors: summary.chunks_total });
    expect(JSON.parse(readFileSync(join(root, '.repodex/config.json'), 'utf8'))).toMatchObject({ embeddings: { provider: 'builtin' } });
    expect(runCli(['index', 'query', 'resume an upload', '--json', '--root', root]).json<SearchJson>()).toMatchObject({ mode: 'hybrid', warnings: [] });
    // and `--embeddings off` turns them off again.
    expect(runCli(['sync', '--embeddings', 'off', '--json', '--root', root]).json<SyncJson>().embeddings).toBeUndefined();
    expect(runCli(['search', 'resume an upload', '--mode', 'vector', '--json', '--root', root]).json<SearchJson>().mode).toBe('bm25');
  });
});

describe('semantic layer: an OpenAI-compatible endpoint', () => {
  it('embeds each new chunk once: a one-file edit sends only that file\'s new chunks', async () => {
    const server = await startFakeEmbeddingServer({ dim: 32 });
    try {
      const root = topicRepo();
      makeRepo({ '.repodex/config.json': JSON.stringify({ embeddings: { provider: 'openai', url: `${server.url}/v1`, model: 'fake-embed', dim: 32 } }) }, root);
      const engine = createEngine({ root });
      const first = await engine.sync();
      expect(embedded(first as SyncJson)).toMatchObject({ engine: 'openai', model: 'fake-embed', embedded: first.chunks_total });
      expect(server.inputs.length).toBe(first.chunks_total);

      const again = await engine.sync({ force: true });
      expect(embedded(again as SyncJson).embedded).toBe(0);
      expect(server.inputs.length).toBe(first.chunks_total);

      const edited = join(root, 'src/retry/mod2.ts');
      const text = readFileSync(edited, 'utf8').replace(/\/\*\* Handles/g, '/** Newly handles');
      writeFileSync(edited, text);
      const before = server.inputs.length;
      const after = await engine.sync();
      const sent = server.inputs.slice(before);
      // The file is one chunk: one new chunk, one text sent.
      expect(after.chunks_created).toBe(1);
      expect(sent.length).toBe(1);
      for (const input of sent) expect(text).toContain(input);

      const hybrid = await engine.search({ q: 'retry with backoff', mode: 'hybrid' });
      expect(hybrid.mode).toBe('hybrid');
      expect(hybrid.warnings).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a down endpoint never fails the sync or the search', async () => {
    const server = await startFakeEmbeddingServer({ dim: 16, status: 500 });
    try {
      const root = topicRepo();
      makeRepo({ '.repodex/config.json': JSON.stringify({ embeddings: { provider: 'openai', url: server.url, model: 'down', dim: 16, timeout_ms: 1000 } }) }, root);
      const engine = createEngine({ root });
      const summary = await engine.sync();
      expect(summary.chunks_total).toBeGreaterThan(50);
      expect(summary.embeddings && 'error' in summary.embeddings ? summary.embeddings.error : '').toMatch(/500/);
      const report = await engine.search({ q: 'cookie session', mode: 'hybrid' });
      expect(report.mode).toBe('bm25');
      expect(report.results.length).toBeGreaterThan(0);
      expect(report.warnings.join(' ')).toMatch(/embed/);
    } finally {
      await server.close();
    }
  }, 30_000);
});

describe('semantic layer: a local ONNX model', () => {
  it('embeds with a tiny model built here and serves vector searches', async () => {
    const modelDir = join(tempDir(), 'tiny-model');
    writeTinyOnnxModel(modelDir, { dim: 64 });
    const root = topicRepo();
    makeRepo({ '.repodex/config.json': JSON.stringify({ embeddings: { provider: 'onnx', model_path: modelDir } }) }, root);
    const engine = createEngine({ root });
    const summary = await engine.sync();
    const e = embedded(summary as SyncJson);
    expect(e.engine).toBe('onnx');
    expect(e.vectors).toBe(summary.chunks_total);
    const report = await engine.search({ q: 'cache evict capacity', mode: 'vector' });
    expect(report.mode).toBe('vector');
    expect(report.results.length).toBeGreaterThan(0);
    expect(report.results[0]!.why[0]).toMatch(/^vector:/);
    const status = await engine.status();
    expect(status.semantic).toMatchObject({ state: 'ready', engine: 'onnx', dim: 64 });
  }, 60_000);
});
