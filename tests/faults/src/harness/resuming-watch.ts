import { type EtcdKv, ResumingWatch as CoreResumingWatch, type WatchEvent, systemClock } from '@maintd/core';

/** Pause before a watch that could not be opened is tried again. */
const REOPEN_MS = 200;

/**
 * An etcd watch of one prefix that misses nothing and repeats nothing: core's `ResumingWatch`,
 * re-opened from the last revision seen when it dies (the test clusters never compact their
 * history), with the repeats of a resumed watch dropped. The ground truth the fault and upgrade
 * suites judge on.
 */
export class ResumingWatch {
  readonly #watch: CoreResumingWatch;
  #lastRevision: number;
  /** Watch failures (each followed by a resume from the last revision seen). */
  resumes = 0;

  private constructor(
    kv: EtcdKv,
    prefix: string,
    fromRevision: number,
    onChange: (change: WatchEvent, seenAt: number) => void,
  ) {
    this.#lastRevision = fromRevision - 1;
    this.#watch = new CoreResumingWatch({
      kv,
      clock: systemClock,
      watch: [prefix],
      fromRevision,
      onEvents: (events) => {
        const seenAt = Date.now();
        for (const e of events) {
          this.#lastRevision = e.modRevision;
          onChange(e, seenAt);
        }
      },
      onFailure: ({ phase }) => {
        if (phase !== 'watch') return { delayMs: REOPEN_MS };
        this.resumes++;
        return { delayMs: 0 };
      },
    });
  }

  /**
   * Watches every key starting with `prefix` from the current revision on, handing each change
   * to `onChange` once, in revision order, with the wall-clock ms it arrived at.
   */
  static async start(
    kv: EtcdKv,
    prefix: string,
    onChange: (change: WatchEvent, seenAt: number) => void,
  ): Promise<ResumingWatch> {
    const watch = new ResumingWatch(kv, prefix, (await kv.revision()) + 1, onChange);
    await watch.#watch.established();
    return watch;
  }

  /** The revision of the last change seen. */
  get lastRevision(): number {
    return this.#lastRevision;
  }

  /** Stops watching (the store stays open: its owner closes it). */
  async close(): Promise<void> {
    await this.#watch.close();
  }
}
