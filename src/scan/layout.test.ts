import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pathRole } from './file-role.js';
import { makeRepo } from '../../test/helpers.js';
import { createEngine, openStore } from '../compose.js';
import { LAYOUT_VERSION, isLayoutSource, layoutReader, learnLayout, linguistRules, pnpmWorkspaces } from './layout.js';

/** A repository as paths and the text of the files the layout reads. */
function repo(files: Record<string, string>): { paths: string[]; read: (path: string) => string | undefined } {
  return { paths: Object.keys(files), read: (path) => files[path] };
}

const pkg = (fields: Record<string, unknown>): string => JSON.stringify(fields);

describe('learnLayout', () => {
  it('learns templates, apps and docs sites from a workspace, and leaves its packages and private libraries alone', () => {
    const { paths, read } = repo({
      'package.json': pkg({ private: true, workspaces: ['packages/*', 'playground', 'docs', 'bench/*'] }),
      'packages/core/package.json': pkg({ name: 'core', dependencies: { shared: '1' } }),
      'packages/core/src/router.ts': '',
      'packages/shared/package.json': pkg({ name: 'shared', private: true }),
      'packages/vscode/package.json': pkg({ name: 'vscode-ext', private: true }),
      'packages/create-app/package.json': pkg({ name: 'create-app', bin: 'index.js' }),
      'packages/create-app/template-react/package.json': pkg({ name: 'template', private: true }),
      'packages/create-app/template-react/src/main.tsx': '',
      'playground/package.json': pkg({ name: 'playground', private: true, dependencies: { core: '1' } }),
      'docs/package.json': pkg({ name: 'site', private: true }),
      'bench/startup/package.json': pkg({ name: 'bench-startup', private: true }),
      'test/fixtures/app/package.json': pkg({ name: 'fixture' }),
      // Module-type markers beside source are not projects.
      'packages/core/src/esm/package.json': pkg({ type: 'module' }),
    });
    const layout = learnLayout(paths, read);
    expect(layout.folders).toEqual([
      { folder: 'bench/startup', role: 'bench', why: 'private-app' },
      { folder: 'docs', role: 'docs', why: 'private-app' },
      { folder: 'packages/create-app/template-react', role: 'template', why: 'not-a-workspace-package' },
      { folder: 'playground', role: 'example', why: 'private-app' },
    ]);
    const roleOf = layoutReader(layout);
    expect(roleOf('packages/create-app/template-react/src/main.tsx')).toBe('template');
    expect(roleOf('packages/core/src/router.ts')).toBeUndefined();
    // A private package beside published ones is its code (shared, an editor extension), unless its name says otherwise.
    expect(roleOf('packages/shared/index.ts')).toBeUndefined();
    expect(roleOf('packages/vscode/src/extension.ts')).toBeUndefined();
    expect(roleOf('playgroundish/x.ts')).toBeUndefined();
  });

  it('reads pnpm and lerna workspaces, and learns nothing where no workspace is declared', () => {
    const pnpm = repo({
      'pnpm-workspace.yaml': "packages:\n  - 'packages/*' # the libraries\n  - \"!packages/old\"\nonlyBuiltDependencies:\n  - esbuild\n",
      'packages/lib/package.json': pkg({ name: 'lib' }),
      'packages/old/package.json': pkg({ name: 'old' }),
      'examples/basic/package.json': pkg({ name: 'basic', private: true }),
    });
    expect(pnpmWorkspaces(pnpm.read('pnpm-workspace.yaml'))).toEqual(['packages/*', '!packages/old']);
    expect(learnLayout(pnpm.paths, pnpm.read).folders).toEqual([
      { folder: 'examples/basic', role: 'example', why: 'not-a-workspace-package' },
      { folder: 'packages/old', role: 'example', why: 'not-a-workspace-package' },
    ]);
    const lerna = repo({ 'lerna.json': pkg({ packages: ['modules/*'] }), 'modules/a/package.json': pkg({ name: 'a' }), 'starters/blog/package.json': pkg({ name: 'blog' }) });
    expect(learnLayout(lerna.paths, lerna.read).folders).toEqual([{ folder: 'starters/blog', role: 'template', why: 'not-a-workspace-package' }]);
    const single = repo({ 'package.json': pkg({ name: 'app' }), 'benchmarks/package.json': pkg({ name: 'b' }) });
    expect(learnLayout(single.paths, single.read).folders).toEqual([]);
  });

  it('treats a workspace of applications only (nothing published) as code', () => {
    const apps = repo({
      'package.json': pkg({ private: true, workspaces: ['apps/*'] }),
      'apps/web/package.json': pkg({ name: 'web', private: true }),
      'apps/api/package.json': pkg({ name: 'api', private: true }),
    });
    expect(learnLayout(apps.paths, apps.read).folders).toEqual([]);
  });

  it('reads linguist attributes as git does: later lines win, negations make source, patterns without a slash match at any depth', () => {
    const { paths, read } = repo({
      '.gitattributes': '# ours\nsite/** linguist-documentation\n*.gen.ts linguist-generated=true\nthird/** linguist-vendored\nthird/ours/** -linguist-vendored\n*.ts text eol=lf\n',
      'pkg/.gitattributes': 'parser.js linguist-generated\n',
    });
    const layout = learnLayout(paths, read);
    const roleOf = layoutReader(layout);
    expect(roleOf('site/guide/intro.ts')).toBe('docs');
    expect(roleOf('src/deep/api.gen.ts')).toBe('generated');
    expect(roleOf('third/lib/a.c')).toBe('vendored');
    expect(roleOf('third/ours/a.c')).toBe('source');
    expect(roleOf('pkg/lib/parser.js')).toBe('generated');
    expect(roleOf('parser.js')).toBeUndefined();
    expect(roleOf('src/app.ts')).toBeUndefined();
    expect(linguistRules('[attr]binary -diff\n!x linguist-generated\n', '')).toEqual([]);
  });

  it('comes before folder names, after tests, in a path role', () => {
    expect(pathRole('docs/guide/plugin.ts')).toBe('docs');
    expect(pathRole('bench/startup.ts')).toBe('bench');
    expect(pathRole('packages/create/templates/app/main.ts')).toBe('template');
    expect(pathRole('examples/basic/app.ts')).toBe('example');
    expect(pathRole('packages/kit/CHANGELOG.md')).toBe('docs');
    expect(pathRole('.changeset/quiet-dogs-run.md')).toBe('docs');
    expect(pathRole('HISTORY.rst')).toBe('docs');
    expect(pathRole('AUTHORS.md')).toBe('docs');
    expect(pathRole('MAINTAINERS')).toBe('docs');
    expect(pathRole('src/authors.ts')).toBe('source');
    expect(pathRole('.github/PULL_REQUEST_TEMPLATE.md')).toBe('docs');
    expect(pathRole('src/history.ts')).toBe('source');
    expect(pathRole('docs/guide/plugin.ts', 'source')).toBe('source');
    expect(pathRole('src/app.ts', 'example')).toBe('example');
    expect(pathRole('playground/app.test.ts', 'example')).toBe('test');
  });

  it('records the rules it was learned by, so an index learned by older rules learns its layout again', async () => {
    const { paths, read } = repo({ 'package.json': pkg({ workspaces: ['packages/*'] }), 'packages/a/package.json': pkg({ name: 'a' }) });
    expect(learnLayout(paths, read).version).toBe(LAYOUT_VERSION);
    const root = makeRepo({ 'package.json': pkg({ workspaces: ['packages/*'] }), 'packages/a/package.json': pkg({ name: 'a' }), 'packages/a/index.ts': 'export const a = 1;\n', 'demo/package.json': pkg({ name: 'demo' }), 'demo/main.ts': 'export const b = 2;\n' });
    const store = openStore(root, { kind: 'fs' });
    const engine = createEngine({ root });
    await engine.sync();
    const first = (await store.readMeta())!;
    expect(first.layout).toEqual({ version: LAYOUT_VERSION, folders: [{ folder: 'demo', role: 'example', why: 'not-a-workspace-package' }], attributes: [] });
    // Nothing changed: no new generation.
    await engine.sync();
    expect((await store.readMeta())!.generation).toBe(first.generation);
    // A generation whose layout older rules learned: the next sync commits the layout these rules learn, reading no file.
    const writer = await store.beginGeneration(await store.open());
    await writer.setTree((await store.open()).catalog().tree, null);
    await writer.commit({ ...first, layout: { folders: [], attributes: [] } });
    const summary = await engine.sync();
    expect(summary.files_scanned).toBe(0);
    const relearned = (await store.readMeta())!;
    expect(relearned.generation).toBe(first.generation + 2);
    expect(relearned.layout).toEqual(first.layout);
  });

  it('reads no .gitattributes or manifest through a symlink (the root\'s may lead out of the repository)', async () => {
    const outside = makeRepo({ '.gitattributes': 'src/** linguist-generated\n' });
    const root = makeRepo({ 'src/app.ts': 'export const a = 1;\n' });
    symlinkSync(join(outside, '.gitattributes'), join(root, '.gitattributes'));
    await createEngine({ root }).sync();
    expect((await openStore(root, { kind: 'fs' }).readMeta())!.layout?.attributes).toEqual([]);
  });

  it('knows which files it is learned from', () => {
    expect(['package.json', 'packages/a/package.json', '.gitattributes', 'x/.gitattributes', 'pnpm-workspace.yaml', 'lerna.json'].every(isLayoutSource)).toBe(true);
    expect(['src/package.ts', 'x/pnpm-workspace.yaml', 'tsconfig.json'].some(isLayoutSource)).toBe(false);
  });
});
