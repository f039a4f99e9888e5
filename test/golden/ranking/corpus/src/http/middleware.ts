import type { Handler } from './router';

/** A middleware wraps the next handler: logging, auth, rate limits. */
export type Middleware = (next: Handler) => Handler;

/** Compose middleware so the first one listed runs first. */
export function compose(middleware: Middleware[], handler: Handler): Handler {
  return middleware.reduceRight((next, wrap) => wrap(next), handler);
}
