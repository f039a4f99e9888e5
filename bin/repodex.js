#!/usr/bin/env node
// Thin launcher: the CLI itself is bundled into dist/ by `npm install` (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('repodex: the CLI is not built yet. Run `npm install` (or `npm run build`) in the repodex package.\n');
  process.exit(2);
}
// A repository with a running `repodex daemon` answers the commands it can take without this
// process loading the engine (REPODEX_DAEMON=0 turns daemons off); everything else runs here.
const args = process.argv.slice(2);
const handled =
  process.env.REPODEX_DAEMON === '0' ? undefined : await (await import(new URL('../dist/daemon-client.js', import.meta.url).href)).callDaemon(args, fileURLToPath(entry));
if (handled === undefined) (await import(entry.href)).main(args);
else process.exitCode = handled;
