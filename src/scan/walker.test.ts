import { describe, expect, it } from 'vitest';
import { makeRepo } from '../../test/helpers.js';
import { ConfigSchema } from '../core/config.js';
import { Denylist } from '../safety/denylist.js';
import { RepoScope } from './scope.js';
import { walkLeftOut, walkRepository } from './walker.js';

describe('walkRepository', () => {
  it('skips dependency lock files and build folders, keeps ordinary JSON and YAML', () => {
    const root = makeRepo({
      'package.json': '{}',
      'package-lock.json': '{}',
      'web/pnpm-lock.yaml': 'lockfileVersion: 9',
      'config/app.yaml': 'a: 1',
      'node_modules/x/index.js': 'x',
      'dist/out.js': 'x',
      'src/index.ts': 'export {}',
    });
    const files = walkRepository(root, ConfigSchema.parse({}), new Denylist()).files.map((file) => file.path);
    expect(files).toEqual(['config/app.yaml', 'package.json', 'src/index.ts']);
  });

  it('leaves out names shaped like a credential, and walkLeftOut names what was left out for its name (not what is ignored)', () => {
    const token = `ghp_${'Rk8Zw4Yb6NcP1dF5gJ7sQwEhT0uV3xY5zA1b'}`;
    const root = makeRepo({
      'src/index.ts': 'export {}',
      [`tokens/${token}.ts`]: 'export const x = 1;',
      [`${token}/inner.ts`]: 'export const y = 1;',
      '.env': 'A=1',
      '.ssh/id': 'x',
      'keys/server.pem': 'x',
      'ignored/.env': 'B=2',
      '.gitignore': 'ignored/\n',
      'node_modules/pkg/.env': 'C=3',
    });
    const config = ConfigSchema.parse({});
    expect(walkRepository(root, config, new Denylist()).files.map((file) => file.path)).toEqual(['src/index.ts']);
    expect(walkLeftOut(new RepoScope(root, config, new Denylist()))).toEqual([
      { path: '.env', isDir: false },
      { path: '.ssh', isDir: true },
      { path: token, isDir: true },
      { path: 'keys/server.pem', isDir: false },
      { path: `tokens/${token}.ts`, isDir: false },
    ]);
  });
});
