import { createHash } from 'node:crypto';
import type { ChunkParams, ChunkSpan } from '../chunk/chunker.js';
import { type ChunkFallback, chunkWithTreeSitter } from '../chunk/tree-sitter-chunker.js';
import { FEATURE_VERSION } from '../core/version.js';
import { hasAdapter, isLanguageLoaded, loadLanguages } from '../lang/index.js';
import type { PackedParse } from '../index/parse-record.js';
import type { OutlineSymbol } from '../lang/types.js';
import type { Language } from '../scan/language.js';
import { SECRET_RULES_VERSION, secretPathClass, type SecretFinding, findSecret } from '../safety/secrets.js';
import { splitLines } from '../text/normalize.js';

/** How one file's text was cut: chunk spans, the outline from the same parse, and the fallback taken. */
export interface ParseOutcome {
  readonly spans: readonly ChunkSpan[];
  readonly symbols: readonly OutlineSymbol[];
  /** Why the file was chunked as text (null when declarations were used). */
  readonly fallback: ChunkFallback;
  /** Set when the text holds a credential: then nothing else is (the file is not indexed, and the outcome never cached). */
  readonly secret?: SecretFinding;
  /** The outcome packed for the parse cache and the segment (packParse), by the parse thread that made it. */
  readonly packed?: PackedParse;
}

/** sha256 of normalized text, hex: a file's content identity. */
export function contentHashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The parse-cache key of a file's content: what decides its chunks and outline (rules, language,
 * chunking params, text) and its credential verdict (the rules, and what of its path they read).
 */
export function parseCacheKey(contentHash: string, language: Language, paramsKey: string, path: string): string {
  // The secret rules are part of the key: a cached outcome means "scanned clean by these rules".
  return createHash('sha256').update(`${FEATURE_VERSION}\0${SECRET_RULES_VERSION}\0${secretPathClass(path)}\0${language}\0${paramsKey}\0${contentHash}`).digest('hex');
}

/**
 * Check a file's text for credentials (`findSecret`), then cut it into chunks: declarations with
 * tree-sitter where the language has an adapter (its grammar is loaded on first use), the text
 * chunker otherwise. `path` is the file's repository path (some credential rules look at it).
 */
/** Load what parsing files of `languages` needs (their grammars, the credential rules) before the first file comes. */
export async function warmUp(languages: readonly Language[]): Promise<void> {
  await findSecret('const warm = 1;\n', 'warm.ts');
  const wanted = [...new Set(languages)].filter((language) => hasAdapter(language) && !isLanguageLoaded(language));
  if (wanted.length > 0) await loadLanguages(wanted);
}

export async function parseText(text: string, language: Language, params: ChunkParams, path: string): Promise<ParseOutcome> {
  const secret = await findSecret(text, path);
  if (secret) return { spans: [], symbols: [], fallback: 'no-adapter', secret };
  if (hasAdapter(language) && !isLanguageLoaded(language)) await loadLanguages([language]);
  return chunkWithTreeSitter(splitLines(text), language, params);
}
