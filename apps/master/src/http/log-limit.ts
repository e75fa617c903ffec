/** How often a {@link logLimiter} lets each key's lines through, and how many keys it remembers. */
export interface LogLimitOptions {
  /** A key is let through at most once per this. */
  readonly everyMs: number;
  /** Keys remembered at most: past it, the longest remembered is forgotten first. */
  readonly maxKeys: number;
}

/**
 * A log line's rate limit per key (a client's address): the returned function says whether a
 * line about `key` at `nowMs` may be written, at most once per `everyMs` per key. The memory it
 * keeps is bounded by `maxKeys` whatever the traffic: a flood of new clients within one period
 * makes the oldest be forgotten (and logged again early), never the map grow. Insertion order is
 * the order of the times kept, so both stale and surplus keys leave from the front, amortised O(1).
 */
export function logLimiter(o: LogLimitOptions): (key: string, nowMs: number) => boolean {
  const lastLogged = new Map<string, number>();
  return (key, nowMs) => {
    const last = lastLogged.get(key);
    if (last !== undefined && nowMs - last < o.everyMs) return false;
    lastLogged.delete(key);
    lastLogged.set(key, nowMs);
    for (const [k, at] of lastLogged) {
      if (lastLogged.size <= o.maxKeys && nowMs - at < o.everyMs) break;
      lastLogged.delete(k);
    }
    return true;
  };
}
