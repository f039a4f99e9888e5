import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, tempDir } from '../../test/helpers.js';
import { Denylist } from './denylist.js';
import { type GuardedPath, PathGuard, normalizeRelativePath } from './path-guard.js';

type Refusal = Extract<GuardedPath, { ok: false }>;

function refusal(result: GuardedPath): Refusal {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
  expect(result.reason.length).toBeGreaterThan(0);
  expect(result.hint.length).toBeGreaterThan(0);
  return result;
}

let root: string;
let outside: string;
let guard: PathGuard;

beforeAll(() => {
  outside = makeRepo({ 'secret.ts': 'export const outside = 1;\n', 'nested/deep.ts': 'export const deep = 1;\n' });
  root = makeRepo({
    'src/index.ts': 'export {};\n',
    'src/util/strings.ts': 'export {};\n',
    '.env': 'TOKEN=1\n',
    'keys/server.pem': '-----BEGIN CERTIFICATE-----\n',
    'id_rsa': 'not really a key\n',
    'docs/readme.md': '# docs\n',
  });
  // Escapes: a file and a folder pointing outside the root, absolute and relative.
  symlinkSync(join(outside, 'secret.ts'), join(root, 'link-file.ts'));
  symlinkSync(outside, join(root, 'linkdir'));
  symlinkSync('../../outside-does-not-matter/../x', join(root, 'src/dangling.ts'));
  mkdirSync(join(root, 'rel'));
  symlinkSync(join('..', '..', outside.split('/').pop()!, 'secret.ts'), join(root, 'rel/up.ts'));
  // Inside the root, pointing at denylisted files under innocent names.
  symlinkSync('.env', join(root, 'settings.ts'));
  symlinkSync('../keys/server.pem', join(root, 'docs/cert.md'));
  symlinkSync(join(root, 'id_rsa'), join(root, 'src/key.ts'));
  symlinkSync('keys', join(root, 'certs'));
  // Inside the root, pointing at a normal file: allowed (the real path stays inside).
  symlinkSync('src/index.ts', join(root, 'alias.ts'));
  guard = new PathGuard(root, new Denylist());
});

describe('paths that are not plain relative paths', () => {
  const cases = ['/etc/passwd', 'C:\\x', 'c:/x', '\\\\server\\share\\x', '\\x', '..\\x', '..', '../x', 'a/../../x', 'src/../src/index.ts', 'src/./../../x', '', 'a\0b'];
  it.each(cases)('%j is blocked with a reason and a hint', (input) => {
    const result = refusal(guard.check(input));
    expect(result.blocked).toBe(true);
    expect(result.reason).toMatch(/not a path inside the repository/);
    expect(result.hint).toMatch(/\.\./);
  });

  it('accepts an absolute path inside the root (as git does), and judges it as the relative one', () => {
    expect(guard.check(join(root, 'src/index.ts'))).toMatchObject({ ok: true, path: 'src/index.ts' });
    expect(guard.check(`${root}/src/../src/index.ts`)).toMatchObject({ ok: true, path: 'src/index.ts' });
    expect(refusal(guard.check(`${root}/../outside.ts`)).blocked).toBe(true);
    expect(refusal(guard.check(root)).blocked).toBe(true);
  });

  it('normalizes harmless spellings of a relative path', () => {
    expect(normalizeRelativePath('./src//index.ts')).toBe('src/index.ts');
    expect(normalizeRelativePath('src\\util\\strings.ts')).toBe('src/util/strings.ts');
    expect(guard.check('./src//index.ts')).toEqual({ ok: true, path: 'src/index.ts', absolute: join(root, 'src/index.ts') });
    expect(guard.check('src\\util\\strings.ts')).toMatchObject({ ok: true, path: 'src/util/strings.ts' });
  });
});

describe('denylisted paths', () => {
  const cases = ['.env', 'config/.env.local', '.env.production', 'keys/server.pem', 'id_rsa', 'deploy/id_rsa.pub', 'deploy/secrets.yaml', 'secrets.json', '.git/config', 'sub/.git/HEAD', 'tls/site.key', 'store.p12', 'cert.pfx', '.ENV', 'Keys/Server.PEM'];
  it.each(cases)('%s is blocked, whether or not it exists', (input) => {
    const result = refusal(guard.check(input));
    expect(result.blocked).toBe(true);
    expect(result.reason).toMatch(/denylist/);
  });

  it('extra patterns from the config are honoured too', () => {
    const strict = new PathGuard(root, new Denylist(['docs/**']));
    expect(refusal(strict.check('docs/readme.md')).blocked).toBe(true);
    expect(guard.check('docs/readme.md').ok).toBe(true);
  });
});

describe('symlinks', () => {
  it('a symlinked file pointing outside the root is rejected', () => {
    const result = refusal(guard.check('link-file.ts'));
    expect(result.blocked).toBe(true);
    expect(result.reason).toMatch(/outside the repository root/);
  });

  it('a file reached through a symlinked folder pointing outside the root is rejected', () => {
    for (const path of ['linkdir/secret.ts', 'linkdir/nested/deep.ts']) {
      const result = refusal(guard.check(path));
      expect(result.blocked).toBe(true);
      expect(result.reason).toMatch(/outside the repository root/);
    }
    expect(refusal(guard.check('linkdir')).blocked).toBe(true);
  });

  it('a relative symlink climbing out of the root is rejected', () => {
    expect(refusal(guard.check('rel/up.ts')).blocked).toBe(true);
  });

  it('a dangling symlink is refused without content', () => {
    expect(guard.check('src/dangling.ts').ok).toBe(false);
  });

  it('a symlink inside the root pointing to a denylisted file is blocked', () => {
    for (const path of ['settings.ts', 'docs/cert.md', 'src/key.ts', 'certs/server.pem']) {
      const result = refusal(guard.check(path));
      expect(result.blocked, path).toBe(true);
      expect(result.reason, path).toMatch(/denylist/);
    }
  });

  it('a symlink inside the root pointing to a normal file inside it is allowed', () => {
    expect(guard.check('alias.ts')).toEqual({ ok: true, path: 'alias.ts', absolute: join(root, 'src/index.ts') });
  });

  it('a root reached through a symlink still serves its own files and still rejects escapes', () => {
    const linkedRoot = join(tempDir(), 'linked-root');
    symlinkSync(root, linkedRoot);
    const viaLink = new PathGuard(linkedRoot, new Denylist());
    expect(viaLink.check('src/index.ts')).toMatchObject({ ok: true, path: 'src/index.ts' });
    expect(refusal(viaLink.check('link-file.ts')).blocked).toBe(true);
    expect(refusal(viaLink.check('linkdir/secret.ts')).blocked).toBe(true);
  });
});

describe('ordinary files', () => {
  it('an existing file inside the root is allowed', () => {
    expect(guard.check('src/index.ts')).toEqual({ ok: true, path: 'src/index.ts', absolute: join(root, 'src/index.ts') });
  });

  it('a missing file and a folder are refused (not blocked) with hints', () => {
    const missing = refusal(guard.check('src/missing.ts'));
    expect(missing.blocked).toBe(false);
    expect(missing.reason).toMatch(/does not exist/);
    const folder = refusal(guard.check('src/util'));
    expect(folder.blocked).toBe(false);
    expect(folder.reason).toMatch(/not a regular file/);
    const throughFile = refusal(guard.check('src/index.ts/x'));
    expect(throughFile.blocked).toBe(false);
  });
});

describe('PathGuard and names shaped like a credential', () => {
  it('refuses them without naming the credential', () => {
    const token = `npm_${'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8'}`;
    const repo = makeRepo({ [`keys/${token}.json`]: '{}\n' });
    const refused = refusal(new PathGuard(repo, new Denylist()).check(`keys/${token}.json`));
    expect(refused.blocked).toBe(true);
    expect(refused.reason).toBe('keys/[REDACTED:npm-access-token].json has a name shaped like a credential');
    expect(refused.reason + refused.hint).not.toContain(token.slice(4));
  });
});

