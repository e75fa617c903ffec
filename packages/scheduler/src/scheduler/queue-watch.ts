import { whenAborted } from '@maintd/core';
import type { LoopContext } from './context.js';
import { POLL_MS } from './pools.js';

/**
 * Wakes pools as soon as a task is queued anywhere in the fleet (docs/ARCHITECTURE.md §3.2),
 * and keeps the store's mirror of the queue's head current; polling covers a dead watch. A
 * resource: `run()` it until the scheduler stops, `close()` its watch.
 */
export class QueueWatch {
  readonly #ctx: LoopContext;
  /** Called with the kinds that had a task queued. */
  readonly #queued: (kinds: ReadonlySet<string>) => void;
  /** Called when the watch (re)opens: anything queued before it raised no event. */
  readonly #wakeAll: () => void;
  #watch: { close(): Promise<void> } | undefined;

  constructor(ctx: LoopContext, queued: (kinds: ReadonlySet<string>) => void, wakeAll: () => void) {
    this.#ctx = ctx;
    this.#queued = queued;
    this.#wakeAll = wakeAll;
  }

  /** Watches until the scheduler stops, reopening the watch after each failure. */
  async run(): Promise<void> {
    const { store, kv, logger } = this.#ctx.deps;
    const stop = this.#ctx.stop;
    const prefix = store.keys.queuePrefix();
    while (!stop.aborted) {
      try {
        const dead = new AbortController();
        this.#watch = await kv.watch(
          prefix,
          (events) => {
            store.observeQueue(events);
            const kinds = new Set<string>();
            for (const e of events) if (e.type === 'put') kinds.add(e.key.slice(prefix.length).split('/')[0] ?? '');
            this.#queued(kinds);
          },
          { onError: () => dead.abort() },
        );
        if (stop.aborted) break;
        // A watch that failed while it was being opened is no feed: poll, then open another.
        if (!dead.signal.aborted) {
          store.setQueueFeed(true);
          // Anything queued before the watch existed raised no event: look once more.
          this.#wakeAll();
          await whenAborted(dead.signal, stop);
          store.setQueueFeed(false);
        }
        await this.#watch.close().catch(() => undefined);
      } catch (err) {
        logger.debug({ err }, 'queue watch failed; polling until it is back');
      }
      if (!(await this.#ctx.sleep(POLL_MS))) break;
    }
    await this.close();
  }

  /** Closes the current watch, if any; never rejects. */
  async close(): Promise<void> {
    await this.#watch?.close().catch(() => undefined);
  }
}
