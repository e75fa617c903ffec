import type { Clock } from '@maintd/core';
import type { Metrics } from '@maintd/scheduler';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { type ApiToken, type TokenScope, findToken, scopeAllows } from '../auth/api-token.js';
import { type SubjectGrant, findSubjectGrant } from '../auth/subject-grant.js';
import { type AppEnv, isMutation, remoteAddress } from './context.js';
import { logLimiter } from './log-limit.js';
import { verifiedPeerSubject } from './peer-certificate.js';

/** What {@link apiAuth} checks requests against. */
export interface ApiAuthOptions {
  /** The tokens in force now (`MASTER_API_TOKEN` as `default`, and the tokens file's). */
  readonly tokens: () => readonly ApiToken[];
  /** The client certificate subjects mapped to names in force now (the tokens file's `subject:` lines). */
  readonly subjects?: () => readonly SubjectGrant[];
  /** MASTER_API_READS: `token` = reads need a `read` or `operate` token. */
  readonly reads: 'open' | 'token';
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clock: Clock;
}

type Failure = 'missing' | 'unknown' | 'scope' | 'query_token';

/** Query parameters a client might carry a token in; refused, since URLs end up in proxy logs. */
const QUERY_TOKEN_PARAMS = ['token', 'access_token'] as const;
/** A client's failed attempts are logged at most once per this. */
const LOG_EVERY_MS = 60_000;
/** Clients remembered for the log's rate limit at most (docs/ARCHITECTURE.md §3.4). */
const MAX_REMEMBERED = 10_000;
/** Reads that stay open whatever MASTER_API_READS says: the API's description holds no data. */
const ALWAYS_OPEN = new Set(['/api/v1/openapi.json']);

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}

/**
 * The API's authentication and scopes (docs/ARCHITECTURE.md §3.4). With a token configured, a
 * mutation needs an `operate` token, and a read a `read` or `operate` token when
 * MASTER_API_READS=token; the presented token is hashed and compared with every entry's digest in
 * constant time. Without a token, a client certificate verified by the TLS handshake whose
 * subject the tokens file maps acts as that name with that scope. 401 (none or unknown) and 403
 * (too narrow) name the scope needed and never the token or the subject. A token in the query string is refused (400). With no token configured, only loopback
 * clients may mutate. Failures are counted by reason and logged at most once per client a minute.
 */
export function apiAuth(o: ApiAuthOptions): MiddlewareHandler<AppEnv> {
  const mayLog = logLimiter({ everyMs: LOG_EVERY_MS, maxKeys: MAX_REMEMBERED });
  const refuse = (address: string, reason: Failure, method: string, path: string): void => {
    o.metrics.apiAuthFailures.inc({ reason });
    if (!mayLog(address, o.clock.now())) return;
    o.logger.warn(
      { client: address, reason, method, path },
      `API request refused (${reason}); further refusals of this client are not logged for a minute`,
    );
  };
  return async (c, next) => {
    const address = remoteAddress(c) ?? 'unknown';
    const { method, path } = c.req;
    const param = QUERY_TOKEN_PARAMS.find((p) => c.req.query(p) !== undefined);
    if (param !== undefined) {
      refuse(address, 'query_token', method, path);
      return c.json(
        { error: `a token in the query string (?${param}=) is refused: send it in the Authorization header` },
        400,
      );
    }
    const needed: TokenScope | undefined = isMutation(method)
      ? 'operate'
      : o.reads === 'token' && !ALWAYS_OPEN.has(path)
        ? 'read'
        : undefined;
    const tokens = o.tokens();
    const subjects = o.subjects?.() ?? [];
    // Without credentials, mutations fall back to loopback; reads that need a token fail closed
    // (a tokens file emptied at runtime must not open them).
    if (tokens.length === 0 && subjects.length === 0 && needed !== 'read') {
      if (needed === 'operate' && !isLoopback(address)) {
        return c.json({ error: 'mutations are allowed only from loopback while no API token is configured' }, 403);
      }
      return next();
    }
    // A bearer token, when presented, is what the client asked to act as; else a verified client
    // certificate whose subject the tokens file maps. An unmapped certificate grants no scope.
    const presented = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    const token = presented === undefined ? undefined : findToken(tokens, presented);
    const peer = presented === undefined && subjects.length > 0 ? verifiedPeerSubject(c) : undefined;
    const grant = peer === undefined ? undefined : findSubjectGrant(subjects, peer);
    const who = token ?? grant;
    if (who) c.set('tokenName', who.name);
    if (needed === undefined) return next();
    if (!who) {
      refuse(address, presented === undefined ? 'missing' : 'unknown', method, path);
      return c.json({ error: `missing or invalid bearer token: this needs a token of scope ${needed}` }, 401, {
        'www-authenticate': 'Bearer',
      });
    }
    if (!scopeAllows(who.scope, needed)) {
      refuse(address, 'scope', method, path);
      const credential = token ? 'token' : 'client certificate';
      return c.json(
        { error: `the ${credential} "${who.name}" has scope ${who.scope}: this needs scope ${needed}` },
        403,
      );
    }
    return next();
  };
}
