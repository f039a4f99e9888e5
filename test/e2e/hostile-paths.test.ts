import { execFileSync, spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, makeRepo, runCliAsync, tempDir } from '../helpers.js';

/**
 * The hostile-path corpus: every input is sent to every tool that takes a path (`open`,
 * `outline`) on every front end (MCP, JSONL, CLI). Each must be refused, and no answer may carry
 * any file content marked LEAK_. Inputs with a NUL byte cannot be passed on a command line (the
 * OS refuses them in argv), so the CLI runs every other input.
 */

const KEY_MATERIAL = 'MIIEpAIBAAKCAQEAzLEAKTLSKEYMATERIAL0123456789abcdef';
const BEGIN = (kind: string) => ['-----BEGIN ', kind, 'PRIVATE KEY-----'].join('');
const END = (kind: string) => ['-----END ', kind, 'PRIVATE KEY-----'].join('');

let root = '';
let outside = '';

function secretFiles(): Record<string, string> {
  const files: Record<string, string> = {
    'src/normal.ts': 'export const normal = 1;\n',
    'src/tlkey.ts': `export const TLS_KEY = \`${BEGIN('RSA ')}\n${KEY_MATERIAL}\n${END('RSA ')}\`;\n`,
    'src/pykey.py': `KEY = """${BEGIN('')}\n${KEY_MATERIAL}\n${END('')}"""\n`,
    'src/goKey.go': `package main\n\nvar key = []byte(\`${BEGIN('EC ')}\n${KEY_MATERIAL}\n${END('EC ')}\`)\n`,
    'src/aws.ts': `// LEAK_AWS\nexport const id = "${['AKIA', 'Q3EGRIPLXKDBWQ7Z'].join('')}";\n`,
  };
  for (const path of [
    '.env', '.env.local', '.env~', 'prod.env.bak', 'env.bak', '.envrc', '.npmrc', '.pypirc', '.netrc', '.git-credentials', '.aws/credentials', 'credentials.json',
    'infra/terraform.tfstate', 'id_rsa', 'id_ed25519', 'id_ecdsa', '.ssh/config', 'server.pem', 'foo.key', 'config/secrets.yaml', 'keys/id_rsa.pub',
  ]) {
    files[path] = `LEAK_${path.replace(/[^A-Za-z0-9]/g, '_')}=secret-value\n`;
  }
  return files;
}

function hostileInputs(): string[] {
  const name = basename(root);
  return [
    // absolute, POSIX and Windows
    '/etc/passwd', `${outside}/leak.ts`, `${root}/.env`, `${root}/src/../../${basename(outside)}/leak.ts`, '/proc/self/environ',
    'C:\\Windows\\win.ini', 'C:/Windows/win.ini', 'c:win.ini', '\\\\server\\share\\x', '//server/share/x', '\\\\?\\C:\\x', `${root}/.git/config`,
    // .. in many spellings
    `../${basename(outside)}/leak.ts`, '../../../../etc/passwd', `a/../../${basename(outside)}/leak.ts`, `./../${basename(outside)}/leak.ts`,
    `..\\${basename(outside)}\\leak.ts`, '..\\..\\..\\etc\\passwd', `src/..\\..\\${basename(outside)}\\leak.ts`, 'src/../.env', '.git/../.env', 'src/./../.npmrc',
    // URL-encoded and double-encoded
    `%2e%2e%2f${basename(outside)}%2fleak.ts`, '%252e%252e%252fetc%252fpasswd', `..%2f${basename(outside)}%2fleak.ts`, `..%5c${basename(outside)}%5cleak.ts`, '%2e%2e/%2e%2e/etc/passwd', '%2eenv',
    // NUL bytes, over-long paths
    'src/normal.ts\0.env', '.env\0', '\0', `src/normal.ts\0/../../etc/passwd`,
    'a'.repeat(10_000), `${'a/'.repeat(5000)}x`, `${'../'.repeat(3000)}etc/passwd`,
    // Unicode look-alikes
    `\u2024\u2024/${basename(outside)}/leak.ts`, `\uff0e\uff0e/${basename(outside)}/leak.ts`, `..\uff0f${basename(outside)}\uff0fleak.ts`, `..\u2215${basename(outside)}\u2215leak.ts`, '.env\u200b', '.\u0435nv',
    // symlinked files and folders leaving the root
    'passwd_link', 'outdir_link/leak.ts', 'outfile_link.ts', 'chain1', 'envlink.ts', 'gitlink/config', `up/${basename(outside)}/leak.ts`, `up/${name}/.env`, 'outdir_link',
    // case variants of denylisted names
    '.ENV', '.Env.Local', 'ID_RSA', 'SERVER.PEM', 'FOO.KEY', 'config/SECRETS.yaml', '.GIT/config', '.NPMRC', 'CREDENTIALS.JSON', '.Aws/Credentials', 'ID_ED25519', 'Keys/Id_Rsa.PUB',
    // credential files
    '.env.local', '.env~', 'prod.env.bak', 'env.bak', '.envrc', '.npmrc', '.pypirc', '.netrc', '.git-credentials', '.aws/credentials', 'credentials.json', 'infra/terraform.tfstate',
    'id_ed25519', 'id_ecdsa', '.ssh/config', 'server.pem', 'foo.key', 'config/secrets.yaml', 'id_rsa',
    // keys and tokens inside source files
    'src/tlkey.ts', 'src/pykey.py', 'src/goKey.go', 'src/aws.ts',
    // hard links to a secret under another name
    'env_hardlink.txt', 'src/link_env.ts',
    // git internals, odd forms
    '.git/config', '.git/description', '.git//config', './.git/config', '.git', '.git/HEAD', '~/.ssh/id_rsa', '$HOME/.bashrc', 'file:///etc/passwd', '.', '',
  ];
}

beforeAll(() => {
  outside = tempDir('repodex-outside-');
  writeFileSync(join(outside, 'leak.ts'), 'export const LEAK_OUTSIDE = 1;\n');
  root = makeRepo(secretFiles());
  execFileSync('git', ['init', '-q'], { cwd: root });
  writeFileSync(join(root, '.git', 'description'), 'LEAK_GIT_DESCRIPTION\n');
  writeFileSync(join(root, '.git', 'config'), '[core]\n\tLEAK_GIT_CONFIG = 1\n', { flag: 'a' });
  linkSync(join(root, '.env'), join(root, 'env_hardlink.txt'));
  linkSync(join(root, '.env'), join(root, 'src', 'link_env.ts'));
  symlinkSync('/etc/passwd', join(root, 'passwd_link'));
  symlinkSync(outside, join(root, 'outdir_link'));
  symlinkSync(join(outside, 'leak.ts'), join(root, 'outfile_link.ts'));
  symlinkSync(join(root, 'chain2'), join(root, 'chain1'));
  symlinkSync(join(outside, 'leak.ts'), join(root, 'chain2'));
  symlinkSync(join(root, '.env'), join(root, 'envlink.ts'));
  symlinkSync(join(root, '.git'), join(root, 'gitlink'));
  symlinkSync('..', join(root, 'up'));
  mkdirSync(join(root, '.repodex'), { recursive: true });
});

/** /etc/passwd's first line, which no answer may carry either. */
const PASSWD_MARK = 'root:x:0:0';

function expectNoLeak(text: string, context: string): void {
  expect(text.includes('LEAK'), `${context} leaked: ${text.slice(0, 300)}`).toBe(false);
  expect(text.includes(PASSWD_MARK), `${context} leaked /etc/passwd`).toBe(false);
}

describe('the hostile-path corpus on every front end', () => {
  it('has at least 60 inputs', () => {
    expect(hostileInputs().length).toBeGreaterThanOrEqual(60);
  });

  it('MCP: repo.open_file and repo.outline refuse every input and leak nothing', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--mcp', '--root', root], stderr: 'pipe' });
    const client = new Client({ name: 'hostile', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (const input of hostileInputs()) {
        for (const [tool, args] of [
          ['repo.open_file', { path: input }],
          ['repo.outline', { path: input }],
        ] as const) {
          const result = await client.callTool({ name: tool, arguments: args });
          const text = JSON.stringify(result);
          expectNoLeak(text, `${tool} ${JSON.stringify(input.slice(0, 80))}`);
          expect((result.structuredContent as { ok: boolean }).ok, `${tool} ${JSON.stringify(input.slice(0, 80))}`).toBe(false);
        }
      }
      // The index holds none of it either: a search for the markers finds nothing.
      const search = await client.callTool({ name: 'repo.search', arguments: { query: 'LEAK secret value TLS_KEY KEY key' } });
      expectNoLeak(JSON.stringify((search.structuredContent as { result: { results: unknown[] } }).result.results), 'search results');
    } finally {
      await client.close();
    }
  });

  it('JSONL: open and outline refuse every input with ok:false and leak nothing', () => {
    const inputs = hostileInputs();
    const lines = inputs.flatMap((path, i) => [JSON.stringify({ op: 'open', path, id: `o${i}` }), JSON.stringify({ op: 'outline', path, id: `l${i}` })]);
    const result = spawnSync(process.execPath, [CLI, 'serve', '--stdio', '--root', root], { input: `${lines.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
    const responses = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { ok: boolean; id?: string; error?: string });
    expect(responses).toHaveLength(lines.length);
    for (const [i, response] of responses.entries()) {
      const input = inputs[Math.floor(i / 2)]!;
      expectNoLeak(JSON.stringify(response), `jsonl ${response.id} ${JSON.stringify(input.slice(0, 80))}`);
      expect(response.ok, `jsonl ${response.id} ${JSON.stringify(input.slice(0, 80))}`).toBe(false);
    }
  });

  it('CLI: open and outline exit 1 on every input (from the root; traversals also from a subfolder) and leak nothing', async () => {
    const inputs = hostileInputs().filter((input) => !input.includes('\0'));
    const runs: { command: string; input: string; cwd: string }[] = [];
    for (const input of inputs) {
      for (const command of ['open', 'outline']) {
        // From src/, paths resolve against src/ (as in git): `../.env` is the root's .env there.
        const folders = command === 'open' && input.includes('..') ? [root, join(root, 'src')] : [root];
        for (const cwd of folders) runs.push({ command, input, cwd });
      }
    }
    // Two processes at a time, awaited: the test worker's event loop stays free.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < runs.length) {
        const { command, input, cwd } = runs[next++]!;
        const result = await runCliAsync([command, '--root', root, '--json', '--', input], { cwd });
        const context = `cli ${command} ${JSON.stringify(input.slice(0, 80))} from ${cwd === root ? 'root' : 'src/'}`;
        expectNoLeak(result.stdout + result.stderr, context);
        expect(result.code, context).toBe(1);
      }
    };
    await Promise.all([worker(), worker()]);
  });
});
