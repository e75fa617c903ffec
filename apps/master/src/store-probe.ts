import type { Clock } from '@maintd/core';

/** How long a successful probe vouches for the store: lists may answer 200 this long after etcd went away. */
const VOUCH_MS = 250;

/**
 * Whether etcd answers, known at the cost of at most one probe per {@link VOUCH_MS} shared by
 * every reader. A list served from memory (kept current by a watch) must still answer 503 while
 * etcd is away, as every other route does, and the watch cannot tell: etcd3 re-dials a broken
 * watch stream without reporting an error, so the event hub stays live through an outage. A
 * round trip per read made each list read as slow as a store read, so a success is trusted for a
 * short interval instead: a list turns 503 at most that long after etcd goes away. Failures are
 * never kept, so lists answer again on the first read after etcd is back.
 */
export class StoreProbe {
  readonly #probe: () => Promise<unknown>;
  readonly #clock: Clock;
  /** When the last probe that succeeded was started (clock time). */
  #okAt = -Infinity;
  #inFlight: Promise<void> | undefined;

  /** `probe`: the cheapest read there is, which succeeds only when etcd answers. */
  constructor(probe: () => Promise<unknown>, clock: Clock) {
    this.#probe = probe;
    this.#clock = clock;
  }

  /**
   * Resolves when a probe started within the interval succeeded, or once the one in flight (or
   * started now) does; rejects with its error.
   */
  vouch(): Promise<void> {
    const now = this.#clock.now();
    // A clock stepped back vouches for nothing.
    if (this.#okAt <= now && now - this.#okAt < VOUCH_MS) return Promise.resolve();
    this.#inFlight ??= this.#probe().then(
      () => {
        this.#okAt = now;
        this.#inFlight = undefined;
      },
      (err: unknown) => {
        this.#inFlight = undefined;
        throw err;
      },
    );
    return this.#inFlight;
  }
}
