import type { Tree } from 'web-tree-sitter';
import type { Language } from '../scan/language.js';
import { parserFor } from './loader.js';
import { adapterFor } from './registry.js';
import type { LanguageAdapter } from './types.js';

/** A parsed file and the adapter that parsed it (the retry adapter when the first one failed). */
export interface ParsedFile {
  readonly adapter: LanguageAdapter;
  /** The tree, or null when the file is unparseable (see `isUnparseable`). */
  readonly tree: Tree | null;
}

/**
 * The unparseable rule: a file is unparseable when tree-sitter returns no tree or the root
 * `hasError` (an ERROR or MISSING node anywhere). Error recovery would still give a tree, but its
 * declarations around the damage can be wrong (a class cut in two, a function swallowing its
 * neighbours), and the contract is "empty, never partial": so one error rejects the whole file.
 * Measured: 0 of the 1,515 .ts/.tsx/.js/.mjs files repodex indexes in playwright hit this rule;
 * what does is grammar lag (TS `in`/`out` variance annotations) and macro-heavy C++.
 *
 * A file whose adapter has a `retry` adapter is parsed again with it before it counts as
 * unparseable (C headers written in C++); one whose adapter can `mask` syntax its grammar lags
 * behind is parsed again with that syntax blanked first (TypeScript variance annotations).
 */
function isUnparseable(tree: Tree | null): boolean {
  return tree === null || tree.rootNode.hasError;
}

/**
 * Parse `source` with the language's adapter and hand the tree to `use`, freeing it afterwards
 * (trees live in WASM memory, not on the JS heap). Returns undefined when there is no adapter.
 */
export function withParsedFile<T>(language: Language, source: string, use: (file: ParsedFile) => T): T | undefined {
  let adapter = adapterFor(language);
  if (!adapter) return undefined;
  let tree = parserFor(adapter.grammar).parse(source);
  const masked = isUnparseable(tree) ? adapter.mask?.(source) : undefined;
  if (masked !== undefined) {
    // The same positions, with syntax the grammar lags behind blanked; names and signatures are
    // still read from the real source.
    const second = parserFor(adapter.grammar).parse(masked);
    if (!isUnparseable(second)) {
      tree?.delete();
      tree = second;
    } else {
      second?.delete();
    }
  }
  if (isUnparseable(tree) && adapter.retry) {
    tree?.delete();
    adapter = adapter.retry;
    tree = parserFor(adapter.grammar).parse(source);
  }
  try {
    return use({ adapter, tree: isUnparseable(tree) ? null : tree });
  } finally {
    tree?.delete();
  }
}
