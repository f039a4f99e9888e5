import { setFlagsFromString } from 'node:v8';
import { runCli } from './main.js';

// A sync in its own process is a batch job that exits when done: V8's optimize-for-size mode
// (heaps grown in smaller steps, a smaller young generation; process-wide, so the parse threads
// too) lowers a from-nothing sync's peak memory by a fifth to a quarter for a few percent more
// time (docs/benchmarks.md). Set before any thread starts; servers and watchers keep the default.
const [command, subcommand] = process.argv.slice(2);
if (command === 'sync' || (command === 'index' && subcommand === 'build')) setFlagsFromString('--optimize-for-size');

// The reader of our output went away (`repodex files | head -1`): nobody is left to tell, so stop
// quietly instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

// The CLI entry point (bundled as dist/cli.js): runs the command and sets the exit code.
const exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
process.exitCode = exitCode;
