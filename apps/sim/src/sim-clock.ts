import type { Clock } from '@maintd/core';

interface Sleeper {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  /** Set when its signal aborted: the heap drops it lazily instead of searching for it. */
  cancelled: boolean;
}

/**
 * The incident's clock: `FakeClock`'s semantics — sleepers wake one at a time in deadline order,
 * ties in the order they slept, and everything a wake sets off runs before the next wake — at
 * the cost a six-hour run of six masters needs. Their loops make some fifty thousand wakes a
 * simulated hour, so per wake it drops what `FakeClock` spends on generality:
 *
 * - sleepers sit in a binary heap, and an aborted one is only marked, not searched for;
 * - after a wake it waits for the microtask queue to drain ({@link drain}) instead of taking
 *   three turns of the event loop. The turns are for tests with real I/O, whose callbacks may
 *   schedule more work; the simulation has none.
 *
 * Same sleeps, same order of wakes: a run on it is byte-identical to one on `FakeClock`.
 */
export class SimClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #heap: Sleeper[] = [];
  #live = 0;

  constructor(startMs: number) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = signal
        ? (): void => {
            sleeper.cancelled = true;
            this.#live--;
            reject(abortReason(signal));
          }
        : undefined;
      const sleeper: Sleeper = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve,
        signal,
        onAbort,
        cancelled: false,
      };
      if (signal && onAbort) signal.addEventListener('abort', onAbort, { once: true });
      this.#push(sleeper);
      this.#live++;
    });
  }

  /** Sleepers not yet woken or aborted. */
  get pendingSleepers(): number {
    return this.#live;
  }

  /** Moves time forward by `ms`, waking every sleeper due in the step, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#popDue(target);
      if (!next) break;
      this.#live--;
      this.#now = Math.max(this.#now, next.at);
      if (next.onAbort) next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve();
      await drain();
    }
    this.#now = target;
    await settle();
  }

  #popDue(limit: number): Sleeper | undefined {
    const h = this.#heap;
    for (;;) {
      const top = h[0];
      if (!top) return undefined;
      if (top.cancelled) {
        this.#pop();
        continue;
      }
      if (top.at > limit) return undefined;
      return this.#pop();
    }
  }

  #push(s: Sleeper): void {
    const h = this.#heap;
    let i = h.length;
    h.push(s);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(s, h[parent]!)) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = s;
  }

  #pop(): Sleeper {
    const h = this.#heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const r = l + 1;
        const c = r < h.length && before(h[r]!, h[l]!) ? r : l;
        if (!before(h[c]!, last)) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

function before(a: Sleeper, b: Sleeper): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('The operation was aborted', { cause: reason });
}

/**
 * One turn of the event loop, at the start and end of an advance: the caller's own pending work
 * settles, and the process stays responsive between simulated minutes.
 */
function settle(): Promise<void> {
  return new Promise<void>((r) => setImmediate(r));
}

/**
 * Resolves once every promise continuation a wake set off has run, without a turn of the event
 * loop: a `process.nextTick` callback queued from a microtask (as `advance` always is, past its
 * first `await`) runs only once the microtask queue is empty. That is all a wake needs while
 * nothing in the simulation uses timers, I/O or `nextTick` — its fetch, store and workers are
 * promises — and it saves a loop turn on each of a run's ~300,000 wakes.
 */
function drain(): Promise<void> {
  return new Promise<void>((r) => process.nextTick(r));
}
