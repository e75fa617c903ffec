import { MAX_BODY_BYTES } from '@maintd/api';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { type AppEnv, isMutation } from './context.js';

const tooLarge = (c: Context<AppEnv>): Response => c.json({ error: `request body over ${MAX_BODY_BYTES} bytes` }, 413);
const limitBody: MiddlewareHandler<AppEnv> = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });

/**
 * Refuses a mutation's body over `MAX_BODY_BYTES` with 413. Only where a body can matter, and
 * from the declared length when there is one: hono's bodyLimit touches `raw.body`, which makes
 * the Node adapter build a whole fetch Request and stream per call instead of reading the body
 * straight off the socket (docs/SCALING.md). Node's parser reads exactly the declared length, so
 * the header is the bound.
 */
export const limitMutationBodies: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!isMutation(c.req.method)) return next();
  const declared = c.req.header('content-length');
  if (declared !== undefined && c.req.header('transfer-encoding') === undefined && /^\d{1,15}$/.test(declared)) {
    return Number(declared) > MAX_BODY_BYTES ? tooLarge(c) : next();
  }
  return limitBody(c, next);
};
