/** What the error table says of one code. */
export interface ErrorSpec {
  /** What to do next, said when the error has no detail of its own (or after it). */
  readonly message: string;
  /** A person can fix it (exit 1, no bug report); false only for bugs. */
  readonly user: boolean;
  /** The status a team server answers it with (see the rule below). */
  readonly http: number;
  /** The CLI's exit code. */
  readonly exit: number;
}

/**
 * Every failure a user can see has a code from this table; front ends match on `code`, never on
 * `instanceof`, and take its status and exit code from here (none keeps a list of its own).
 *
 * The rule for HTTP statuses: 4xx when the request, or the repository or server set-up it meets,
 * must change before asking again helps — 400 the request itself, 401 its token, 403 a read refused
 * as a secret or outside the repository, 404 what it names is not there, 409 the repository or the
 * server stands in the way (its config, environment, index, lock or permissions: the message names
 * the fix), 413/415/429 its body, its type, its rate. 5xx only when nothing is wrong with the
 * request: 503 when asking again unchanged may work once the server recovers (the store cannot be
 * reached or was lost, the request took too long, the index changed under it, a shutdown
 * interrupted it), 507 when the server's disk is full, 500 for a bug. Exit codes: 1 for what a
 * person can fix, 2 for a bug, 130 for an interrupted command (128 + SIGINT).
 */
export const ERRORS = {
  // The repository or its index stands in the way.
  NOT_INITIALIZED: { message: 'no .repodex/ here: run `repodex init` (or `repodex sync`, which initializes) in the repository', user: true, http: 409, exit: 1 },
  INDEX_MISSING: { message: 'index missing: run `repodex sync`', user: true, http: 409, exit: 1 },
  INDEX_INCOMPATIBLE: { message: 'index was written by another version of repodex or with other rules: run `repodex sync`', user: true, http: 409, exit: 1 },
  INDEX_CORRUPT: { message: 'index is damaged: run `repodex sync` (it rebuilds)', user: true, http: 409, exit: 1 },
  INDEX_STALE: { message: 'index is stale and automatic indexing is off: run `repodex sync`', user: true, http: 409, exit: 1 },
  CONFIG_INVALID: { message: 'config is invalid: fix .repodex/config.json or delete it and run `repodex init`', user: true, http: 409, exit: 1 },
  IGNORE_UNREADABLE: { message: 'an ignore file could not be read: fix its permissions or remove it', user: true, http: 409, exit: 1 },
  LOCKED: { message: 'another sync is running: wait for it to finish', user: true, http: 409, exit: 1 },
  LOCK_DENIED: { message: 'cannot take the writer lock: fix the permissions of .repodex/ (or run repodex as the user who owns it)', user: true, http: 409, exit: 1 },
  WATCH_UNAVAILABLE: { message: 'file watching is not available here: run `repodex sync` after changes instead', user: true, http: 409, exit: 1 },
  ENV_INVALID: { message: 'an environment variable is invalid: fix or unset it', user: true, http: 409, exit: 1 },
  EMBEDDER_FAILED: { message: 'the embedding provider cannot run: fix `embeddings` in .repodex/config.json (lexical search keeps working)', user: true, http: 409, exit: 1 },
  VECTORS_INCOMPATIBLE: {
    message: 'the vectors on disk were made by another embedding model: run `repodex sync --force` (or `repodex index build --force`) to re-embed',
    user: true,
    http: 409,
    exit: 1,
  },
  STORE_INCOMPATIBLE: { message: 'the index database was set up by a newer repodex: upgrade repodex or use another database', user: true, http: 409, exit: 1 },
  // The request itself.
  BAD_REQUEST: { message: 'bad request', user: true, http: 400, exit: 1 },
  ROOT_NOT_FOUND: { message: 'root directory not found: pass an existing directory with --root', user: true, http: 400, exit: 1 },
  NO_REPOSITORY: { message: 'not inside a repository: run `repodex init` there first, or pass --root', user: true, http: 400, exit: 1 },
  REPO_UNKNOWN: { message: 'no repository with that id is registered on this server: list them with `repodex repo list` (or GET /repos)', user: true, http: 404, exit: 1 },
  // A read refused inside an answer (open, outline, a fetched chunk): the answer says why and what to do.
  BLOCKED: { message: 'the read is refused: a secret, or a path outside the repository', user: true, http: 403, exit: 1 },
  REFUSED: { message: 'what was asked for is not there', user: true, http: 404, exit: 1 },
  // Only a team server answers these (the CLI names them when a server does).
  UNAUTHORIZED: { message: 'a bearer token is needed, or the one sent is wrong', user: true, http: 401, exit: 1 },
  NOT_FOUND: { message: 'no such route: GET /openapi.json lists them', user: true, http: 404, exit: 1 },
  TOO_LARGE: { message: 'the body is larger than the server takes (--max-body-bytes on serve)', user: true, http: 413, exit: 1 },
  UNSUPPORTED_MEDIA_TYPE: { message: 'the body must be JSON sent with Content-Type: application/json', user: true, http: 415, exit: 1 },
  RATE_LIMITED: { message: 'too many requests from this client: wait and ask again (--rate-limit on serve)', user: true, http: 429, exit: 1 },
  TIMEOUT: { message: 'the request took too long: it goes on in the background, ask again in a moment', user: true, http: 503, exit: 1 },
  // Nothing is wrong with the request: asking again may work.
  ABORTED: { message: 'interrupted: the index was left as it was before', user: true, http: 503, exit: 130 },
  INDEX_CHANGED: { message: 'the index changed while answering: ask again', user: true, http: 503, exit: 1 },
  STORE_UNAVAILABLE: { message: 'the index database cannot be used: check --store (or REPODEX_STORE, or `store` in .repodex/config.json)', user: true, http: 503, exit: 1 },
  SERVER_UNAVAILABLE: { message: 'the repodex server cannot be reached: start it with `repodex serve --http`, or check --server (or REPODEX_SERVER)', user: true, http: 503, exit: 1 },
  // The machine refused, and a user fixes it: see core/system-errors.ts. Given with a detail
  // naming the file or server, so each reads as the fix that follows it.
  NOT_WRITABLE: { message: 'make it writable or mount it read-write, or run repodex as the user who owns it', user: true, http: 409, exit: 1 },
  FILE_SYSTEM: { message: 'the file system refused: fix what the message names and run the command again', user: true, http: 409, exit: 1 },
  DISK_FULL: { message: 'free some space there and run the command again', user: true, http: 507, exit: 1 },
  STORE_LOST: { message: 'run the command again: it reconnects', user: true, http: 503, exit: 1 },
  // A bug.
  INTERNAL: { message: 'internal error', user: false, http: 500, exit: 2 },
} as const satisfies Record<string, ErrorSpec>;

/** A stable, matchable error code. */
export type ErrorCode = keyof typeof ERRORS;

/** Whether `code` is one of the table's (a newer server may send one this build does not know). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERRORS, code);
}

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
    super(detail ? (options?.selfContained ? detail : `${detail} (${ERRORS[code].message})`) : ERRORS[code].message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RepodexError';
    this.code = code;
    this.detail = detail;
    this.selfContained = options?.selfContained === true;
  }

  /** True when the user can fix it (exit code 1); false for bugs and environment failures (exit code 2). */
  get isUserError(): boolean {
    return ERRORS[this.code].user;
  }

  /** A plain object that crosses a worker boundary (structured clone drops the class). */
  toWire(): { code: ErrorCode; detail: string | undefined; selfContained: boolean } {
    return { code: this.code, detail: this.detail, selfContained: this.selfContained };
  }

  /** Rebuild an error sent with `toWire`. */
  static fromWire(wire: { code: ErrorCode; detail: string | undefined; selfContained?: boolean }): RepodexError {
    return new RepodexError(isErrorCode(wire.code) ? wire.code : 'INTERNAL', wire.detail, { selfContained: wire.selfContained === true });
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
