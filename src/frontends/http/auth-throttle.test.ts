import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthThrottle, FAILED_AUTH_ALLOWANCE, FAILED_AUTH_PER_MINUTE, FIRST_LOCKOUT_S, LONGEST_LOCKOUT_S, type Lockout } from './auth-throttle.js';

describe('AuthThrottle', () => {
  let reports: Lockout[];
  let throttle: AuthThrottle;

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
    reports = [];
    throttle = new AuthThrottle((lockout) => reports.push(lockout));
  });

  afterEach(() => {
    throttle.close();
    vi.useRealTimers();
  });

  /** Fail until a lockout starts; its length in seconds. */
  function failUntilLocked(client: string): number {
    for (let i = 0; i < 1000; i++) {
      const seconds = throttle.failed(client);
      if (seconds > 0) return seconds;
    }
    throw new Error('never locked out');
  }

  it('allows a burst of failures, then locks the address out; lockouts double up to the longest', () => {
    for (let i = 0; i < FAILED_AUTH_ALLOWANCE; i++) expect(throttle.failed('a')).toBe(0);
    expect(throttle.failed('a')).toBe(FIRST_LOCKOUT_S);
    expect(throttle.lockedFor('a')).toBe(FIRST_LOCKOUT_S);
    expect(throttle.lockedFor('b')).toBe(0);
    const lengths = [FIRST_LOCKOUT_S];
    for (let i = 0; i < 8; i++) {
      vi.advanceTimersByTime(lengths.at(-1)! * 1000);
      expect(throttle.lockedFor('a')).toBe(0);
      lengths.push(throttle.failed('a')); // no allowance came back during the lockout
    }
    expect(lengths).toEqual(lengths.map((_, i) => Math.min(LONGEST_LOCKOUT_S, FIRST_LOCKOUT_S * 2 ** i)));
    expect(lengths.at(-1)).toBe(LONGEST_LOCKOUT_S);
  });

  it('gives the allowance back at its pace, so a client that paces its failures is never locked out', () => {
    const every = 60_000 / FAILED_AUTH_PER_MINUTE;
    for (let i = 0; i < 100; i++) {
      expect(throttle.failed('slow')).toBe(0);
      vi.advanceTimersByTime(every);
    }
    expect(reports).toEqual([]);
  });

  it('reports each lockout once it is over: the failures that led to it and the requests it refused', () => {
    failUntilLocked('a');
    for (let i = 0; i < 5; i++) throttle.lockedFor('a');
    expect(reports).toEqual([]);
    vi.advanceTimersByTime(FIRST_LOCKOUT_S * 1000);
    expect(reports).toEqual([{ client: 'a', started: 1_000_000, seconds: FIRST_LOCKOUT_S, failed: FAILED_AUTH_ALLOWANCE + 1, refused: 5 }]);
    // A lockout running when the server stops is reported then.
    failUntilLocked('a');
    throttle.close();
    expect(reports).toHaveLength(2);
    expect(reports[1]).toMatchObject({ client: 'a', seconds: 2 * FIRST_LOCKOUT_S, failed: 1, refused: 0 });
  });

  it('forgets an address quiet for long: its next lockout is the first length again', () => {
    failUntilLocked('a');
    vi.advanceTimersByTime(FIRST_LOCKOUT_S * 1000);
    expect(throttle.failed('a')).toBe(2 * FIRST_LOCKOUT_S);
    vi.advanceTimersByTime(11 * 60_000);
    expect(failUntilLocked('a')).toBe(FIRST_LOCKOUT_S);
    throttle.close();
    // The failure before the long quiet is not counted into the next run.
    expect(reports.at(-1)).toMatchObject({ seconds: FIRST_LOCKOUT_S, failed: FAILED_AUTH_ALLOWANCE + 1 });
  });
});
