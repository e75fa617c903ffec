import { type Clock, type Kv, ResumingWatch, type WatchEvent } from '@maintd/core';
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
 * While open, it is core's `ResumingWatch`: a watch that broke or could not be opened resumes
 * from the last revision it saw, one whose history was compacted from now; a watch closed as
 * unused reopens from now.
 */
export class TaskWatch {
  readonly #o: TaskWatchOptions;
  readonly #stop = new AbortController();
  /** Runs while the watch is open, and closes it once it is no longer wanted. */
  #loop: Promise<void> | undefined;
  #live = false;
  #generation = 0;
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
    // Woken, the loop closes its watch itself.
    this.#stop.abort();
    await this.#loop;
  }

  #wanted(): boolean {
    return !this.#stop.signal.aborted && (this.#o.held() || this.#o.clock.now() - this.#wantedAt < LINGER_MS);
  }

  async #run(): Promise<void> {
    const { kv, prefix, clock, logger, onEvents } = this.#o;
    // From now: a watch closed as unused and wanted again has nothing to resume.
    const watch = new ResumingWatch({
      kv,
      clock,
      watch: [prefix],
      onEvents: (events) => onEvents(events),
      onLive: () => {
        this.#live = true;
        this.#generation++;
        const up = this.#up;
        this.#up = signal();
        up.resolve();
      },
      onFailure: ({ error }) => {
        logger.debug({ err: error }, 'task watch failed; retrying');
        this.#lost();
        return { delayMs: RETRY_MS };
      },
    });
    try {
      while (this.#wanted()) await clock.sleep(CHECK_MS, this.#stop.signal).catch(() => undefined);
    } finally {
      await watch.close();
      this.#lost();
    }
  }

  #lost(): void {
    if (!this.#live) return;
    this.#live = false;
    this.#generation++;
  }
}
