import { ERRORS, type ErrorCode, errorMessage } from '../../core/errors.js';
import { shownFailure } from '../../core/error-log.js';

/** The streams a failure is written to. */
export interface FailureIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/**
 * Report a failure the one way the CLI does: `{ok:false, error, code}` on stdout with --json, a line
 * on stderr always; the exit code is the error table's (1 for what a person can fix, 2 for a bug,
 * 130 for an interrupted command).
 */
export function reportFailure(code: ErrorCode, message: string, json: boolean, io: FailureIo): number {
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: message, code })}\n`);
  io.stderr.write(`repodex: ${message}\n`);
  return ERRORS[code].exit;
}

/** Node's argument-parser messages, where one misleads: a value starting with "-" reads as an option. */
function argErrorMessage(message: string): string {
  const ambiguous = /^Option '(--[\w-]+)(?:, -\w)?' argument is ambiguous/.exec(message);
  if (ambiguous) return `${ambiguous[1]} was given a value that starts with "-", which reads as an option: write it as ${ambiguous[1]}=VALUE`;
  return message;
}

/** Whether a thrown value is node's argument parser refusing the command line. */
export function isArgError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && String((error as { code: unknown }).code).startsWith('ERR_PARSE_ARGS');
}

/**
 * Report anything thrown as one line (see `shownFailure`): a bug prints one line too, naming the
 * error log that holds its stack.
 */
export function reportError(error: unknown, json: boolean, io: FailureIo, command = 'repodex'): number {
  if (isArgError(error)) return reportFailure('BAD_REQUEST', `${argErrorMessage(errorMessage(error))} (see repodex <command> --help)`, json, io);
  const shown = shownFailure(error, `${command} in ${process.cwd()}`);
  return reportFailure(shown.code, shown.message, json, io);
}
