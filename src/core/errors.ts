/** Every failure a user can see has a code from this table; fronts ends match on `code`, never on `instanceof`. */
export const ERROR_CODES = {
  // user errors (exit 1)
  NOT_INITIALIZED: 'no .repodex/ here: run `repodex init` (or `repodex sync`, which initializes) in the repository',
  INDEX_MISSING: 'index missing: run `repodex sync`',
  INDEX_INCOMPATIBLE: 'index was written by another version of repodex or with other rules: run `repodex sync`',
  INDEX_CORRUPT: 'index is damaged: run `repodex sync` (it rebuilds)',
  INDEX_STALE: 'index is stale and automatic indexing is off: run `repodex sync`',
  CONFIG_INVALID: 'config is invalid: fix .repodex/config.json or delete it and run `repodex init`',
  IGNORE_UNREADABLE: 'an ignore file could not be read: fix its permissions or remove it',
  LOCKED: 'another sync is running: wait for it to finish',
  LOCK_DENIED: 'cannot take the writer lock: fix the permissions of .repodex/ (or run repodex as the user who owns it)',
  BAD_REQUEST: 'bad request',
  WATCH_UNAVAILABLE: 'file watching is not available here: run `repodex sync` after changes instead',
  ROOT_NOT_FOUND: 'root directory not found: pass an existing directory with --root',
  NO_REPOSITORY: 'not inside a repository: run `repodex init` there first, or pass --root',
  ENV_INVALID: 'an environment variable is invalid: fix or unset it',
  ABORTED: 'interrupted: the index was left as it was before',
  EMBEDDER_FAILED: 'the embedding provider cannot run: fix `embeddings` in .repodex/config.json (lexical search keeps working)',
  VECTORS_INCOMPATIBLE: 'the vectors on disk were made by another embedding model: run `repodex sync --force` (or `repodex index build --force`) to re-embed',
  STORE_UNAVAILABLE: 'the index database cannot be used: check --store (or REPODEX_STORE, or `store` in .repodex/config.json)',
  STORE_INCOMPATIBLE: 'the index database was set up by a newer repodex: upgrade repodex or use another database',
  INDEX_CHANGED: 'the index changed while answering: ask again',
  REPO_UNKNOWN: 'no repository with that id is registered on this server: list them with `repodex repo list` (or GET /repos)',
  SERVER_UNAVAILABLE: 'the repodex server cannot be reached: start it with `repodex serve --http`, or check --server (or REPODEX_SERVER)',
  // the machine refused, and a user fixes it (exit 1 too): see core/system-errors.ts. Given with a
  // detail naming the file or server, so each reads as the fix that follows it.
  NOT_WRITABLE: 'make it writable or mount it read-write, or run repodex as the user who owns it',
  DISK_FULL: 'free some space there and run the command again',
  FILE_SYSTEM: 'the file system refused: fix what the message names and run the command again',
  STORE_LOST: 'run the command again: it reconnects',
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
  'INDEX_STALE',
  'CONFIG_INVALID',
  'IGNORE_UNREADABLE',
  'LOCKED',
  'LOCK_DENIED',
  'BAD_REQUEST',
  'WATCH_UNAVAILABLE',
  'ROOT_NOT_FOUND',
  'NO_REPOSITORY',
  'ENV_INVALID',
  'ABORTED',
  'EMBEDDER_FAILED',
  'VECTORS_INCOMPATIBLE',
  'STORE_UNAVAILABLE',
  'STORE_INCOMPATIBLE',
  'INDEX_CHANGED',
  'REPO_UNKNOWN',
  'SERVER_UNAVAILABLE',
  'NOT_WRITABLE',
  'DISK_FULL',
  'FILE_SYSTEM',
  'STORE_LOST',
]);

/** The one error type repodex throws on purpose: a code, a message that says what to do next, optional detail. */
export class RepodexError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;
  private readonly selfContained: boolean;

  /**
   * The message is `detail` followed by the code's standard advice, unless `selfContained` says
   * the detail already names the fix (where the standard advice would contradict it).
   */
  constructor(code: ErrorCode, detail?: string, options?: { cause?: unknown; selfContained?: boolean }) {
    super(detail ? (options?.selfContained ? detail : `${detail} (${ERROR_CODES[code]})`) : ERROR_CODES[code], options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RepodexError';
    this.code = code;
    this.detail = detail;
    this.selfContained = options?.selfContained === true;
  }

  /** True when the user can fix it (exit code 1); false for bugs and environment failures (exit code 2). */
  get isUserError(): boolean {
    return USER_CODES.has(this.code);
  }

  /** A plain object that crosses a worker boundary (structured clone drops the class). */
  toWire(): { code: ErrorCode; detail: string | undefined; selfContained: boolean } {
    return { code: this.code, detail: this.detail, selfContained: this.selfContained };
  }

  /** Rebuild an error sent with `toWire`. */
  static fromWire(wire: { code: ErrorCode; detail: string | undefined; selfContained?: boolean }): RepodexError {
    return new RepodexError(wire.code in ERROR_CODES ? wire.code : 'INTERNAL', wire.detail, { selfContained: wire.selfContained === true });
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
