import { createHash, timingSafeEqual } from 'node:crypto';

/** What a token may do: `read` the API, or `operate` (mutate, and read). */
export type TokenScope = 'read' | 'operate';

/** One named API token as the master holds it: the SHA-256 digest of the token, never the token. */
export interface ApiToken {
  /** Who the token belongs to, as `operatorOf` and the logs name it. */
  readonly name: string;
  readonly scope: TokenScope;
  /** SHA-256 of the token (32 bytes). */
  readonly digest: Buffer;
}

/** The name `MASTER_API_TOKEN` goes by among the named tokens (docs/ARCHITECTURE.md §3.4). */
export const DEFAULT_TOKEN_NAME = 'default';

/** SHA-256 of a presented or configured token. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** `MASTER_API_TOKEN` as the `operate` token named `default`, or nothing when unset. */
export function defaultToken(apiToken: string | undefined): readonly ApiToken[] {
  return apiToken === undefined ? [] : [{ name: DEFAULT_TOKEN_NAME, scope: 'operate', digest: tokenDigest(apiToken) }];
}

/** Whether a token of `scope` allows what `needed` names: `operate` implies `read`. */
export function scopeAllows(scope: TokenScope, needed: TokenScope): boolean {
  return scope === 'operate' || needed === 'read';
}

/**
 * The token whose digest is the presented token's, or undefined. Every entry is compared, each in
 * constant time (32-byte digests with `timingSafeEqual`), so neither where a token differs nor
 * which entry matched changes the work done.
 */
export function findToken(tokens: readonly ApiToken[], presented: string): ApiToken | undefined {
  const given = tokenDigest(presented);
  let found: ApiToken | undefined;
  for (const t of tokens) {
    if (timingSafeEqual(given, t.digest) && found === undefined) found = t;
  }
  return found;
}
