import { parseCookies, serializeCookie } from '../http/cookies';
import { LruCache } from '../util/cache';

const sessions = new LruCache<string, { userId: string; expiresAt: number }>(10_000);

/** The user of a request's session cookie, if the session is still valid. */
export function currentUser(request: Request): string | undefined {
  const id = parseCookies(request.headers.get('cookie')).session;
  const session = id ? sessions.get(id) : undefined;
  return session && session.expiresAt > Date.now() ? session.userId : undefined;
}

export function startSession(userId: string): string {
  const id = crypto.randomUUID();
  sessions.set(id, { userId, expiresAt: Date.now() + 3_600_000 });
  return serializeCookie('session', id, { httpOnly: true, secure: true, maxAge: 3600 });
}
