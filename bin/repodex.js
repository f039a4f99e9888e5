#!/usr/bin/env node
// Thin launcher: the CLI itself is bundled into dist/ by `npm install` (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('repodex: the CLI is not built yet. Run `npm install` (or `npm run build`) in the repodex package.\n');
  process.exit(2);
}
await import(entry.href);
