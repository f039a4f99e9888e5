import { describe, expect, it } from 'vitest';
import { Denylist, containsPrivateKey } from './denylist.js';

const BODY = 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun';

describe('containsPrivateKey', () => {
  it('flags PEM blocks as files hold them, indented or not, any key type', () => {
    for (const kind of ['', 'RSA ', 'EC ', 'OPENSSH ', 'ENCRYPTED ', 'DSA ']) {
      expect(containsPrivateKey(`-----BEGIN ${kind}PRIVATE KEY-----\n${BODY}\n-----END ${kind}PRIVATE KEY-----\n`)).toBe(true);
    }
    expect(containsPrivateKey(`notes\n    -----BEGIN RSA PRIVATE KEY-----\n${BODY}\n`)).toBe(true);
  });

  it('flags keys embedded in JSON or env-style strings', () => {
    expect(containsPrivateKey(`{"key": "-----BEGIN PRIVATE KEY-----\\n${BODY}\\n-----END PRIVATE KEY-----"}`)).toBe(true);
    expect(containsPrivateKey(`KEY="-----BEGIN RSA PRIVATE KEY-----\\r\\n${BODY}"`)).toBe(true);
  });

  it('regression: code that only mentions the marker is not a secret (a test fixture builder, a scanner)', () => {
    expect(containsPrivateKey(`const lines = [\n  '-----BEGIN RSA PRIVATE KEY-----',\n  'fake',\n];\n`)).toBe(false);
    expect(containsPrivateKey('if (text.startsWith("-----BEGIN PRIVATE KEY-----")) reject();\n')).toBe(false);
    expect(containsPrivateKey('a public key: -----BEGIN PUBLIC KEY-----\n')).toBe(false);
  });
});

describe('Denylist', () => {
  it('matches the default secrets at any depth, case-insensitively, and extra config patterns', () => {
    const denylist = new Denylist(['**/*.secret.json']);
    for (const path of ['.env', 'app/.env.local', 'keys/server.pem', 'a/b/id_rsa.pub', 'deploy/secrets.yaml', '.git/config', 'cfg/db.secret.json', 'X.PEM']) {
      expect(denylist.blocks(path), path).toBe(true);
    }
    for (const path of ['src/env.ts', 'docs/secrets-management.md', 'pem/readme.md', 'keyboard.ts']) {
      expect(denylist.blocks(path), path).toBe(false);
    }
  });
});
