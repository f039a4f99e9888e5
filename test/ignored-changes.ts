import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A repository's .gitignore for `writeIgnoredChanges`. */
export const IGNORES_GENERATED = 'generated/\n';

/**
 * Write under `root` only what its index ignores — a built-in skip folder (node_modules/), a
 * .gitignore'd folder (generated/, see IGNORES_GENERATED), a file it does not index (notes.bin) —
 * and a file in `outside`, reached from `root` through a symlink the caller made.
 */
export function writeIgnoredChanges(root: string, outside: string): void {
  mkdirSync(join(root, 'node_modules/pkg'), { recursive: true });
  writeFileSync(join(root, 'node_modules/pkg/index.ts'), 'export const dependency = 1;\n');
  mkdirSync(join(root, 'generated'));
  writeFileSync(join(root, 'generated/out.ts'), 'export const generated = 1;\n');
  writeFileSync(join(root, 'notes.bin'), 'binary-ish');
  writeFileSync(join(outside, 'escape.ts'), 'export const escaped = 1;\n');
}
