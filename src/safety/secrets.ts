import presetPackage from '@secretlint/secretlint-rule-preset-recommend/package.json' with { type: 'json' };

/**
 * Detecting credentials by content (SPEC §8): a file that holds one is a secret whatever its name,
 * and is blocked whole (never indexed, never served, never partially redacted; seed 002 §7.4).
 *
 * The detection is secretlint's recommended rule preset (AWS, GCP, GitHub, npm, Slack, OpenAI,
 * Anthropic, SendGrid, Shopify, Linear, 1Password, basic auth and database URLs with passwords,
 * PEM private keys), plus the few shapes it leaves out, which repodex checks itself: a private key
 * marker anywhere in a line with key material after it (secretlint wants a full, real-looking key
 * block, so a key inside a template or raw string whose material is short or escaped slips past
 * it), Stripe secret and restricted keys, and Google API keys and OAuth tokens.
 *
 * A finding names the rule and the line, never the secret: secretlint's own messages quote it.
 */

/** One credential found in a text: which rule matched, and where (never the matched text). */
export interface SecretFinding {
  /** A rule id, e.g. `@secretlint/secretlint-rule-aws` or `repodex/private-key`. */
  readonly rule: string;
  /** 1-based line of the first match. */
  readonly line: number;
}

/**
 * The version of the detection rules. Files the index holds were scanned with these rules: an
 * index or parse cache made with other rules is rebuilt (it is part of the feature version key).
 */
export const SECRET_RULES_VERSION = `secretlint-preset-recommend@${presetPackage.version}+repodex-1`;

const KEY_MARKER = String.raw`-----BEGIN ((RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`;

/**
 * Shapes repodex checks itself, each cheap to reject: the literal prefix is searched first.
 * - A private key marker anywhere on a line, followed by base64 key material (16+ characters)
 *   on the next line or after an escaped newline (`\n` inside a JSON, JS or Python string),
 *   also when the key is written as a list of quoted lines.
 * - Stripe live or test secret keys and restricted keys (`sk_live_…`, `rk_test_…`).
 * - Google API keys (`AIza` + 35) and OAuth access tokens (`ya29.`).
 */
const OWN_RULES: readonly { readonly id: string; readonly anchor: string; readonly pattern: RegExp }[] = [
  { id: 'repodex/private-key', anchor: 'PRIVATE KEY', pattern: new RegExp(String.raw`${KEY_MARKER}[ \t'"${'`'},+]*(\r?\n|(\\r)?\\n)[ \t'"${'`'}+]*[A-Za-z0-9+/=]{16,}`) },
  { id: 'repodex/stripe', anchor: 'k_', pattern: /\b[sr]k_(live|test)_[0-9A-Za-z]{20,}\b/ },
  { id: 'repodex/google-api-key', anchor: 'AIza', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/ },
  { id: 'repodex/google-oauth-token', anchor: 'ya29.', pattern: /\bya29\.[0-9A-Za-z_-]{20,}/ },
];

type Lint = (text: string, path: string) => Promise<{ ruleId: string; offset: number }[]>;
let secretlint: Promise<Lint> | undefined;

/** secretlint, loaded on first use (a search never needs it; the rules are a few hundred kB of code). */
function loadSecretlint(): Promise<Lint> {
  secretlint ??= (async () => {
    const [{ lintSource }, { creator: preset }, { secretLintProfiler }] = await Promise.all([
      import('@secretlint/core'),
      import('@secretlint/secretlint-rule-preset-recommend'),
      import('@secretlint/profiler'),
    ]);
    // secretlint's profiler marks the global performance timeline on every lint and keeps every
    // entry (and a promise per measure) for the life of the process: a leak in a server, and a
    // crash when a file name holds a newline (its measure names no longer match, and the
    // rejected promise is unhandled). repodex never reads the profile: make it inert.
    secretLintProfiler.mark = () => undefined;
    // AWS access key ids are scanned too (secretlint leaves them out by default: an id alone
    // grants nothing, but a file that holds one usually holds its secret nearby).
    const config = {
      rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: preset, rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }] }],
    };
    return async (text: string, path: string) => {
      const dot = path.lastIndexOf('.');
      // Rules look at the name only for its extension and base name; control characters never reach them.
      // eslint-disable-next-line no-control-regex
      const filePath = path.replace(/[\x00-\x1f\x7f]/g, '_');
      const result = await lintSource({
        source: { content: text, filePath, ext: dot > path.lastIndexOf('/') ? path.slice(dot) : '', contentType: 'text' },
        // maskSecrets: even a message that escaped into a log would not carry the secret.
        options: { config, maskSecrets: true, noPhysicFilePath: true },
      });
      return result.messages.map((message) => ({ ruleId: message.ruleId, offset: message.range[0] }));
    };
  })();
  return secretlint;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The first credential in `text` (a file at repository path `path`), or undefined when there is none. */
export async function findSecret(text: string, path: string): Promise<SecretFinding | undefined> {
  for (const rule of OWN_RULES) {
    if (!text.includes(rule.anchor)) continue;
    const match = rule.pattern.exec(text);
    if (match) return { rule: rule.id, line: lineAt(text, match.index) };
  }
  const lint = await loadSecretlint();
  const found = await lint(text, path);
  if (found.length === 0) return undefined;
  const first = found.reduce((a, b) => (b.offset < a.offset ? b : a));
  return { rule: first.ruleId, line: lineAt(text, first.offset) };
}

/** A one-line reason for refusing a file that holds a credential (names the rule and line, never the secret). */
export function describeSecret(finding: SecretFinding): string {
  const what = finding.rule.replace(/^@secretlint\/secretlint-rule-/, '').replace(/^repodex\//, '');
  return `contains a credential (${what}, line ${finding.line})`;
}
