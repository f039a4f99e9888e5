// vitest's global setup for the e2e project: its tests run the built CLI, servers and worker
// threads in dist/, so a missing build or one older than the sources would test something else
// than the code at hand (or nothing, quietly). The run stops with what to do instead.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout under test (not from helpers.ts, which registers hooks only a test file may). */
const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const FIX = 'run `npm run build` first (`npm test` does), or run the unit tests alone: npx vitest run --project unit';

/** The newest file under `dir` that goes into the build (tests do not) and its modification time. */
function newest(dir: string): { path: string; mtimeMs: number } {
  let found = { path: dir, mtimeMs: 0 };
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.test.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const { mtimeMs } = statSync(path);
    if (mtimeMs > found.mtimeMs) found = { path, mtimeMs };
  }
  return found;
}

/** Why dist/ cannot be tested as the build of src/, or undefined when it can. */
export function buildProblem(root = PROJECT_ROOT): string | undefined {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'cli.js'))) return `the end-to-end tests run the built CLI, and dist/ holds no build: ${FIX}`;
  // The build rewrites every file directly in dist/: the oldest of them is when it began.
  const built = Math.min(
    ...readdirSync(dist, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => statSync(join(dist, entry.name)).mtimeMs),
  );
  const source = newest(join(root, 'src'));
  if (source.mtimeMs > built) return `dist/ is older than the sources (${relative(root, source.path)} changed after the build): ${FIX}`;
  return undefined;
}

/**
 * Stops the run before any test file is loaded when the build is missing or stale: one line on
 * stderr and exit code 1 (a thrown error would come after vitest's "No test files found").
 */
export default function setup(): void {
  const problem = buildProblem();
  if (problem === undefined) return;
  process.stderr.write(`\nrepodex tests: ${problem}\n`);
  process.exit(1);
}
