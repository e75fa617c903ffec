import type { AuditEntry, AuditFilter, AuditIntent } from '@maintd/core';
import type { Context } from 'hono';
import type { Logger } from 'pino';
import { type AppEnv, remoteAddress } from './context.js';

/** A route as its definition names it: method and path template. */
interface RouteRef {
  readonly method: string;
  readonly path: string;
}

/**
 * What the store records of this request in the audit trail (docs/ARCHITECTURE.md §2.9): the
 * token's name (`anonymous` without one; never the token), the client address, the action and
 * the route's template. Its `written` is the info log line of each entry this master commits.
 */
export function auditIntent(
  c: Context<AppEnv>,
  route: RouteRef,
  action: string,
  logger: Logger,
  bulk?: { readonly filter: AuditFilter; readonly matched: number },
): AuditIntent {
  return {
    who: c.get('tokenName') ?? 'anonymous',
    client: remoteAddress(c) ?? 'unknown',
    action,
    route: `${route.method.toUpperCase()} ${route.path}`,
    ...(bulk ? { filter: bulk.filter, matched: bulk.matched } : {}),
    written: (entry) => logAudit(logger, entry),
  };
}

/** One info line per entry: who, from where, what it named, what committed. */
function logAudit(logger: Logger, e: AuditEntry): void {
  logger.info(
    {
      audit_id: e.id,
      who: e.who,
      client: e.client,
      action: e.action,
      ...(e.kind !== undefined ? { kind: e.kind } : {}),
      ...(e.target !== undefined ? { target: e.target } : {}),
      ...(e.task_id !== undefined ? { task_id: e.task_id } : {}),
      ...(e.filter !== undefined ? { filter: e.filter } : {}),
      outcome: e.outcome,
      ...(e.count !== undefined ? { count: e.count, matched: e.matched } : {}),
    },
    `audit: ${e.who} ${e.action} ${e.outcome}`,
  );
}
