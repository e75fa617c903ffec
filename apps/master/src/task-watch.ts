import type { Clock, Kv, Watch, WatchEvent } from '@maintd/core';
import type { Logger } from 'pino';

/**
 * How long the task watch outlives its last use (a task list read, an event stream): a dashboard
 * polling the task list keeps it, and a master nobody reads tasks from drops it.
 */
const LINGER_MS = 60_000;
/** How often an open task watch checks whether it is still wanted. */
const CHECK_MS = 5_000;
/** Pause before a failed task watch is opened again. */
const RETRY_MS = 1000;

/** What a {@link TaskWatch} watches and whom it tells. */
export interface TaskWatchOptions {
  readonly kv: Kv;
  /** The tasks prefix (`Keys.tasksPrefix`). */
  readonly prefix: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Each batch of task changes, as the watch delivers it. */
  readonly onEvents: (events: readonly WatchEvent[]) => void;
  /** Whether someone holds the watch open regardless of the linger (a connected event stream). */
  readonly held: () => boolean;
}

/** A promise and the function that resolves it (Promise.withResolvers, which Node 20 lacks). */
function signal(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The etcd watch of the tasks prefix, open only while it is used: something holds it (an event
 * stream), or it was wanted (a task list read, the hub's start) within the last minute. Every
 * task changes three times, so a watch open on every master decodes every task of the fleet
 * three times over, for lists and streams that most masters never serve (docs/SCALING.md).
 * A failed open is retried from the last revision it saw; a watch that broke, was compacted or
 * was closed as unused reopens from now.
 */
export class TaskWatch {
  readonly #o: TaskWatchOptions;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #live = false;
  #generation = 0;
  /** Wakes the loop: stopping, or its watch failed. */
  #wake: AbortController | undefined;
  /** Resolved (and replaced) each time the watch is established. */
  #up = signal();
  /** When the watch was last wanted (clock time). */
  #wantedAt = -Infinity;

  constructor(options: TaskWatchOptions) {
    this.#o = options;
  }

  /** True while the watch is established. */
  get live(): boolean {
    return this.#live;
  }

  /** Changes whenever the watch is established or lost: stamps what is kept on its events. */
  get generation(): number {
    return this.#generation;
  }

  /** Keep (or open) the watch for the next minute. */
  want(): void {
    this.#wantedAt = this.#o.clock.now();
    this.ensure();
  }

  /** Opens the watch if it is wanted or held and not open yet. */
  ensure(): void {
    if (this.#loop || !this.#wanted()) return;
    this.#loop = this.#run().finally(() => {
      this.#loop = undefined;
      // Wanted again between the loop's last check and its end.
      this.ensure();
    });
  }

  /** Resolves once the watch is established (at once if it is). */
  established(): Promise<void> {
    return this.#live ? Promise.resolve() : this.#up.promise;
  }

  async close(): Promise<void> {
    this.#stop.abort();
    // Woken, the loop closes its watch itself.
    this.#wake?.abort();
    await this.#loop;
  }

  #wanted(): boolean {
    return !this.#stop.signal.aborted && (this.#o.held() || this.#o.clock.now() - this.#wantedAt < LINGER_MS);
  }

  async #run(): Promise<void> {
    const { kv, prefix, clock, logger, onEvents } = this.#o;
    let from: number | undefined;
    while (this.#wanted()) {
      const wake = new AbortController();
      this.#wake = wake;
      let failed = false;
      let watch: Watch | undefined;
      try {
        watch = await kv.watch(
          prefix,
          (events) => {
            const last = events.at(-1);
            if (last) from = last.modRevision + 1;
            onEvents(events);
          },
          { ...(from !== undefined ? { fromRevision: from } : {}), onError: () => wake.abort() },
        );
        this.#live = true;
        this.#generation++;
        const up = this.#up;
        this.#up = signal();
        up.resolve();
        while (!wake.signal.aborted && this.#wanted()) {
          await clock.sleep(CHECK_MS, wake.signal).catch(() => undefined);
        }
      } catch (err) {
        failed = true;
        logger.debug({ err }, 'task watch failed; retrying');
      }
      failed ||= wake.signal.aborted && !this.#stop.signal.aborted;
      if (this.#live) {
        this.#live = false;
        this.#generation++;
      }
      await watch?.close().catch(() => undefined);
      if (!this.#wanted()) return;
      // Closed as unused, then wanted again: reopen at once, from now. Failed: pause first.
      if (!failed) {
        from = undefined;
        continue;
      }
      // Compacted or broken: resume from now.
      if (wake.signal.aborted) from = undefined;
      await clock.sleep(RETRY_MS, this.#stop.signal).catch(() => undefined);
    }
  }
}
