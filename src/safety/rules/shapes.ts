/**
 * Rules repodex adds to gitleaks' list, in gitleaks' own form (a pattern, keywords that must occur
 * for it to run, an entropy threshold, allowlists), so `rule-set.ts` runs them the same way.
 *
 * First, gitleaks' rules that find a token only beside a keyword (the service's name before an
 * assignment: `telegram_token = "…"`), decided one by one. Where the token's own shape is
 * unambiguous — a fixed prefix or structure no identifier, hash or UUID has — it is also found
 * without the keyword (`bare`: the same rule id, so a finding names the service). Where the
 * shape alone is any hash, UUID or identifier, the keyword stays required (`keep`, and why).
 * Rules whose keyword is not part of the token they match though their pattern needs no keyword
 * get the token's own literal as a keyword (`keywords`).
 */

/** A pattern as the rule data keeps it. */
export interface PatternData {
  readonly source: string;
  readonly flags: string;
}

/** An allowlist, as gitleaks writes one: what it judges (`secret`, `match`, `line`), how its conditions combine. */
export interface AllowlistData {
  readonly target: string;
  readonly condition: string;
  readonly regexes: readonly PatternData[];
  readonly stopwords: readonly string[];
  readonly paths: readonly PatternData[];
}

/** A rule as the rule data keeps it (gitleaks' fields). */
export interface RuleData {
  readonly id: string;
  readonly source: string;
  readonly flags: string;
  readonly keywords: readonly string[];
  readonly entropy?: number;
  readonly secretGroup?: number;
  readonly path?: PatternData;
  readonly allowlists?: readonly AllowlistData[];
  readonly examples?: readonly string[];
}

/** How gitleaks ends a token: a quote, a blank, `;`, an escaped line end, or the end of the text. */
const END = String.raw`(?:[\x60'"\s;]|\\[nrNR]|$)`;

/** A bare shape: the token's pattern without the keyword before it, and the literals it runs on. */
interface Bare {
  readonly bare: string;
  readonly flags?: string;
  readonly keywords: readonly string[];
  readonly entropy?: number;
}

/** A keyword kept, and why the token's shape alone is not enough. */
interface Keep {
  readonly keep: string;
}

const HEX = 'hex digits only: any hash looks the same';
const ALNUM = 'letters and digits of one length: any identifier or hash looks the same';
const UUID = 'a UUID';
const DIGITS = 'digits only';

/**
 * Every gitleaks rule that needs a keyword beside the token, decided. A vendored rule list with a
 * rule this table does not name fails the tests: a new rule is decided before it ships.
 */
export const KEYWORD_RULES: Readonly<Record<string, Bare | Keep>> = {
  'adafruit-api-key': { keep: ALNUM },
  'adobe-client-id': { keep: HEX },
  'airtable-api-key': { keep: ALNUM },
  'algolia-api-key': { keep: ALNUM },
  'alibaba-secret-key': { keep: ALNUM },
  'asana-client-id': { keep: DIGITS },
  'asana-client-secret': { keep: ALNUM },
  // Its ATATT3 form is matched without the keyword already.
  'atlassian-api-token': { keep: ALNUM },
  'beamer-api-token': { keep: '`b_` and 44 characters is any long snake_case name' },
  'bitbucket-client-id': { keep: ALNUM },
  'bitbucket-client-secret': { keep: ALNUM },
  'bittrex-access-key': { keep: ALNUM },
  'bittrex-secret-key': { keep: ALNUM },
  'cisco-meraki-api-key': { keep: HEX },
  'cloudflare-api-key': { keep: ALNUM },
  'cloudflare-global-api-key': { keep: HEX },
  'codecov-access-token': { keep: ALNUM },
  'cohere-api-token': { keep: ALNUM },
  'coinbase-access-token': { keep: ALNUM },
  'confluent-access-token': { keep: ALNUM },
  'confluent-secret-key': { keep: ALNUM },
  'contentful-delivery-api-token': { keep: ALNUM },
  'datadog-access-token': { keep: ALNUM },
  'defined-networking-api-token': { bare: String.raw`\b(dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52})${END}`, flags: 'i', keywords: ['dnkey-'] },
  'discord-api-token': { keep: HEX },
  'discord-client-id': { keep: DIGITS },
  'discord-client-secret': { keep: ALNUM },
  'droneci-access-token': { keep: ALNUM },
  'dropbox-api-token': { keep: ALNUM },
  'dropbox-long-lived-api-token': { keep: 'ten `A`s inside 64 characters is also base64 of zero bytes' },
  'dropbox-short-lived-api-token': { bare: String.raw`\b(sl\.[a-z0-9\-=_]{135})${END}`, flags: 'i', keywords: ['sl.'] },
  'etsy-access-token': { keep: ALNUM },
  'facebook-secret': { keep: HEX },
  'fastly-api-token': { keep: ALNUM },
  'finicity-api-token': { keep: HEX },
  'finicity-client-secret': { keep: ALNUM },
  'finnhub-access-token': { keep: ALNUM },
  'flickr-access-token': { keep: ALNUM },
  'freshbooks-access-token': { keep: ALNUM },
  'generic-api-key': { keep: 'the keyword is what the rule is about' },
  'gitter-access-token': { keep: ALNUM },
  'gocardless-api-token': { keep: '`live_` and 40 letters, digits, `_` or `-` is also a long snake_case name' },
  'hashicorp-tf-password': { keep: 'a short quoted string' },
  'heroku-api-key': { keep: UUID },
  'hubspot-api-key': { keep: UUID },
  'intercom-api-key': { keep: ALNUM },
  'jfrog-api-key': { keep: ALNUM },
  'jfrog-identity-token': { keep: ALNUM },
  'kraken-access-token': { keep: 'base64 of one length' },
  'kucoin-access-token': { keep: HEX },
  'kucoin-secret-key': { keep: UUID },
  'launchdarkly-access-token': { keep: ALNUM },
  'linear-client-secret': { keep: HEX },
  'linkedin-client-id': { keep: ALNUM },
  'linkedin-client-secret': { keep: ALNUM },
  'lob-api-key': { bare: String.raw`\b((?:live|test)_[a-f0-9]{35})${END}`, flags: 'i', keywords: ['live_', 'test_'], entropy: 3 },
  'lob-pub-api-key': { bare: String.raw`\b((?:test|live)_pub_[a-f0-9]{31})${END}`, flags: 'i', keywords: ['test_pub', 'live_pub'], entropy: 3 },
  'looker-client-id': { keep: ALNUM },
  'looker-client-secret': { keep: ALNUM },
  // Led by its literal, the hex before it read behind: a pattern led by 32 hex digits is tried at every letter.
  'mailchimp-api-key': { bare: String.raw`-us\d\d(?<=\b([a-f0-9]{32}-us\d\d))${END}`, flags: 'i', keywords: ['-us'], entropy: 3 },
  'mailgun-private-api-token': { keep: '`key-` and 32 hex digits is how caches and lists name things after an MD5' },
  'mailgun-pub-key': { bare: String.raw`\b(pubkey-[a-f0-9]{32})${END}`, flags: 'i', keywords: ['pubkey-'], entropy: 3 },
  'mailgun-signing-key': { keep: HEX },
  // Public (pk.) and secret (sk.) tokens have one shape.
  'mapbox-api-token': { bare: String.raw`\b([ps]k\.[a-z0-9]{60}\.[a-z0-9]{22})${END}`, flags: 'i', keywords: ['pk.', 'sk.'] },
  'mattermost-access-token': { keep: ALNUM },
  'messagebird-api-token': { keep: ALNUM },
  'messagebird-client-id': { keep: UUID },
  'netlify-access-token': { keep: ALNUM },
  'new-relic-browser-api-token': { bare: String.raw`\b(NRJS-[a-f0-9]{19})${END}`, flags: 'i', keywords: ['nrjs-'] },
  'new-relic-insert-key': { bare: String.raw`\b(NRII-[a-z0-9-]{32})${END}`, flags: 'i', keywords: ['nrii-'] },
  'new-relic-user-api-id': { keep: ALNUM },
  'new-relic-user-api-key': { bare: String.raw`\b(NRAK-[a-z0-9]{27})${END}`, flags: 'i', keywords: ['nrak-'] },
  'nytimes-access-token': { keep: ALNUM },
  'okta-access-token': { keep: '`00` and 40 characters' },
  'plaid-api-token': {
    bare: String.raw`\b(access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})${END}`,
    flags: 'i',
    keywords: ['access-sandbox', 'access-development', 'access-production'],
  },
  'plaid-client-id': { keep: ALNUM },
  'plaid-secret-key': { keep: ALNUM },
  'privateai-api-token': { keep: ALNUM },
  'rapidapi-access-token': { keep: ALNUM },
  'sendbird-access-id': { keep: UUID },
  'sendbird-access-token': { keep: HEX },
  'sentry-access-token': { keep: HEX },
  'sidekiq-secret': { keep: HEX },
  'snyk-api-token': { keep: UUID },
  // With its prefix only: without one it is 40 letters and digits.
  'sonar-api-token': { bare: String.raw`\b((?:squ|sqp|sqa)_[a-z0-9=_\-]{40})${END}`, flags: 'i', keywords: ['squ_', 'sqp_', 'sqa_'] },
  'squarespace-access-token': { keep: UUID },
  'sumologic-access-id': { keep: '`su` and 12 letters and digits' },
  'sumologic-access-token': { keep: ALNUM },
  // A bot's id, `:AA` and 33 characters.
  'telegram-bot-api-token': { bare: String.raw`\b(\d{5,16}:AA[a-zA-Z0-9_\-]{33})${END}`, keywords: [':aa'], entropy: 3 },
  'travisci-access-token': { keep: ALNUM },
  'twitch-api-token': { keep: ALNUM },
  'twitter-access-secret': { keep: ALNUM },
  'twitter-access-token': { keep: 'digits, `-` and letters and digits is also an id and a slug' },
  'twitter-api-key': { keep: ALNUM },
  'twitter-api-secret': { keep: ALNUM },
  // 22 `A`s then a URL-encoded tail (`%2F`, `%3D`): base64 of zero bytes has no `%`.
  'twitter-bearer-token': { bare: String.raw`\b(A{22}(?=[a-zA-Z0-9%]{0,99}%)[a-zA-Z0-9%]{80,100})${END}`, keywords: ['aaaaaaaaaaaaaaaaaaaaaa'] },
  'typeform-api-token': { bare: String.raw`\b(tfp_[a-z0-9\-_\.=]{59})${END}`, flags: 'i', keywords: ['tfp_'] },
  'yandex-access-token': { bare: String.raw`\b(t1\.[A-Z0-9a-z_-]+={0,2}\.[A-Z0-9a-z_-]{86}={0,2})${END}`, keywords: ['t1.'] },
  'yandex-api-key': { bare: String.raw`\b(AQVN[A-Za-z0-9_\-]{35,38})${END}`, keywords: ['aqvn'] },
  'yandex-aws-access-token': { keep: '`YC` and 38 characters' },
  'zendesk-secret-key': { keep: ALNUM },
};

/** Rules whose pattern needs no keyword but whose keyword is no part of the token: the token's own literal as a keyword too. */
export const TOKEN_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  'airtable-personnal-access-token': ['pat'],
  // An app id's last two digits and the `|` (or `%7C`) before the secret.
  'facebook-access-token': Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).flatMap((digits) => [`${digits}|`, `${digits}%7c`]),
};

/**
 * Values that are placeholders, templates, references, hashes or patterns, not secrets (for the
 * assignment rule): `$NAME`, `${NAME}`, `{{ name }}`, `%(name)s`, `<your key>`, `****`, words
 * people write in a secret's place, a crypt hash (`$2b$…`), a regular expression. Written so a
 * random Django key (`!@#%^&*(-_=+)` among letters and digits) is none of them.
 */
const PLACEHOLDER: PatternData = {
  source: String.raw`^\$\w+$|^\$\d[a-z]?\$|\$\{|\{\{|%\(\w+\)s|^<|>$|^\*+$|\*{3}|x{4}|changeme|change_me|example|placeholder|redacted|your|replace|dummy|sample|fake|password|\(\?|\.\*|\.\+|\{\d+,?\d*\}`,
  flags: 'i',
};

const allow = (target: string, ...sources: readonly string[]): AllowlistData => ({ target, condition: 'OR', regexes: sources.map((source) => ({ source, flags: '' })), stopwords: [], paths: [] });

/**
 * repodex's own rules in gitleaks' form:
 * - a password or secret assigned to a name that says so (`…secret`, `…secret_key`, `…password`,
 *   `…pwd`, `…passphrase`), whatever characters it holds (Django's `SECRET_KEY = 'j#x8$f!2…'`,
 *   `spring.datasource.password=…`): gitleaks' generic rule reads
 *   only values of letters, digits and `_ . = -`; this one reads the others, quoted or to the end
 *   of the line, when they hold letters and digits, are random enough and are no placeholder;
 * - Django's generated `django-insecure-` keys, wherever they stand;
 * - Discord webhook URLs;
 * - GitHub tokens of any length from 30 characters (a token cut short, or written with a
 *   character too many, still grants what the whole one does or tells most of it).
 */
export const REPODEX_RULES: readonly RuleData[] = [
  {
    id: 'repodex/secret-assignment',
    source: String.raw`(?:secret(?:_?key(?:_?base)?)?|passw(?:or)?d|pwd|passphrase)["']?[ \t]*(?:=|:=|=>|:|\?=)[ \t]*(?:[rbuf]{1,2}(?=["']))?(?:"([a-z0-9!@#$%^&*()_=+\-~.]{12,200})"|'([a-z0-9!@#$%^&*()_=+\-~.]{12,200})'|\x60([a-z0-9!@#$%^&*()_=+\-~.]{12,200})\x60|([a-z0-9!@#$%^&*()_=+\-~.]{12,200})(?=[ \t]*(?:[;,#\r\n]|$)))`,
    flags: 'i',
    keywords: ['secret', 'passw', 'pwd', 'passphrase'],
    entropy: 3.5,
    allowlists: [
      // Letters, digits and `_ . = -` only: gitleaks' generic rule judges those.
      allow('secret', String.raw`^[\w.=-]+$`),
      // A secret has letters and digits.
      allow('secret', '^[^0-9]*$', '^[^A-Za-z]*$'),
      { target: 'secret', condition: 'OR', regexes: [PLACEHOLDER], stopwords: [], paths: [] },
      // Unquoted, it is code when it reads as a call (`password = getpass()`).
      allow('match', String.raw`[=:][ \t]*[A-Za-z_][\w.]*\([^()]*\)$`),
    ],
  },
  {
    id: 'repodex/django-secret-key',
    source: String.raw`\b(django-insecure-[a-z0-9!@#$%^&*(\-_=+)]{20,})`,
    flags: 'i',
    keywords: ['django-insecure-'],
  },
  {
    id: 'repodex/discord-webhook',
    source: String.raw`(?:https?://)?(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/(\d{15,25}/[\w-]{60,80})`,
    flags: 'i',
    keywords: ['discord'],
  },
  {
    id: 'repodex/github-token',
    source: String.raw`\b(gh[pousr]_[0-9a-zA-Z]{30,60})(?![0-9a-zA-Z_])`,
    flags: '',
    keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    entropy: 3.5,
  },
];

/** The bare rules of `KEYWORD_RULES`, as rule data. */
export function bareRules(): RuleData[] {
  const out: RuleData[] = [];
  for (const [id, decision] of Object.entries(KEYWORD_RULES)) {
    if (!('bare' in decision)) continue;
    out.push({ id, source: decision.bare, flags: decision.flags ?? '', keywords: decision.keywords, ...(decision.entropy !== undefined ? { entropy: decision.entropy } : {}) });
  }
  return out;
}
