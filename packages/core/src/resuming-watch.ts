import { whenAborted } from './abort.js';
import { reconnectBackoff } from './backoff.js';
import type { IBackoff } from 'cockatiel';
import type { Clock } from './clock.js';
import { StoreUnavailableError, WatchCompactedError } from './errors.js';
import type { KeyValue, Kv, Watch, WatchEvent } from './kv/port.js';
import { cryptoRandom } from './random.js';
import { type ScanPage, scanPages } from './store/scan.js';

/** The waits of the default retry: from 250 ms, doubling up to 5 s, jittered. */
const RETRY_INITIAL_MS = 250;
const RETRY_MAX_MS = 5000;

/** Where a {@link ResumingWatch} failed. */
export type WatchFailurePhase =
  /** Reading a loaded prefix. */
  | 'load'
  /** Opening a watch (etcd refused or did not accept it in time). */
  | 'open'
  /** An established watch ended: etcd cancelled it, or its history was compacted. */
  | 'watch'
  /** The periodic revision read ({@link ResumingWatchOptions.check}) failed. */
  | 'check';

/** A failure of a {@link ResumingWatch}, as its {@link ResumingWatchOptions.onFailure} hears of it. */
export interface WatchFailure {
  /** What failed. */
  readonly phase: WatchFailurePhase;
  /** Why: the read's or the watch's error (a `WatchCompactedError` when compacted). */
  readonly error: unknown;
  /** The history a watch needed is compacted: it cannot resume, only start over from a load. */
  readonly compacted: boolean;
}

/** What a {@link ResumingWatch} does after a failure. */
export interface RetryPlan {
  /** The wait before the next attempt, on the watch's clock. */
  readonly delayMs: number;
  /**
   * Read the loaded prefixes afresh (and watch the others from now) rather than resume every
   * watch after the last change it delivered. Default: only when the history is compacted.
   */
  readonly reload?: boolean;
}

/** What a {@link ResumingWatch} reads and watches, and whom it tells. */
export interface ResumingWatchOptions {
  /** The store read and watched. */
  readonly kv: Kv;
  /** Paces the retries and the periodic check. */
  readonly clock: Clock;
  /** The prefixes watched, with one watch each; live only while all of them are. */
  readonly watch: readonly string[];
  /**
   * Prefixes read in full, in pages, before the watches open, each inside (or equal to) a
   * watched prefix, which then starts right after the revision of its loads' first page.
   * Default none: the watches start from now ({@link ResumingWatchOptions.fromRevision}).
   */
  readonly load?: readonly string[];
  /**
   * Read the loaded prefixes side by side, each one's first page at the same moment, rather than
   * one after another (the default, which holds one page at a time).
   */
  readonly concurrentLoads?: boolean;
  /** Keys per page of a load (default that of {@link scanPages}). */
  readonly pageSize?: number;
  /** The revision the watches of unloaded prefixes first start at (default: now). */
  readonly fromRevision?: number;
  /** Longest wait for etcd to accept a watch; a watch not accepted by then fails as unreachable. */
  readonly openTimeoutMs?: number;
  /**
   * Reads the revision through `key` every `everyMs` while live, failing when it cannot: an
   * etcd client resumes a watch across reconnects by itself, so a watch alone never says that
   * etcd went away.
   */
  readonly check?: { readonly everyMs: number; readonly key: string };
  /** A load begins: what earlier loads and events built is to be replaced. */
  readonly onReload?: () => void;
  /** One page of a loaded prefix, as read. */
  readonly onPage?: (prefix: string, pairs: readonly KeyValue[]) => void;
  /** A load is complete; `revision` is its first page's, the earliest its pages were read at. */
  readonly onLoaded?: (revision: number) => void;
  /**
   * Changes under `prefix`, in revision order, each once: none that a load already showed (a
   * loaded pair's `modRevision` at or after the change's), none twice across a resume.
   */
  readonly onEvents: (events: readonly WatchEvent[], prefix: string) => void;
  /** Every watch is established (after a load or a resume). */
  readonly onLive?: () => void;
  /**
   * An attempt failed (after {@link ResumingWatchOptions.onLive}, or before it): says what next,
   * or undefined to stop trying. Default: resume after a jittered wait doubling from 250 ms to
   * 5 s, starting over once live; reload only after a compaction.
   */
  readonly onFailure?: (failure: WatchFailure) => RetryPlan | undefined | Promise<RetryPlan | undefined>;
}

/** Where one watched prefix resumes from, and what it delivered last (to drop a resume's repeats). */
interface Position {
  /** The revision its next watch starts at; undefined: from now. */
  from: number | undefined;
  /** The revision of the last change delivered (0: none yet). */
  last: number;
  /** Keys changed at {@link Position.last} already delivered. */
  readonly keysAtLast: Set<string>;
}

/** A promise and the function that resolves it (Promise.withResolvers, which Node 20 lacks). */
function resolvable(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Load-then-watch that resumes: reads the loaded prefixes with {@link scanPages} (the first page
 * at revision R), watches from R + 1, and keeps every watch current across failures. A watch that
 * drops, or cannot be opened, is opened again from the revision after the last change it
 * delivered; one whose history was compacted away starts over from a fresh load. No change is
 * lost, and none is delivered twice or on top of a load that already shows it. Waits run on the
 * injected clock; the loop runs from construction until {@link ResumingWatch.close}.
 */
export class ResumingWatch {
  readonly #o: ResumingWatchOptions;
  readonly #loads: readonly string[];
  readonly #positions = new Map<string, Position>();
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  /** Keys a load read at a revision after the first page's → that revision: their replays are dropped. */
  #newer = new Map<string, number>();
  /** The attempt whose watches may deliver; replaced by each attempt. */
  #attempt: AbortController | undefined;
  #watches: Watch[] = [];
  #live = false;
  #up = resolvable();
  readonly #schedule = reconnectBackoff({ initialMs: RETRY_INITIAL_MS, maxMs: RETRY_MAX_MS, random: cryptoRandom });
  /** The default retry's latest step; undefined once live. */
  #retry: IBackoff<unknown> | undefined;

  constructor(options: ResumingWatchOptions) {
    this.#o = options;
    this.#loads = options.load ?? [];
    for (const prefix of options.watch) {
      this.#positions.set(prefix, { from: options.fromRevision, last: 0, keysAtLast: new Set() });
    }
    this.#loop = this.#run();
  }

  /** True while every watch is established. */
  get live(): boolean {
    return this.#live;
  }

  /** Resolves once every watch is established (at once if they are). */
  established(): Promise<void> {
    return this.#live ? Promise.resolve() : this.#up.promise;
  }

  /** Stops: closes the watches and waits for the loop to end (an open in flight is awaited). */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    let reload = this.#loads.length > 0;
    while (!this.#stop.signal.aborted) {
      const attempt = new AbortController();
      this.#attempt = attempt;
      let phase: WatchFailurePhase = 'load';
      let failure: WatchFailure | undefined;
      try {
        if (reload) await this.#load();
        reload = false;
        phase = 'open';
        await this.#open(attempt);
        this.#setLive();
        phase = 'watch';
        failure = await this.#follow(attempt);
      } catch (error) {
        failure = { phase, error, compacted: error instanceof WatchCompactedError };
      }
      this.#attempt = undefined;
      this.#live = false;
      const watches = this.#watches;
      this.#watches = [];
      if (this.#stop.signal.aborted) {
        await Promise.all(watches.map((w) => w.close().catch(() => undefined)));
        return;
      }
      // A dead watch has nothing to deliver: closing it is cleanup, which need not hold up the retry.
      for (const w of watches) void w.close().catch(() => undefined);
      if (!failure) continue;
      const plan = await (this.#o.onFailure ?? ((f: WatchFailure) => this.#defaultPlan(f)))(failure);
      if (!plan) return;
      if (plan.reload ?? failure.compacted) {
        reload = this.#loads.length > 0;
        // Unloaded prefixes cannot resume past a compaction: they start from now.
        for (const p of this.#positions.values()) {
          p.from = undefined;
          p.last = 0;
          p.keysAtLast.clear();
        }
      }
      try {
        await this.#o.clock.sleep(plan.delayMs, this.#stop.signal);
      } catch {
        // stopped
      }
    }
  }

  #defaultPlan(failure: WatchFailure): RetryPlan {
    this.#retry = this.#retry ? this.#retry.next(undefined) : this.#schedule.next();
    return { delayMs: this.#retry.duration, reload: failure.compacted };
  }

  #setLive(): void {
    this.#live = true;
    this.#retry = undefined;
    const up = this.#up;
    this.#up = resolvable();
    up.resolve();
    this.#o.onLive?.();
  }

  /** Reads every loaded prefix; sets where each watch starts. */
  async #load(): Promise<void> {
    const { kv, pageSize } = this.#o;
    this.#o.onReload?.();
    this.#newer = new Map();
    const firsts = new Map<string, number>();
    // The earliest first page bounds every watch's start from below: a pair changed after it may
    // have its change replayed.
    let first = Infinity;
    let over = false;
    const read = (prefix: string, page: ScanPage): void => {
      this.#stop.signal.throwIfAborted();
      // A side-by-side read that outlives a failed load must not feed the next one.
      if (over) throw new Error('load abandoned');
      for (const pair of page.kvs) if (pair.modRevision > first) this.#newer.set(pair.key, pair.modRevision);
      this.#o.onPage?.(prefix, page.kvs);
    };
    const scans = this.#loads.map((prefix) => ({
      prefix,
      pages: scanPages(kv, prefix, pageSize !== undefined ? { pageSize } : {}),
    }));
    try {
      if (this.#o.concurrentLoads) {
        // Every first page at once, then the rest of each prefix side by side.
        const heads = await Promise.all(scans.map((s) => s.pages.next()));
        scans.forEach((s, i) => {
          const head = heads[i]!;
          if (!head.done) firsts.set(s.prefix, head.value.revision);
        });
        first = Math.min(...firsts.values());
        scans.forEach((s, i) => {
          const head = heads[i]!;
          if (!head.done) read(s.prefix, head.value);
        });
        await Promise.all(
          scans.map(async (s) => {
            for await (const page of s.pages) read(s.prefix, page);
          }),
        );
      } else {
        for (const s of scans) {
          for await (const page of s.pages) {
            if (!firsts.has(s.prefix)) firsts.set(s.prefix, page.revision);
            first = Math.min(first, page.revision);
            read(s.prefix, page);
          }
        }
      }
    } finally {
      over = true;
    }
    for (const [watched, p] of this.#positions) {
      let start: number | undefined;
      for (const [loaded, revision] of firsts) {
        if (loaded.startsWith(watched) || watched.startsWith(loaded)) start = Math.min(start ?? revision, revision);
      }
      if (start === undefined) continue;
      p.from = start + 1;
      p.last = start;
      p.keysAtLast.clear();
    }
    this.#o.onLoaded?.(first);
  }

  /** Opens one watch per watched prefix, each from its position. */
  async #open(attempt: AbortController): Promise<void> {
    const { kv } = this.#o;
    for (const [prefix, position] of this.#positions) {
      const opening = kv.watch(prefix, (events) => this.#deliver(attempt, prefix, position, events), {
        ...(position.from !== undefined ? { fromRevision: position.from } : {}),
        onError: (err) => attempt.abort(err),
      });
      this.#watches.push(await this.#accepted(opening));
      if (this.#stop.signal.aborted) throw this.#stop.signal.reason;
    }
  }

  /** `opening`, failing after the open timeout, if any; a watch accepted after it is closed. */
  async #accepted(opening: Promise<Watch>): Promise<Watch> {
    const ms = this.#o.openTimeoutMs;
    if (ms === undefined) return opening;
    const timer = new AbortController();
    const timeout = this.#o.clock.sleep(ms, timer.signal).then(() => {
      throw new StoreUnavailableError(`etcd did not accept the watch within ${ms} ms`);
    });
    try {
      return await Promise.race([opening, timeout]);
    } catch (err) {
      // A watch that opens after all must not linger on the shared stream.
      opening.then(
        (w) => w.close().catch(() => undefined),
        () => undefined,
      );
      throw err;
    } finally {
      // The race has settled: the aborted timer's rejection goes to it, unobserved.
      timer.abort();
    }
  }

  /** Resolves when a watch ends, the check fails, or on close (undefined). */
  async #follow(attempt: AbortController): Promise<WatchFailure | undefined> {
    const { check, clock, kv } = this.#o;
    let checkFailed: { error: unknown } | undefined;
    if (check) {
      const done = AbortSignal.any([attempt.signal, this.#stop.signal]);
      void (async () => {
        for (;;) {
          try {
            await clock.sleep(check.everyMs, done);
          } catch {
            return;
          }
          try {
            await kv.revision(check.key);
          } catch (error) {
            if (done.aborted) return;
            checkFailed = { error };
            attempt.abort(error);
            return;
          }
        }
      })();
    }
    await whenAborted(attempt.signal, this.#stop.signal);
    if (this.#stop.signal.aborted) return undefined;
    if (checkFailed) return { phase: 'check', error: checkFailed.error, compacted: false };
    const error: unknown = attempt.signal.reason;
    return { phase: 'watch', error, compacted: error instanceof WatchCompactedError };
  }

  #deliver(attempt: AbortController, prefix: string, position: Position, events: readonly WatchEvent[]): void {
    if (attempt !== this.#attempt || attempt.signal.aborted) return;
    const out: WatchEvent[] = [];
    for (const e of events) {
      // A resumed watch may repeat the revision it resumed at, and one revision may change many
      // keys (a transaction): a repeat is a key already delivered at that revision.
      if (e.modRevision < position.last) continue;
      if (e.modRevision > position.last) {
        position.last = e.modRevision;
        position.keysAtLast.clear();
      } else if (position.keysAtLast.has(e.key)) continue;
      position.keysAtLast.add(e.key);
      const loaded = this.#newer.get(e.key);
      if (loaded !== undefined) {
        // A change made while the load read on: its page already showed it, or a later one.
        if (e.modRevision <= loaded) continue;
        this.#newer.delete(e.key);
      }
      out.push(e);
    }
    if (position.last > 0) position.from = position.last + 1;
    if (out.length > 0) this.#o.onEvents(out, prefix);
  }
}
