import { createHash } from 'node:crypto';
import { RecentMap } from '../core/recent-map.js';
import presetPackage from '@secretlint/secretlint-rule-preset-recommend/package.json' with { type: 'json' };
import { findKeyMaterial } from './key-material.js';
import { type ByteRun, type DerivedView, type Run, base64Runs, byteRuns, derive, originOf } from './literal-views.js';
import { ownMatches, urlPasswords } from './own-rules.js';
import { GITLEAKS_VERSION, keywordsPresent, matchRules, pathClass } from './rule-set.js';

/**
 * Detecting credentials by content (SPEC §8): a file that holds one is a secret whatever its name,
 * and is blocked whole (never indexed, never served, never partially redacted). Strings that are
 * not files (arguments written to the audit log, commit subjects) have each credential replaced
 * instead (`redactSecrets`).
 *
 * Four detectors look at a text: repodex's own shapes (`own-rules.ts`: private keys by their
 * markers and in PuTTY, JWK, .NET XML and `openssl -text` forms, passwords in URLs of any scheme,
 * Discord bot tokens, …), private keys by their content whatever their markers
 * (`key-material.ts`: DER, OpenSSH, OpenPGP), gitleaks' rule list kept as data with repodex's
 * additions in the same form (`rule-set.ts`, `rules/shapes.ts`: GitLab, Hugging Face, Vault,
 * Azure, JWTs and some two hundred more; tokens whose shape needs no keyword found without it;
 * secrets assigned with any characters), and secretlint's recommended preset (AWS, GCP, GitHub,
 * npm, Slack, OpenAI, Anthropic, SendGrid, Shopify, Linear, 1Password, basic auth and database
 * URLs with passwords). The first three also read the text's derived views (`literal-views.ts`):
 * string literals joined across `+`, commas, line breaks and constants, base64 and hex decoded,
 * and byte literals, so a key written one quoted line per PEM line, a marker built from pieces,
 * a token split over a constant and a template, or a key in hex or a Kubernetes Secret is found
 * as well. The same rules judge file and folder names (`credentialInName`).
 *
 * A finding names the rule and the line, never the secret: secretlint's own messages quote it.
 */

/** One credential found in a text: which rule matched, and where (never the matched text). */
export interface SecretFinding {
  /** A rule id, e.g. `@secretlint/secretlint-rule-aws`, `gitlab-pat` or `repodex/private-key`. */
  readonly rule: string;
  /** 1-based line of the first match. */
  readonly line: number;
}

/**
 * The version of the detection rules. Files the index holds were scanned with these rules: an
 * index or parse cache made with other rules is rebuilt (it is part of the parse-cache key, and a
 * change bumps FEATURE_VERSION), and what an older version left on disk is purged (`purge.ts`).
 * repodex's own part, log:
 *   1 — private keys in string literals, Stripe and Google keys (with secretlint's recommended
 *       preset).
 *   2 — gitleaks' rule list; literals joined and base64 decoded before detection; tokens in URL
 *       queries, Azure storage keys.
 *   3 — gitleaks' Vault allowlist for the legacy `s.` form anchored.
 *   4 — credentials by shape: private keys by content in any encoding (`key-material.ts`) and
 *       text form, passwords in URLs of any scheme, tokens found without their keyword where the
 *       shape is unambiguous (`rules/shapes.ts`), secrets assigned with any characters, Discord
 *       webhooks and bot tokens, GitHub tokens of any length, constants in joined literals, byte
 *       strings decoded; names shaped like a credential (`credentialInName`).
 */
export const SECRET_RULES_VERSION = `secretlint-preset-recommend@${presetPackage.version}+gitleaks@${GITLEAKS_VERSION}+repodex-4`;

/** A credential's span in a text, and the rule that found it. */
interface Span {
  readonly rule: string;
  readonly start: number;
  readonly end: number;
}

/**
 * Own and gitleaks rules, and key material, over a text, in its own coordinates. `runs` and
 * `bytes`: the text's base64 runs and byte strings, when the caller has them (for the text
 * itself; a view's are found here).
 */
function directMatches(text: string, path: string | undefined, first: boolean, strings: boolean, runs?: readonly Run[], bytes: readonly ByteRun[] = []): Span[] {
  const present = keywordsPresent(text);
  const out = ownMatches(text, first, strings, present);
  if (first && out.length > 0) return out;
  const textRuns = runs ?? base64Runs(text);
  const viewBytes = runs === undefined ? byteRuns(text, textRuns) : bytes;
  for (const span of findKeyMaterial(text, textRuns, viewBytes, first)) out.push({ rule: KEY_MATERIAL, ...span });
  if (first && out.length > 0) return out;
  return [...out, ...matchRules(text, path, first, present)];
}

/** The rule id of a private key found by its content (DER, OpenSSH, OpenPGP), as the marker rule is named. */
const KEY_MATERIAL = 'repodex/private-key';

function viewMatches(view: DerivedView, path: string | undefined, first: boolean, strings: boolean): Span[] {
  return directMatches(view.text, path, first, strings, view.runs).map((span) => ({ rule: span.rule, ...originOf(view, span.start) }));
}

/**
 * Every credential the synchronous rules (own and gitleaks, and key material, over the text and
 * its derived views) find in `text`, as spans of the text; only the first when `first`.
 * `strings`: the text is an argument or a commit subject, not a file (the rules secretlint
 * covers in files apply too).
 */
function synchronousMatches(text: string, path: string | undefined, first: boolean, strings: boolean): Span[] {
  const runs = base64Runs(text);
  const { views, bytes } = derive(text, runs);
  const direct = directMatches(text, path, first, strings, runs, bytes);
  if (first && direct.length > 0) return direct;
  const out = [...direct];
  for (const view of views) {
    out.push(...viewMatches(view, path, first, strings));
    if (first && out.length > 0) return out;
  }
  return out;
}

type Lint = (text: string, path: string) => Promise<{ ruleId: string; offset: number }[]>;

/**
 * secretlint's rules for passwords in URLs (HTTP basic auth, database connection strings): what
 * they find is judged again by repodex's own rule for URLs of every scheme (`urlPasswords`), so
 * `https://user:pass@example.com` in documentation stays visible under every scheme alike.
 */
const URL_RULES = new Set(['@secretlint/secretlint-rule-basicauth', '@secretlint/secretlint-rule-database-connection-string']);
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
      return result.messages.filter((message) => !URL_RULES.has(message.ruleId) || urlPasswords(text.slice(message.range[0], message.range[1])).length > 0).map((message) => ({ ruleId: message.ruleId, offset: message.range[0] }));
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
  const [span] = synchronousMatches(text, path, true, false);
  if (span) return { rule: span.rule, line: lineAt(text, span.start) };
  const lint = await loadSecretlint();
  const found = await lint(text, path);
  if (found.length === 0) return undefined;
  const first = found.reduce((a, b) => (b.offset < a.offset ? b : a));
  return { rule: first.ruleId, line: lineAt(text, first.offset) };
}

/** Names judged by `credentialInName`, kept: a walk asks for every file and folder, and names repeat. */
const nameVerdicts = new RecentMap<string, string | null>(16_384);
/** Every token the rules know has a run of 16 letters and digits or more (a key id, a random tail). */
const LONG_RUN = /[A-Za-z0-9]{16}/;
/** An extension after the last dot: judged without it too (`npm_….json`: a token ends at a quote, a blank or the end). */
const EXTENSION = /\.[A-Za-z0-9]{1,8}$/;

/**
 * The rule that finds a credential in a file or folder name (`tokens/ghp_….ts`), or undefined:
 * such a name is a credential written to every listing, search hit and history that names the
 * file, so the file is left out like a secret. The token rules (own and gitleaks') judge the name
 * as it is and without its extension.
 */
export function credentialInName(name: string): string | undefined {
  if (!LONG_RUN.test(name)) return undefined;
  const kept = nameVerdicts.get(name);
  if (kept !== undefined) return kept ?? undefined;
  let found: string | undefined;
  for (const form of new Set([name, name.replace(EXTENSION, '')])) {
    const present = keywordsPresent(form);
    const rule = ownMatches(form, true, false, present)[0]?.rule ?? matchRules(form, undefined, true, present)[0]?.rule;
    found = rule && ruleName(rule);
    if (found) break;
  }
  nameVerdicts.set(name, found ?? null);
  return found;
}

/** The first name in a repository path shaped like a credential, and its rule (`credentialInName`). */
export function credentialInPath(path: string): { name: string; rule: string } | undefined {
  for (const name of path.split('/')) {
    const rule = credentialInName(name);
    if (rule) return { name, rule };
  }
  return undefined;
}

/** A path as it may be shown: each name shaped like a credential with the credential replaced (`tokens/[REDACTED:github-pat].ts`). */
export function shownPath(path: string): string {
  return path
    .split('/')
    .map((name) => {
      const rule = credentialInName(name);
      if (!rule) return name;
      const redacted = redactSecrets(name);
      if (redacted !== name) return redacted;
      const extension = EXTENSION.exec(name)?.[0] ?? '';
      const stem = redactSecrets(name.slice(0, name.length - extension.length));
      return stem.includes('[REDACTED:') ? `${stem}${extension}` : `[REDACTED:${rule}]${extension}`;
    })
    .join('/');
}

/** Verdicts `findServedSecret` keeps: a served file's content and path, hashed, to what the rules found. */
const verdicts = new RecentMap<string, SecretFinding | null>(4096);

/**
 * `findSecret` for a file about to be served: the same answer, kept by the SHA-256 of the text and
 * the path, so a file read again unchanged (an agent fetching chunks of one file in turn, a server
 * answering many clients) is hashed instead of scanned by every rule again. The rules cannot
 * change while a process runs, so a kept verdict is the one a scan would give. `sha256`: the
 * text's hash in hex, when the caller has it already.
 */
export async function findServedSecret(text: string, path: string, sha256 = createHash('sha256').update(text).digest('hex')): Promise<SecretFinding | undefined> {
  const key = `${path}\0${sha256}`;
  const kept = verdicts.get(key);
  if (kept !== undefined) return kept ?? undefined;
  const found = await findSecret(text, path);
  verdicts.set(key, found ?? null);
  return found;
}

/** A rule id as people read it: `github-pat`, `private-key`, `aws`. */
export function ruleName(rule: string): string {
  return rule.replace(/^@secretlint\/secretlint-rule-/, '').replace(/^repodex\//, '');
}

/** What `redactSecrets` puts in place of a credential, as a pattern (global): `[REDACTED:rule]`. */
export const REDACTION_MARKER = /\[REDACTED:[^\]\s]+\]/g;

/**
 * `text` with every credential replaced by `[REDACTED:rule]`, for strings that are kept but are not
 * files: arguments written to the audit log, commit subjects stored in the index. The same rules
 * as `findSecret` (synchronously: secretlint's shapes that gitleaks' list lacks are among
 * repodex's own); a private key is cut from its marker to its end marker (or the end of the text),
 * and a credential found in joined literals or decoded base64 takes its whole source run with it.
 */
export function redactSecrets(text: string): string {
  if (text.length > CLEAN_KEPT_CHARS) return redact(text);
  if (cleanStrings.get(text)) return text;
  const out = redact(text);
  if (out === text) cleanStrings.set(text, true);
  return out;
}

/**
 * Short strings the rules found nothing in, kept: a server redacts every request's argument names
 * and values for its audit log, and most of them (`repo_id`, `query`, the repository ids) are the
 * same few strings again and again. The rules cannot change while a process runs. A string with a
 * credential in it is never kept, so this holds nothing the audit log may not.
 */
const cleanStrings = new RecentMap<string, true>(4096);
const CLEAN_KEPT_CHARS = 256;

function redact(text: string): string {
  const spans = synchronousMatches(text, undefined, false, true).map((span) =>
    isKeyRule(span.rule) ? { rule: 'repodex/private-key', ...keyBlock(text, span.start, span.end) } : { ...span, end: tokenEnd(text, span.end) },
  );
  spans.push(...namedCredentials(text));
  if (spans.length === 0) return text;
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.end <= at) continue;
    out += `${text.slice(at, Math.max(at, span.start))}[REDACTED:${ruleName(span.rule)}]`;
    at = span.end;
  }
  return out + text.slice(at);
}

/** What stands between the names of a path or the words of a line. */
const NAME_PIECE = /[^\s/\\'"`,;:=()<>[\]{}|]{16,}/g;

/**
 * Credentials a name holds that the rules find only in the name without its extension
 * (`keys/npm_….py` in a request to open it, kept in the audit log): the name's stem.
 */
function namedCredentials(text: string): Span[] {
  const out: Span[] = [];
  if (!LONG_RUN.test(text)) return out;
  NAME_PIECE.lastIndex = 0;
  for (let m = NAME_PIECE.exec(text); m !== null; m = NAME_PIECE.exec(text)) {
    const rule = credentialInName(m[0]);
    if (rule) out.push({ rule, start: m.index, end: m.index + m[0].replace(EXTENSION, '').length });
  }
  return out;
}

/** True for the rules that find private keys (by a marker, by content, PuTTY's): what is cut is the whole key block. */
function isKeyRule(rule: string): boolean {
  return rule.includes('private-key');
}

/**
 * Where a token matched up to `from` really ends: a rule may match a fixed length of a longer run
 * (`ghp_` and 36 characters), and the rest of the run must not be left behind.
 */
function tokenEnd(text: string, from: number): number {
  let end = from;
  while (end < text.length && /[A-Za-z0-9_\-+/=]/.test(text[end]!)) end++;
  return end;
}

/** How far from the part of a key a rule found its markers may stand (a 16384-bit RSA key's PEM is under 13 KB). */
const KEY_REACH = 16_384;
const BEGIN_MARKER = '-----BEGIN';
const END_MARKER = /-----END[^\n\\]{0,100}?-----/g;
/** What separates the lines of a key: a line end, or an escaped one inside a string. */
const KEY_LINE_BREAK = /(\r?\n|(?:\\r)?\\n)/;
/** Quotes, joiners and blanks around a key line written as a literal. */
const LINE_DRESSING = /^[\s'"`,+;()]+|[\s'"`,+;()]+$/g;

/** A line of a key block without its dressing: base64 (`minimum` characters or more), or a `Name: value` header (`Proc-Type:`, PuTTY's `Encryption:`). */
function isKeyLine(line: string, minimum: number): boolean {
  const bare = line.replace(LINE_DRESSING, '');
  return bare.length >= minimum && (/^[A-Za-z0-9+/=]+$/.test(bare) || /^[A-Z][A-Za-z0-9-]{1,30}: ?\S/.test(bare));
}

/** True when `region` holds only what stands inside a key block: key lines, blank lines, dressing. */
function isKeyRegion(region: string): boolean {
  return region.split(KEY_LINE_BREAK).every((line, i) => i % 2 === 1 || line.replace(LINE_DRESSING, '') === '' || isKeyLine(line, 1));
}

/**
 * The whole key block around the part of a private key a rule found (`[start, end)`): from its
 * begin marker, when one stands above with only key lines between, else from the first of the key
 * lines above; to the end of its end marker, when one follows the same way, else to the last key
 * line below. Text before the marker and after the end marker is kept (a task pasted around a key).
 */
function keyBlock(text: string, start: number, end: number): { start: number; end: number } {
  return { start: keyBlockStart(text, start), end: keyBlockEnd(text, start, end) };
}

function keyBlockStart(text: string, start: number): number {
  const begin = text.lastIndexOf(BEGIN_MARKER, start);
  if (begin >= 0 && start - begin <= KEY_REACH) {
    const close = text.indexOf('-----', begin + BEGIN_MARKER.length);
    if (close < 0 || close + 5 >= start || isKeyRegion(text.slice(close + 5, start))) return begin;
  }
  const head = text.slice(Math.max(0, start - KEY_REACH), start).split(KEY_LINE_BREAK);
  // Only whole lines are taken: the found part must begin its line.
  if (head[head.length - 1]!.replace(LINE_DRESSING, '') !== '') return start;
  let from = start - head[head.length - 1]!.length;
  for (let i = head.length - 3; i >= 0 && isKeyLine(head[i]!, 16); i -= 2) from -= head[i]!.length + head[i + 1]!.length;
  return from;
}

function keyBlockEnd(text: string, start: number, end: number): number {
  END_MARKER.lastIndex = start;
  const marker = END_MARKER.exec(text);
  if (marker && marker.index - end <= KEY_REACH && (marker.index < end || isKeyRegion(text.slice(end, marker.index)))) return Math.max(end, marker.index + marker[0].length);
  const tail = text.slice(end, end + KEY_REACH).split(KEY_LINE_BREAK);
  // Only whole lines are taken: the found part must end its line.
  if (tail[0]!.replace(LINE_DRESSING, '') !== '') return end;
  let to = end;
  let at = end + tail[0]!.length;
  for (let i = 1; i + 1 < tail.length && isKeyLine(tail[i + 1]!, 4); i += 2) {
    at += tail[i]!.length + tail[i + 1]!.length;
    to = at;
  }
  return to;
}

/**
 * What the credential verdict on a file's text can depend on in its path: its extension (secretlint
 * reads it) and the path conditions of gitleaks' rules. Part of the parse-cache key, since a cache
 * hit means "scanned clean": content clean as `notes.txt` may not be as `main.tf`.
 */
export function secretPathClass(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const dot = name.lastIndexOf('.');
  return `${dot > 0 ? name.slice(dot) : ''}|${pathClass(path)}`;
}

/** A one-line reason for refusing a file that holds a credential (names the rule and line, never the secret). */
export function describeSecret(finding: SecretFinding): string {
  return `contains a credential (${ruleName(finding.rule)}, line ${finding.line})`;
}
