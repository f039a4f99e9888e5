import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The PostgreSQL store's migrations are imported as text, as esbuild's text loader bundles them.
  plugins: [{ name: 'sql-as-text', transform: (code: string, id: string) => (id.endsWith('.sql') ? { code: `export default ${JSON.stringify(code)};`, map: null } : undefined) }],
  test: {
    // Generous: the end-to-end files spawn hundreds of real processes, two test files at a time.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The CLI processes tests start run on their own: a command would otherwise start a daemon for
    // its temporary repository (test/e2e/daemon.test.ts tests daemons, and turns this back on).
    env: { REPODEX_DAEMON: '0' },
    // Two files at once even on two cores (vitest's default leaves one core idle): most end-to-end
    // tests wait on child processes, debounce timers and watchers, not on the CPU.
    poolOptions: { forks: { maxForks: Math.max(2, availableParallelism()), minForks: 1 } },
    // Two projects, both with the settings above; `vitest run` runs both.
    projects: [
      // The tests beside the code (src/**): no build needed, seconds to run. The inner loop:
      //   npx vitest run --project unit
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      // Everything under test/: the built CLI and servers as real processes, the golden files,
      // the store and engine suites on every backend, the regression tests. They run dist/, so
      // they refuse to start on a missing or stale build (test/built.ts).
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts'], globalSetup: ['test/built.ts'] } },
    ],
  },
});
