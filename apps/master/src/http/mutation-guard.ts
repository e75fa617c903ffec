import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { type AppEnv, isMutation, remoteAddress } from './context.js';

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}

/**
 * Mutations need the bearer token when one is configured (compared in constant time, as
 * digests of equal length); without one, only loopback clients may mutate. Reads are open.
 */
export function mutationGuard(token: string | undefined): MiddlewareHandler<AppEnv> {
  const expected = token ? digest(token) : undefined;
  return async (c, next) => {
    if (!isMutation(c.req.method)) return next();
    if (expected) {
      const header = c.req.header('authorization') ?? '';
      const given = /^Bearer (.+)$/i.exec(header)?.[1] ?? '';
      if (!timingSafeEqual(digest(given), expected)) {
        return c.json({ error: 'missing or invalid bearer token' }, 401, { 'www-authenticate': 'Bearer' });
      }
      c.set('viaToken', true);
      return next();
    }
    if (!isLoopback(remoteAddress(c))) {
      return c.json({ error: 'mutations are allowed only from loopback while MASTER_API_TOKEN is unset' }, 403);
    }
    return next();
  };
}
