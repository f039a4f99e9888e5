import { describe, expect, it } from 'vitest';
import { makeRepo } from '../../test/helpers.js';
import { ConfigSchema } from '../core/config.js';
import { Denylist } from '../safety/denylist.js';
import { walkRepository } from './walker.js';

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
});
