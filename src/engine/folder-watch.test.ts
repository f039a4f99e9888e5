import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { FolderWatch } from './folder-watch.js';
import { needsInotify } from '../../test/inotify.js';

const watches: FolderWatch[] = [];
afterEach(() => {
  for (const watch of watches.splice(0)) watch.close();
});

/** A watch of every folder under a new temporary root, and the paths of the events it reported. */
function watched(): { root: string; seen: string[]; errors: Error[]; watch: FolderWatch } {
  const root = tempDir();
  const seen: string[] = [];
  const errors: Error[] = [];
  const watch = new FolderWatch(root, { watchesDir: () => true, onEvent: (event) => seen.push(event.path), onError: (error) => errors.push(error) });
  watches.push(watch);
  return { root, seen, errors, watch };
}

/** Resolves once `path` was reported (at or after event `from`), or fails after two seconds. */
async function reported(seen: string[], path: string, from = 0): Promise<void> {
  for (let waited = 0; !seen.includes(path, from); waited += 5) {
    if (waited > 2000) throw new Error(`no event for ${path}; seen: ${seen.slice(-5).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.skipIf(process.platform !== 'linux')('FolderWatch', () => {
  it('reports writes in a folder made after it started, and in its subfolders', needsInotify(async () => {
    const { root, seen, watch } = watched();
    watch.start();
    mkdirSync(join(root, 'a/b'), { recursive: true });
    await reported(seen, join(root, 'a'));
    writeFileSync(join(root, 'a/b/x.ts'), 'x');
    await reported(seen, join(root, 'a/b/x.ts'));
  }));

  it('regression: a folder removed and made again under its name (its inode is usually reused) is watched again', needsInotify(async () => {
    const { root, seen, errors, watch } = watched();
    mkdirSync(join(root, 'a'));
    watch.start();
    for (let round = 0; round < 20; round++) {
      // In one turn, as a branch switch does it: the old watch is dead before any event is read.
      const before = seen.length;
      rmSync(join(root, 'a'), { recursive: true });
      mkdirSync(join(root, 'a'));
      await reported(seen, join(root, 'a'), before);
      writeFileSync(join(root, `a/x${round}.ts`), 'x');
      await reported(seen, join(root, `a/x${round}.ts`));
    }
    // Moved away and another moved over its name.
    mkdirSync(join(root, 'other'));
    renameSync(join(root, 'a'), join(root, 'gone'));
    renameSync(join(root, 'other'), join(root, 'a'));
    await reported(seen, join(root, 'gone'));
    writeFileSync(join(root, 'a/moved.ts'), 'x');
    await reported(seen, join(root, 'a/moved.ts'));
    writeFileSync(join(root, 'gone/still.ts'), 'x');
    await reported(seen, join(root, 'gone/still.ts'));
    expect(errors).toEqual([]);
    expect(watch.size).toBe(3); // the root, a, gone
  }));
});
