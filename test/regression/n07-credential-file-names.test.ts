import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

const STORES = [
  '.kube/config', 'prod.tfvars', 'env/dev.auto.tfvars', '.vault-token', '.terraformrc', 'credentials.tfrc.json', '.s3cfg', '.boto',
  '.composer/auth.json', '.gem/credentials', '.cargo/credentials', '.cargo/credentials.toml', 'release.keystore', '.htpasswd',
];

describe('N7: common credential files', () => {
  it('N7: .kube/config, *.tfvars, .vault-token and the other usual credential stores are refused and never indexed', () => {
    const root = makeRepo(Object.fromEntries(STORES.map((path, i) => [path, `plain_value_${i} = "N7STORE${i}VALUE"\n`])));
    expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);
    const files = runCli(['files', '--include-hidden', '--json', '--root', root], { cwd: root }).stdout;
    STORES.forEach((path, i) => {
      const opened = runCli(['open', path, '--root', root], { cwd: root });
      expect(opened.code, path).not.toBe(0);
      expect(opened.stdout + opened.stderr, path).toMatch(/denylist/);
      expect(opened.stdout, path).not.toContain(`N7STORE${i}VALUE`);
      expect(files, path).not.toContain(JSON.stringify(path));
    });
  });
});
