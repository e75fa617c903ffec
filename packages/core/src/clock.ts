/**
 * The one source of time in maintd. Core code never reads the wall clock or starts a timer
 * itself, so windows, leases and sweeps can be driven deterministically by {@link FakeClock}.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds; rejects with the signal's reason if `signal` aborts first.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The real clock, for production wiring. Its sleep rejects with the signal's own reason, as
 * {@link FakeClock} does: `timers/promises` would build an `AbortError` with a stack trace on
 * every abort, and the scheduler aborts a pool's sleep to wake it for each queued task.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(abortReason(signal));
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

interface Sleeper {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
  cleanup(): void;
}

/**
 * A manual clock for tests and simulations. Time only moves when {@link FakeClock.advance} or
 * {@link FakeClock.set} is called; sleepers wake in deadline order, and the microtask queue is
 * drained after each wake so that woken code runs before time moves on.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #sleepers: Sleeper[] = [];

  /** @param startMs the initial time (default 2026-01-01T00:00:00Z, a fixed, realistic epoch). */
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  /** {@inheritDoc Clock.now} */
  now(): number {
    return this.#now;
  }

  /** {@inheritDoc Clock.sleep} */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(abortReason(signal));
      };
      const sleeper: Sleeper = {
        // Whole milliseconds, as Date.now() reads: a jittered sleep must not make the times records
        // carry fractional.
        at: this.#now + Math.ceil(Math.max(0, ms)),
        seq: this.#seq++,
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Number of pending sleepers; useful to assert that a loop is parked. */
  get pendingSleepers(): number {
    return this.#sleepers.length;
  }

  /**
   * Moves time forward by `ms`, waking every sleeper whose deadline falls inside the step, in
   * order, letting each woken continuation run before the next.
   */
  async advance(ms: number): Promise<void> {
    await this.set(this.#now + ms);
  }

  /** Moves time to `targetMs` (never backwards), waking sleepers in deadline order. */
  async set(targetMs: number): Promise<void> {
    if (targetMs < this.#now) throw new RangeError('FakeClock cannot move backwards');
    await settle();
    for (;;) {
      const next = this.#nextDue(targetMs);
      if (!next) break;
      this.#sleepers = this.#sleepers.filter((s) => s !== next);
      this.#now = Math.max(this.#now, next.at);
      next.cleanup();
      next.resolve();
      await settle();
    }
    this.#now = targetMs;
    await settle();
  }

  #nextDue(limit: number): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.#sleepers) {
      if (s.at > limit) continue;
      if (!best || s.at < best.at || (s.at === best.at && s.seq < best.seq)) best = s;
    }
    return best;
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('The operation was aborted', { cause: reason });
}

/** Lets pending promise continuations (and the I/O callbacks they schedule) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}

/**
 * A wall-clock deadline `ms` from now, for transport deadlines (gRPC) that are defined against
 * real time whatever {@link Clock} the logic runs on.
 */
export function wallClockDeadline(ms: number): Date {
  return new Date(Date.now() + ms);
}

/**
 * Settles like `work`, or rejects with `onTimeout()` once `ms` of real time have passed: a bound
 * on a whole transport call (all its retries and failovers), defined against real time whatever
 * {@link Clock} the logic runs on. The losing `work` runs on; its rejection is absorbed.
 */
export function withWallClockBound<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref?.();
  });
  work.catch(() => undefined);
  return Promise.race([work, bound]).finally(() => clearTimeout(timer));
}
