import { createHmac } from 'node:crypto';

/** Verify a HS256 JSON Web Token and return its claims; expired or tampered tokens are rejected. */
export function verifyToken(token: string, secret: string, now = Date.now()): Record<string, unknown> {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) throw new TokenError('malformed token');
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  if (expected !== signature) throw new TokenError('bad signature');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: number };
  if (claims.exp !== undefined && claims.exp * 1000 < now) throw new TokenError('token expired');
  return claims;
}

export class TokenError extends Error {}
