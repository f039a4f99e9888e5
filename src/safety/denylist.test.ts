import { describe, expect, it } from 'vitest';
import { Denylist, holdsBackslash, normalizeDenylistPath } from './denylist.js';

describe('Denylist', () => {
  it('matches the default secrets at any depth, case-insensitively, and extra config patterns', () => {
    const denylist = new Denylist(['**/*.secret.json']);
    for (const path of ['.env', 'app/.env.local', 'keys/server.pem', 'a/b/id_rsa.pub', 'deploy/secrets.yaml', '.git/config', 'cfg/db.secret.json', 'X.PEM']) {
      expect(denylist.blocks(path), path).toBe(true);
    }
    for (const path of ['src/env.ts', 'docs/secrets-management.md', 'pem/readme.md', 'keyboard.ts', 'src/credentials.ts', 'npmrc.md', 'docs/ssh.md']) {
      expect(denylist.blocks(path), path).toBe(false);
    }
  });

  it('covers the usual credential files, editor backups of .env and SSH folders (SPEC §8)', () => {
    const denylist = new Denylist();
    const secrets = [
      '.npmrc', 'web/.npmrc', '.pypirc', '.netrc', '_netrc', '.git-credentials', '.envrc', 'svc/.envrc',
      '.aws/credentials', 'home/.aws/credentials', 'credentials.json', 'gcp/credentials.json',
      'infra/terraform.tfstate', 'infra/prod.tfstate.backup', 'id_ed25519', 'keys/id_ed25519.pub', 'id_ecdsa', 'id_dsa',
      '.ssh/config', 'home/.ssh/known_hosts', '.ssh', '.env~', 'app/.env~', 'prod.env.bak', '.env.bak', 'env.bak', 'config/ENV.BAK', 'x.env~',
      '.pgpass', '.htpasswd', '.docker/config.json', 'release.jks', 'app.keystore',
      // case variants
      '.NPMRC', 'Credentials.JSON', '.AWS/CREDENTIALS', 'ID_ED25519', '.SSH/id', 'TERRAFORM.TFSTATE',
    ];
    for (const path of secrets) expect(denylist.blocks(path), path).toBe(true);
  });

  it('covers cluster, Terraform, Vault and other CLI credential stores', () => {
    const denylist = new Denylist();
    for (const path of ['.kube/config', 'home/.kube/config', 'prod.tfvars', 'env/prod.auto.tfvars', 'vars.tfvars.json', '.terraformrc', 'credentials.tfrc.json', '.vault-token', '.s3cfg', '.boto', '.composer/auth.json', '.gem/credentials', '.cargo/credentials', '.cargo/credentials.toml', 'release.keystore', '.htpasswd', 'kubeconfig', 'key.ppk']) {
      expect(denylist.blocks(path), path).toBe(true);
      expect(denylist.matches(path) || denylist.blocks(path), path).toBe(true);
    }
    for (const path of ['src/kube/config.ts', 'docs/terraform.md', 'vault.ts', 'src/auth.json.ts']) expect(denylist.blocks(path), path).toBe(false);
  });

  it('judges the normalised name: backslashes as separators, trailing blanks and dots dropped, any case', () => {
    const denylist = new Denylist();
    expect(normalizeDenylistPath('deploy\\secrets.yml ')).toBe('deploy/secrets.yml');
    expect(normalizeDenylistPath('.env. ')).toBe('.env');
    for (const path of ['.env ', '.env.', 'app/.ENV  ', 'deploy\\secrets.yml', 'config\\credentials.json', 'home\\.kube\\config', '.ssh\\id']) {
      expect(denylist.blocks(path), path).toBe(true);
      expect(denylist.matches(path), path).toBe(true);
      expect(denylist.match(path.replace(/\\/g, '/')), path).toBeDefined();
    }
  });

  it('leaves out every name holding a backslash (one name on Linux, two on Windows)', () => {
    const denylist = new Denylist();
    expect(holdsBackslash('a\\b.ts')).toBe(true);
    expect(denylist.matches('a\\b.ts')).toBe(true);
    expect(denylist.blocks('src/a\\b.ts')).toBe(true);
    expect(denylist.matches('a/b.ts')).toBe(false);
  });

  it('leaves out a file or folder whose name is shaped like a credential, at any depth, and says why', () => {
    const denylist = new Denylist();
    const token = `ghp_${'Rk8Zw4Yb6NcP1dF5gJ7sQwEhT0uV3xY5zA1b'}`;
    for (const path of [`tokens/${token}.ts`, `${token}/index.ts`, `a/b/${token}`, `keys/AKIA${'Q3EGRIPLXKDBWQ7Z'}.json`]) {
      expect(denylist.blocks(path), path).toBe(true);
      expect(denylist.why(path)?.kind, path).toBe('credential-name');
    }
    expect(denylist.matches(`tokens/${token}.ts`)).toBe(true);
    expect(denylist.why('.env')).toEqual({ kind: 'secret-name', pattern: '.env' });
    expect(denylist.why('a\\b.ts')).toEqual({ kind: 'backslash' });
    expect(denylist.why('src/index.ts')).toBeUndefined();
  });
});
