// Relevance judgements for the golden ranking corpus (corpus/, written for these tests): for each
// query, the file a reader who knows the corpus would open first, written down after reading the
// code, not recorded from what the ranking answered. A ranking that gets better keeps passing; one
// that puts a worse file first fails. test/golden/ranking.test.ts checks them on the embedded
// store; test/conformance/agreement.test.ts checks that every store answers these queries alike.

/** One query and what a right answer to it starts with. */
export interface Judgement {
  /** The query, as a person or an agent would ask it. */
  readonly q: string;
  /** A right first file: one, or (where the query is ambiguous, said why beside it) any of a few. */
  readonly top: readonly string[];
  /** Files plainly about the query too: they belong among the first five files. */
  readonly also?: readonly string[];
}

/** The 30 queries, in a fixed order (the agreement suite takes the first few). */
export const JUDGEMENTS: readonly Judgement[] = [
  // retry() is the backoff; the client's doc says it retries with exponential backoff.
  { q: 'retry with exponential backoff', top: ['src/util/retry.ts'], also: ['src/http/client.ts'] },
  // parseCookies is defined in cookies.ts; currentUser in session.ts is where a request's cookies get parsed.
  { q: 'where are cookies parsed', top: ['src/http/cookies.ts'], also: ['src/auth/session.ts'] },
  { q: 'parseCookies', top: ['src/http/cookies.ts'], also: ['src/auth/session.ts'] },
  // verifyToken throws 'token expired'.
  { q: 'JWT token expired', top: ['src/auth/jwt.ts'] },
  { q: 'verify token signature', top: ['src/auth/jwt.ts'] },
  { q: 'LRU cache eviction', top: ['src/util/cache.ts'] },
  { q: 'rate limit too many requests 429', top: ['src/auth/rate-limit.ts'] },
  // Router.add turns `:id` into a parameter; the router's test checks exactly that.
  { q: 'route path parameters', top: ['src/http/router.ts'], also: ['tests/router.spec.ts'] },
  { q: 'compose middleware order', top: ['src/http/middleware.ts'] },
  // readJsonBody refuses bodies over the limit (PayloadTooLargeError).
  { q: 'request body too large', top: ['src/http/body.ts'] },
  { q: 'invalid JSON body', top: ['src/http/body.ts'] },
  // loadConfig is the code; the deployment notes say which variables override config.json.
  { q: 'load configuration, environment variables override', top: ['src/config/load.ts'], also: ['docs/deployment.md'] },
  // Callers wait in ConnectionPool.acquire when every connection is busy.
  { q: 'database connection pool waiting', top: ['src/db/pool.ts'] },
  { q: 'run SQL migrations in order', top: ['src/db/migrate.ts'] },
  { q: 'escape HTML in templates', top: ['src/render/template.ts'] },
  { q: 'validate schema fields', top: ['src/validate/schema.ts'] },
  { q: 'structured JSON logger levels', top: ['src/util/logger.ts'] },
  // startServer handles SIGTERM; the deployment notes promise the graceful shutdown.
  { q: 'graceful shutdown on SIGTERM', top: ['src/server.ts'], also: ['docs/deployment.md'] },
  { q: 'parse command line arguments', top: ['cli/args.py'] },
  { q: 'hash password PBKDF2', top: ['cli/users.py'] },
  // create_user raises "user … already exists".
  { q: 'user already exists', top: ['cli/users.py'] },
  { q: 'export table to CSV', top: ['cli/export.py'] },
  // startSession sets the expiry (an hour) of the session and of its cookie; serializeCookie writes Max-Age.
  { q: 'session cookie expires', top: ['src/auth/session.ts'], also: ['src/http/cookies.ts'] },
  { q: 'HttpClient getJson', top: ['src/http/client.ts'] },
  // Ambiguous: the trace names both files. cookies.ts is the frame that threw (the null met
  // `split`), session.ts the caller that passed the null header on; the fix may go in either.
  {
    q: "TypeError: Cannot read properties of null (reading 'split')\n    at parseCookies (src/http/cookies.ts:5:22)\n    at currentUser (src/auth/session.ts:8:14)",
    top: ['src/auth/session.ts', 'src/http/cookies.ts'],
    also: ['src/auth/session.ts', 'src/http/cookies.ts'],
  },
  // An issue: sessions last an hour whatever the user chose, and that hour is set in startSession.
  {
    q: 'Bug: login sessions expire after an hour even with remember me.\n\nSteps to reproduce: log in, wait 61 minutes, reload.\nExpected: still logged in.\nActual: redirected to /login.',
    top: ['src/auth/session.ts'],
  },
  // Ambiguous: Router.match finds no route ("undefined for a 404"), and startServer answers that
  // with the 404 Not Found response; either is where unknown routes are handled.
  { q: '404 not found for unknown routes', top: ['src/http/router.ts', 'src/server.ts'], also: ['src/http/router.ts', 'src/server.ts'] },
  // The create-user subcommand and its email argument are declared in args.py; users.py creates the user.
  { q: 'create-user subcommand email argument', top: ['cli/args.py'], also: ['cli/users.py'] },
  // Ambiguous: one word. retry.ts implements retrying; the client is the code that retries (its
  // doc: "retries failed requests"). The test that says "retries" is not where retries happen.
  { q: 'retries', top: ['src/util/retry.ts', 'src/http/client.ts'], also: ['src/util/retry.ts', 'src/http/client.ts'] },
  // runMigrations skips those in the applied set.
  { q: 'which migrations were already applied', top: ['src/db/migrate.ts'] },
];
