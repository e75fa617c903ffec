import { performance } from 'node:perf_hooks';
import {
  type Clock,
  ClosedError,
  type Kv,
  OUTAGE_REMINDER_MS,
  type Random,
  StoreAccessDeniedError,
  StoreUnavailableError,
  type Watch,
  WatchCompactedError,
  type WatchEvent,
  cryptoRandom,
  keysFor,
  reconnectBackoff,
  systemClock,
} from '@maintd/core';
import type { IBackoff } from 'cockatiel';
import { type Logger, pino } from 'pino';
import { type ClusterAggregate, applyChange } from './aggregate.js';
import { loadAggregate } from './load.js';
import { type ClusterSummary, summarize } from './summary.js';

/** Why the exporter read the prefix in full. */
export type SyncReason =
  /** The first sync after start. */
  | 'start'
  /** The watch asked for history etcd had compacted away. */
  | 'compacted'
  /** The watch was cancelled or could not be opened while etcd still answered. */
  | 'watch_error'
  /** etcd was unreachable and answers again. */
  | 'reconnect';

/** Every {@link SyncReason}, for zero-initialised metric series. */
export const SYNC_REASONS: readonly SyncReason[] = ['start', 'compacted', 'watch_error', 'reconnect'];

/** A completed full sync, as reported to {@link ClusterWatcherOptions.onSync}. */
export interface SyncInfo {
  readonly reason: SyncReason;
  /** Wall time of the range reads and of opening the watch. */
  readonly durationMs: number;
  /** Revision the watch resumed after. */
  readonly revision: number;
  /** Task keys held after the sync. */
  readonly tasks: number;
}

/** Options of {@link ClusterWatcher}. */
export interface ClusterWatcherOptions {
  readonly kv: Kv;
  /** The masters' key prefix (default `/maintd`). */
  readonly prefix?: string;
  /**
   * Source of time (default: the system clock): "now" for ages, windows and the last-event time,
   * and the pace of the periodic checks, the reconnect backoff and the watch and close deadlines.
   */
  readonly clock?: Clock;
  /** Jitter of the reconnect backoff (default: the platform's crypto randomness). */
  readonly random?: Random;
  readonly logger?: Logger;
  /** How often etcd is asked for its revision while the watch is quiet (default 5000). */
  readonly checkIntervalMs?: number;
  /** Keys per range page of a sync (default that of {@link loadAggregate}). */
  readonly pageSize?: number;
  /**
   * Explains an unreachable etcd better than the client's error, when it can (the TLS handshake
   * diagnosis: gRPC reports every TLS failure as a bare UNAVAILABLE).
   */
  readonly explain?: (err: unknown) => Promise<string | undefined>;
  /** etcd endpoints, named by the retry warnings. */
  readonly endpoints?: readonly string[];
  /**
   * Called, once, when etcd refuses the credentials or the TLS handshake fails (see `explain`)
   * before the first sync: a configuration that can never work. The watcher then stops retrying;
   * the binary exits with code 2. Without it, those failures are retried like any other.
   */
  readonly onMisconfigured?: (reason: string, err: unknown) => void;
  /** Longest wait for etcd to accept the watch, in ms (default 5000). */
  readonly watchTimeoutMs?: number;
  /** Called after each completed full sync (metrics). */
  readonly onSync?: (info: SyncInfo) => void;
}

/** What the watcher knows about its own health. */
export interface WatcherStatus {
  /** True while the aggregates are in sync with etcd (a sync completed and etcd answers). */
  readonly up: boolean;
  /** Revision through which changes are applied; 0 before the first sync. */
  readonly revision: number;
  /** Clock time of the last change applied (or of the last sync); undefined before the first. */
  readonly lastEventMs: number | undefined;
}

type Outcome = 'compacted' | 'watch_error' | 'unreachable' | 'misconfigured' | 'stopped';

/** The first wait before re-reading an unreachable etcd; it doubles up to {@link MAX_BACKOFF_MS}. */
const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;
/** Pause before a re-sync while etcd answers: a watch that fails at once must not spin. */
const RESYNC_DELAY_MS = 100;
/** How long closing a dead watch may take before it is left to the client to clean up. */
const CLOSE_TIMEOUT_MS = 1000;

/**
 * Keeps the cluster aggregates of one prefix in memory: one range read of the sections the
 * metrics need, then one watch of the prefix from that read's revision (docs/ARCHITECTURE.md §5).
 *
 * - A watch on a compacted revision, or one cancelled by etcd, triggers a fresh sync; the previous
 *   aggregate is served (still `up`) until the new one is complete.
 * - etcd's client resumes a watch across reconnects by itself, so an outage is noticed by a
 *   periodic revision read instead; then the watcher reports down, serves nothing, and re-syncs
 *   from a fresh range once etcd answers, with backoff.
 *
 * A sync reads its pages at increasing revisions and watches from the first page's revision on:
 * the watch replays every change made during the read, in order, and since each change sets a
 * key's whole state, the aggregate ends exactly at etcd's state (see `aggregate.ts`).
 */
export class ClusterWatcher {
  readonly #kv: Kv;
  readonly #prefix: string | undefined;
  #probeKey: string | undefined;
  readonly #explain: ((err: unknown) => Promise<string | undefined>) | undefined;
  readonly #endpoints: readonly string[];
  readonly #onMisconfigured: ((reason: string, err: unknown) => void) | undefined;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #logger: Logger;
  readonly #checkMs: number;
  readonly #pageSize: number | undefined;
  readonly #watchTimeoutMs: number;
  readonly #onSync: ((info: SyncInfo) => void) | undefined;
  readonly #stop = new AbortController();
  #current: ClusterAggregate | undefined;
  #up = false;
  #lastEventMs: number | undefined;
  /** Bumped per sync: events of an older sync's watch are ignored. */
  #generation = 0;
  /** The step of the latest retry of an unreachable etcd; undefined once in sync. */
  #backoff: IBackoff<unknown> | undefined;
  /** Failed attempts since the last sync, and what the latest one found. */
  #failures = 0;
  #lastFailure: { readonly cause: string; readonly phase: 'range' | 'watch' } | undefined;
  /** When a retry line last went out at warn, during an outage after a sync. */
  #retryWarnedAt: number | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: ClusterWatcherOptions) {
    this.#kv = options.kv;
    this.#prefix = options.prefix;
    this.#explain = options.explain;
    this.#endpoints = options.endpoints ?? [];
    this.#onMisconfigured = options.onMisconfigured;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? cryptoRandom;
    this.#logger = options.logger ?? pino({ level: 'silent' });
    this.#checkMs = options.checkIntervalMs ?? 5000;
    this.#pageSize = options.pageSize;
    this.#watchTimeoutMs = options.watchTimeoutMs ?? 5000;
    this.#onSync = options.onSync;
  }

  /** Starts syncing in the background; an unreachable etcd is retried until {@link close}. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** True while the aggregates are in sync with etcd. */
  get up(): boolean {
    return this.#up;
  }

  /** Revision through which changes are applied (0 before the first sync). */
  get revision(): number {
    return this.#current?.revision ?? 0;
  }

  /** The cluster numbers now, from memory; undefined while not {@link up} (they would be stale). */
  summary(): ClusterSummary | undefined {
    return this.#up && this.#current ? summarize(this.#current, this.#clock.now()) : undefined;
  }

  status(): WatcherStatus {
    return { up: this.#up, revision: this.revision, lastEventMs: this.#lastEventMs };
  }

  /** Stops watching and waits for the background loop to end. */
  async close(): Promise<void> {
    this.#stop.abort(new ClosedError('exporter is closing'));
    this.#up = false;
    await this.#loop;
  }

  async #run(): Promise<void> {
    const schedule = reconnectBackoff({ initialMs: MIN_BACKOFF_MS, maxMs: MAX_BACKOFF_MS, random: this.#random });
    let reason: SyncReason = 'start';
    while (!this.#stop.signal.aborted) {
      const outcome = await this.#syncAndFollow(reason);
      if (outcome === 'stopped' || outcome === 'misconfigured') return;
      let waitMs = RESYNC_DELAY_MS;
      if (outcome === 'unreachable') {
        this.#up = false;
        this.#backoff = this.#backoff ? this.#backoff.next(undefined) : schedule.next();
        waitMs = this.#backoff.duration;
        const failure = this.#lastFailure;
        if (failure) {
          // One line per attempt, in the master's words (apps/master/src/startup.ts): at warn until
          // the first sync, as the master's start-up does. Once in sync, an outage (which the line
          // that found it has announced) warns on its first retry and then once a minute, as the
          // master's scheduler does; the attempts between go to debug.
          const now = this.#clock.now();
          const loud =
            !this.#current || this.#retryWarnedAt === undefined || now - this.#retryWarnedAt >= OUTAGE_REMINDER_MS;
          if (loud) this.#retryWarnedAt = now;
          this.#logger[loud ? 'warn' : 'debug'](
            { endpoints: this.#endpoints, attempt: this.#failures, retry_in_ms: waitMs, phase: failure.phase },
            retryMessage(this.#endpoints, failure.cause, waitMs),
          );
        }
        // A first sync that failed is still the start; anything later is a reconnect.
        if (this.#current) reason = 'reconnect';
      } else {
        reason = this.#current ? outcome : reason;
      }
      try {
        await this.#clock.sleep(waitMs, this.#stop.signal);
      } catch {
        return;
      }
    }
  }

  /** One full sync, then following the watch until it dies, etcd stops answering, or close. */
  async #syncAndFollow(reason: SyncReason): Promise<Outcome> {
    const started = performance.now();
    const generation = ++this.#generation;
    // The periodic check reads inside the prefix: a read-only role scoped to it must suffice.
    this.#probeKey = `${keysFor(this.#prefix).prefix}/`;
    const dead = new AbortController();
    let agg: ClusterAggregate;
    let watch: Watch;
    let phase: 'range' | 'watch' = 'range';
    try {
      agg = await loadAggregate(this.#kv, this.#prefix, {
        signal: this.#stop.signal,
        ...(this.#pageSize !== undefined ? { pageSize: this.#pageSize } : {}),
      });
      phase = 'watch';
      watch = await this.#openWatch(agg, generation, agg.revision + 1, dead);
    } catch (err) {
      if (this.#stop.signal.aborted) return 'stopped';
      if (err instanceof WatchCompactedError) {
        this.#logger.info({ err }, 'watch start revision was compacted; re-syncing');
        return 'compacted';
      }
      if (phase === 'watch' && !(err instanceof StoreUnavailableError)) {
        this.#logger.warn({ err }, `cannot open the etcd watch: ${errorText(err)}; re-syncing`);
        return 'watch_error';
      }
      const explained = await this.#explain?.(err).catch(() => undefined);
      // Before the first sync, refused credentials or a TLS mismatch are the configuration, and
      // waiting will not fix them; later, they are as likely a rotation in progress: retry.
      if (
        this.#onMisconfigured &&
        !this.#current &&
        (explained !== undefined || err instanceof StoreAccessDeniedError)
      ) {
        this.#onMisconfigured(explained ?? errorText(err), err);
        return 'misconfigured';
      }
      this.#failures++;
      this.#lastFailure = { cause: explained ?? errorText(err).replace(/^etcd unavailable: /, ''), phase };
      return 'unreachable';
    }
    this.#current = agg;
    this.#up = true;
    this.#lastEventMs = this.#clock.now();
    this.#backoff = undefined;
    this.#failures = 0;
    this.#lastFailure = undefined;
    this.#retryWarnedAt = undefined;
    // Real elapsed time, whatever the clock: the metric reports what a sync costs etcd and us.
    const durationMs = performance.now() - started;
    try {
      this.#onSync?.({ reason, durationMs, revision: agg.revision, tasks: agg.tasks.size });
    } catch (err) {
      this.#logger.warn({ err }, 'sync listener failed');
    }
    this.#logger.info(
      { reason, revision: agg.revision, tasks: agg.tasks.size, duration_ms: Math.round(durationMs) },
      'in sync with etcd',
    );
    const outcome = await this.#follow(dead.signal);
    if (outcome === 'compacted') this.#logger.info('watch history was compacted; re-syncing');
    else if (outcome === 'watch_error')
      this.#logger.warn({ err: dead.signal.reason as unknown }, 'watch broke; re-syncing');
    void closeWithin(watch, CLOSE_TIMEOUT_MS, this.#clock);
    return outcome;
  }

  /** Watches the whole prefix from `fromRevision`, failing after the watch timeout. */
  async #openWatch(
    agg: ClusterAggregate,
    generation: number,
    fromRevision: number,
    dead: AbortController,
  ): Promise<Watch> {
    const listener = (events: readonly WatchEvent[]): void => {
      if (generation !== this.#generation) return;
      for (const e of events) applyChange(agg, e);
      this.#lastEventMs = this.#clock.now();
    };
    const opening = this.#kv.watch(`${agg.keys.prefix}/`, listener, {
      fromRevision,
      onError: (err) => dead.abort(err),
    });
    const timer = new AbortController();
    const timeout = this.#clock.sleep(this.#watchTimeoutMs, timer.signal).then(() => {
      throw new StoreUnavailableError(`etcd did not accept the watch within ${this.#watchTimeoutMs} ms`);
    });
    try {
      return await Promise.race([opening, timeout]);
    } catch (err) {
      // A watch that opens after all must not linger on the shared stream.
      opening.then(
        (w) => closeWithin(w, CLOSE_TIMEOUT_MS, this.#clock),
        () => undefined,
      );
      throw err;
    } finally {
      // The race has settled: the aborted timer's rejection goes to it, unobserved.
      timer.abort();
    }
  }

  /** Resolves when the watch dies, etcd stops answering the periodic check, or on close. */
  #follow(dead: AbortSignal): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const done = new AbortController();
      const finish = (outcome: Outcome): void => {
        if (done.signal.aborted) return;
        done.abort();
        resolve(outcome);
      };
      const onDead = (): void => finish(dead.reason instanceof WatchCompactedError ? 'compacted' : 'watch_error');
      if (dead.aborted) return onDead();
      if (this.#stop.signal.aborted) return finish('stopped');
      dead.addEventListener('abort', onDead, { once: true, signal: done.signal });
      this.#stop.signal.addEventListener('abort', () => finish('stopped'), { once: true, signal: done.signal });
      void (async () => {
        for (;;) {
          try {
            await this.#clock.sleep(this.#checkMs, done.signal);
          } catch {
            return;
          }
          try {
            await this.#kv.revision(this.#probeKey);
          } catch (err) {
            this.#logger.warn(
              { err },
              `etcd stopped answering (${errorText(err)}); metrics report down until it is back`,
            );
            finish('unreachable');
            return;
          }
        }
      })();
    });
  }
}

async function closeWithin(watch: Watch, ms: number, clock: Clock): Promise<void> {
  const timer = new AbortController();
  await Promise.race([watch.close().catch(() => undefined), clock.sleep(ms, timer.signal).catch(() => undefined)]);
  timer.abort();
}

/** `etcd not reachable at <endpoints>: <cause>; retrying in 1.2 s`, as the master says it. */
function retryMessage(endpoints: readonly string[], cause: string, waitMs: number): string {
  const where = endpoints.length > 0 ? ` at ${endpoints.join(', ')}` : '';
  return `etcd not reachable${where}: ${cause}; retrying in ${(waitMs / 1000).toFixed(1)} s`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
