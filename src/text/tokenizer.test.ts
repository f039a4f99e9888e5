import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PART, MAX_WHOLE_WORD, STOPWORDS, forEachWord, queryTerms, tokenize, wordForms, wordTerms } from './tokenizer.js';

// Property runs are seeded so every run is the same; FC_SEED=<n> explores (or replays) another seed.
fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20240602) });

/**
 * A deliberately naive reference of SPEC §2 built from regular expressions: words are runs of
 * letters, digits and underscores joined by single hyphens; parts are the classic
 * "acronym | Capitalized or lower word | digits" split of each `_`/`-` separated segment.
 * The tokenizer under test is a hand-written scanner; the two must agree on every input.
 */
const WORD = /[\p{L}\p{M}\p{Nd}_]+(?:-[\p{L}\p{M}\p{Nd}_]+)*/gu;
const LOWERISH = '\\p{Ll}\\p{Lo}\\p{Lm}\\p{Lt}\\p{M}';
const PART = new RegExp(`\\p{Lu}+(?![${LOWERISH}])|\\p{Lu}?[${LOWERISH}]+|\\p{Nd}+`, 'gu');

function keepTerm(term: string): boolean {
  return term.length >= 2 && !STOPWORDS.has(term);
}

function referenceWordTerms(word: string): string[] {
  const terms: string[] = [];
  const whole = word.toLowerCase();
  if (word.length <= MAX_WHOLE_WORD && keepTerm(whole)) terms.push(whole);
  for (const segment of word.split(/[_-]+/)) {
    for (const match of segment.matchAll(PART)) {
      const raw = match[0];
      const part = raw.toLowerCase();
      if (raw.length <= MAX_PART && raw.length < word.length && keepTerm(part) && !terms.includes(part)) terms.push(part);
    }
  }
  return terms;
}

function referenceTokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) out.push(...referenceWordTerms(match[0]));
  return out;
}

/** Identifier-like text: names, acronyms, digits, separators, stopwords, a few non-ASCII letters. */
const PIECES = [
  'foo', 'Bar', 'baz', 'HTTP', 'Server', 'url', 'URL', 'IO', 'Error', 'parse', 'get', 'X', 'x', 'ID', 'v', '2', '64', '0',
  '_', '__', '-', '--', ' ', '  ', '.', '(', ')', ',', '\n', '\t', 'the', 'is', 'and', 'a', 'é', 'É', 'ß', 'Ж', 'ж', 'π', 'Σ',
  '日本', '٣', 'Über', 'café',
];
const identifierText = fc.array(fc.constantFrom(...PIECES), { maxLength: 16 }).map((pieces) => pieces.join(''));
const charSoup = fc.string({ unit: fc.constantFrom(...'aAbBzZ09_- .:/\\\t\néÉжЖ日٣'.split('')), maxLength: 48 });
const anyText = fc.oneof(identifierText, charSoup);

describe('identifier splitting', () => {
  const cases: [string, string[]][] = [
    ['fooBar', ['foobar', 'foo', 'bar']],
    ['parseRequestBody', ['parserequestbody', 'parse', 'request', 'body']],
    ['FooBar', ['foobar', 'foo', 'bar']],
    ['SearchRequest', ['searchrequest', 'search', 'request']],
    ['max_file_bytes', ['max_file_bytes', 'max', 'file', 'bytes']],
    ['MAX_PER_FILE', ['max_per_file', 'max', 'per', 'file']],
    ['__init__', ['__init__', 'init']],
    ['max-lines', ['max-lines', 'max', 'lines']],
    ['content-type-header', ['content-type-header', 'content', 'type', 'header']],
    ['base64', ['base64', 'base', '64']],
    ['utf8Decode', ['utf8decode', 'utf', 'decode']],
    ['sha256sum', ['sha256sum', 'sha', '256', 'sum']],
    ['v2', ['v2']],
    ['HTTPServer', ['httpserver', 'http', 'server']],
    ['parseURL', ['parseurl', 'parse', 'url']],
    ['IOError', ['ioerror', 'io', 'error']],
    ['XMLHttpRequest', ['xmlhttprequest', 'xml', 'http', 'request']],
    ['HTTP2Server', ['http2server', 'http', 'server']],
    ['getURLForID', ['geturlforid', 'get', 'url', 'for', 'id'].filter((t) => !STOPWORDS.has(t))],
    ['URL', ['url']],
    ['fooFoo', ['foofoo', 'foo']],
  ];
  it.each(cases)('%s', (word, expected) => {
    expect(tokenize(word)).toEqual(expected);
    expect(wordTerms(word)).toEqual(expected);
  });

  it('emits the whole identifier first, then its parts, all lower-cased', () => {
    const terms = tokenize('const requestTimeoutMs = DEFAULT_TIMEOUT;');
    expect(terms).toEqual(['const', 'requesttimeoutms', 'request', 'timeout', 'ms', 'default_timeout', 'default', 'timeout']);
    for (const term of terms) expect(term).toBe(term.toLowerCase());
  });

  it('keeps repeats across words (indexing counts them) but not within one word', () => {
    expect(tokenize('foo foo fooFoo')).toEqual(['foo', 'foo', 'foofoo', 'foo']);
  });

  it('joins words with single hyphens only between word characters', () => {
    const words: string[] = [];
    forEachWord('a-b c--d e- -f g - h', (word) => words.push(word));
    expect(words).toEqual(['a-b', 'c', 'd', 'e', 'f', 'g', 'h']);
  });

  it('splits on code punctuation, so queries never need code syntax', () => {
    expect(tokenize('this.config.loadFile(path)')).toEqual(['config', 'loadfile', 'load', 'file', 'path']);
    expect(tokenize('a.b::c->d')).toEqual([]);
  });
});

describe('filtering', () => {
  it('drops English stopwords, as whole words and as parts', () => {
    expect(tokenize('where is the config loaded')).toEqual(['config', 'loaded']);
    expect(tokenize('How does THE Walker skip folders')).toEqual(['walker', 'skip', 'folders']);
    // `is` and `the` are parts here: dropped; the whole identifier stays.
    expect(tokenize('isTheOne')).toEqual(['istheone', 'one']);
    for (const word of ['the', 'and', 'of', 'to', 'in', 'is', 'with', 'for']) expect(tokenize(word)).toEqual([]);
  });

  it('drops one-character terms', () => {
    expect(tokenize('a b c x y z 1 2 _')).toEqual([]);
    expect(tokenize('x2')).toEqual(['x2']);
    expect(tokenize('aB')).toEqual(['ab']);
    expect(tokenize('getX')).toEqual(['getx', 'get']);
  });

  it('does not index overlong words whole, but keeps their parts', () => {
    const long = `${'a'.repeat(30)}B${'c'.repeat(MAX_WHOLE_WORD - 31)}`;
    expect(long.length).toBe(MAX_WHOLE_WORD);
    expect(tokenize(long)[0]).toBe(long.toLowerCase());
    const longer = `${long}d`;
    expect(tokenize(longer)).toEqual(['a'.repeat(30), `b${'c'.repeat(MAX_WHOLE_WORD - 31)}d`]);
    // A part over MAX_PART characters is noise (base64, minified code) and dropped.
    expect(tokenize(`${'q'.repeat(MAX_PART + 1)}_ok`)).toEqual([`${'q'.repeat(MAX_PART + 1)}_ok`, 'ok']);
  });
});

describe('non-ASCII words', () => {
  const cases: [string, string[]][] = [
    ['Привет мир', ['привет', 'мир']],
    ['naïveCafé', ['naïvecafé', 'naïve', 'café']],
    ['ÜberSchön', ['überschön', 'über', 'schön']],
    ['σφάλμαΔικτύου', ['σφάλμαδικτύου', 'σφάλμα', 'δικτύου']],
    ['résumé_parser', ['résumé_parser', 'résumé', 'parser']],
    ['日本語テキスト', ['日本語テキスト']],
    ['ошибкаСети2', ['ошибкасети2', 'ошибка', 'сети']],
  ];
  it.each(cases)('%s', (text, expected) => {
    expect(tokenize(text)).toEqual(expected);
  });

  it('treats non-letter symbols as separators', () => {
    expect(tokenize('price€value → next·item')).toEqual(['price', 'value', 'next', 'item']);
  });
});

describe('property: agrees with a naive regex reference', () => {
  it('tokenize', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(tokenize(text)).toEqual(referenceTokenize(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('wordTerms of every word', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        for (const match of text.matchAll(WORD)) expect(wordTerms(match[0])).toEqual(referenceWordTerms(match[0]));
      }),
      { numRuns: 500 },
    );
  });

  it('every term is lower-case, at least 2 characters and not a stopword', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        for (const term of tokenize(text)) {
          expect(term).toBe(term.toLowerCase());
          expect(term.length).toBeGreaterThanOrEqual(2);
          expect(STOPWORDS.has(term)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('queryTerms', () => {
  it('is unique and keeps first-seen order', () => {
    expect(queryTerms('parse parseURL url Parse')).toEqual(['parse', 'parseurl', 'url']);
    expect(queryTerms('the and of')).toEqual([]);
  });

  it('property: equals the first occurrences of tokenize, in order', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const naive: string[] = [];
        for (const term of tokenize(text)) if (naive.indexOf(term) === -1) naive.push(term);
        const terms = queryTerms(text);
        expect(terms).toEqual(naive);
        expect(new Set(terms).size).toBe(terms.length);
      }),
      { numRuns: 500 },
    );
  });

  it('a query made of an indexed identifier yields terms the index holds', () => {
    const line = 'export async function loadHTTPConfig(max_retries: number) { return fetchJSON(url); }';
    const indexed = new Set(tokenize(line));
    expect(queryTerms('loadHTTPConfig')).toEqual(['loadhttpconfig', 'load', 'http', 'config']);
    for (const query of ['loadHTTPConfig', 'max_retries', 'fetchJSON', 'load http config', 'retries']) {
      const terms = queryTerms(query);
      expect(terms.length).toBeGreaterThan(0);
      for (const term of terms) expect(indexed.has(term)).toBe(true);
    }
  });

  it('property: any identifier taken from indexed text as a query matches only indexed terms', () => {
    fc.assert(
      fc.property(identifierText, identifierText, identifierText, (before, identifier, after) => {
        const text = `${before} ${identifier} ${after}`;
        const indexed = new Set(tokenize(text));
        for (const term of queryTerms(identifier)) expect(indexed.has(term)).toBe(true);
        // The whole identifier text as a query asks for exactly the terms it contributed to the index.
        expect(queryTerms(identifier)).toEqual([...new Set(tokenize(identifier))]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('wordForms', () => {
  it('gives the plural, past and -ing forms of a word and the base of an inflected one', () => {
    expect(wordForms('retry')).toEqual(['retries', 'retried', 'retrying']);
    expect(wordForms('retries')).toContain('retry');
    expect(wordForms('retrying')).toContain('retry');
    expect(wordForms('saved')).toEqual(expect.arrayContaining(['save', 'saves', 'saving']));
    expect(wordForms('close')).toEqual(['closes', 'closed', 'closing']);
    expect(wordForms('closed')).toContain('close');
    expect(wordForms('stopped')).toContain('stop');
    expect(wordForms('using')).toContain('use');
    expect(wordForms('matches')).toContain('match');
  });

  it('leaves short words, identifiers with digits or capitals, and the word itself out', () => {
    for (const word of ['bus', 'id', 'utf8', 'getUser']) expect(wordForms(word)).toEqual([]);
    for (const word of ['retry', 'saved', 'process']) expect(wordForms(word)).not.toContain(word);
    expect(wordForms('status')).not.toContain('statu');
  });
});
