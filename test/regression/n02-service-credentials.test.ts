import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOKEN_SHAPES, keyMaterial, privateKeyLines } from '../credentials.js';
import { makeRepo, runCli } from '../helpers.js';

describe('N2: common service and cloud credentials', () => {
  it('N2: GitLab, Hugging Face, Vault, Azure storage keys, signed JWTs, a split key marker, a base64 key in a Kubernetes Secret and notebook tokens are neither indexed nor served', () => {
    const tokens = {
      gitlab: TOKEN_SHAPES.gitlab(),
      huggingface: TOKEN_SHAPES.huggingface(),
      vault: TOKEN_SHAPES.vault(),
      azure: TOKEN_SHAPES['azure-storage'](),
      jwt: TOKEN_SHAPES.jwt(),
    };
    const split = privateKeyLines();
    const encoded = privateKeyLines();
    const hf = TOKEN_SHAPES.huggingface();
    const jupyter = TOKEN_SHAPES['jupyter-url']();
    const files: Record<string, string> = {
      'src/gitlab.ts': `export const GITLAB_TOKEN = "${tokens.gitlab}";\n`,
      'src/hf.py': `HF_TOKEN = "${tokens.huggingface}"\n`,
      'src/vault.go': `package main\n\nconst VaultToken = "${tokens.vault}"\n`,
      'src/azure.ts': `export const AZURE_STORAGE = "${tokens.azure}";\n`,
      'src/jwt.ts': `export const ADMIN_JWT = "${tokens.jwt}";\n`,
      'src/split.ts': `export const SPLIT_KEY = "-----BEGIN RSA " + "PRIVATE KEY-----\\n" +\n${split.slice(1).map((line) => `  "${line}\\n"`).join(' +\n')};\n`,
      'deploy/tls-secret.yaml': `apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.key: ${Buffer.from(`${encoded.join('\n')}\n`).toString('base64')}\n`,
      'nb/hf.ipynb': JSON.stringify({ cells: [{ cell_type: 'code', source: [`login(token="${hf}")\n`] }] }),
      'nb/server.ipynb': JSON.stringify({ cells: [{ cell_type: 'markdown', source: [`Open ${jupyter}\n`] }] }),
    };
    const root = makeRepo(files);
    expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);
    const secrets: Record<string, string[]> = {
      'src/gitlab.ts': [tokens.gitlab],
      'src/hf.py': [tokens.huggingface],
      'src/vault.go': [tokens.vault],
      'src/azure.ts': [/AccountKey=([^;]+)/.exec(tokens.azure)![1]!],
      'src/jwt.ts': [tokens.jwt],
      'src/split.ts': keyMaterial(split).slice(0, 2),
      'deploy/tls-secret.yaml': [Buffer.from(`${encoded.join('\n')}\n`).toString('base64').slice(0, 40)],
      'nb/hf.ipynb': [hf],
      'nb/server.ipynb': [jupyter.slice(jupyter.indexOf('token=') + 6)],
    };
    const index = readdirSync(join(root, '.repodex')).filter((name) => name.endsWith('.rpdx')).map((name) => readFileSync(join(root, '.repodex', name), 'latin1')).join('\n');
    const searched = runCli(['search', 'GITLAB_TOKEN HF_TOKEN VaultToken AZURE_STORAGE ADMIN_JWT SPLIT_KEY tls key', '--json', '--root', root], { cwd: root }).stdout;
    for (const [path, values] of Object.entries(secrets)) {
      const opened = runCli(['open', path, '--root', root], { cwd: root });
      expect(opened.code, `${path}: ${opened.stdout}`).not.toBe(0);
      expect(opened.stdout + opened.stderr, path).toMatch(/contains a credential/);
      for (const value of values) {
        for (const text of [opened.stdout, searched, index]) expect(text.includes(value) || text.includes(value.toLowerCase()), `${path} leaked`).toBe(false);
      }
    }
  });
});
