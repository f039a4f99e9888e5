import { runCli } from './main.js';

// The CLI entry point (bundled as dist/cli.js): runs the command and sets the exit code.
const exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
process.exitCode = exitCode;
