import type { z } from '@hono/zod-openapi';
import {
  ClaimLostError,
  ClosedError,
  ContentionError,
  StoreFullError,
  StoreUnavailableError,
  ValidationError,
} from '@maintd/core';
import type { StoreOutageLog } from '@maintd/scheduler';
import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';
import type { AppEnv } from './context.js';

/**
 * The one place errors become HTTP answers: a handler throws the error hierarchy of
 * `@maintd/core` and this maps it (400 invalid, 409 claim lost, 503 etcd away, full or contended,
 * 500 anything else, logged). Every answer is `{ "error": "…" }`. A 503 because etcd is away or
 * full goes to `outage` (the scheduler's outage log): a client that only sees the 503 cannot say
 * why, and the log names the cause (no answer within the deadline, an open circuit, NOSPACE)
 * once per outage rather than once per request.
 */
export function errorHandler(logger: Logger, outage?: StoreOutageLog): ErrorHandler<AppEnv> {
  const report = (err: Error, c: Context<AppEnv>): void => {
    const { method, path } = c.req;
    outage?.failed(err, `${method} ${path} answered 503`, { method, path });
  };
  return (err, c) => {
    if (err instanceof HTTPException) {
      const status = err.status;
      const message =
        status === 400 && /json/i.test(err.message) ? 'invalid JSON body' : err.message || 'request rejected';
      return c.json({ error: message }, status);
    }
    if (err instanceof ValidationError) return c.json({ error: err.message }, 400);
    if (err instanceof StoreFullError) {
      report(err, c);
      return c.json(
        { error: 'etcd is out of space and refuses writes until an operator compacts, defragments and disarms it' },
        503,
      );
    }
    // A closed store is this master shutting down, not an outage.
    if (err instanceof StoreUnavailableError) report(err, c);
    if (err instanceof StoreUnavailableError || err instanceof ClosedError) {
      return c.json({ error: 'the store (etcd) is unavailable; retry later' }, 503);
    }
    if (err instanceof ContentionError) return c.json({ error: 'too much contention on this record; retry' }, 503);
    if (err instanceof ClaimLostError) return c.json({ error: err.message }, 409);
    logger.error({ err, method: c.req.method, path: new URL(c.req.url).pathname }, 'request failed');
    return c.json({ error: 'internal error' }, 500);
  };
}

/** A path no route serves: 404 naming it. */
export const notFound: NotFoundHandler<AppEnv> = (c) =>
  c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404);

/**
 * A request the route's schemas refuse: 400 naming the field at fault. An unknown query parameter
 * or body field is named before any other fault: it says the client speaks a newer API than this
 * master, which is the thing to fix first.
 */
export function invalidRequest(
  result: ({ success: true } | { success: false; error: z.ZodError }) & { target: string },
  c: Context<AppEnv>,
): Response | undefined {
  return result.success ? undefined : c.json({ error: describeZodError(result.error, result.target) }, 400);
}

function describeZodError(error: z.ZodError, target: string): string {
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0];
  if (!issue) return 'invalid request';
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  if (issue.code === 'unrecognized_keys') {
    const what = target === 'query' ? 'query parameter' : 'field';
    return `unknown ${what}${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  }
  return `invalid ${field}: ${issue.message}`;
}
