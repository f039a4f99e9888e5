import { shannonEntropy } from './entropy.js';

/**
 * Shapes repodex checks itself, beside gitleaks' list and secretlint's preset: each has a literal
 * anchor searched first (cheap rejection), then a pattern, or a small parser where a pattern
 * would either backtrack or need judgement a pattern cannot hold (is this password a placeholder?).
 */

/** Where a rule matched in a text: `[start, end)`. */
export interface OwnSpan {
  readonly start: number;
  readonly end: number;
}

/** One of repodex's own shapes. */
export interface OwnRule {
  readonly id: string;
  /** Looked for first, ignoring case (with the rule keywords, in one pass); `''` always runs. */
  readonly anchor: string;
  /** Global: redaction replaces every match. */
  readonly pattern?: RegExp;
  /** A judge for each match of `pattern`: false lets it go. */
  readonly accept?: (match: RegExpExecArray, text: string) => boolean;
  /** A parser instead of a pattern. */
  readonly find?: (text: string) => OwnSpan[];
  /** Only for strings that are not files (secretlint, which covers files, cannot run synchronously). */
  readonly redactOnly?: boolean;
}

const KEY_KINDS = String.raw`((RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`;
const KEY_MARKER = String.raw`-----BEGIN ${KEY_KINDS}`;
const KEY_END_MARKER = String.raw`-----END ${KEY_KINDS}`;
/** What may stand between lines of a key written in a literal: quotes, `+`, `,`, blanks, an escaped line end. */
const KEY_JOIN = String.raw`[ \t'"${'`'},+]*(\r?\n|(\\r)?\\n)[ \t'"${'`'}+]*`;

/**
 * Placeholders a password in a URL (`scheme://user:password@host`) may be in examples and
 * documentation: references (`${PASSWORD}`, `$PASS`, `{password}`, `%(password)s`, `%s`),
 * markers (`<password>`, `[password]`), masks (`***`, `xxx`, `...`), and the words people write
 * in the password's place.
 */
const PLACEHOLDER_PASSWORD = /[${}<>[\]]|%[sd(]|^[*x.•#?_-]+$|^(?:pass|passwd|pwd|secret|pw|changeme|change_me|test|testing|sample|dummy|demo|default|guest|user|username|admin|root|foo|bar|baz|qux|token|apikey|api_key|key|abc|abcd|abc123|1234|12345|123456|letmein|p@ssw0rd|passw0rd|mypass|yourpass)$|password|passwd|placeholder|redacted|example|your|hidden|masked/i;

/**
 * True when a password looks made by a generator or a password manager, not typed as an example:
 * 8 characters or more, of at least two kinds (lower case, upper case, digits, others), and about
 * as varied as random text (3 bits a character or more). Test suites and documentation write
 * `johndoe:mysecret`, `fake_user:fake_pass`, `:qwerty@`; configurations hold `Qm7vX2pL9sK4wR8t`.
 */
function looksGenerated(password: string): boolean {
  if (password.length < 8) return false;
  const kinds = Number(/[a-z]/.test(password)) + Number(/[A-Z]/.test(password)) + Number(/[0-9]/.test(password)) + Number(/[^A-Za-z0-9]/.test(password));
  return kinds >= 2 && shannonEntropy(password) >= 3;
}

/**
 * Passwords in URLs, whatever the scheme (`redis://`, `amqp://`, `postgres://`, `https://`,
 * `ftp://`, `smb://`, a driver's own): the span of each password that is no placeholder (see
 * PLACEHOLDER_PASSWORD; a password equal to its user name, `guest:guest`, is a documented
 * default) and looks generated (`looksGenerated`). Found from each `://`, read backwards for
 * the scheme and forwards up to the `@`. (secretlint's rules for database and HTTP URLs judge
 * those schemes by their own, looser, measure.)
 */
export function urlPasswords(text: string): OwnSpan[] {
  const out: OwnSpan[] = [];
  for (let at = text.indexOf('://'); at >= 0; at = text.indexOf('://', at + 3)) {
    let scheme = at;
    while (scheme > 0 && at - scheme < 32 && /[A-Za-z0-9+.-]/.test(text[scheme - 1]!)) scheme--;
    if (scheme === at || !/[A-Za-z]/.test(text[scheme]!)) continue;
    let colon = -1;
    let end = at + 3;
    for (; end < text.length && end - at < 512; end++) {
      const char = text[end]!;
      if (char === '@') break;
      if (char === ':' && colon < 0) colon = end;
      if (/[\s/?#'"`\\]/.test(char)) break;
    }
    if (text[end] !== '@' || colon < 0 || !/[A-Za-z0-9[]/.test(text[end + 1] ?? '')) continue;
    const user = text.slice(at + 3, colon);
    const password = text.slice(colon + 1, end);
    if (password === user || !looksGenerated(password) || PLACEHOLDER_PASSWORD.test(password)) continue;
    out.push({ start: colon + 1, end });
  }
  return out;
}

/** A member of a JSON Web Key that only a private or secret key has (`d`, the RSA primes and exponents, `k` of a symmetric key), with its value. */
const JWK_PRIVATE_MEMBER = /["']?\b(?:d|p|q|dp|dq|qi|k)["']?\s*:\s*["']([A-Za-z0-9_-]{32,}={0,2})["']/g;
/** How far from `kty` a key's members stand at most (a JWK is one small object). */
const JWK_REACH = 2048;

/** Private and secret JSON Web Keys: a private member near a `kty`. */
function privateJwks(text: string): OwnSpan[] {
  const out: OwnSpan[] = [];
  for (let at = text.indexOf('kty'); at >= 0; at = text.indexOf('kty', at + 3)) {
    if (!/^kty["']?\s*:/.test(text.slice(at, at + 8))) continue;
    const from = Math.max(0, at - JWK_REACH);
    JWK_PRIVATE_MEMBER.lastIndex = from;
    const m = JWK_PRIVATE_MEMBER.exec(text);
    if (m && m.index < at + JWK_REACH) out.push({ start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/**
 * A Discord bot token: the bot's id in base64, a timestamp, an HMAC. (Led by its first letter, not
 * `\b`: a pattern led by a word boundary is tried at every character; `isDiscordId` checks it.)
 */
const DISCORD_BOT_TOKEN = /([MNO][A-Za-z0-9_-]{23,27})\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/g;

/**
 * True when a Discord token starts a word and its first part is a snowflake id in base64 (17 to
 * 20 digits): what sets it apart from any three dotted words.
 */
function isDiscordId(match: RegExpExecArray, text: string): boolean {
  return !/[A-Za-z0-9_-]/.test(text[match.index - 1] ?? ' ') && /^\d{17,20}$/.test(Buffer.from(match[1]!, 'base64url').toString('latin1'));
}

/**
 * The shapes, each cheap to reject:
 * - a private key marker anywhere on a line, followed by base64 key material (16+ characters)
 *   on the next line or after an escaped newline (`\n` inside a JSON, JS or Python string),
 *   also when the key is written as a list of quoted lines; and the same from its end marker;
 * - private keys in other text forms: a PuTTY key file's private lines, an encrypted PEM's
 *   `Proc-Type`/`DEK-Info` headers (whatever its markers), a private JSON Web Key, a .NET
 *   `<RSAKeyValue>` with its private parts, and `openssl -text` dumps of RSA and EC keys;
 * - Stripe live or test secret keys and restricted keys (`sk_live_…`, `rk_test_…`);
 * - Google API keys (`AIza` + 35) and OAuth access tokens (`ya29.`);
 * - a token in a URL query (`?token=…`, a Jupyter server's login link): 24+ characters;
 * - an Azure Storage account key in a connection string (`AccountKey=…`), which gitleaks' list lacks;
 * - a password in a URL (`scheme://user:password@host`, any scheme, not a placeholder);
 * - a Discord bot token;
 * - in strings that are not files only: an AWS secret access key next to its name, which
 *   secretlint finds in files.
 */
export const OWN_RULES: readonly OwnRule[] = [
  { id: 'repodex/private-key', anchor: 'PRIVATE KEY', pattern: new RegExp(String.raw`${KEY_MARKER}${KEY_JOIN}[A-Za-z0-9+/=]{16,}`, 'g') },
  // The same key found from its end marker, for when its begin marker is written so no rule sees it.
  { id: 'repodex/private-key-end', anchor: 'PRIVATE KEY', pattern: new RegExp(String.raw`[A-Za-z0-9+/=]{16,}${KEY_JOIN}${KEY_END_MARKER}`, 'g') },
  { id: 'repodex/putty-private-key', anchor: 'Private-Lines:', pattern: new RegExp(String.raw`Private-Lines:[ \t]*\d+[ \t'"${'`'},+]*(?:\r?\n|(?:\\r)?\\n)?[ \t'"${'`'}+]*[A-Za-z0-9+/=]{16,}`, 'g') },
  { id: 'repodex/private-key', anchor: 'DEK-Info:', pattern: /Proc-Type:[ \t]*4,[ \t]*ENCRYPTED[\s'"`,+\\nr]{1,40}DEK-Info:[ \t]*[A-Z0-9-]+,[0-9A-Fa-f]{16,}/g },
  { id: 'repodex/private-key', anchor: 'kty', find: privateJwks },
  { id: 'repodex/private-key', anchor: 'KeyValue>', pattern: /<(D|P|Q|DP|DQ|InverseQ|X)>\s*[A-Za-z0-9+/]{32,}={0,2}\s*<\/\1>/g },
  { id: 'repodex/private-key', anchor: 'privateExponent', pattern: /privateExponent:(?:[\s'"`+,]|\\n)*(?:[0-9a-fA-F]{2}:(?:[\s'"`+,]|\\n)*){16}/g },
  { id: 'repodex/private-key', anchor: 'priv:', pattern: /\bpriv:(?:[\s'"`+,]|\\n)*(?:[0-9a-fA-F]{2}:(?:[\s'"`+,]|\\n)*){16}/g },
  { id: 'repodex/stripe', anchor: 'k_', pattern: /\b[sr]k_(live|test)_[0-9A-Za-z]{20,}\b/g },
  { id: 'repodex/google-api-key', anchor: 'AIza', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { id: 'repodex/google-oauth-token', anchor: 'ya29.', pattern: /\bya29\.[0-9A-Za-z_-]{20,}/g },
  { id: 'repodex/url-token', anchor: '=', pattern: /[?&](?:token|access_token|auth_token|api_key|apikey)=(?=[^\s&#'"]*[0-9])[A-Za-z0-9_\-.~%]{24,}/gi },
  { id: 'repodex/azure-storage-key', anchor: 'AccountKey=', pattern: /AccountKey=[A-Za-z0-9+/]{40,}={0,2}/g },
  { id: 'repodex/url-password', anchor: '://', find: urlPasswords },
  { id: 'repodex/discord-bot-token', anchor: '.', pattern: DISCORD_BOT_TOKEN, accept: isDiscordId },
  { id: 'repodex/aws-secret-key', anchor: 'aws', pattern: /aws.{0,20}?(?:secret|key).{0,20}?['"\s=:]{1,5}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/gi, redactOnly: true },
];

/** The anchors, lower-cased: the keyword pass over a text (`rule-set.ts`, `keywordsPresent`) looks for them with gitleaks' keywords. */
export const OWN_ANCHORS: readonly string[] = [...new Set(OWN_RULES.map((rule) => rule.anchor.toLowerCase()).filter((anchor) => anchor !== ''))];

/**
 * Matches of the own rules in `text`; only the first when `first`. `strings`: the text is not a
 * file (redact-only rules apply). `present`: the anchors (lower-cased) that occur in the text.
 */
export function ownMatches(text: string, first: boolean, strings: boolean, present: ReadonlySet<string>): { rule: string; start: number; end: number }[] {
  const out: { rule: string; start: number; end: number }[] = [];
  for (const rule of OWN_RULES) {
    if (rule.redactOnly && !strings) continue;
    if (rule.anchor !== '' && !present.has(rule.anchor.toLowerCase())) continue;
    if (rule.find) {
      for (const span of rule.find(text)) {
        out.push({ rule: rule.id, ...span });
        if (first) return out;
      }
      continue;
    }
    const pattern = rule.pattern!;
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      if (rule.accept && !rule.accept(m, text)) continue;
      out.push({ rule: rule.id, start: m.index, end: m.index + m[0].length });
      if (first) return out;
    }
  }
  return out;
}
