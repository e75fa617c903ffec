import { performance } from 'node:perf_hooks';
import {
  type Clock,
  type Kv,
  OUTAGE_REMINDER_MS,
  type Random,
  ResumingWatch,
  type RetryPlan,
  StoreAccessDeniedError,
  StoreUnavailableError,
  WatchCompactedError,
  type WatchFailure,
  cryptoRandom,
  keysFor,
  reconnectBackoff,
  systemClock,
} from '@maintd/core';
import type { IBackoff } from 'cockatiel';
import { type Logger, pino } from 'pino';
import { type ClusterAggregate, aggregatePrefixes, applyChange, createAggregate } from './aggregate.js';
import { DEFAULT_PAGE_SIZE, applyLoaded } from './load.js';
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

type Outcome = 'compacted' | 'watch_error' | 'unreachable' | 'misconfigured';

/** The first wait before re-reading an unreachable etcd; it doubles up to {@link MAX_BACKOFF_MS}. */
const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;
/** Pause before a re-sync while etcd answers: a watch that fails at once must not spin. */
const RESYNC_DELAY_MS = 100;

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
 * The read, the watch and the check are core's `ResumingWatch`, told to read afresh after every
 * failure. A sync reads its pages at increasing revisions and watches from the first page's
 * revision on: the watch replays every change made during the read that the read did not show,
 * in order, and since each change sets a key's whole state, the aggregate ends exactly at etcd's
 * state (see `aggregate.ts`).
 */
export class ClusterWatcher {
  readonly #kv: Kv;
  readonly #prefix: string | undefined;
  readonly #explain: ((err: unknown) => Promise<string | undefined>) | undefined;
  readonly #endpoints: readonly string[];
  readonly #onMisconfigured: ((reason: string, err: unknown) => void) | undefined;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #logger: Logger;
  readonly #checkMs: number;
  readonly #pageSize: number;
  readonly #watchTimeoutMs: number;
  readonly #onSync: ((info: SyncInfo) => void) | undefined;
  readonly #schedule: ReturnType<typeof reconnectBackoff>;
  #watch: ResumingWatch | undefined;
  #current: ClusterAggregate | undefined;
  /** The aggregate the sync in progress reads into and its watch keeps; served once in sync. */
  #next: ClusterAggregate | undefined;
  /** Why the sync in progress reads, and when it began (real time). */
  #reason: SyncReason = 'start';
  #started = 0;
  #up = false;
  #lastEventMs: number | undefined;
  /** The step of the latest retry of an unreachable etcd; undefined once in sync. */
  #backoff: IBackoff<unknown> | undefined;
  /** Failed attempts since the last sync, and what the latest one found. */
  #failures = 0;
  #lastFailure: { readonly cause: string; readonly phase: 'range' | 'watch' } | undefined;
  /** When a retry line last went out at warn, during an outage after a sync. */
  #retryWarnedAt: number | undefined;

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
    this.#pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.#watchTimeoutMs = options.watchTimeoutMs ?? 5000;
    this.#onSync = options.onSync;
    this.#schedule = reconnectBackoff({ initialMs: MIN_BACKOFF_MS, maxMs: MAX_BACKOFF_MS, random: this.#random });
  }

  /** Starts syncing in the background; an unreachable etcd is retried until {@link close}. */
  start(): void {
    this.#watch ??= this.#open();
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
    this.#up = false;
    await this.#watch?.close();
  }

  #open(): ResumingWatch {
    const keys = keysFor(this.#prefix);
    return new ResumingWatch({
      kv: this.#kv,
      clock: this.#clock,
      // One watch of the whole prefix: the aggregate ignores the keys of the other sections.
      watch: [`${keys.prefix}/`],
      load: aggregatePrefixes(keys),
      pageSize: this.#pageSize,
      openTimeoutMs: this.#watchTimeoutMs,
      // The periodic check reads inside the prefix: a read-only role scoped to it must suffice.
      check: { everyMs: this.#checkMs, key: `${keys.prefix}/` },
      onReload: () => {
        this.#started = performance.now();
        this.#next = createAggregate(this.#prefix);
      },
      onPage: (_section, pairs) => applyLoaded(this.#next!, pairs),
      onLoaded: (revision) => (this.#next!.revision = revision),
      onEvents: (events) => {
        for (const e of events) applyChange(this.#next!, e);
        this.#lastEventMs = this.#clock.now();
      },
      onLive: () => this.#inSync(),
      onFailure: (failure) => this.#retry(failure),
    });
  }

  /** A full sync is read and its watch open: serve it. */
  #inSync(): void {
    const agg = this.#next!;
    this.#current = agg;
    this.#up = true;
    this.#lastEventMs = this.#clock.now();
    this.#backoff = undefined;
    this.#failures = 0;
    this.#lastFailure = undefined;
    this.#retryWarnedAt = undefined;
    // Real elapsed time, whatever the clock: the metric reports what a sync costs etcd and us.
    const durationMs = performance.now() - this.#started;
    const reason = this.#reason;
    try {
      this.#onSync?.({ reason, durationMs, revision: agg.revision, tasks: agg.tasks.size });
    } catch (err) {
      this.#logger.warn({ err }, 'sync listener failed');
    }
    this.#logger.info(
      { reason, revision: agg.revision, tasks: agg.tasks.size, duration_ms: Math.round(durationMs) },
      'in sync with etcd',
    );
  }

  /** After a failed sync, or the end of one in sync: when to read afresh, or undefined to give up. */
  async #retry(failure: WatchFailure): Promise<RetryPlan | undefined> {
    const outcome = await this.#outcome(failure);
    if (outcome === 'misconfigured') return undefined;
    let waitMs = RESYNC_DELAY_MS;
    if (outcome === 'unreachable') {
      this.#up = false;
      this.#backoff = this.#backoff ? this.#backoff.next(undefined) : this.#schedule.next();
      waitMs = this.#backoff.duration;
      const last = this.#lastFailure;
      if (last) {
        // One line per attempt, in the master's words (apps/master/src/startup.ts): at warn until
        // the first sync, as the master's start-up does. Once in sync, an outage (which the line
        // that found it has announced) warns on its first retry and then once a minute, as the
        // master's scheduler does; the attempts between go to debug.
        const now = this.#clock.now();
        const loud =
          !this.#current || this.#retryWarnedAt === undefined || now - this.#retryWarnedAt >= OUTAGE_REMINDER_MS;
        if (loud) this.#retryWarnedAt = now;
        this.#logger[loud ? 'warn' : 'debug'](
          { endpoints: this.#endpoints, attempt: this.#failures, retry_in_ms: waitMs, phase: last.phase },
          retryMessage(this.#endpoints, last.cause, waitMs),
        );
      }
      // A first sync that failed is still the start; anything later is a reconnect.
      if (this.#current) this.#reason = 'reconnect';
    } else if (this.#current) {
      this.#reason = outcome;
    }
    return { delayMs: waitMs, reload: true };
  }

  /** What a failure means for the exporter, logged as it is found. */
  async #outcome({ phase, error: err }: WatchFailure): Promise<Outcome> {
    if (phase === 'watch') {
      if (err instanceof WatchCompactedError) {
        this.#logger.info('watch history was compacted; re-syncing');
        return 'compacted';
      }
      this.#logger.warn({ err }, 'watch broke; re-syncing');
      return 'watch_error';
    }
    if (phase === 'check') {
      this.#logger.warn({ err }, `etcd stopped answering (${errorText(err)}); metrics report down until it is back`);
      return 'unreachable';
    }
    if (err instanceof WatchCompactedError) {
      this.#logger.info({ err }, 'watch start revision was compacted; re-syncing');
      return 'compacted';
    }
    if (phase === 'open' && !(err instanceof StoreUnavailableError)) {
      this.#logger.warn({ err }, `cannot open the etcd watch: ${errorText(err)}; re-syncing`);
      return 'watch_error';
    }
    const explained = await this.#explain?.(err).catch(() => undefined);
    // Before the first sync, refused credentials or a TLS mismatch are the configuration, and
    // waiting will not fix them; later, they are as likely a rotation in progress: retry.
    if (this.#onMisconfigured && !this.#current && (explained !== undefined || err instanceof StoreAccessDeniedError)) {
      this.#onMisconfigured(explained ?? errorText(err), err);
      return 'misconfigured';
    }
    this.#failures++;
    this.#lastFailure = {
      cause: explained ?? errorText(err).replace(/^etcd unavailable: /, ''),
      phase: phase === 'load' ? 'range' : 'watch',
    };
    return 'unreachable';
  }
}

/** `etcd not reachable at <endpoints>: <cause>; retrying in 1.2 s`, as the master says it. */
function retryMessage(endpoints: readonly string[], cause: string, waitMs: number): string {
  const where = endpoints.length > 0 ? ` at ${endpoints.join(', ')}` : '';
  return `etcd not reachable${where}: ${cause}; retrying in ${(waitMs / 1000).toFixed(1)} s`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
