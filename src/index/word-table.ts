import { isWordCode, wordTerms } from '../text/tokenizer.js';
import { GrowableU32 } from './growable.js';

/**
 * The indexing hot path: scans text for words exactly as `forEachWord` does, but hashes each
 * word while scanning and looks it up in an open-addressing table by hash and characters, so a
 * word seen before costs no substring, no Map hashing and no garbage. Each entry caches the term
 * ids of its word, resolved once through `wordTerms` and `termId`.
 */
export class WordTable {
  private slots = new Int32Array(1 << 16); // entry index + 1, 0 = empty
  /**
   * The characters of every entry's word, back to back (entry e is chars[wordStart[e]..wordStart[e + 1]]):
   * one block instead of one string per word, and no slice of an indexed text kept alive.
   */
  private chars = new Uint16Array(1 << 16);
  private readonly wordStart = new GrowableU32();
  private readonly hashes = new GrowableU32();
  private readonly termStart = new GrowableU32();
  private readonly termIds = new GrowableU32(1 << 16);

  constructor(private readonly termId: (term: string) => number) {
    this.termStart.push(0);
    this.wordStart.push(0);
  }

  /** Call `onTerm` with the id of every term of `text`, in order, with repeats. */
  scan(text: string, onTerm: (termId: number) => void): void {
    const n = text.length;
    let i = 0;
    while (i < n) {
      if (!isWordCode(text.charCodeAt(i))) {
        i++;
        continue;
      }
      const start = i;
      let hash = 0x811c9dc5;
      for (;;) {
        while (i < n) {
          const code = text.charCodeAt(i);
          if (!isWordCode(code)) break;
          hash = Math.imul(hash ^ code, 16777619);
          i++;
        }
        // A hyphen joins two words only when a word character follows (kebab-case).
        if (i + 1 < n && text.charCodeAt(i) === 45 && isWordCode(text.charCodeAt(i + 1))) {
          hash = Math.imul(hash ^ 45, 16777619);
          i++;
          continue;
        }
        break;
      }
      const entry = this.lookup(text, start, i, hash >>> 0);
      const from = this.termStart.get(entry);
      const to = this.termStart.get(entry + 1);
      for (let t = from; t < to; t++) onTerm(this.termIds.get(t));
    }
  }

  private lookup(text: string, start: number, end: number, hash: number): number {
    const length = end - start;
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const stored = this.slots[slot]!;
      if (stored === 0) break;
      const entry = stored - 1;
      if (this.hashes.get(entry) === hash) {
        const from = this.wordStart.get(entry);
        if (this.wordStart.get(entry + 1) - from === length && sameChars(this.chars, from, text, start, length)) return entry;
      }
      slot = (slot + 1) & mask;
    }
    const entry = this.hashes.length;
    const from = this.wordStart.get(entry);
    if (from + length > this.chars.length) {
      const grown = new Uint16Array(Math.max(this.chars.length * 2, from + length));
      grown.set(this.chars.subarray(0, from));
      this.chars = grown;
    }
    for (let k = 0; k < length; k++) this.chars[from + k] = text.charCodeAt(start + k);
    this.wordStart.push(from + length);
    this.hashes.push(hash);
    for (const term of wordTerms(text.slice(start, end))) this.termIds.push(this.termId(term));
    this.termStart.push(this.termIds.length);
    this.slots[slot] = entry + 1;
    if (this.hashes.length * 2 > this.slots.length) this.rehash();
    return entry;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.hashes.length; entry++) {
      let slot = this.hashes.get(entry) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry + 1;
    }
    this.slots = slots;
  }
}

function sameChars(chars: Uint16Array, from: number, text: string, start: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (chars[from + k] !== text.charCodeAt(start + k)) return false;
  return true;
}
