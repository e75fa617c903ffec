import type { Clock } from '@maintd/core';
import type { SimReply } from './fleet.js';

/** One merge a worker's executor ran: when it started and how long the worker was busy with it. */
export interface MergeRun {
  readonly worker: number;
  readonly store: string;
  readonly startedAt: number;
  readonly busyMs: number;
  /** How long the call waited in the worker's queue before it ran. */
  readonly waitedMs: number;
}

/** Observes a worker's merge executor (the incident sums busy time from it). */
export interface MergeExecutorObserver {
  /** A merge started running. */
  onRun?(run: MergeRun): void;
  /** A queued merge was dropped because its caller had gone (the master timed the call out). */
  onAbandoned?(worker: number, store: string, waitedMs: number): void;
}

/** Rejection of {@link MergeExecutor.run} for a call whose caller went away while it was queued. */
export class AbandonedError extends Error {
  constructor() {
    super('the caller went away while the merge was queued');
    this.name = 'AbandonedError';
  }
}

/**
 * A worker's merge executor: at most `concurrency` merges run at a time; the others wait in one
 * FIFO queue. With a bound, a broken store's 45 s of commit retries hold a slot that healthy
 * merges queue behind, which is how broken stores starve healthy ones on the workers; an
 * unbounded executor would hide that.
 *
 * Waits are promises released by the merge ahead finishing, and merges last `clock.sleep`, so
 * on a FakeClock the executor is deterministic and uses no real timers. A call whose caller
 * aborts while it is queued is dropped (as a request handler waiting for a permit is when the
 * client disconnects); a merge already running finishes, since commit retries do not watch the
 * connection.
 */
export class MergeExecutor {
  readonly #clock: Clock;
  readonly #worker: number;
  readonly #concurrency: number;
  readonly #observer: MergeExecutorObserver;
  readonly #queue: { readonly start: () => void }[] = [];
  #running = 0;

  /** @param concurrency merges run at once; `Infinity` (the default) never queues. */
  constructor(clock: Clock, worker: number, concurrency = Infinity, observer: MergeExecutorObserver = {}) {
    if (!(concurrency >= 1)) throw new RangeError(`merge concurrency must be at least 1, got ${concurrency}`);
    this.#clock = clock;
    this.#worker = worker;
    this.#concurrency = concurrency;
    this.#observer = observer;
  }

  /** Merges running now. */
  get running(): number {
    return this.#running;
  }

  /** Merges waiting for a slot now. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Runs `work` when a slot is free: `work` is evaluated at that moment (the merge folds what is
   * pending when it starts, not when it was asked for), and the slot stays taken for its latency.
   */
  async run(store: string, work: () => SimReply, signal?: AbortSignal): Promise<SimReply> {
    const asked = this.#clock.now();
    await this.#acquire(store, signal);
    try {
      const reply = work();
      this.#observer.onRun?.({
        worker: this.#worker,
        store,
        startedAt: this.#clock.now(),
        busyMs: reply.latencyMs,
        waitedMs: this.#clock.now() - asked,
      });
      await this.#clock.sleep(reply.latencyMs);
      return reply;
    } finally {
      this.#release();
    }
  }

  #acquire(store: string, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(new AbandonedError());
    if (this.#running < this.#concurrency) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const asked = this.#clock.now();
      const entry = {
        start: (): void => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const at = this.#queue.indexOf(entry);
        if (at < 0) return;
        this.#queue.splice(at, 1);
        this.#observer.onAbandoned?.(this.#worker, store, this.#clock.now() - asked);
        reject(new AbandonedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(entry);
    });
  }

  #release(): void {
    // The slot passes straight to the next caller, so a merge arriving meanwhile cannot overtake.
    const next = this.#queue.shift();
    if (next) next.start();
    else this.#running--;
  }
}
