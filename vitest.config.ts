import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Generous: the end-to-end files spawn hundreds of real processes, two test files at a time.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at once even on two cores (vitest's default leaves one core idle): most end-to-end
    // tests wait on child processes, debounce timers and watchers, not on the CPU.
    poolOptions: { forks: { maxForks: Math.max(2, availableParallelism()), minForks: 1 } },
  },
});
