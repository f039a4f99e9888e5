import type { Middleware } from '../http/middleware';

/** Allow at most `limit` requests per client per window; later ones get 429 Too Many Requests. */
export function rateLimit(limit: number, windowMs: number): Middleware {
  const hits = new Map<string, { count: number; resetAt: number }>();
  return (next) => async (request, params) => {
    const client = request.headers.get('x-forwarded-for') ?? 'local';
    const now = Date.now();
    const entry = hits.get(client);
    if (!entry || entry.resetAt < now) hits.set(client, { count: 1, resetAt: now + windowMs });
    else if (++entry.count > limit) return new Response('Too Many Requests', { status: 429 });
    return next(request, params);
  };
}
