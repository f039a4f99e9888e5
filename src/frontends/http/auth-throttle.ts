// Failed authentications, counted per client address apart from its request budget: a client may
// get the token wrong a few times (a typo, a stale configuration), but one that keeps sending
// wrong or missing tokens is refused for a while, without its tokens being checked, so guessing
// runs at the pace of the allowance whatever the speed of the client. docs/design.md, "Access",
// weighs what this costs a valid client that shares the address.

/** Failed authentications an address may make in a burst. */
export const FAILED_AUTH_ALLOWANCE = 10;
/** How fast the allowance comes back: failures a minute. */
export const FAILED_AUTH_PER_MINUTE = 10;
/** The first lockout past the allowance; each one that follows doubles, up to the longest. */
export const FIRST_LOCKOUT_S = 2;
export const LONGEST_LOCKOUT_S = 60;
/** An address without a lockout for this long starts again from the first lockout's length. */
const FORGIVEN_AFTER_MS = 10 * 60_000;
/** Addresses remembered at most (the least recently seen are forgotten first). */
const MAX_CLIENTS = 10_000;

/** One lockout, as the log tells it once it is over: one line however many requests it refused. */
export interface Lockout {
  readonly client: string;
  /** When it started (epoch ms). */
  readonly started: number;
  readonly seconds: number;
  /** Failed authentications in the run that led to it (since the previous lockout, or since the allowance was last whole), the one that started it included. */
  readonly failed: number;
  /** Requests refused during the lockout, unchecked. */
  readonly refused: number;
}

interface ClientState {
  /** Failures still allowed (fractional while it refills), as of `at`. */
  allowance: number;
  at: number;
  lockedUntil: number;
  lockouts: number;
  failed: number;
  current?: { started: number; seconds: number; refused: number; timer: ReturnType<typeof setTimeout> };
}

/** Failed authentications per client address: an allowance that refills, then lockouts that grow. */
export class AuthThrottle {
  private readonly clients = new Map<string, ClientState>();

  constructor(
    /** Told of each lockout once it is over (and of those still running when the throttle is closed). */
    private readonly report: (lockout: Lockout) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Seconds `client` is still locked out (its request is then refused unchecked, and counted), or 0
   * when its token may be checked.
   */
  lockedFor(client: string): number {
    const state = this.clients.get(client);
    if (!state?.current) return 0;
    const left = state.lockedUntil - this.now();
    if (left <= 0) return 0;
    state.current.refused++;
    return Math.ceil(left / 1000);
  }

  /** A failed authentication from `client`: 0 while within its allowance, else the seconds of the lockout it starts. */
  failed(client: string): number {
    const now = this.now();
    const state = this.touch(client, now);
    if (state.current) this.end(client, state); // over (lockedFor said so), not yet reported
    if (state.lockouts > 0 && now - state.lockedUntil > FORGIVEN_AFTER_MS) state.lockouts = 0;
    state.allowance = Math.min(FAILED_AUTH_ALLOWANCE, state.allowance + (Math.max(0, now - state.at) / 60_000) * FAILED_AUTH_PER_MINUTE);
    state.at = now;
    if (state.allowance === FAILED_AUTH_ALLOWANCE) state.failed = 0; // quiet long enough: earlier slips are forgotten
    state.failed++;
    if (state.allowance >= 1) {
      state.allowance -= 1;
      return 0;
    }
    const seconds = Math.min(LONGEST_LOCKOUT_S, FIRST_LOCKOUT_S * 2 ** state.lockouts);
    state.lockouts++;
    state.lockedUntil = now + seconds * 1000;
    // No allowance comes back while locked out: the next failure after it starts a longer one.
    state.at = state.lockedUntil;
    const timer = setTimeout(() => this.end(client, state), seconds * 1000);
    timer.unref();
    state.current = { started: now, seconds, refused: 0, timer };
    return seconds;
  }

  /** Report the lockouts still running (the server is stopping). */
  close(): void {
    for (const [client, state] of this.clients) if (state.current) this.end(client, state);
  }

  private end(client: string, state: ClientState): void {
    const current = state.current;
    if (!current) return;
    clearTimeout(current.timer);
    state.current = undefined;
    this.report({ client, started: current.started, seconds: current.seconds, failed: state.failed, refused: current.refused });
    state.failed = 0;
  }

  /** The state of `client`, now the most recently seen. */
  private touch(client: string, now: number): ClientState {
    let state = this.clients.get(client);
    if (state) this.clients.delete(client);
    else state = { allowance: FAILED_AUTH_ALLOWANCE, at: now, lockedUntil: 0, lockouts: 0, failed: 0 };
    this.clients.set(client, state);
    if (this.clients.size > MAX_CLIENTS) {
      const [oldest, forgotten] = this.clients.entries().next().value!;
      this.clients.delete(oldest);
      if (forgotten.current) this.end(oldest, forgotten);
    }
    return state;
  }
}
