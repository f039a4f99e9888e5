/** Version of the repodex package, reported by `status` and recorded in meta.json. */
export const TOOL_VERSION = '0.1.0';

/**
 * On-disk format version of every `.bin` artifact and of meta.json. Bump on any layout change.
 * Log:
 *   1 — first format: sectioned files (header + TOC), files/chunks/terms/postings.
 *   2 — symbols.bin (outlines, per-file chunking mode); chunks.bin SYMP (symbol path per chunk);
 *       path and declared-name field terms in terms/postings.
 */
export const FORMAT_VERSION = 2;

/**
 * Version of the tokenizer rules; part of the index identity because a change in tokenization
 * changes every posting. Log:
 *   1 — identifiers split on case, underscore, hyphen and digit boundaries; whole identifier kept.
 */
export const TOKENIZER_VERSION = 1;
