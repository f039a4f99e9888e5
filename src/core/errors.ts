/** Every failure a user can see has a code from this table; fronts ends match on `code`, never on `instanceof`. */
export const ERROR_CODES = {
  // user errors (exit 1)
  NOT_INITIALIZED: 'no .repodex/ here: run `repodex init` (or `repodex sync`, which initializes) in the repository',
  INDEX_MISSING: 'index missing: run `repodex sync`',
  INDEX_INCOMPATIBLE: 'index was written by an incompatible version: run `repodex sync --force`',
  INDEX_CORRUPT: 'index is damaged: run `repodex sync --force`',
  CONFIG_INVALID: 'config is invalid: fix .repodex/config.json or delete it and run `repodex init`',
  IGNORE_UNREADABLE: 'an ignore file could not be read: fix its permissions or remove it',
  LOCKED: 'another sync is running: wait for it to finish',
  BAD_REQUEST: 'bad request',
  BAD_PATH: 'path rejected',
  ROOT_NOT_FOUND: 'root directory not found: pass an existing directory with --root',
  ENV_INVALID: 'an environment variable is invalid: fix or unset it',
  // internal errors (exit 2)
  INTERNAL: 'internal error',
} as const;

/** A stable, matchable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

const USER_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'NOT_INITIALIZED',
  'INDEX_MISSING',
  'INDEX_INCOMPATIBLE',
  'INDEX_CORRUPT',
  'CONFIG_INVALID',
  'IGNORE_UNREADABLE',
  'LOCKED',
  'BAD_REQUEST',
  'BAD_PATH',
  'ROOT_NOT_FOUND',
  'ENV_INVALID',
]);

/** The one error type repodex throws on purpose: a code, a message that says what to do next, optional detail. */
export class RepodexError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;

  constructor(code: ErrorCode, detail?: string, options?: { cause?: unknown }) {
    super(detail ? `${detail} (${ERROR_CODES[code]})` : ERROR_CODES[code], options);
    this.name = 'RepodexError';
    this.code = code;
    this.detail = detail;
  }

  /** True when the user can fix it (exit code 1); false for bugs and environment failures (exit code 2). */
  get isUserError(): boolean {
    return USER_CODES.has(this.code);
  }
}

/** Narrow an unknown thrown value to a RepodexError by its code property. */
export function isRepodexError(value: unknown): value is RepodexError {
  return typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'RepodexError' && 'code' in value;
}

/** A Node system error (ENOENT, EACCES, …) narrowed by its `code`. */
export function isErrnoException(value: unknown, code?: string): value is NodeJS.ErrnoException {
  if (typeof value !== 'object' || value === null || !('code' in value)) return false;
  return code === undefined || (value as NodeJS.ErrnoException).code === code;
}

/** A printable message for any thrown value. */
export function errorMessage(value: unknown): string {
  if (value instanceof Error) return value.message;
  return String(value);
}
