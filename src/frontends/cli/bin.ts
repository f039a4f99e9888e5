import { batchProcess } from '../../core/batch-memory.js';
import { runCli } from './main.js';

// A sync in its own process exits when done: a large build there may favour memory over speed.
const [command, subcommand] = process.argv.slice(2);
if (command === 'sync' || (command === 'index' && subcommand === 'build')) batchProcess();

// The reader of our output went away (`repodex files | head -1`): nobody is left to tell, so stop
// quietly instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

// The CLI entry point (bundled as dist/cli.js): runs the command and sets the exit code.
const exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
process.exitCode = exitCode;
