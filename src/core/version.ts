import packageJson from '../../package.json' with { type: 'json' };

/** Version of the repodex package (from package.json), reported by `status` and recorded in meta.json. */
export const TOOL_VERSION: string = packageJson.version;

/**
 * On-disk layout version of every artifact (`.rpdx` files and meta.json). Bump on any layout
 * change a reader could trip over; readers refuse other versions (INDEX_INCOMPATIBLE → rebuild).
 * Log:
 *   1 — first format: sectioned files (header + TOC), files/chunks/terms/postings.
 *   2 — symbols.bin (outlines, per-file chunking mode); chunks.bin SYMP (symbol path per chunk);
 *       path and declared-name field terms in terms/postings.
 *   3 — segments: an index generation is a manifest (gen-N.rpdx) over immutable segments
 *       (seg-N.rpdx) with per-file tombstones; the TOC moved to the end of each file and every
 *       section, the TOC and the header carry their own CRC-32; chunk ids are stable, stored per
 *       chunk (CIDS); the parse cache (parse-cache.rpdx).
 *   4 — files carry ctime and inode beside size and mtime (CTIM, INOD), folders and ignore files
 *       their ctime (DIRC, CTLC): a same-size edit whose mtime was put back is seen.
 *   5 — snippets, symbol paths and the outline's kinds, names, enclosing names and contexts are
 *       stored once per distinct value (CodedStrings); each file's signatures and doc comments are
 *       one deflated block (SOTX, replacing SIGN and DOCS). Kafka's segment: 35.8 → 25.5 MB.
 */
export const FORMAT_VERSION = 5;

/**
 * Version of the rules that decide what the index contains: tokenizer, chunkers, field terms,
 * snippets, symbol paths, chunk ids. An index built with other rules is stale (answers would
 * differ from a fresh build) and is rebuilt, never served. Bump on any such change.
 * Log:
 *   1 — tokenizer: identifiers split on case, underscore, hyphen and digit boundaries, whole
 *       identifier kept, English stopwords; tree-sitter declaration chunks (text fallback);
 *       path and declared-name fields; 3-line snippets; chunk id = a 32-bit mix of the path's
 *       FNV-1a hash, chunk_index and the chunk hash (engine/chunk-ids.ts), probing upwards on
 *       collision.
 *   2 — credentials found by content (secretlint's recommended rules plus repodex's own:
 *       safety/secrets.ts) keep a file out of the index; more credential files denylisted;
 *       files with several hard links skipped (state `hard-link`).
 *   3 — TypeScript and TSX grammars from @vscode/tree-sitter-wasm; files the grammar rejects
 *       are parsed again with `export type *` and variance annotations blanked, so they get
 *       declaration chunks and outlines instead of text chunks.
 *   4 — files whose first lines say they are generated carry a mark in the path field; each
 *       file's first chunk carries the terms of its recent commit subjects (history field).
 *   5 — a file that is not UTF-8 but reads as single-byte text (no NUL or control bytes, mostly
 *       ASCII) is indexed, decoded as Windows-1252, instead of skipped as binary.
 *   6 — credential rules (SECRET_RULES_VERSION): gitleaks' rule list, string literals joined and
 *       base64 decoded before detection, more credential files denylisted, names normalised
 *       (backslashes, trailing spaces and dots) and names holding a backslash left out; commit
 *       subjects redacted before their terms are indexed. Older data on disk is purged
 *       (engine/purge.ts) and the previous generation is not kept.
 *   7 — a Vault token whose first 24 characters are letters is a credential (an allowlist meant
 *       for the legacy `s.` form let it through: safety/rule-set.ts, CORRECTED).
 *   8 — credentials by shape (SECRET_RULES_VERSION repodex-4): private keys by their content (DER
 *       in base64, hex, byte literals or escapes; OpenSSH, OpenPGP, PuTTY, JWK, .NET XML, text
 *       dumps), whatever their markers; passwords in URLs of any scheme; tokens whose shape needs
 *       no keyword found without it; secrets assigned with any characters (Django's SECRET_KEY);
 *       constants resolved in joined literals; files and folders named like a credential left
 *       out. Older data on disk is purged again (engine/purge.ts).
 */
export const FEATURE_VERSION = 8;
