import { type KeyObject, generateKeyPairSync, randomBytes } from 'node:crypto';
import { randomOf } from './credentials.js';

/**
 * Credentials by shape, generated at test time (keys from generateKeyPairSync, tokens as random
 * strings in each service's format, PuTTY, OpenSSH and OpenPGP bodies as their headers and random
 * bytes): every family of shapes the detectors claim, each written in several languages and
 * encodings, for the unit tests and the end-to-end corpus. Nothing here is a real credential.
 */

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
const DIGITS = '0123456789';

/** The languages of the index with a way to write a one-line string constant. */
export const LANGUAGES = ['ts', 'tsx', 'js', 'py', 'go', 'rs', 'java', 'c', 'cpp', 'cs', 'rb', 'php'] as const;
/** One of LANGUAGES. */
export type Language = (typeof LANGUAGES)[number];

const EXTENSIONS: Record<Language, string> = { ts: 'ts', tsx: 'tsx', js: 'js', py: 'py', go: 'go', rs: 'rs', java: 'java', c: 'c', cpp: 'cpp', cs: 'cs', rb: 'rb', php: 'php' };

/** A file name for a module of `language` called `word`. */
export function fileFor(language: Language, word: string, folder = 'src'): string {
  return `${folder}/${word}.${EXTENSIONS[language]}`;
}

/** A comment line naming `word` (what a search for it finds). */
function comment(language: Language, word: string): string {
  return language === 'py' || language === 'rb' ? `# ${word} settings` : `// ${word} settings`;
}

/**
 * A source file of `language` that assigns the one-line string `value` to a constant named after
 * `word`. `quote`: `'` where the value holds `$` or `#{` (interpolation in Ruby and PHP double quotes).
 */
export function constantIn(language: Language, word: string, value: string, quote: '"' | "'" = '"'): string {
  const name = `${word.toUpperCase()}_VALUE`;
  const q = (text: string): string => `${quote}${text}${quote}`;
  const head = comment(language, word);
  switch (language) {
    case 'ts':
      return `${head}\nexport const ${name} = ${q(value)};\n`;
    case 'tsx':
      return `${head}\nexport const ${name} = ${q(value)};\nexport function ${word}Panel() {\n  return <div title={${name}} />;\n}\n`;
    case 'js':
      return `${head}\nconst ${name} = ${q(value)};\nmodule.exports = { ${name} };\n`;
    case 'py':
      return `${head}\n${name} = ${q(value)}\n`;
    case 'go':
      return `${head}\npackage ${word}\n\nconst ${word}Value = "${value}"\n`;
    case 'rs':
      return `${head}\npub const ${name}: &str = "${value}";\n`;
    case 'java':
      return `${head}\nclass ${word}Config {\n  static final String ${name} = "${value}";\n}\n`;
    case 'c':
      return `${head}\nstatic const char *${word}_value = "${value}";\n`;
    case 'cpp':
      return `${head}\n#include <string>\nconst std::string ${word}_value = "${value}";\n`;
    case 'cs':
      return `${head}\nclass ${word}Config {\n  const string ${name} = "${value}";\n}\n`;
    case 'rb':
      return `${head}\n${name} = ${q(value)}\n`;
    case 'php':
      return `<?php\n${head}\n$${word}_value = ${q(value)};\n`;
  }
}

// ---------------------------------------------------------------------------------------------
// Tokens and URLs

/** A password as a generator makes them. */
export function generatedPassword(): string {
  return `${randomOf(ALNUM, 6)}${randomOf(DIGITS, 2)}${randomOf(ALNUM, 10)}`;
}

/** `scheme://user:password@host` for schemes secretlint's rules never read: the password is the secret. */
export const URL_SCHEMES = ['redis', 'rediss', 'amqp', 'amqps', 'mqtt', 'smtp', 'ldap', 'sftp', 'nats', 'kafka+ssl', 'elasticsearch+https', 'mssql'] as const;

/** A URL with a generated password, and the password. */
export function urlWithPassword(scheme: string): { value: string; secret: string } {
  const secret = generatedPassword();
  return { value: `${scheme}://svc_${randomOf('abcdefgh', 4)}:${secret}@${scheme.replace(/\W/g, '')}.prod.internal:6379/0`, secret };
}

/** Token shapes found without a keyword beside them (the variable is named for neither the service nor a secret). */
export const BARE_TOKENS = {
  telegram: () => `${randomOf(DIGITS, 10)}:AA${randomOf(`${ALNUM}_-`, 33)}`,
  'discord-webhook': () => `https://discord.com/api/webhooks/${randomOf(DIGITS, 18)}/${randomOf(`${ALNUM}_-`, 68)}`,
  'discord-bot': () => `${Buffer.from(randomOf(DIGITS, 18)).toString('base64url')}.${randomOf(ALNUM, 6)}.${randomOf(`${ALNUM}_-`, 38)}`,
  mailchimp: () => `${randomOf(HEX, 32)}-us${randomOf(DIGITS, 2)}`,
  'new-relic-user': () => `NRAK-${randomOf('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 27)}`,
  plaid: () => `access-production-${randomOf(HEX, 8)}-${randomOf(HEX, 4)}-${randomOf(HEX, 4)}-${randomOf(HEX, 4)}-${randomOf(HEX, 12)}`,
  mapbox: () => `sk.${randomOf('abcdefghijklmnopqrstuvwxyz0123456789', 60)}.${randomOf('abcdefghijklmnopqrstuvwxyz0123456789', 22)}`,
  sonar: () => `squ_${randomOf('abcdef0123456789', 40)}`,
  typeform: () => `tfp_${randomOf(`${ALNUM}_-`, 59)}`,
  'github-short': () => `ghp_${randomOf(ALNUM, 34)}`,
} as const satisfies Record<string, () => string>;

/** A Django settings key as `startproject` makes one. */
export function djangoSecretKey(): string {
  return randomOf('abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*(-_=+)', 50);
}

/**
 * A GitHub token split over a constant and a later value that names it, as each language writes
 * that (a template, an f-string, `#{}`, `{$a}`, `+`, `.`, a C macro beside a literal, `$"{a}"`).
 */
export function splitToken(language: Language, word: string, token: string): string {
  const [head, tail] = [token.slice(0, 14), token.slice(14)];
  const top = comment(language, word);
  switch (language) {
    case 'ts':
    case 'tsx':
      return `${top}\nconst a = "${head}";\nexport const ${word}Token = \`\${a}${tail}\`;\n`;
    case 'js':
      return `${top}\nconst prefix = '${head}';\nmodule.exports = { ${word}Token: prefix + '${tail}' };\n`;
    case 'py':
      return `${top}\nprefix = "${head}"\n${word.toUpperCase()}_TOKEN = f"{prefix}${tail}"\n`;
    case 'go':
      return `${top}\npackage ${word}\n\nconst prefix = "${head}"\n\nvar ${word}Token = prefix + "${tail}"\n`;
    case 'rs':
      return `${top}\nconst PREFIX: &str = "${head}";\npub const ${word.toUpperCase()}_TOKEN: &str = concat!("${head}", "${tail}");\n`;
    case 'java':
      return `${top}\nclass ${word}Token {\n  static final String PREFIX = "${head}";\n  static final String TOKEN = PREFIX + "${tail}";\n}\n`;
    case 'c':
    case 'cpp':
      return `${top}\n#define TOKEN_PREFIX "${head}"\nstatic const char *${word}_token = TOKEN_PREFIX "${tail}";\n`;
    case 'cs':
      return `${top}\nclass ${word}Token {\n  const string Prefix = "${head}";\n  string Token => $"{Prefix}${tail}";\n}\n`;
    case 'rb':
      return `${top}\nprefix = "${head}"\n${word.toUpperCase()}_TOKEN = "#{prefix}${tail}"\n`;
    case 'php':
      return `<?php\n${top}\n$prefix = "${head}";\n$${word}_token = "{$prefix}${tail}";\n`;
  }
}

// ---------------------------------------------------------------------------------------------
// Private keys

/** The private key kinds generated here. */
export type KeyKind = 'rsa' | 'ec' | 'ed25519' | 'dsa';

/** A fresh private key. */
export function privateKey(kind: KeyKind = 'rsa'): KeyObject {
  switch (kind) {
    case 'rsa':
      return generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    case 'ec':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    case 'ed25519':
      return generateKeyPairSync('ed25519').privateKey;
    case 'dsa':
      return generateKeyPairSync('dsa', { modulusLength: 1024, divisorLength: 160 }).privateKey;
  }
}

/** A key's PEM lines (PKCS#1 for RSA, SEC1 for EC, PKCS#8 otherwise), markers included. */
export function pemLines(key: KeyObject): string[] {
  const type = key.asymmetricKeyType === 'rsa' ? 'pkcs1' : key.asymmetricKeyType === 'ec' ? 'sec1' : 'pkcs8';
  return key.export({ type, format: 'pem' }).toString().trimEnd().split('\n');
}

/** A key's DER (PKCS#8). */
export function der(key: KeyObject): Buffer {
  return key.export({ type: 'pkcs8', format: 'der' });
}

/** The body lines of a PEM (what must never be served). */
export function bodyOf(lines: readonly string[]): string[] {
  return lines.filter((line) => !line.startsWith('-----') && line.trim() !== '' && !line.includes(':'));
}

/** An OpenSSH private key file: its magic and random bytes, in base64 lines of 70, with its markers. */
export function openSshKey(): string[] {
  const body = Buffer.concat([Buffer.from('openssh-key-v1\0', 'latin1'), Buffer.from([0, 0, 0, 4]), Buffer.from('none'), randomBytes(360)]).toString('base64');
  return ['-----BEGIN OPENSSH PRIVATE KEY-----', ...(body.match(/.{1,70}/g) ?? []), '-----END OPENSSH PRIVATE KEY-----'];
}

/**
 * An armoured OpenPGP private key block: a version 4 RSA secret-key packet (old format, tag 5)
 * made now, a 2048-bit modulus MPI of random bytes, random bytes after it.
 */
export function pgpKey(): string[] {
  const length = 900;
  const created = Buffer.alloc(4);
  created.writeUInt32BE(Math.floor(Date.now() / 1000));
  const modulus = randomBytes(256);
  modulus[0]! |= 0x80;
  const packet = Buffer.concat([Buffer.from([0x95, length >> 8, length & 0xff, 4]), created, Buffer.from([1, 0x08, 0x00]), modulus, randomBytes(length - 9 - modulus.length)]);
  const body = packet.toString('base64');
  return ['-----BEGIN PGP PRIVATE KEY BLOCK-----', '', ...(body.match(/.{1,64}/g) ?? []), `=${randomOf(ALNUM, 4)}`, '-----END PGP PRIVATE KEY BLOCK-----'];
}

/** A PuTTY key file (version 3, no passphrase), its public and private lines random base64. */
export function puttyKey(): string[] {
  const lines = (bytes: number): string[] => randomBytes(bytes).toString('base64').match(/.{1,64}/g) ?? [];
  const pub = lines(51);
  const priv = lines(48);
  return ['PuTTY-User-Key-File-3: ssh-ed25519', 'Encryption: none', 'Comment: deploy@build', `Public-Lines: ${pub.length}`, ...pub, `Private-Lines: ${priv.length}`, ...priv, `Private-MAC: ${randomOf(HEX, 64)}`];
}

/** Hex bytes as `00:1a:…:ff` lines, as `openssl rsa -text` prints a key's numbers. */
function colonHex(bytes: Buffer): string[] {
  return (bytes.toString('hex').match(/.{2}/g) ?? []).join(':').match(/.{1,45}/g) ?? [];
}

/**
 * The encodings of a private key a source file may hold, each a text fragment and the strings of
 * it that must never be served. Multi-line fragments are placed in files by `keyFile`.
 */
export function keyEncodings(): { name: string; lines: string[]; secrets: string[] }[] {
  const rsa = privateKey('rsa');
  const ec = privateKey('ec');
  const pem = pemLines(rsa);
  const derBytes = der(ec);
  const jwk = rsa.export({ format: 'jwk' });
  const b64 = (value: string): string => Buffer.from(value, 'base64url').toString('base64');
  const ed = pemLines(privateKey('ed25519'));
  const encrypted = rsa.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'correct horse' }).toString().trimEnd().split('\n');
  const legacyEncrypted = [
    '-----BEGIN RSA PRIVATE KEY-----',
    'Proc-Type: 4,ENCRYPTED',
    `DEK-Info: AES-256-CBC,${randomOf(HEX, 32).toUpperCase()}`,
    '',
    ...(randomBytes(600).toString('base64').match(/.{1,64}/g) ?? []),
    '-----END RSA PRIVATE KEY-----',
  ];
  const ssh = openSshKey();
  const pgp = pgpKey();
  const putty = puttyKey();
  const pemHex = Buffer.from(`${pem.join('\n')}\n`).toString('hex');
  const derHex = derBytes.toString('hex');
  const derBase64 = derBytes.toString('base64');
  const pemBase64 = Buffer.from(`${pem.join('\n')}\n`).toString('base64');
  const d = Buffer.from(jwk.d!, 'base64url');
  return [
    { name: 'pem', lines: pem, secrets: bodyOf(pem).slice(0, 3) },
    { name: 'pem-pkcs8-ed25519', lines: ed, secrets: bodyOf(ed) },
    { name: 'pem-encrypted-pkcs8', lines: encrypted, secrets: bodyOf(encrypted).slice(0, 3) },
    { name: 'pem-proc-type', lines: legacyEncrypted, secrets: bodyOf(legacyEncrypted).slice(0, 3) },
    { name: 'openssh', lines: ssh, secrets: bodyOf(ssh).slice(0, 3) },
    { name: 'pgp', lines: pgp, secrets: bodyOf(pgp).slice(0, 3) },
    { name: 'putty', lines: putty, secrets: putty.slice(-3, -1) },
    { name: 'pem-hex', lines: [pemHex], secrets: [pemHex.slice(0, 64), pemHex.slice(400, 464)] },
    { name: 'der-hex', lines: [derHex], secrets: [derHex.slice(0, 64), derHex.slice(-64)] },
    { name: 'der-base64', lines: [derBase64], secrets: [derBase64.slice(0, 48), derBase64.slice(-48)] },
    { name: 'pem-base64', lines: [pemBase64], secrets: [pemBase64.slice(0, 48), pemBase64.slice(-48)] },
    { name: 'der-c-bytes', lines: [`{ ${[...derBytes].map((byte) => `0x${byte.toString(16).padStart(2, '0')}`).join(', ')} }`], secrets: [[...derBytes.subarray(8, 24)].map((byte) => `0x${byte.toString(16).padStart(2, '0')}`).join(', ')] },
    { name: 'der-java-bytes', lines: [`{ ${[...derBytes].map((byte) => String(byte > 127 ? byte - 256 : byte)).join(', ')} }`], secrets: [[...derBytes.subarray(8, 24)].map((byte) => String(byte > 127 ? byte - 256 : byte)).join(', ')] },
    { name: 'der-escapes', lines: [[...derBytes].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('')], secrets: [[...derBytes.subarray(8, 40)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('')] },
    { name: 'jwk', lines: [JSON.stringify(jwk)], secrets: [jwk.d!, jwk.p!] },
    {
      name: 'dotnet-xml',
      lines: [`<RSAKeyValue><Modulus>${b64(jwk.n!)}</Modulus><Exponent>${b64(jwk.e!)}</Exponent><P>${b64(jwk.p!)}</P><Q>${b64(jwk.q!)}</Q><D>${b64(jwk.d!)}</D></RSAKeyValue>`],
      secrets: [b64(jwk.d!), b64(jwk.p!)],
    },
    { name: 'openssl-text', lines: ['Private-Key: (1024 bit, 2 primes)', 'privateExponent:', ...colonHex(d).map((line) => `    ${line}`)], secrets: colonHex(d).slice(0, 2) },
  ];
}

/**
 * A private key's lines written in `language` one string per line, joined the language's way
 * (templates, raw strings, heredocs, text blocks, `.join`, `implode`, concatenation), with the
 * begin and end markers built from a constant (`-----BEGIN RSA ${head}-----`) when `built`.
 */
export function keyIn(language: Language | 'md' | 'yaml' | 'toml' | 'json', lines: readonly string[], word: string, built = false): string {
  const marker = (line: string, interpolate: (name: string) => string): string => (built ? line.replace(/PRIVATE KEY/, interpolate('head')) : line);
  const top = language === 'md' || language === 'yaml' || language === 'toml' || language === 'json' ? '' : `${comment(language, word)}\n`;
  const body = lines.map((line) => marker(line, (name) => `\${${name}}`));
  switch (language) {
    case 'ts':
    case 'tsx':
    case 'js':
      return `${top}const head = "PRIVATE KEY";\nexport const ${word}Key = \`${body.join('\n')}\n\`;\n`;
    case 'py':
      return `${top}head = "PRIVATE KEY"\n${word.toUpperCase()}_KEY = "\\n".join([\n${lines.map((line) => `    f"${marker(line, (name) => `{${name}}`)}",`).join('\n')}\n])\n`;
    case 'go':
      return `${top}package ${word}\n\nconst head = "PRIVATE KEY"\n\nvar ${word}Key = ${lines.map((line) => (built && line.includes('PRIVATE KEY') ? `"${line.replace('PRIVATE KEY', '" + head + "')}\\n"` : `"${line}\\n"`)).join(' +\n\t')}\n`;
    case 'rs':
      return `${top}pub const ${word.toUpperCase()}_KEY: &str = r#"${lines.join('\n')}\n"#;\n`;
    case 'java':
      return `${top}class ${word}Key {\n  static final String KEY = """\n${lines.map((line) => `      ${line}`).join('\n')}\n      """;\n}\n`;
    case 'c':
      return `${top}static const char *${word}_key =\n${lines.map((line) => `    "${line}\\n"`).join('\n')};\n`;
    case 'cpp':
      return `${top}#include <string>\nconst std::string ${word}_key = R"KEY(${lines.join('\n')}\n)KEY";\n`;
    case 'cs':
      return `${top}class ${word}Key {\n  const string Head = "PRIVATE KEY";\n  string Key => $@"${lines.map((line) => marker(line, (name) => `{${name === 'head' ? 'Head' : name}}`)).join('\n')}\n";\n}\n`;
    case 'rb':
      return `${top}head = "PRIVATE KEY"\n${word.toUpperCase()}_KEY = <<~PEM\n${lines.map((line) => `  ${marker(line, (name) => `#{${name}}`)}`).join('\n')}\nPEM\n`;
    case 'php':
      return `<?php\n${top}$head = "PRIVATE KEY";\n$${word}_key = implode("\\n", [\n${lines.map((line) => `    "${marker(line, (name) => `{$${name}}`)}",`).join('\n')}\n]);\n`;
    case 'md':
      return `# ${word} setup\n\nPaste this into the deploy settings:\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`;
    case 'yaml':
      return `# ${word} deployment\n${word}:\n  key: |\n${lines.map((line) => `    ${line}`).join('\n')}\n`;
    case 'toml':
      return `# ${word} settings\n[${word}]\nkey = """\n${lines.join('\n')}\n"""\n`;
    case 'json':
      return `${JSON.stringify({ name: word, private_key: `${lines.join('\n')}\n` }, null, 2)}\n`;
  }
}
