import { describe, expect, it } from 'vitest';
import { TOKEN_SHAPES, type TokenShape, keyMaterial, pemAsLiterals, privateKeyLines, secretPart } from '../../test/credentials.js';
import { rootCertificates } from 'node:tls';
import { generateKeyPairSync } from 'node:crypto';
import { BARE_TOKENS, LANGUAGES, URL_SCHEMES, constantIn, djangoSecretKey, generatedPassword, keyEncodings, keyIn, splitToken, urlWithPassword } from '../../test/credential-shapes.js';
import { SECRET_RULES_VERSION, credentialInName, describeSecret, findSecret, findServedSecret, redactSecrets, shownPath } from './secrets.js';

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
    // Observers hear of entries in order: once one of ours has heard of a mark made now, any
    // observer of the linter's has been told of every mark the lints made.
    await new Promise<void>((resolve) => {
      const observer = new PerformanceObserver(() => {
        observer.disconnect();
        resolve();
      });
      observer.observe({ entryTypes: ['mark'] });
      performance.mark('after the lints');
    });
    performance.clearMarks('after the lints');
    expect(performance.getEntriesByType('mark')).toHaveLength(0);
  });

  it('pins the rule set: changing it must bump FEATURE_VERSION (indexes built with other rules are rebuilt)', () => {
    expect(SECRET_RULES_VERSION).toBe('secretlint-preset-recommend@11.7.1+gitleaks@v8.30.0-27-gb58d3f10+repodex-4');
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

/** Which languages a shape is written in: three or more, a different three for each shape. */
function threeLanguages(turn: number): (typeof LANGUAGES)[number][] {
  return [0, 1, 2, 3].map((i) => LANGUAGES[(turn * 3 + i) % LANGUAGES.length]!);
}

/** How a file of `language` holds a one-line key encoding (a string, or an array of bytes). */
function encodedKeyIn(language: (typeof LANGUAGES)[number], encoding: string, value: string): string {
  if (encoding.endsWith('-bytes')) {
    const items = value.slice(2, -2);
    switch (language) {
      case 'java':
        return `class K {\n  static final byte[] KEY = new byte[] {${items}};\n}\n`;
      case 'go':
        return `package k\n\nvar key = []byte{${items}}\n`;
      case 'rs':
        return `const KEY: &[u8] = &[${items}];\n`;
      case 'cs':
        return `class K {\n  static readonly byte[] Key = new byte[] {${items}};\n}\n`;
      case 'py':
        return `KEY = bytes([${items}])\n`;
      case 'ts':
      case 'tsx':
      case 'js':
        return `export const KEY = Uint8Array.from([${items}]);\n`;
      default:
        return `static const unsigned char key[] = {${items}};\n`;
    }
  }
  return constantIn(language, 'signing', value, encoding === 'jwk' ? "'" : '"');
}

describe('findSecret: credentials by shape, not by list', () => {
  it('finds a password in a URL whatever the scheme, in several languages, and no placeholder', async () => {
    let turn = 0;
    for (const scheme of URL_SCHEMES) {
      const { value } = urlWithPassword(scheme);
      for (const language of threeLanguages(turn++)) expect(await rule(constantIn(language, 'cache', value), `src/cache.${language}`), `${scheme} in ${language}`).toBe('repodex/url-password');
    }
    const placeholders = ['${PASSWORD}', '<password>', '$PASS', '***', 'password', 'xxx', 'pass', '{password}', '%(password)s', 'changeme', 'mysecret', 'fake_pass', 'qwerty', 'guest'];
    for (const password of placeholders) {
      const doc = `Connect with \`redis://user:${password}@localhost:6379/0\` or amqp://guest:${password}@rabbit/vhost.\n`;
      expect(await rule(doc, 'docs/connect.md'), password).toBeUndefined();
    }
    expect(await rule('AMQP_URL = "amqp://guest:guest@localhost:5672//"\n', 'conf.py')).toBeUndefined();
    // secretlint's own URL rules (HTTP basic auth, database URLs) are judged the same way.
    for (const example of ['proxy = "http://user:pass@httpbin.org"', "url = 'mongodb://uuuu:pwpw@hostname.dom/database'", 'DATABASE_URL=postgres://postgres:postgres@localhost:5432/test']) {
      expect(await rule(`${example}\n`, 'tests/test_utils.py'), example).toBeUndefined();
    }
    for (const scheme of ['https', 'mongodb+srv', 'postgres', 'mysql']) expect(await rule(`URL = "${urlWithPassword(scheme).value}"\n`, 'app/db.py'), scheme).toBeDefined();
  });

  it('finds private keys in every encoding a source file can hold them', async () => {
    let turn = 0;
    for (const { name, lines } of keyEncodings()) {
      if (lines.length > 1) {
        for (const language of [...threeLanguages(turn++), 'md', 'yaml', 'toml', 'json'] as const) {
          expect(await rule(keyIn(language, lines, 'deploy'), `src/deploy.${language}`), `${name} in ${language}`).toMatch(/private-key/);
        }
      } else {
        for (const language of threeLanguages(turn++)) expect(await rule(encodedKeyIn(language, name, lines[0]!), `src/k.${language}`), `${name} in ${language}`).toMatch(/private-key/);
      }
    }
  });

  it('finds a PEM whose markers are built from a constant (a template, an f-string, #{}, {$a}, concatenation), by its body', async () => {
    for (const { name, lines } of keyEncodings().filter((encoding) => encoding.lines.length > 1 && encoding.lines[0]!.includes('PRIVATE KEY'))) {
      for (const language of ['ts', 'py', 'go', 'cs', 'rb', 'php'] as const) {
        const text = keyIn(language, lines, 'deploy', true);
        expect(text, `${name} in ${language}`).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY/);
        expect(await rule(text, `src/deploy.${language}`), `${name} in ${language}`).toMatch(/private-key/);
      }
    }
  });

  it("finds tokens whose shape is unambiguous without the service's name beside them", async () => {
    let turn = 0;
    for (const [shape, make] of Object.entries(BARE_TOKENS)) {
      for (const language of threeLanguages(turn++)) expect(await rule(constantIn(language, 'notify', make()), `src/notify.${language}`), `${shape} in ${language}`).toBeDefined();
    }
  });

  it('finds a token split over a constant and a value that names it, in each language', async () => {
    for (const language of LANGUAGES) {
      const token = `ghp_${'Zq8Xc2Lm4Np6Rs8Tv0Wx2Yz4Ab6Cd8Ef0Gh2J'.slice(0, 36)}`;
      expect(await rule(splitToken(language, 'deploy', token), `src/deploy.${language}`), language).toMatch(/github/);
    }
  });

  it("finds Django's SECRET_KEY and other secrets assigned with any characters, not their placeholders", async () => {
    for (const [text, path] of [
      [`SECRET_KEY = '${djangoSecretKey()}'\n`, 'proj/settings.py'],
      [`module.exports = { secret: '${djangoSecretKey()}' };\n`, 'config/session.js'],
      [`config.secret_key_base = '${djangoSecretKey()}'\n`, 'config/initializers/secret.rb'],
      [`spring.datasource.password=${generatedPassword()}!#\n`, 'src/main/resources/application.properties'],
      [`SECRET_KEY = "django-insecure-${djangoSecretKey()}"\n`, 'proj/settings.py'],
    ]) {
      expect(await rule(text!, path!), text).toBeDefined();
    }
    for (const text of [
      "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']\n",
      "SECRET_KEY = 'django-insecure-{{ secret_key }}'\n",
      "SECRET_KEY = 'please-change-me-in-production!'\n",
      'password: ${DB_PASSWORD}\n',
      "password_pattern = '^(?=.*[A-Z])(?=.*[0-9]).{8,}$'\n",
      "PASSWORD_HASH = '$2b$12$KIXQJ1bVq9Vh8h4p1e5hRe'\n",
      "password: '********'\n",
      'password = getpass(prompt1)\n',
    ]) {
      expect(await rule(text, 'app/settings.py'), text).toBeUndefined();
    }
  });

  it('leaves public keys, certificates and code about keys alone', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    const certificates = rootCertificates.slice(0, 20);
    for (const text of [
      `export const PUBLIC_KEY = \`${publicKey.export({ type: 'spki', format: 'pem' }).toString()}\`;\n`,
      `const pub = "${spki.toString('hex')}";\n`,
      `const pub = "${spki.toString('base64')}";\n`,
      `static const unsigned char pub[] = { ${[...spki].map((byte) => `0x${byte.toString(16)}`).join(', ')} };\n`,
      ...certificates.map((pem) => `export const CA = \`${pem}\`;\n`),
      ...certificates.map((pem) => `CA = bytes.fromhex("${Buffer.from(pem.split('\n').slice(1, -2).join(''), 'base64').toString('hex')}")\n`),
      `const jwks = ${JSON.stringify({ keys: [publicKey.export({ format: 'jwk' })] })};\n`,
      'if (line.startsWith("PuTTY-User-Key-File-")) parsePutty(lines);\nconst PRIVATE_LINES = "Private-Lines:";\n',
      'const MAGIC = "openssh-key-v1";\nconst b64 = "b3BlbnNzaC1rZXktdjE";\n',
    ]) {
      expect(await rule(text, 'src/keys.ts'), text.slice(0, 80)).toBeUndefined();
    }
  });

  it('judges file and folder names: a name shaped like a credential, shown with the credential replaced', () => {
    const token = `ghp_${'Rk8Zw4Yb6NcP1dF5gJ7sQwEhT0uV3xY5zA1b'}`;
    expect(credentialInName(`${token}.ts`)).toBe('github-pat');
    expect(credentialInName(`npm_${'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8'}.json`)).toBe('npm-access-token');
    expect(shownPath(`tokens/${token}.ts`)).toBe('tokens/[REDACTED:github-pat].ts');
    for (const name of ['index.ts', 'PlaywrightTestConfiguration.ts', 'chunk-5f3d2a1b9c8e7f6a.js', '0123456789abcdef0123456789abcdef01234567', 'test_authentication_middleware.py', 'AKIAIOSFODNN7EXAMPLE.md']) {
      expect(credentialInName(name), name).toBeUndefined();
    }
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

  it('regression (M8): a prompt with a private key in it loses the key block only, not its words', () => {
    const lines = privateKeyLines();
    for (const key of [lines.join('\n'), lines.slice(0, 6).join('\n'), lines.slice(1, -1).join('\n')]) {
      const redacted = redactSecrets(`fix the loader, it crashes on this key ${key}\nin src/cache.go`);
      expect(redacted).toBe('fix the loader, it crashes on this key [REDACTED:private-key]\nin src/cache.go');
    }
    const pasted = redactSecrets(`see ${lines.join('\n')} and also the webhook https://discord.com/api/webhooks/123456789012345678/${'Xa9bQ2cR7dS4eT1fU8gV5hW3iX6jY0kZ-LmNoPqRsTuVwXyZaBcDeFgHiJkLmNoPqRsTuVwX'}`);
    expect(pasted).toMatch(/^see \[REDACTED:private-key\] and also the webhook https:\/\/discord\.com\/api\/webhooks\/\[REDACTED:discord-webhook\]$/);
  });

  it('redacts a credential in a file name the rules find only without its extension (a path in a request)', () => {
    const token = `npm_${'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8'}`;
    expect(redactSecrets(`open keys/${token}.py --end 3`)).toBe('open keys/[REDACTED:npm-access-token].py --end 3');
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
