import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';

/**
 * Credentials made at test time, never real: random strings in each service's token format, and
 * private keys from `generateKeyPairSync`. Shared by the credential tests: unit, regression and
 * the end-to-end corpus.
 */

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';
const BASE64 = `${ALNUM}+/`;
const BECH32 = 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L';

/** `n` random characters of `alphabet`. */
export function randomOf(alphabet: string, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** A fresh PEM private key (PKCS#8 RSA, or EC): its lines, markers included. */
export function privateKeyLines(kind: 'rsa' | 'ec' = 'rsa'): string[] {
  const { privateKey } = kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 1024 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ type: kind === 'rsa' ? 'pkcs1' : 'sec1', format: 'pem' }).toString().trimEnd().split('\n');
}

/** The lines of a PEM that are key material (what must never be served), without the markers. */
export function keyMaterial(lines: readonly string[]): string[] {
  return lines.filter((line) => !line.startsWith('-----'));
}

/** A signed JWT (HS256) with an admin claim. */
export function jwt(): string {
  const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
  const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ sub: `svc-${randomOf(LOWER_ALNUM, 8)}`, role: 'admin', exp: 4102444800 }));
  return `${header}.${payload}.${b64url(randomBytes(32))}`;
}

/** A token generator for each shape detected by content. */
export const TOKEN_SHAPES = {
  'github-classic': () => `ghp_${randomOf(ALNUM, 36)}`,
  'github-fine-grained': () => `github_pat_${randomOf(ALNUM, 22)}_${randomOf(ALNUM, 59)}`,
  gitlab: () => `glpat-${randomOf(ALNUM, 20)}`,
  huggingface: () => `hf_${randomOf(LETTERS, 34)}`,
  vault: () => `hvs.${randomOf(ALNUM, 95)}`,
  'azure-storage': () => `DefaultEndpointsProtocol=https;AccountName=prod${randomOf(LOWER_ALNUM, 6)};AccountKey=${randomOf(BASE64, 86)}==;EndpointSuffix=core.windows.net`,
  jwt,
  'slack-bot': () => `xoxb-${randomOf('0123456789', 12)}-${randomOf('0123456789', 13)}-${randomOf(ALNUM, 24)}`,
  stripe: () => `sk_live_${randomOf(ALNUM, 24)}`,
  openai: () => `sk-${randomOf(ALNUM, 20)}T3BlbkFJ${randomOf(ALNUM, 20)}`,
  anthropic: () => `sk-ant-api03-${randomOf(ALNUM, 93)}AA`,
  'aws-key-id': () => `AKIA${randomOf('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`,
  'google-api-key': () => `AIza${randomOf(ALNUM, 35)}`,
  npm: () => `npm_${randomOf(LOWER_ALNUM, 36)}`,
  sendgrid: () => `SG.${randomOf(ALNUM, 22)}.${randomOf(ALNUM, 43)}`,
  shopify: () => `shpat_${randomOf(HEX, 32)}`,
  linear: () => `lin_api_${randomOf(ALNUM, 40)}`,
  doppler: () => `dp.pt.${randomOf(ALNUM, 43)}`,
  pypi: () => `pypi-AgEIcHlwaS5vcmc${randomOf(ALNUM, 60)}`,
  databricks: () => `dapi${randomOf(HEX, 32)}`,
  digitalocean: () => `doo_v1_${randomOf(HEX, 64)}`,
  age: () => `AGE-SECRET-KEY-1${randomOf(BECH32, 58)}`,
  'google-oauth': () => `ya29.${randomOf(ALNUM, 40)}`,
  grafana: () => `glsa_${randomOf(ALNUM, 32)}_${randomOf(HEX, 8)}`,
  pulumi: () => `pul-${randomOf(HEX, 40)}`,
  'jupyter-url': () => `http://localhost:8888/?token=${randomOf(HEX, 48)}`,
  'postgres-url': () => `postgres://app:${randomOf(ALNUM, 16)}@db.internal:5432/app`,
} as const satisfies Record<string, () => string>;

/** A shape name. */
export type TokenShape = keyof typeof TOKEN_SHAPES;

/** A fresh credential of `shape`. */
export function token(shape: TokenShape): string {
  return TOKEN_SHAPES[shape]();
}

/** The part of a credential that must never be stored or served (the secret, not its fixed prefix or the URL around it). */
export function secretPart(shape: TokenShape, value: string): string {
  if (shape === 'azure-storage') return /AccountKey=([^;]+)/.exec(value)![1]!;
  if (shape === 'jupyter-url') return value.slice(value.indexOf('token=') + 6);
  if (shape === 'postgres-url') return /app:([^@]+)@/.exec(value)![1]!;
  return value;
}

/**
 * A private key written one quoted literal per PEM line, as test keys sit in source, in each
 * language's way of joining them. Returns the file text.
 */
export function pemAsLiterals(
  language: 'python' | 'js' | 'js-single' | 'go' | 'java' | 'rust' | 'c' | 'csharp' | 'ts-template' | 'python-commented' | 'go-raw',
  lines: readonly string[],
): string {
  const escaped = lines.map((line) => `${line}\\n`);
  // The begin marker split in two literals, so no rule reading one literal at a time sees it.
  const [first = '', ...rest] = escaped;
  const cut = first.indexOf(' ') + 1;
  switch (language) {
    case 'ts-template':
      return `export const TEST_KEY =\n  \`${first.slice(0, cut)}\` + \`${first.slice(cut)}\` +\n${rest.map((line) => `  \`${line}\``).join(' +\n')};\n`;
    case 'python-commented':
      return `TEST_KEY = (\n    "${first.slice(0, cut)}"  # split\n    "${first.slice(cut)}"\n${rest.map((line, i) => `    "${line}"${i % 3 === 0 ? '  # key line' : ''}`).join('\n')}\n)\n`;
    case 'go-raw':
      return `package keys\n\nconst testKey = \`${first.slice(0, cut)}\` + \`${first.slice(cut).replace(/\\n$/, '')}\n\` +\n\t${rest.map((line) => `\`${line.replace(/\\n$/, '')}\n\``).join(' +\n\t')}\n`;
    case 'python':
      return `TEST_KEY = (\n${escaped.map((line) => `    "${line}"`).join('\n')}\n)\n`;
    case 'js':
      return `export const TEST_KEY =\n${escaped.map((line) => `  "${line}"`).join(' +\n')};\n`;
    case 'js-single':
      return `const TEST_KEY = '' +\n${escaped.map((line) => `  '${line}'`).join(' +\n')};\nmodule.exports = { TEST_KEY };\n`;
    case 'go':
      return `package keys\n\nconst testKey = ${escaped.map((line) => `"${line}"`).join(' +\n\t')}\n`;
    case 'java':
      return `class Keys {\n  static final String TEST_KEY =\n${escaped.map((line) => `      "${line}"`).join(' +\n')};\n}\n`;
    case 'rust':
      return `pub const TEST_KEY: &str = concat!(\n${escaped.map((line) => `    "${line}",`).join('\n')}\n);\n`;
    case 'c':
      return `static const char *test_key =\n${escaped.map((line) => `    "${line}"`).join('\n')};\n`;
    case 'csharp':
      return `class Keys {\n  const string TestKey =\n${escaped.map((line) => `    "${line}"`).join(' +\n')};\n}\n`;
  }
}
