import { HISTORY_FIELD, NAME_FIELD, PATH_FIELD } from './fields.js';
import type { NewChunk } from './model.js';
import { WordTable } from './word-table.js';

/** The postings one chunk contributes: each distinct term once, with its frequency. */
export interface ChunkTerms {
  readonly terms: string[];
  readonly tfs: number[];
  /** Terms of its text, repeats included (BM25 document length); field terms do not count. */
  readonly tokens: number;
}

/**
 * Turns chunks into their terms exactly as the segment builder indexes them (the one tokenizer,
 * content terms counted, field terms present once behind their prefix), for a store that keeps
 * postings as rows. Keeps one dictionary across the chunks of a sync.
 */
export class ChunkTermCounter {
  private readonly terms: string[] = [];
  private readonly ids = new Map<string, number>();
  private readonly words = new WordTable((term) => this.idOf(term));
  /** Per term id: its frequency in the chunk being counted (reset after each chunk). */
  private tf = new Uint32Array(1 << 12);

  private idOf(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.ids.set(term, id);
    }
    return id;
  }

  count(chunk: Pick<NewChunk, 'text' | 'fields'>): ChunkTerms {
    const seen: number[] = [];
    let tokens = 0;
    const add = (id: number, counted: boolean): void => {
      if (id >= this.tf.length) {
        const grown = new Uint32Array(Math.max(id + 1, this.tf.length * 2));
        grown.set(this.tf);
        this.tf = grown;
      }
      if (this.tf[id] === 0) seen.push(id);
      if (counted || this.tf[id] === 0) this.tf[id]!++;
    };
    this.words.scan(chunk.text, (id) => {
      tokens++;
      add(id, true);
    });
    for (const term of chunk.fields.path) add(this.idOf(PATH_FIELD + term), false);
    for (const term of chunk.fields.names) add(this.idOf(NAME_FIELD + term), false);
    for (const term of chunk.fields.history ?? []) add(this.idOf(HISTORY_FIELD + term), false);
    const terms = seen.map((id) => this.terms[id]!);
    const tfs = seen.map((id) => this.tf[id]!);
    for (const id of seen) this.tf[id] = 0;
    return { terms, tfs, tokens };
  }
}
