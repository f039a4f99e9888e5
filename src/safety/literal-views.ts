/**
 * Texts derived from a file's text for the credential detectors to read too, because credentials
 * in real code are often not written in one piece:
 * - string literals joined: a private key written one quoted literal per PEM line (`"…\n" +` in
 *   JS, Java, Go, C#; implicit concatenation in Python and C; `concat!(…)` in Rust; JSON arrays of
 *   lines as notebooks keep them), or a marker split in two (`"-----BEGIN RSA " + "PRIVATE KEY-----"`).
 *   Literals ('…', "…", and `…` templates and raw strings) separated only by whitespace,
 *   newlines, `+`, `,`, `.`, `\` continuations or comments are one value, with their escapes decoded (a lone literal with escapes too: a
 *   notebook keeps its code as JSON strings, quotes escaped). Constants count: a literal assigned
 *   to a name is that name's value where a later literal interpolates it or is joined to it. This
 *   is a scan for quotes, not a parse: it needs no grammar, so it covers every language the index
 *   reads (and files it does not).
 * - base64 decoded: a key or token encoded once (a Kubernetes Secret's `data:`), when the decoded
 *   bytes are text.
 * - bytes written in hex, as byte literals or as `\x` escapes, decoded when they are text (PEM
 *   text in hex); the others are handed to the key detector as bytes (a DER key in hex).
 */

/** A derived text, and for each piece of it the range of the original text it came from. */
export interface DerivedView {
  readonly text: string;
  /** Sorted by `at`: the view text from `at` on came from `[start, end)` of the original. */
  readonly pieces: readonly { readonly at: number; readonly start: number; readonly end: number }[];
  /** The view's base64 runs, when they were found already; its byte strings are then judged with the original's (`Derived.bytes`). */
  readonly runs?: readonly Run[];
}

/** The original range behind a view offset. */
export function originOf(view: DerivedView, offset: number): { start: number; end: number } {
  let lo = 0;
  let hi = view.pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (view.pieces[mid]!.at <= offset) lo = mid;
    else hi = mid - 1;
  }
  const piece = view.pieces[lo]!;
  return { start: piece.start, end: piece.end };
}

// One quoted literal on a line ('…' or "…"), escapes included; `\` before a newline continues it;
// or a template or raw string (`…`: JavaScript, TypeScript, Go), which may span lines, with any
// `${…}` in it left out of its value.
// Written as "unrolled loops" (runs of plain characters between escapes): twice as fast in V8.
const LITERAL = /"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"|'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'|`[^`\\$]*(?:(?:\\[\s\S]|\$\{[^{}`]*\}|\$(?!\{))[^`\\$]*)*`/g;
const INTERPOLATION = /\$\{[^{}`]*\}/g;
// What may stand between two literals of one value: blanks, `+ , .`, line continuations, line
// comments (`//`, `#`), block comments, and a string prefix before the next quote (Python
// r/b/f/u, C L/u8). (A line comment runs to its line end and a block comment to its first `*/`,
// so a comment bar `//////` can be read only one way: no backtracking.)
const JOINER = /^(?:[\s+,.\\]|\/\/[^\n]*\n|#[^\n]*\n|\/\*(?:[^*]|\*(?!\/))*\*\/)*(?:[rRbBuUfF]{1,2}|L|u8)?$/;
/** Longest gap between two joined literals (indentation and a comment fit; two statements apart do not). */
const MAX_GAP = 160;
/** A joined value shorter than this cannot hold a credential the detectors look for. */
const MIN_JOINED = 16;
const ESCAPE = /\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r?\n|[\s\S])/g;
const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', '0': '\0' };

function decodeEscapes(body: string): string {
  if (!body.includes('\\')) return body;
  return body.replace(ESCAPE, (_, escape: string) => {
    if (escape.startsWith('u{')) return String.fromCodePoint(Math.min(0x10ffff, parseInt(escape.slice(2, -1), 16)));
    if (escape.length > 1 && (escape[0] === 'u' || escape[0] === 'x')) return String.fromCharCode(parseInt(escape.slice(1), 16));
    if (escape === '\n' || escape === '\r\n') return '';
    return SIMPLE_ESCAPES[escape] ?? escape;
  });
}

/** Constants remembered per text at most, and the longest value kept for one. */
const MAX_CONSTANTS = 4096;
const MAX_CONSTANT_CHARS = 4096;
const IDENTIFIER = /\$?[A-Za-z_]\w*/g;
/** An interpolation in a template or an interpolated string: `${a}` (JS, TS, Kotlin), `#{a}` (Ruby), `{$a}` (PHP), `{a}` (Python f-strings, C# `$"…"`), `$a` (PHP). */
const NAMED_INTERPOLATION = /\$\{\s*(\$?[A-Za-z_]\w*)\s*\}|#\{\s*([A-Za-z_]\w*)\s*\}|\{\s*(\$?[A-Za-z_]\w*)\s*\}|(\$[A-Za-z_]\w*)/g;

/** Character classes by code, for the backward scans before every literal (a table lookup, not a regular expression per character). */
const classTable = (chars: string): Uint8Array => {
  const table = new Uint8Array(128);
  for (const char of chars) table[char.charCodeAt(0)] = 1;
  return table;
};
const WORD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$';
const IDENTIFIER_CODES = classTable(WORD);
const STRING_PREFIX_CODES = classTable('rRbBuUfFL@$');
const BEFORE_VALUE_CODES = classTable(' \t\n\r(');
const COMPOUND_CODES = classTable('=!<>+-*/%&|^?');
/** What a declaration's left side may hold: names, types (`&str`, `List<String>`, `char *`), annotations. */
const LEFT_SIDE_CODES = classTable(`${WORD}<>[]&'*.: \t`);
const has = (table: Uint8Array, text: string, at: number): boolean => {
  const code = text.charCodeAt(at);
  return code < 128 && table[code] === 1;
};

/**
 * The name a literal starting at `at` is assigned to, read backwards: `name = "…"`, `name := "…"`,
 * `const name: string = "…"`, `static final String NAME = "…"`, `$name = '…'`, `NAME = (` before
 * Python's parenthesised concatenation, `#define NAME "…"`. A manual scan, not a regular expression:
 * it runs before every literal of a file.
 */
function assignedName(text: string, at: number): string | undefined {
  let i = at - 1;
  for (let prefix = 0; prefix < 2 && i >= 0 && has(STRING_PREFIX_CODES, text, i); prefix++) i--;
  while (i >= 0 && has(BEFORE_VALUE_CODES, text, i)) i--;
  if (i < 0) return undefined;
  if (text[i] !== '=') {
    // `#define NAME "…"`
    if (!has(IDENTIFIER_CODES, text, i)) return undefined;
    const end = i + 1;
    while (i >= 0 && has(IDENTIFIER_CODES, text, i)) i--;
    const named = i + 1;
    while (i >= 0 && (text[i] === ' ' || text[i] === '\t')) i--;
    return i >= 5 && text.startsWith('define', i - 5) ? text.slice(named, end) : undefined;
  }
  i--;
  if (i >= 0 && text[i] === ':') i--; // Go's `:=`
  else if (i >= 0 && has(COMPOUND_CODES, text, i)) return undefined; // a comparison or a compound assignment
  let end = i + 1;
  let start = end;
  while (start > 0 && end - start < 80 && has(LEFT_SIDE_CODES, text, start - 1)) start--;
  // A type annotation (`a: string`, `KEY: &str`): the name stands before the colon (not `::`).
  for (let colon = end - 1; colon > start; colon--) {
    if (text[colon] === ':' && text[colon - 1] !== ':' && text[colon + 1] !== ':') {
      end = colon;
      break;
    }
  }
  while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
  let name = end;
  while (name > start && has(IDENTIFIER_CODES, text, name - 1)) name--;
  return name < end && !/[0-9]/.test(text[name]!) ? text.slice(name, end) : undefined;
}

/** What a gap that may hold constants between literals is made of: names, blanks and joiners (most gaps hold a `(`, `=` or `;`). */
const CONSTANT_GAP = /^[\s+,.\\$\w]*$/;

/** The values of known constants named in `gap` (between two literals), or undefined when anything else stands there. */
function constantsIn(gap: string, constants: ReadonlyMap<string, string>): string | undefined {
  let values = '';
  let unknown = false;
  const rest = gap.replace(IDENTIFIER, (name) => {
    const value = constants.get(name);
    if (value === undefined) unknown = true;
    else values += value;
    return ' ';
  });
  return unknown || values === '' || !JOINER.test(rest) ? undefined : values;
}

/** Known constants joined just before `at` (`name + "…"`, `$name . '…'`, a C macro before a literal), first to last. */
function leadingConstants(text: string, at: number, constants: ReadonlyMap<string, string>): { value: string; start: number } | undefined {
  let value = '';
  let start = at;
  for (let round = 0; round < 4; round++) {
    let i = start - 1;
    while (i >= 0 && (text[i] === ' ' || text[i] === '\t')) i--;
    const operator = i >= 0 && (text[i] === '+' || text[i] === '.');
    if (operator) i--;
    while (i >= 0 && (text[i] === ' ' || text[i] === '\t')) i--;
    const end = i + 1;
    while (i >= 0 && has(IDENTIFIER_CODES, text, i)) i--;
    const known = constants.get(text.slice(i + 1, end));
    if (known === undefined || (!operator && round > 0)) break;
    value = known + value;
    start = i + 1;
  }
  return value === '' ? undefined : { value, start };
}

const TRAILING_CONSTANT = /\s*[+.]\s*(\$?[A-Za-z_]\w*)/y;

/**
 * Runs of string literals that form one value, joined and decoded: runs of two or more, and single
 * literals whose value differs from their text (a token written `\"hf_…\"` inside a JSON string,
 * or split by an interpolation in a template). A literal assigned to a name is remembered as a
 * constant, and a later value that names it — in an interpolation (`${a}`, `#{a}`, `{a}`, `$a`) or
 * joined to a literal (`a + "…"`, `$a . '…'`, a C macro beside a literal) — holds its value, so
 * a token split over a constant and a template is read whole.
 */
export function joinedLiterals(text: string): DerivedView | undefined {
  let out = '';
  const pieces: { at: number; start: number; end: number }[] = [];
  const constants = new Map<string, string>();
  let value = '';
  let count = 0;
  let escaped = false;
  let groupStart = 0;
  let lastEnd = -1;
  let name: string | undefined;
  const flush = (): void => {
    if (count > 0 && constants.size > 0) {
      TRAILING_CONSTANT.lastIndex = lastEnd;
      const trailing = TRAILING_CONSTANT.exec(text);
      const known = trailing ? constants.get(trailing[1]!) : undefined;
      if (known !== undefined) {
        value += known;
        escaped = true;
      }
    }
    if ((count >= 2 || escaped) && value.length >= MIN_JOINED) {
      pieces.push({ at: out.length, start: groupStart, end: lastEnd });
      out += `${value}\n`;
    }
    if (name !== undefined && count > 0 && constants.size < MAX_CONSTANTS && value.length <= MAX_CONSTANT_CHARS) constants.set(name, value);
    value = '';
    count = 0;
    escaped = false;
    name = undefined;
  };
  LITERAL.lastIndex = 0;
  for (let m = LITERAL.exec(text); m !== null; m = LITERAL.exec(text)) {
    const start = m.index;
    const near = count > 0 && start - lastEnd <= MAX_GAP;
    const gap = near ? text.slice(lastEnd, start) : '';
    let joined = near && JOINER.test(gap);
    if (!joined && near && constants.size > 0 && CONSTANT_GAP.test(gap) && /[A-Za-z_$]/.test(gap)) {
      const between = constantsIn(gap, constants);
      if (between !== undefined) {
        value += between;
        escaped = true;
        joined = true;
      }
    }
    if (!joined) {
      flush();
      groupStart = start;
      name = assignedName(text, start);
      const leading = constants.size > 0 ? leadingConstants(text, start, constants) : undefined;
      if (leading) {
        value = leading.value;
        escaped = true;
      }
    }
    const raw = m[0].slice(1, -1);
    let body = raw;
    if (m[0].startsWith('`') && raw.includes('${')) body = raw.replace(INTERPOLATION, (found) => constants.get(found.slice(2, -1).trim()) ?? '');
    else if (constants.size > 0 && (raw.includes('{') || raw.includes('$'))) body = raw.replace(NAMED_INTERPOLATION, (found, ...names: (string | undefined)[]) => constants.get(names.slice(0, 4).find((named) => named !== undefined)!) ?? found);
    // A literal whose value differs from its text (escapes, interpolations) is read alone too.
    if (body.includes('\\') || body !== raw) escaped = true;
    value += decodeEscapes(body);
    count++;
    lastEnd = start + m[0].length;
  }
  flush();
  return pieces.length === 0 ? undefined : { text: out, pieces };
}

/** Shortest base64 run decoded: 24 bytes, room for a short token. */
const MIN_RUN = 32;
/** 1 for the characters of base64's standard alphabet. (The URL-safe one is left out: with `_` and
 * `-` every long snake- or kebab-case name is a run, and the tokens written that way, JWTs, are
 * found as they are.) */
const BASE64_CHAR = new Uint8Array(128);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') BASE64_CHAR[char.charCodeAt(0)] = 1;
// Base64 of ASCII text: every fourth character encodes a byte's top six bits, below 0x80, so it
// is one of A–Z, a–f. Checked on the first four groups before anything is decoded.
const ASCII_LEAD = /^[A-Za-f]...[A-Za-f]...[A-Za-f]...[A-Za-f]/;

/** A run of base64 characters: `[start, end)` of a text. */
export interface Run {
  readonly start: number;
  readonly end: number;
}

/**
 * The base64 runs of a text (`MIN_RUN` characters or more, `=` padding included), found with a
 * table lookup per character: a regular expression for runs costs twice as much, restarting
 * inside every shorter word. Hex runs are base64 runs too (`byteRuns` reads them).
 */
export function base64Runs(text: string): Run[] {
  const runs: Run[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 0;
    if (code < 128 && BASE64_CHAR[code] === 1) continue;
    if (i - start >= MIN_RUN) {
      let end = i;
      while (end < text.length && end - i < 2 && text.charCodeAt(end) === 61) end++; // '=' padding
      runs.push({ start, end });
    }
    start = i + 1;
  }
  return runs;
}

/** Bytes decoded per text at most: a data URI of an image is not worth decoding whole. */
const MAX_DECODED = 1 << 20;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** True when decoded bytes are text: no control bytes but tab and line ends, and valid UTF-8. */
function isText(bytes: Uint8Array): boolean {
  if (bytes.length < 16) return false;
  for (const byte of bytes) if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) || byte === 0x7f) return false;
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false; // not UTF-8: binary data that happened to be base64, nothing to read
  }
}

/** Base64 runs of `text` whose decoded bytes are text, decoded. */
export function decodedBase64(text: string, runs: readonly Run[] = base64Runs(text)): DerivedView | undefined {
  let out = '';
  const pieces: { at: number; start: number; end: number }[] = [];
  let budget = MAX_DECODED;
  for (const { start, end } of runs) {
    if (budget <= 0) break;
    const run = text.slice(start, end);
    if (!ASCII_LEAD.test(run)) continue;
    const bytes = Buffer.from(run.slice(0, budget * 2), 'base64');
    budget -= bytes.length;
    if (!isText(bytes)) continue;
    pieces.push({ at: out.length, start, end });
    out += `${bytes.toString('utf8')}\n`;
  }
  return pieces.length === 0 ? undefined : { text: out, pieces };
}

/** Bytes written in a text some other way than base64, and where: `[start, end)`. */
export interface ByteRun {
  readonly start: number;
  readonly end: number;
  readonly bytes: Uint8Array;
}

/** Shortest hex run decoded (32 bytes), and the shortest list of byte literals or `\x` escapes (16 bytes). */
const MIN_HEX = 64;
const MIN_BYTES = 16;
const HEX_ONLY = /^(?:0[xX])?[0-9a-fA-F]+$/;
/** One byte written as a literal in an array: `0x30`, `48`, `-126` (Java's signed bytes), with a cast or a suffix (`(byte) 0x82`, `0x30u8`). */
const BYTE_ITEM = String.raw`(?:\(\s*(?:byte|char|uint8_t|u8|sbyte)\s*\)\s*)?(?:0[xX][0-9a-fA-F]{1,2}|-?\d{1,3})(?:_?u8|[uUlL])?`;
const BYTE_LIST = new RegExp(String.raw`${BYTE_ITEM}(?:\s*,\s*${BYTE_ITEM}){${MIN_BYTES - 1},}`, 'y');
const ESCAPED_BYTES = /(?:\\x[0-9a-fA-F]{2}){16,}/g;
/**
 * Where a list of byte literals may start, looked for before any list is parsed: a `0x` byte,
 * or in decimal the first byte of a DER structure (48) or of PEM text (`-----`: 45).
 */
const BYTE_LIST_START = /(?:0[xX][0-9a-fA-F]{1,2}(?:_?u8|[uUlL])?|4[58])\s*,/g;

/**
 * Byte strings a text writes in hex or as byte literals, decoded: hex runs of 64 digits or more
 * (`bytes.fromhex("3082…")`, a Go or C string of hex), lists of 16 byte literals or more
 * (`{0x30, 0x82, …}` in C, C++, Go, Rust, C#; `new byte[] {48, -126, …}` in Java; `bytes([48, …])`),
 * and runs of `\x` escapes (`b"\x30\x82…"`). Each kind is looked for only where its cheap
 * anchor is: a long hex run among the base64 runs already found, a list's first bytes, `\x`.
 */
export function byteRuns(text: string, runs: readonly Run[]): ByteRun[] {
  const out: ByteRun[] = [];
  const budget = { left: MAX_DECODED };
  hexRuns(text, runs, budget, out);
  byteLists(text, budget, out);
  if (text.includes('\\x')) escapedBytes(text, budget, out);
  return out;
}

/** The bytes left to decode in one text, shared by the byte readers. */
interface Budget {
  left: number;
}

/** Base64 runs of hex digits only (an optional `0x` before them), decoded. */
function hexRuns(text: string, runs: readonly Run[], budget: Budget, out: ByteRun[]): void {
  for (const { start, end } of runs) {
    if (end - start < MIN_HEX || budget.left <= 0) continue;
    const run = text.slice(start, end);
    if (!HEX_ONLY.test(run)) continue;
    const digits = run.startsWith('0x') || run.startsWith('0X') ? run.slice(2) : run;
    const bytes = Buffer.from(digits.slice(0, Math.min(digits.length & ~1, budget.left * 2)), 'hex');
    budget.left -= bytes.length;
    out.push({ start, end, bytes });
  }
}

/** Lists of byte literals, each parsed from where one may start (`BYTE_LIST_START`). */
function byteLists(text: string, budget: Budget, out: ByteRun[]): void {
  BYTE_LIST_START.lastIndex = 0;
  for (let m = BYTE_LIST_START.exec(text); m !== null && budget.left > 0; m = BYTE_LIST_START.exec(text)) {
    // A decimal byte starts a number (`148,` is not 48).
    if (m[0][0] === '4' && m.index > 0 && /[\w.]/.test(text[m.index - 1]!)) continue;
    // A cast before the first byte belongs to it.
    let from = m.index;
    if (text[from - 1] === ')' || text[from - 2] === ')') {
      const cast = /\(\s*(?:byte|char|uint8_t|u8|sbyte)\s*\)\s*$/.exec(text.slice(Math.max(0, from - 16), from));
      if (cast) from -= cast[0].length;
    }
    BYTE_LIST.lastIndex = from;
    const list = BYTE_LIST.exec(text);
    if (!list) continue;
    const bytes = Uint8Array.from(list[0].split(',').slice(0, budget.left), (item) => parseInt(item.replace(/\([^)]*\)|_?u8$|[uUlL]$/g, '').trim()) & 0xff);
    budget.left -= bytes.length;
    out.push({ start: from, end: from + list[0].length, bytes });
    BYTE_LIST_START.lastIndex = from + list[0].length;
  }
}

/** Runs of `\x` escapes, decoded. */
function escapedBytes(text: string, budget: Budget, out: ByteRun[]): void {
  ESCAPED_BYTES.lastIndex = 0;
  for (let m = ESCAPED_BYTES.exec(text); m !== null && budget.left > 0; m = ESCAPED_BYTES.exec(text)) {
    const bytes = Buffer.from(m[0].replace(/\\x/g, ''), 'hex');
    budget.left -= bytes.length;
    out.push({ start: m.index, end: m.index + m[0].length, bytes });
  }
}

/** The byte runs whose bytes are text (PEM text written in hex, a token as bytes), decoded. */
export function decodedBytes(bytes: readonly ByteRun[]): DerivedView | undefined {
  let out = '';
  const pieces: { at: number; start: number; end: number }[] = [];
  for (const { start, end, bytes: run } of bytes) {
    if (!isText(run)) continue;
    pieces.push({ at: out.length, start, end });
    out += `${Buffer.from(run.buffer, run.byteOffset, run.byteLength).toString('utf8')}\n`;
  }
  return pieces.length === 0 ? undefined : { text: out, pieces };
}

/** A view seen through another: its pieces mapped back to the original text. */
function through(outer: DerivedView, inner: DerivedView): DerivedView {
  return { text: inner.text, pieces: inner.pieces.map((piece) => ({ at: piece.at, ...originOf(outer, piece.start) })) };
}

/** A text's derived views and the byte strings written in it, for the detectors. */
export interface Derived {
  readonly views: DerivedView[];
  /** Byte strings of the text and of its joined literals (hex, byte lists, `\x` escapes), in the text's coordinates. */
  readonly bytes: ByteRun[];
}

/**
 * Every derived view of a text — its joined literals, its decoded base64 and hex, and the same
 * inside the joined literals — and the byte strings written in it. `runs`: the text's base64
 * runs, when the caller has them.
 */
export function derive(text: string, runs: readonly Run[] = base64Runs(text)): Derived {
  const views: DerivedView[] = [];
  const joined = joinedLiterals(text);
  const joinedRuns = joined ? base64Runs(joined.text) : [];
  if (joined) views.push({ ...joined, runs: joinedRuns });
  const decoded = decodedBase64(text, runs);
  if (decoded) views.push(decoded);
  const bytes = byteRuns(text, runs);
  if (joined) {
    const inner = decodedBase64(joined.text, joinedRuns);
    if (inner) views.push(through(joined, inner));
    // Byte strings split over joined literals (`"2d2d2d…" +`), unless the text had them whole.
    for (const run of byteRuns(joined.text, joinedRuns)) {
      const origin = originOf(joined, run.start);
      if (!bytes.some((known) => known.start <= origin.start && origin.start < known.end)) bytes.push({ ...origin, bytes: run.bytes });
    }
  }
  const fromBytes = decodedBytes(bytes);
  if (fromBytes) views.push(fromBytes);
  return { views, bytes };
}
