import { batchProcess } from '../../core/batch-memory.js';
import { shownFailure } from '../../core/error-log.js';
import { autoStartDaemon, autoStartNote, launcherFile } from './daemon.js';
import { runCli } from './main.js';

export { runCli };

/**
 * The CLI's entry point (bundled as dist/cli.cjs, which dist/cli.js compiles and calls): runs the
 * command and sets the exit code.
 */
export function main(argv: readonly string[]): void {
  // A sync in its own process exits when done: a large build there may favour memory over speed.
  const [command, subcommand] = argv;
  if (command === 'sync' || (command === 'index' && subcommand === 'build')) batchProcess();

  // The reader of our output went away (`repodex files | head -1`): nobody is left to tell, so stop
  // quietly instead of dying on an unhandled EPIPE with a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });

  // Whatever escapes every handler (an error event nobody listens to, a promise nobody awaits) is
  // still one line and exit 2, its stack in the error log: never a stack trace on the terminal.
  const crash = (error: unknown): void => {
    const shown = shownFailure(error, `repodex ${argv[0] ?? ''} in ${process.cwd()} (uncaught)`);
    process.stderr.write(`repodex: ${shown.message}\n`);
    process.exit(shown.internal ? 2 : 1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);

  runCli(argv, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }).then(
    (exitCode) => {
      process.exitCode = exitCode;
      // The command answered on its own (no daemon ran): start one for the next commands here.
      if (exitCode !== 0) return;
      let started: string | undefined;
      try {
        started = autoStartDaemon(argv, launcherFile());
      } catch {
        return; // a daemon is a speed-up: not starting one changes no answer
      }
      if (started !== undefined && process.stderr.isTTY && !argv.includes('--json')) process.stderr.write(autoStartNote(started));
    },
    (error: unknown) => {
      // A bug (runCli reports every failure it expects): fail as an uncaught error would.
      process.nextTick(() => {
        throw error;
      });
    },
  );
}
