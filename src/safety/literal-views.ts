/**
 * Texts derived from a file's text for the credential detectors to read too, because credentials
 * in real code are often not written in one piece:
 * - string literals joined: a private key written one quoted literal per PEM line (`"…\n" +` in
 *   JS, Java, Go, C#; implicit concatenation in Python and C; `concat!(…)` in Rust; JSON arrays of
 *   lines as notebooks keep them), or a marker split in two (`"-----BEGIN RSA " + "PRIVATE KEY-----"`).
 *   Literals ('…', "…", and `…` templates and raw strings) separated only by whitespace,
 *   newlines, `+`, `,`, `.`, `\` continuations or comments are one value, with their escapes decoded (a lone literal with escapes too: a
 *   notebook keeps its code as JSON strings, quotes escaped). This is a scan for quotes, not a parse:
 *   it needs no grammar, so it covers every language the index reads (and files it does not).
 * - base64 decoded: a key or token encoded once (a Kubernetes Secret's `data:`), when the decoded
 *   bytes are text.
 */

/** A derived text, and for each piece of it the range of the original text it came from. */
export interface DerivedView {
  readonly text: string;
  /** Sorted by `at`: the view text from `at` on came from `[start, end)` of the original. */
  readonly pieces: readonly { readonly at: number; readonly start: number; readonly end: number }[];
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

/**
 * Runs of string literals that form one value, joined and decoded: runs of two or more, and single
 * literals whose value differs from their text (a token written `\"hf_…\"` inside a JSON string,
 * or split by an interpolation in a template).
 */
export function joinedLiterals(text: string): DerivedView | undefined {
  let out = '';
  const pieces: { at: number; start: number; end: number }[] = [];
  let value = '';
  let count = 0;
  let escaped = false;
  let groupStart = 0;
  let lastEnd = -1;
  const flush = (): void => {
    if ((count >= 2 || escaped) && value.length >= MIN_JOINED) {
      pieces.push({ at: out.length, start: groupStart, end: lastEnd });
      out += `${value}\n`;
    }
    value = '';
    count = 0;
    escaped = false;
  };
  LITERAL.lastIndex = 0;
  for (let m = LITERAL.exec(text); m !== null; m = LITERAL.exec(text)) {
    const start = m.index;
    const joined = count > 0 && start - lastEnd <= MAX_GAP && JOINER.test(text.slice(lastEnd, start));
    if (!joined) {
      flush();
      groupStart = start;
    }
    const raw = m[0].slice(1, -1);
    const body = m[0].startsWith('`') && raw.includes('${') ? raw.replace(INTERPOLATION, '') : raw;
    // A literal whose value differs from its text (escapes, interpolations left out) is read alone too.
    if (body.includes('\\') || body.length !== raw.length) escaped = true;
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

/**
 * The base64 runs of a text (`MIN_RUN` characters or more, `=` padding included), found with a
 * table lookup per character: a regular expression for runs costs twice as much, restarting
 * inside every shorter word.
 */
function base64Runs(text: string): { start: number; end: number }[] {
  const runs: { start: number; end: number }[] = [];
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
export function decodedBase64(text: string): DerivedView | undefined {
  let out = '';
  const pieces: { at: number; start: number; end: number }[] = [];
  let budget = MAX_DECODED;
  for (const { start, end } of base64Runs(text)) {
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

/** Every derived view of a text: its joined literals, its decoded base64, and the base64 inside joined literals. */
export function derivedViews(text: string): DerivedView[] {
  const views: DerivedView[] = [];
  const joined = joinedLiterals(text);
  if (joined) views.push(joined);
  const decoded = decodedBase64(text);
  if (decoded) views.push(decoded);
  const inner = joined ? decodedBase64(joined.text) : undefined;
  if (joined && inner) {
    // Map the inner view's pieces back through the joined view to the original text.
    views.push({ text: inner.text, pieces: inner.pieces.map((piece) => ({ at: piece.at, ...originOf(joined, piece.start) })) });
  }
  return views;
}
