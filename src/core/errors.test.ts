import { describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode, RepodexError } from './errors.js';

/** Codes that are nothing the request did: asking again may work once the server recovers (503). */
const TRANSIENT: readonly ErrorCode[] = ['TIMEOUT', 'ABORTED', 'INDEX_CHANGED', 'STORE_UNAVAILABLE', 'STORE_LOST', 'SERVER_UNAVAILABLE'];

describe('the error table', () => {
  it('answers 4xx for everything the request or its repository must change; 5xx only for a bug, a full disk, or what asking again may cure', () => {
    for (const [code, spec] of Object.entries(ERRORS) as [ErrorCode, (typeof ERRORS)[ErrorCode]][]) {
      if (code === 'INTERNAL') expect(spec.http, code).toBe(500);
      else if (code === 'DISK_FULL') expect(spec.http, code).toBe(507);
      else if (TRANSIENT.includes(code)) expect(spec.http, code).toBe(503);
      else expect(Math.floor(spec.http / 100), code).toBe(4);
    }
    // The codes that once fell through to 500.
    for (const code of ['NOT_INITIALIZED', 'LOCK_DENIED', 'ENV_INVALID', 'EMBEDDER_FAILED', 'STORE_INCOMPATIBLE'] as const) expect(ERRORS[code].http, code).toBe(409);
  });

  it('exits 2 for a bug only, 130 when interrupted, 1 for everything else', () => {
    for (const [code, spec] of Object.entries(ERRORS) as [ErrorCode, (typeof ERRORS)[ErrorCode]][]) {
      expect(spec.exit, code).toBe(code === 'INTERNAL' ? 2 : code === 'ABORTED' ? 130 : 1);
      expect(spec.user, code).toBe(code !== 'INTERNAL');
      expect(new RepodexError(code).isUserError, code).toBe(spec.user);
    }
  });

  it('says what to do for every code, and a detail comes before it', () => {
    for (const [code, spec] of Object.entries(ERRORS)) expect(spec.message.length, code).toBeGreaterThan(5);
    expect(new RepodexError('INDEX_MISSING', 'no index at /x').message).toBe('no index at /x (index missing: run `repodex sync`)');
    expect(RepodexError.fromWire({ code: 'NO_SUCH' as ErrorCode, detail: 'd' }).code).toBe('INTERNAL');
  });
});
