import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N6: denylisted names holding a backslash', () => {
  it('N6: deploy\\secrets.yml and config\\credentials.json are not indexed, listed or shown in search snippets', () => {
    const root = makeRepo({
      'deploy\\secrets.yml': 'production:\n  db_password: BSLASH_SECRET_78\n',
      'config\\credentials.json': '{"client_secret": "BSLASH_CRED_77"}\n',
      'src/app.ts': 'export const dbPasswordName = "db_password";\n',
    });
    expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);
    const files = runCli(['files', '--json', '--root', root], { cwd: root }).stdout;
    expect(files).toContain('src/app.ts');
    expect(files).not.toMatch(/secrets\.yml|credentials\.json/);
    const found = runCli(['search', 'db_password client_secret BSLASH_SECRET_78 BSLASH_CRED_77', '--root', root], { cwd: root }).stdout;
    expect(found).not.toContain('BSLASH_SECRET_78');
    expect(found).not.toContain('BSLASH_CRED_77');
    for (const path of ['deploy\\secrets.yml', 'config\\credentials.json']) {
      const opened = runCli(['open', path, '--root', root], { cwd: root });
      expect(opened.code).not.toBe(0);
      expect(opened.stdout).not.toMatch(/BSLASH_/);
    }
  });
});
