import { describe, expect, it } from 'vitest';
import { TOKEN_SHAPES, type TokenShape, keyMaterial, pemAsLiterals, privateKeyLines, secretPart } from '../../test/credentials.js';
import { SECRET_RULES_VERSION, describeSecret, findSecret, findServedSecret, redactSecrets } from './secrets.js';

// Credentials are assembled at run time so this file holds none a scanner would flag.
const join = (...parts: string[]): string => parts.join('');
const BODY = join('MIIEowIBAAKCAQEAu1SU1LfVLPHCoz', 'MxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun');
const MARK = (kind = 'RSA ') => join('-----BEGIN ', kind, 'PRIVATE KEY-----');
const END = (kind = 'RSA ') => join('-----END ', kind, 'PRIVATE KEY-----');
const REAL_KEY_BODY = join('MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC7', 'VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu', 'NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ');

async function rule(text: string, path = 'src/x.ts'): Promise<string | undefined> {
  return (await findSecret(text, path))?.rule;
}

describe('findSecret', () => {
  it('regression (D1): a private key inside a string literal is found — TS template, Python triple quotes, Go raw string, a list of lines', async () => {
    const material = 'MIIEpAIBAAKCAQEAzSECRETKEYMATERIALabcdef0123456789';
    expect(await rule(`export const TLS_KEY = \`${MARK()}\n${material}\n${END()}\`;\n`)).toBe('repodex/private-key');
    expect(await rule(`KEY = """${MARK('')}\n${material}\n${END('')}"""\n`, 'src/key.py')).toBe('repodex/private-key');
    expect(await rule(`var key = []byte(\`${MARK('EC ')}\n${material}\n${END('EC ')}\`)\n`, 'src/key.go')).toBe('repodex/private-key');
    expect(await rule(`const lines = [\n  '${MARK()}',\n  '${material}',\n];\n`)).toBe('repodex/private-key');
  });

  it('finds PEM blocks as files hold them, and keys embedded in JSON or env-style strings', async () => {
    for (const kind of ['', 'RSA ', 'EC ', 'OPENSSH ', 'ENCRYPTED ', 'DSA ']) {
      expect(await rule(`${MARK(kind)}\n${BODY}\n${END(kind)}\n`), kind).toBeDefined();
    }
    expect(await rule(`notes\n    ${MARK()}\n${BODY}\n`)).toBeDefined();
    expect(await rule(`{"key": "${MARK('')}\\n${BODY}\\n${END('')}"}`, 'a.json')).toBeDefined();
    expect(await rule(`KEY="${MARK()}\\r\\n${BODY}"`)).toBeDefined();
    expect(await rule(`x = 1\n${MARK('')}\n${REAL_KEY_BODY}\n${END('')}\n`)).toBeDefined();
  });

  it('finds cloud and service tokens: AWS, GCP, GitHub, npm, Slack, Stripe', async () => {
    const cases: [string, string, string][] = [
      ['aws access key id', `const id = "${join('AKIA', 'Q3EGRIPLXKDBWQ7Z')}";`, 'aws'],
      ['aws secret', `AWS_SECRET_ACCESS_KEY=${join('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYzq8sTmWq3p')}`, ''],
      ['gcp service account', JSON.stringify({ type: 'service_account', private_key_id: 'abc', private_key: `${MARK('')}\n${REAL_KEY_BODY}\n${END('')}\n` }), 'key'],
      ['google api key', `const key = '${join('AIza', 'SyD3x8Qm1b2c3d4e5f6g7h8i9j0kLmNoPqR')}';`, 'google-api-key'],
      ['github', `token: ${join('ghp', '_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8')}`, 'github'],
      ['npm', `//registry.npmjs.org/:_authToken=${join('npm', '_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8')}`, 'npm'],
      ['slack', `SLACK=${join('xoxb', '-', '123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx')}`, 'slack'],
      ['stripe', `stripe.key = "${join('sk', '_live_', '4eC39HqLyjWDarjtT1zdp7dc')}"`, 'stripe'],
      ['stripe restricted', `${join('rk', '_test_', '51Habc0123456789ABCDEFGHij')}`, 'stripe'],
    ];
    for (const [name, text, expected] of cases) {
      const found = await rule(text, name.startsWith('gcp') ? 'svc.json' : 'src/config.ts');
      expect(found, name).toBeDefined();
      expect(found, name).toContain(expected);
    }
  });

  it('regression: code that only mentions a marker or a token prefix is not a secret', async () => {
    expect(await rule(`const lines = [\n  '${MARK()}',\n  'fake',\n];\n`)).toBeUndefined();
    expect(await rule(`if (text.startsWith("${MARK('')}")) reject();\n`)).toBeUndefined();
    expect(await rule('a public key: -----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n')).toBeUndefined();
    expect(await rule("const prefix = 'ghp_'; const aws = /AKIA[A-Z0-9]{16}/; // sk_live_ keys\n")).toBeUndefined();
    expect(await rule('export function tokenize(text: string) { return text.split(/\\s+/); }\n')).toBeUndefined();
  });

  it('names the rule and the line, never the secret', async () => {
    const token = join('ghp', '_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8');
    const finding = await findSecret(`line one\nline two\nconst t = "${token}";\n`, 'src/t.ts');
    expect(finding).toMatchObject({ line: 3 });
    const reason = describeSecret(finding!);
    expect(reason).toMatch(/^contains a credential \(github-pat, line 3\)$/);
    expect(JSON.stringify(finding)).not.toContain(token);
  });

  it('regression: leaves no marks on the performance timeline (secretlint profiles every lint) and takes any file name', async () => {
    for (let i = 0; i < 50; i++) await findSecret(`export const v${i} = ${i};\n`, `src/odd\nname ${i}\x1b[0m.ts`);
    await new Promise((resolve) => setTimeout(resolve, 10)); // let any performance observer run
    expect(performance.getEntriesByType('mark')).toHaveLength(0);
  });

  it('pins the rule set: changing it must bump FEATURE_VERSION (indexes built with other rules are rebuilt)', () => {
    expect(SECRET_RULES_VERSION).toBe('secretlint-preset-recommend@11.7.1+gitleaks@v8.30.0-27-gb58d3f10+repodex-3');
  });

  it('finds a private key written one quoted literal per line, in every usual layout', async () => {
    const lines = privateKeyLines();
    for (const language of ['python', 'js', 'js-single', 'go', 'java', 'rust', 'c', 'csharp'] as const) {
      expect(await rule(pemAsLiterals(language, lines)), language).toMatch(/private-key/);
    }
  });

  it('finds a marker split by concatenation and a base64-encoded key', async () => {
    const lines = privateKeyLines();
    const split = `const KEY = "-----BEGIN RSA " + "PRIVATE KEY-----\\n" +\n  "${lines[1]}\\n";\n`;
    expect(await rule(split)).toMatch(/private-key/);
    const encoded = Buffer.from(`${lines.join('\n')}\n`).toString('base64');
    expect(await rule(`apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.key: ${encoded}\n`, 'deploy/tls.yaml')).toBeDefined();
    // Outside a Kubernetes manifest too: the decoded text is read.
    expect(await rule(`const bundle = "${encoded}";\n`, 'src/bundle.ts')).toMatch(/private-key/);
  });

  it('finds every generated token shape in source', async () => {
    for (const shape of Object.keys(TOKEN_SHAPES) as TokenShape[]) {
      const value = TOKEN_SHAPES[shape]();
      expect(await rule(`export const CONFIG_VALUE = "${value}";\n`), shape).toBeDefined();
    }
  });

  it('findServedSecret gives the verdict of findSecret, asked again or not: for each token shape, the text around it, and the same text at another path', async () => {
    for (const shape of Object.keys(TOKEN_SHAPES) as TokenShape[]) {
      const text = `export const CONFIG_VALUE = "${TOKEN_SHAPES[shape]()}";\n`;
      const clean = 'export const value = 1;\n';
      for (let ask = 0; ask < 2; ask++) {
        const served = await findServedSecret(text, 'src/a.ts');
        expect(served, shape).toBeDefined();
        expect(served).toEqual(await findSecret(text, 'src/a.ts'));
        expect(await findServedSecret(clean, 'src/a.ts')).toBeUndefined();
      }
    }
    // Some rules read the path: the same text may be a secret under one name and not another.
    const env = 'PASSWORD=hunter2-but-longer-and-unguessable\n';
    expect(await findServedSecret(env, '.env')).toEqual(await findSecret(env, '.env'));
    expect(await findServedSecret(env, 'docs/notes.txt')).toEqual(await findSecret(env, 'docs/notes.txt'));
  });

  it('finds a token in a notebook cell (JSON-escaped source lines)', async () => {
    const value = TOKEN_SHAPES.huggingface();
    const notebook = JSON.stringify({ cells: [{ cell_type: 'code', source: ['from huggingface_hub import login\n', `login(token="${value}")\n`] }] }, null, 1);
    expect(await rule(notebook, 'nb/train.ipynb')).toBeDefined();
  });
});

describe('redactSecrets', () => {
  it('replaces each credential with [REDACTED:rule] and keeps the rest', () => {
    for (const shape of Object.keys(TOKEN_SHAPES) as TokenShape[]) {
      const value = TOKEN_SHAPES[shape]();
      const redacted = redactSecrets(`fetch failed: 401 with ${value} while syncing`);
      expect(redacted, shape).not.toContain(secretPart(shape, value));
      expect(redacted, shape).toMatch(/^fetch failed: 401 with .*\[REDACTED:[\w-]+\].* while syncing$/);
    }
  });

  it('redacts a Vault token whose first 24 characters are letters (an allowlist for the legacy s. form once let it through)', () => {
    const token = `hvs.${'CAESIPjTxcSKZCtcFWQvoSsxnPE'.slice(0, 24)}${'1H3nF89l3GiYKHGh2cy5sQmlIZVNyTWJNcDRsYWJpQjlhYjVlb1cQh6PL8wEYAg0aB1cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3y'.slice(0, 71)}`;
    expect(/^hvs\.[A-Za-z]{24}/.test(token)).toBe(true);
    const redacted = redactSecrets(`fetch failed: 401 with ${token} while syncing`);
    expect(redacted).not.toContain(token.slice(4, 40));
    expect(redacted).toContain('[REDACTED:vault-service-token]');
    // The allowlist still does what it is for: a property path spelled in letters is no token.
    expect(redactSecrets('see config.s.abcdefghijklmnopqrstuvwx for the default')).toBe('see config.s.abcdefghijklmnopqrstuvwx for the default');
  });

  it('cuts a whole private key, also when it is pasted one quoted line at a time', () => {
    const lines = privateKeyLines();
    for (const text of [lines.join('\n'), pemAsLiterals('python', lines)]) {
      const redacted = redactSecrets(`stack trace: ${text} end`);
      for (const line of keyMaterial(lines)) expect(redacted).not.toContain(line);
      expect(redacted).toContain('[REDACTED:');
    }
  });

  it('answers a string again the same way, and redacts a credential every time it comes', () => {
    // The second call of each is answered from what the first found (clean short strings are kept).
    for (const text of ['query', 'repo_id', 'where is the config loaded']) expect([redactSecrets(text), redactSecrets(text)]).toEqual([text, text]);
    const value = TOKEN_SHAPES['github-classic']();
    const first = redactSecrets(value);
    expect(first).toContain('[REDACTED:');
    expect(redactSecrets(value)).toBe(first);
  });

  it('leaves text without credentials alone', () => {
    for (const text of ['where is the config loaded', 'rotate CI token (see #42)', 'const key = process.env.API_KEY', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==']) {
      expect(redactSecrets(text)).toBe(text);
    }
  });
});
