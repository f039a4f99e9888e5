import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeRepo, tempDir } from '../../test/helpers.js';
import { ConfigSchema } from '../core/config.js';
import { gitExcludes } from '../core/git-config.js';
import { Denylist } from '../safety/denylist.js';
import { RepoScope } from './scope.js';
import type * as GitConfig from '../core/git-config.js';

// Count how often git's files are looked up, to see the memo keep and drop what it read.
vi.mock('../core/git-config.js', async (importOriginal) => {
  const actual = await importOriginal<typeof GitConfig>();
  return { ...actual, gitExcludes: vi.fn(actual.gitExcludes) };
});

afterEach(() => {
  vi.useRealTimers();
});

describe('RepoScope and git exclude files', () => {
  it('keeps git exclude layers between scopes, and reads them again once a file behind them changes', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/info/exclude': 'one.ts\n', 'one.ts': '', 'two.ts': '' });
    const env = { HOME: tempDir(), GIT_CONFIG_NOSYSTEM: '1' };
    const scope = (): RepoScope => new RepoScope(root, ConfigSchema.parse({}), new Denylist(), env);
    const lookups = vi.mocked(gitExcludes);
    lookups.mockClear();
    // A clock a minute ahead: every file is older than the racy window (2 s), so what was read from them may be kept.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60_000);
    expect([scope().includesFile('one.ts'), scope().includesFile('two.ts')]).toEqual([false, true]);
    expect(scope().rootControls.map((control) => control.path)).toContain('.git/info/exclude');
    expect(lookups).toHaveBeenCalledTimes(1);

    writeFileSync(join(root, '.git/info/exclude'), 'two.ts\n');
    vi.setSystemTime(Date.now() + 60_000);
    expect([scope().includesFile('one.ts'), scope().includesFile('two.ts')]).toEqual([true, false]);
    expect(lookups).toHaveBeenCalledTimes(2);
  });

  it("applies no rules from a git exclude file that is not a regular file, as git reads /dev/null", () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/config': '[core]\n\texcludesFile = /dev/null\n', 'a.ts': '' });
    const scope = new RepoScope(root, ConfigSchema.parse({}), new Denylist(), { HOME: tempDir(), GIT_CONFIG_NOSYSTEM: '1' });
    expect(scope.includesFile('a.ts')).toBe(true);
    expect(scope.rootControls.map((control) => control.path)).toContain('/dev/null');
  });
});
