/**
 * The one tokenizer, shared by indexing and queries (SPEC §2). A *word* is a run of letters,
 * digits and underscores, optionally joined by single hyphens (kebab-case). Each word yields its
 * whole lower-cased form plus its parts, split at underscores, hyphens, case changes
 * (`fooBar`, `HTTPServer`) and letter/digit boundaries. Terms shorter than two characters and
 * English stopwords are dropped, so queries never need code syntax.
 */

/** Words longer than this are not indexed whole (minified code, base64); their parts still are. */
export const MAX_WHOLE_WORD = 64;
/** Parts longer than this are dropped: they are noise, not names. */
export const MAX_PART = 40;
const MIN_TERM = 2;

/** A deliberately small English stopword list: words that carry no meaning in a code query. */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a', 'about', 'all', 'also', 'an', 'and', 'any', 'are', 'as', 'at', 'be', 'been', 'but', 'by', 'can',
  'could', 'did', 'do', 'does', 'done', 'each', 'for', 'from', 'had', 'has', 'have', 'he', 'her', 'his',
  'how', 'i', 'if', 'in', 'into', 'is', 'it', 'its', 'me', 'my', 'of', 'on', 'or', 'our', 'she', 'should',
  'so', 'some', 'such', 'than', 'that', 'the', 'their', 'them', 'then', 'there', 'these', 'they', 'this',
  'those', 'to', 'was', 'we', 'were', 'what', 'when', 'where', 'which', 'while', 'who', 'whom', 'why',
  'will', 'with', 'would', 'you', 'your',
]);

const enum Cls {
  Other = 0,
  Lower = 1,
  Upper = 2,
  Digit = 3,
  Underscore = 4,
}

function charClass(code: number): Cls {
  if (code >= 97 && code <= 122) return Cls.Lower;
  if (code >= 65 && code <= 90) return Cls.Upper;
  if (code >= 48 && code <= 57) return Cls.Digit;
  if (code === 95) return Cls.Underscore;
  if (code < 128) return Cls.Other;
  return nonAsciiClass(code);
}

const LETTER = /\p{L}|\p{M}/u;
const UPPER = /\p{Lu}/u;
const DIGIT = /\p{Nd}/u;

function nonAsciiClass(code: number): Cls {
  // Surrogate halves are letters for our purposes: astral-plane scripts stay inside words.
  if (code >= 0xd800 && code <= 0xdfff) return Cls.Lower;
  const ch = String.fromCharCode(code);
  if (UPPER.test(ch)) return Cls.Upper;
  if (LETTER.test(ch)) return Cls.Lower;
  if (DIGIT.test(ch)) return Cls.Digit;
  return Cls.Other;
}

function isWordClass(cls: Cls): boolean {
  return cls !== Cls.Other;
}

const ASCII_WORD = new Uint8Array(128);
for (let code = 0; code < 128; code++) ASCII_WORD[code] = isWordClass(charClass(code)) ? 1 : 0;

/** True when a UTF-16 code unit belongs to a word (letters, digits, underscore; surrogates count as letters). */
export function isWordCode(code: number): boolean {
  return code < 128 ? ASCII_WORD[code] === 1 : isWordClass(nonAsciiClass(code));
}

/**
 * Call `onWord` with every word of `text`, in order. Hyphens join words only when both sides are
 * word characters, so `max-lines` is one word and `a - b` is two.
 */
export function forEachWord(text: string, onWord: (word: string) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isWordClass(charClass(text.charCodeAt(i)))) {
      i++;
      continue;
    }
    const start = i;
    i++;
    for (;;) {
      while (i < n && isWordClass(charClass(text.charCodeAt(i)))) i++;
      if (i + 1 < n && text.charCodeAt(i) === 45 && isWordClass(charClass(text.charCodeAt(i + 1)))) {
        i += 2;
        continue;
      }
      break;
    }
    onWord(text.slice(start, i));
  }
}

function keep(term: string): boolean {
  return term.length >= MIN_TERM && !STOPWORDS.has(term);
}

/** The terms one word contributes: the whole word and its parts, lower-cased, deduplicated, in order. */
export function wordTerms(word: string): string[] {
  const out: string[] = [];
  const whole = word.toLowerCase();
  if (word.length <= MAX_WHOLE_WORD && keep(whole)) out.push(whole);
  let partStart = -1;
  let prev = Cls.Other;
  const flush = (end: number): void => {
    if (partStart < 0) return;
    const len = end - partStart;
    if (len <= MAX_PART && len < word.length) {
      const part = word.slice(partStart, end).toLowerCase();
      if (keep(part) && !out.includes(part)) out.push(part);
    }
    partStart = -1;
  };
  for (let i = 0; i < word.length; i++) {
    const cls = word.charCodeAt(i) === 45 ? Cls.Underscore : charClass(word.charCodeAt(i));
    if (cls === Cls.Underscore) {
      flush(i);
      prev = cls;
      continue;
    }
    let boundary = partStart < 0;
    if (!boundary) {
      if (cls === Cls.Upper && prev === Cls.Lower) boundary = true; // fooBar
      else if (cls === Cls.Digit !== (prev === Cls.Digit)) boundary = true; // base64, v2
      else if (cls === Cls.Lower && prev === Cls.Upper && i - partStart >= 2) {
        // HTTPServer: the last capital starts the next part.
        flush(i - 1);
        partStart = i - 1;
      }
    }
    if (boundary) {
      flush(i);
      partStart = i;
    }
    prev = cls;
  }
  flush(word.length);
  return out;
}

/** All terms of a text in order, with repeats (what indexing counts). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  forEachWord(text, (word) => {
    for (const term of wordTerms(word)) out.push(term);
  });
  return out;
}

/** The unique terms of a query, in first-seen order. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query))];
}

const VOWEL = /[aeiouy]/;

/**
 * The other inflections of an English word a query may have meant (`retries` → `retry`,
 * `retried`, `retrying`; `saved` → `save`, `saves`, `saving`; `close` → `closed`, `closes`,
 * `closing`): a light, rule-based morphology of plural, past and -ing forms. Only plain
 * lower-case words of 4+ letters vary; the word itself is not included. Some forms are not words
 * (`closs`); search keeps only the forms the index holds.
 */
export function wordForms(term: string): string[] {
  if (term.length < 4 || !/^[a-z]+$/.test(term)) return [];
  const bases = new Set<string>();
  const cut = (suffix: string, min = 3): string | undefined => (term.endsWith(suffix) && term.length - suffix.length >= min ? term.slice(0, -suffix.length) : undefined);
  const ies = cut('ies') ?? cut('ied');
  if (ies) bases.add(`${ies}y`);
  for (const suffix of ['es', 's', 'ed', 'ing']) {
    const stem = cut(suffix, 2);
    if (!stem || (suffix === 's' && /(?:s|u|i)$/.test(stem)) || !VOWEL.test(stem)) continue;
    if (stem.length >= 3) bases.add(stem);
    if (suffix !== 's') bases.add(`${stem}e`); // saved → save, using → use
    // stopped → stop, running → run
    if ((suffix === 'ed' || suffix === 'ing') && stem.length >= 4 && stem.at(-1) === stem.at(-2) && !VOWEL.test(stem.at(-1)!)) bases.add(stem.slice(0, -1));
  }
  // An uninflected word is its own base.
  if (bases.size === 0) bases.add(term);
  const forms = new Set<string>();
  for (const base of bases) {
    forms.add(base);
    if (base.endsWith('y') && !VOWEL.test(base.at(-2)!)) {
      const root = base.slice(0, -1);
      forms.add(`${root}ies`).add(`${root}ied`).add(`${base}ing`);
    } else if (base.endsWith('e')) {
      forms.add(`${base}s`).add(`${base}d`).add(`${base.slice(0, -1)}ing`);
    } else {
      forms.add(/(?:s|x|z|ch|sh)$/.test(base) ? `${base}es` : `${base}s`).add(`${base}ed`).add(`${base}ing`);
    }
  }
  forms.delete(term);
  return [...forms].filter((form) => form.length >= 3 && !STOPWORDS.has(form));
}
