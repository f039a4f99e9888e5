import data from './rules/gitleaks.json' with { type: 'json' };
import { shannonEntropy } from './entropy.js';
import { OWN_ANCHORS } from './own-rules.js';
import { type AllowlistData, type PatternData, REPODEX_RULES, type RuleData, TOKEN_KEYWORDS, bareRules } from './rules/shapes.js';

/**
 * gitleaks' default rule list, kept as data (`rules/gitleaks.json`, converted from its
 * `config/gitleaks.toml` by `scripts/vendor-gitleaks-rules.py`, MIT licence and source version
 * inside), run the way gitleaks runs it: a rule is tried only when one of its keywords occurs in
 * the lower-cased text; a match yields the rule's secret group (or the first non-empty group),
 * which must pass the rule's entropy threshold and not be allowed by the global or the rule's own
 * allowlists (regexes, stop words). repodex's additions in the same form (`rules/shapes.ts`) run
 * alongside: tokens whose shape needs no keyword found without it, and repodex's own rules.
 */

/** Where a rule found a credential: the rule id and the secret's span in the text. */
export interface RuleMatch {
  readonly rule: string;
  readonly start: number;
  readonly end: number;
}

export { shannonEntropy } from './entropy.js';

/** The vendored list's version, part of the secret rules version (a new list rescans every file). */
export const GITLEAKS_VERSION: string = data.version;

/**
 * Allowlists repodex adds to gitleaks' own, each for legitimate code a rule blocked on playwright
 * and repodex's own tree. `generic-api-key` (any `key`/`token`/`secret`/`password`
 * assignment of a high-entropy value) blocked a browser extension's manifest, whose `key` is a
 * public key, and a source file quoting the WebSocket handshake's sample nonce.
 */
const TIGHTENED: Readonly<Record<string, readonly AllowlistData[]>> = {
  'generic-api-key': [
    // An RSA public key (SubjectPublicKeyInfo, DER in base64): published, not a secret.
    { target: 'secret', condition: 'OR', regexes: [{ source: '^MII[A-Za-z0-9+/]{1,4}ANBgkqhkiG9w0BAQEFAAOC', flags: '' }], stopwords: [], paths: [] },
    { target: 'match', condition: 'OR', regexes: [{ source: 'sec-websocket-(?:key|accept)', flags: 'i' }], stopwords: [], paths: [] },
  ],
};

/**
 * gitleaks allowlist patterns that let through more than they mean to, as written (per rule: the
 * pattern, and what repodex runs instead). `vault-service-token`'s is meant for the legacy `s.`
 * form spelled in letters only (a property path, not a token); unanchored, it also matched inside
 * any `hvs.` token whose first 24 characters happen to be letters — one random token in seventy.
 */
const CORRECTED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'vault-service-token': { 's\\.[A-Za-z]{24}': '^s\\.[A-Za-z]{24}$' },
};

/** The rules as data (for tests: every rule compiles, and its own examples match): gitleaks' list, then repodex's additions. */
export const RULE_DATA: readonly RuleData[] = [
  ...(data.rules as RuleData[]).map((rule) => {
    const extra = TIGHTENED[rule.id];
    const corrected = CORRECTED[rule.id];
    const keywords = TOKEN_KEYWORDS[rule.id];
    const allowlists = corrected
      ? (rule.allowlists ?? []).map((allow) => ({ ...allow, regexes: allow.regexes.map((regex) => ({ ...regex, source: corrected[regex.source] ?? regex.source })) }))
      : rule.allowlists;
    return {
      ...rule,
      ...(extra || corrected ? { allowlists: [...(allowlists ?? []), ...(extra ?? [])] } : {}),
      ...(keywords ? { keywords: [...rule.keywords, ...keywords] } : {}),
    };
  }),
  ...bareRules(),
  ...REPODEX_RULES,
];

/** gitleaks' rules as vendored (for tests: every rule that needs a keyword is decided in `rules/shapes.ts`). */
export const GITLEAKS_RULE_DATA: readonly RuleData[] = data.rules as RuleData[];

const GLOBAL_ALLOW = {
  regexes: data.global.regexes.map((pattern) => compile(pattern)),
  stopwords: data.global.stopwords,
};

function compile(pattern: PatternData, extra = ''): RegExp {
  return new RegExp(pattern.source, pattern.flags + extra);
}

interface Allowlist {
  readonly target: string;
  readonly and: boolean;
  readonly regexes: readonly RegExp[];
  readonly stopwords: readonly string[];
  readonly paths: readonly RegExp[];
}

interface Rule {
  readonly id: string;
  /** Characters of identifier before the match that gitleaks' pattern would include (see IDENTIFIER_PREFIX). */
  readonly prefix: number;
  /** Global, with match indices: every match is judged, and the secret's span is known. */
  readonly regex: RegExp;
  readonly keywords: readonly string[];
  readonly entropy: number;
  readonly secretGroup: number;
  readonly path: RegExp | undefined;
  readonly allowlists: readonly Allowlist[];
}

/** The compiled rules and the keyword index that decides which of them a text needs. */
interface Compiled {
  readonly rules: readonly Rule[];
  /** Keywords of three characters or more by the hash of their first three (`trigram`). */
  readonly byTrigram: Map<number, string[]>;
  /** 1 where a keyword's first three characters hash. */
  readonly trigrams: Uint8Array;
  /** Keywords shorter than three characters (`ey`, `sk`, `s.`): in nearly every file, so their rules always run. */
  readonly always: ReadonlySet<string>;
}

let compiled: Compiled | undefined;

/** Compiled on first use: a search that reads no file never needs them. */
function rules(): Compiled {
  if (compiled) return compiled;
  const list: Rule[] = RULE_DATA.map((rule) => {
    const { source, prefix } = withoutIdentifierPrefix(rule.source);
    return {
      id: rule.id,
      prefix,
      regex: compile({ source, flags: rule.flags }, 'gd'),
      keywords: rule.keywords,
      entropy: rule.entropy ?? 0,
      secretGroup: rule.secretGroup ?? 0,
      path: rule.path ? compile(rule.path) : undefined,
      allowlists: (rule.allowlists ?? []).map((allow) => ({
        target: allow.target,
        and: allow.condition === 'AND',
        regexes: allow.regexes.map((pattern) => compile(pattern)),
        stopwords: allow.stopwords,
        paths: allow.paths.map((pattern) => compile(pattern)),
      })),
    };
  });
  const byTrigram = new Map<number, string[]>();
  const trigrams = new Uint8Array(TRIGRAM_SPACE);
  const always = new Set<string>();
  // repodex's own rules' anchors too: one pass over a text finds what every rule needs (`keywordsPresent`).
  for (const keyword of new Set([...list.flatMap((rule) => rule.keywords), ...OWN_ANCHORS])) {
    if (keyword.length < 3) {
      always.add(keyword);
      continue;
    }
    const hash = trigram(trigram(trigram(0, keyword.charCodeAt(0)), keyword.charCodeAt(1)), keyword.charCodeAt(2));
    trigrams[hash] = 1;
    const known = byTrigram.get(hash);
    if (known) known.push(keyword);
    else byTrigram.set(hash, [keyword]);
  }
  // The catch-all rule last: a finding names the most specific rule that matched.
  list.sort((a, b) => Number(a.id.startsWith('generic')) - Number(b.id.startsWith('generic')));
  compiled = { rules: list, byTrigram, trigrams, always };
  return compiled;
}

/** A character code with ASCII capitals folded to lower case. */
function fold(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/** Hashes of three characters (7 bits each): the size of the keyword table. */
const TRIGRAM_SPACE = 1 << 21;

/** The rolling hash of the last three characters, `code` the newest (ASCII case folded). */
function trigram(hash: number, code: number): number {
  return ((hash << 7) | (fold(code) & 0x7f)) & (TRIGRAM_SPACE - 1);
}

/** True when `keyword` (lower case) occurs at `at` in `text`, ignoring ASCII case. */
function occursAt(text: string, keyword: string, at: number): boolean {
  if (at + keyword.length > text.length) return false;
  for (let k = 0; k < keyword.length; k++) if (fold(text.charCodeAt(at + k)) !== keyword.charCodeAt(k)) return false;
  return true;
}

/**
 * The optional identifier gitleaks' semi-generic patterns start with (`[\w.-]{0,50}?`, so a
 * finding shows the variable's whole name). It never decides whether a rule matches, but a regex
 * engine tries it at every position of the text: left out, those rules run several times
 * faster. The few allowlists that judge the whole match get it back (`identifierBefore`).
 */
const IDENTIFIER_PREFIX = String.raw`[\w.-]{0,50}?`;

function withoutIdentifierPrefix(source: string): { source: string; prefix: number } {
  let out = source;
  let prefix = 0;
  if (out.startsWith(IDENTIFIER_PREFIX)) {
    out = out.slice(IDENTIFIER_PREFIX.length);
    prefix += 50;
  }
  if (out.startsWith(`(?:${IDENTIFIER_PREFIX}`)) {
    out = `(?:${out.slice(3 + IDENTIFIER_PREFIX.length)}`;
    prefix += 50;
  }
  return { source: out, prefix };
}

/** The start of the identifier characters (`[\w.-]`, at most `limit`) just before `at`. */
function identifierBefore(text: string, at: number, limit: number): number {
  let start = at;
  while (start > 0 && at - start < limit && /[\w.-]/.test(text[start - 1]!)) start--;
  return start;
}

/**
 * The rule keywords that occur in `text`, ignoring case: one pass over the text with a table of
 * keyword first trigrams, as gitleaks' Aho-Corasick prefilter does, so a file costs about the
 * same whatever the number of rules.
 */
function keywordsIn(text: string, index: Compiled): Set<string> {
  const found = new Set<string>(index.always);
  const { trigrams, byTrigram } = index;
  let hash = 0;
  for (let i = 0; i < text.length; i++) {
    hash = trigram(hash, text.charCodeAt(i));
    if (i < 2 || trigrams[hash] !== 1) continue;
    for (const keyword of byTrigram.get(hash)!) if (!found.has(keyword) && occursAt(text, keyword, i - 2)) found.add(keyword);
  }
  return found;
}

function containsStopword(secret: string, stopwords: readonly string[]): boolean {
  if (stopwords.length === 0) return false;
  const lower = secret.toLowerCase();
  return stopwords.some((word) => lower.includes(word));
}

function lineAround(text: string, start: number, end: number): string {
  const from = text.lastIndexOf('\n', start - 1) + 1;
  const to = text.indexOf('\n', end);
  return text.slice(from, to < 0 ? text.length : to);
}

function allowed(rule: Rule, secret: string, match: string, line: () => string, path: string | undefined): boolean {
  if (GLOBAL_ALLOW.regexes.some((regex) => regex.test(secret)) || containsStopword(secret, GLOBAL_ALLOW.stopwords)) return true;
  for (const allow of rule.allowlists) {
    const target = allow.target === 'match' ? match : allow.target === 'line' ? line() : secret;
    const byRegex = allow.regexes.length > 0 && allow.regexes.some((regex) => regex.test(target));
    const byStopword = containsStopword(secret, allow.stopwords);
    const byPath = path !== undefined && allow.paths.some((regex) => regex.test(path));
    if (allow.and) {
      const checks = [...(allow.regexes.length > 0 ? [byRegex] : []), ...(allow.stopwords.length > 0 ? [byStopword] : []), ...(allow.paths.length > 0 ? [byPath] : [])];
      if (checks.length > 0 && checks.every(Boolean)) return true;
    } else if (byRegex || byStopword || byPath) {
      return true;
    }
  }
  return false;
}

/**
 * What the rules' verdict on a text can depend on in its path: which of the path conditions
 * (rules for some file names only, allowlists by path) the path meets, as a string of 0s and 1s.
 * Two files whose paths give the same class get the same verdict for the same text.
 */
export function pathClass(path: string): string {
  let out = '';
  for (const rule of rules().rules) {
    if (rule.path) out += rule.path.test(path) ? '1' : '0';
    for (const allow of rule.allowlists) for (const regex of allow.paths) out += regex.test(path) ? '1' : '0';
  }
  return out;
}

/**
 * The rule keywords, and the anchors of repodex's own rules (`own-rules.ts`), that occur in
 * `text`, lower-cased: what decides which rules a text needs.
 */
export function keywordsPresent(text: string): ReadonlySet<string> {
  return keywordsIn(text, rules());
}

/**
 * The credentials gitleaks' rules find in `text` (a file at `path`, or a string with no path:
 * then rules that apply to some file names only are skipped). Stops at the first one when `first`.
 * `present`: the text's `keywordsPresent`, when the caller has it.
 */
export function matchRules(text: string, path: string | undefined, first: boolean, present: ReadonlySet<string> = keywordsPresent(text)): RuleMatch[] {
  if (text.length < 2) return [];
  const index = rules();
  const out: RuleMatch[] = [];
  for (const rule of index.rules) {
    if (!rule.keywords.some((keyword) => present.has(keyword))) continue;
    if (rule.path && (path === undefined || !rule.path.test(path))) continue;
    rule.regex.lastIndex = 0;
    for (let m = rule.regex.exec(text); m !== null; m = rule.regex.exec(text)) {
      if (m[0].length === 0) rule.regex.lastIndex++;
      let group = 0;
      if (m.length >= 2) {
        if (rule.secretGroup > 0) group = rule.secretGroup;
        else for (let g = 1; g < m.length; g++) if (m[g]) { group = g; break; }
      }
      const secret = m[group] ?? m[0];
      const span = m.indices?.[group] ?? m.indices?.[0];
      if (!span || secret.length === 0) continue;
      if (rule.entropy > 0 && shannonEntropy(secret) <= rule.entropy) continue;
      const match = rule.prefix > 0 ? text.slice(identifierBefore(text, m.index, rule.prefix), m.index + m[0].length) : m[0];
      if (allowed(rule, secret, match, () => lineAround(text, m.index, m.index + m[0].length), path)) continue;
      out.push({ rule: rule.id, start: span[0], end: span[1] });
      if (first) return out;
    }
  }
  return out;
}
