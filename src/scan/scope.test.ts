import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, tempDir } from '../../test/helpers.js';
import { ConfigSchema } from '../core/config.js';
import { Denylist } from '../safety/denylist.js';
import { RepoScope } from './scope.js';

describe('RepoScope and git exclude files', () => {
  it('keeps git exclude layers between scopes, and reads them again once a file behind them changes', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/info/exclude': 'one.ts\n', 'one.ts': '', 'two.ts': '' });
    const env = { HOME: tempDir(), GIT_CONFIG_NOSYSTEM: '1' };
    const scope = (): RepoScope => new RepoScope(root, ConfigSchema.parse({}), new Denylist(), env);
    // Files older than the racy window (2 s), so a memo may keep what it read from them.
    const past = (seconds: number): void => {
      const when = new Date(Date.now() - seconds * 1000);
      for (const path of ['.git', '.git/HEAD', '.git/info/exclude']) utimesSync(join(root, path), when, when);
    };
    past(60);
    expect([scope().includesFile('one.ts'), scope().includesFile('two.ts')]).toEqual([false, true]);
    expect(scope().rootControls.map((control) => control.path)).toContain('.git/info/exclude');

    writeFileSync(join(root, '.git/info/exclude'), 'two.ts\n');
    past(30);
    expect([scope().includesFile('one.ts'), scope().includesFile('two.ts')]).toEqual([true, false]);
  });
});
