import { sanitizeError } from '../cooldown-policy.js';
import { createIdGenerator } from '../ids.js';
import type { TxnOp } from '../kv/port.js';
import type { TaskKind } from '../model.js';
import { type TimelineEntry, type TimelineEvent, TimelineEventSchema, encodeTimelineEvent } from '../timeline.js';
import { deleteInBatches } from './batched.js';
import { decode, idTime } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';

/** Longest text (error, who, why) an event keeps, in code points: as a cooldown's `last_error`. */
const EVENT_TEXT_MAX = 512;
/** Doomed keys a prune holds before deleting them (in transactions within etcd's limit). */
const PRUNE_BATCH = 1_000;
/** Keys read per page by the fleet-wide prune (keys only: about 100 bytes each). */
const PRUNE_PAGE = 5_000;
/** Pairs whose writes since their last trim one instance counts; past it, the count starts over. */
const COUNTED_PAIRS_MAX = 10_000;

/** How long, and how much, a timeline keeps (docs/ARCHITECTURE.md §2.7). */
export interface TimelineLimits {
  /** Events kept per (kind, target); the oldest beyond it are deleted. */
  readonly limit: number;
  /** Events older than this are deleted (ms); 0: the count alone bounds a timeline. */
  readonly ttlMs: number;
}

/** Events of one (kind, target) written in one transaction: its ops, and the events as committed. */
export interface TimelineWrite {
  readonly ops: TxnOp[];
  readonly events: TimelineEvent[];
}

/** What a {@link TaskStore} offers of the timelines: reading one pair's, and the fleet-wide prune. */
export interface Timelines {
  /**
   * The newest events of (kind, target), newest first, as stored (`timelineView` adds the lapses
   * of windows); at most `limit` (default: the store's `timelineLimit`).
   */
  read(kind: TaskKind, target: string, limit?: number): Promise<TimelineEvent[]>;
  /** Deletes every event older than the timeline TTL and each pair's oldest beyond the limit, fleet-wide; returns how many. */
  prune(): Promise<number>;
}

/**
 * Each (kind, target)'s timeline (docs/ARCHITECTURE.md §2.7): one key per event under
 * `P/timeline/<kind>/<hex>/`, named by a UUIDv7, so a pair's keys are its events in time order.
 * Writers put an event in the transaction of what it records ({@link TimelineStore.ops}); a
 * trim after the commit keeps the newest `limit` per pair, and a periodic prune deletes events
 * past the TTL fleet-wide, so a store that stopped failing leaves nothing behind.
 */
export class TimelineStore implements Timelines {
  readonly #ctx: StoreContext;
  readonly #limits: TimelineLimits;
  readonly #newId: () => string;
  /** Pairs with a trim in flight: a burst of events on one pair trims once. */
  readonly #trimming = new Set<string>();
  /** Writes of each pair by this instance since its last trim (see {@link TimelineStore.afterWrite}). */
  readonly #writes = new Map<string, number>();
  /** Every this many writes of a pair, this instance trims it: a fifth of the limit, at most 10. */
  readonly #trimEvery: number;

  constructor(ctx: StoreContext, limits: TimelineLimits) {
    this.#ctx = ctx;
    this.#limits = limits;
    this.#newId = createIdGenerator(ctx.clock, ctx.random);
    this.#trimEvery = Math.max(1, Math.min(10, Math.floor(limits.limit / 5)));
  }

  /**
   * The puts that record `entries` for (kind, target), stamped with the clock's now, for the
   * caller's transaction. Texts are sanitised and bounded here, so every writer stores the same
   * shape whatever it was handed.
   */
  ops(kind: TaskKind, target: string, entries: readonly TimelineEntry[]): TimelineWrite {
    const at = this.#ctx.clock.now();
    const events = entries.map((entry): TimelineEvent => {
      const e: TimelineEvent = { ...entry, id: this.#newId(), kind, target, at_ms: entry.at_ms ?? at };
      if (e.error !== undefined) e.error = sanitizeError(e.error, EVENT_TEXT_MAX);
      if (e.by !== undefined) e.by = sanitizeError(e.by, EVENT_TEXT_MAX);
      if (e.reason !== undefined) e.reason = sanitizeError(e.reason, EVENT_TEXT_MAX);
      return e;
    });
    return {
      events,
      ops: events.map((e) => ({
        type: 'put',
        key: this.#ctx.keys.timeline(kind, target, e.id),
        value: encodeTimelineEvent(e),
      })),
    };
  }

  /**
   * After a commit that added events to (kind, target): every `trimEvery`-th such write of the
   * pair by this instance deletes its oldest events beyond the limit and those past the TTL. Not
   * every write: the trim is a read, and most pairs never reach the limit (a manual run of a
   * healthy store writes one event). So a pair holds at most the limit plus `trimEvery - 1`
   * events per master between trims, and the hourly {@link TimelineStore.prune} trims the pairs
   * whose writes are too sparse to reach a trim. Best-effort: the events are committed, and a
   * later trim catches up with one that failed.
   */
  afterWrite(kind: TaskKind, target: string): Promise<void> {
    const prefix = this.#ctx.keys.timelinePrefix(kind, target);
    const writes = (this.#writes.get(prefix) ?? 0) + 1;
    if (writes < this.#trimEvery) {
      if (this.#writes.size >= COUNTED_PAIRS_MAX) this.#writes.clear();
      this.#writes.set(prefix, writes);
      return Promise.resolve();
    }
    this.#writes.delete(prefix);
    if (this.#trimming.has(prefix)) return Promise.resolve();
    this.#trimming.add(prefix);
    return this.#trim(prefix)
      .catch(() => undefined)
      .finally(() => this.#trimming.delete(prefix));
  }

  async #trim(prefix: string): Promise<void> {
    const { kv, clock } = this.#ctx;
    const keys: string[] = [];
    for await (const found of scan(kv, prefix, { keysOnly: true })) keys.push(found.key);
    const cutoff = this.#limits.ttlMs > 0 ? clock.now() - this.#limits.ttlMs : -Infinity;
    const excess = Math.max(0, keys.length - this.#limits.limit);
    const doomed = keys.filter((key, i) => i < excess || (idTime(key.slice(prefix.length)) ?? Infinity) < cutoff);
    await deleteInBatches(kv, doomed);
  }

  /** The newest `limit` events of (kind, target), newest first (default: the configured limit). */
  async read(kind: TaskKind, target: string, limit = this.#limits.limit): Promise<TimelineEvent[]> {
    const res = await this.#ctx.kv.range(this.#ctx.keys.timelinePrefix(kind, target), {
      reverse: true,
      limit: Math.max(1, limit),
    });
    return res.kvs.map((found) => decode(TimelineEventSchema, found));
  }

  /**
   * The fleet-wide trim, from keys alone (an event's time is its id's): deletes every event older
   * than the TTL, and each pair's oldest beyond the limit; returns how many. A periodic job: it
   * bounds the pairs that no longer get events, and those whose writes were too sparse to trim.
   */
  async prune(): Promise<number> {
    const { kv, keys, clock } = this.#ctx;
    const cutoff = this.#limits.ttlMs > 0 ? clock.now() - this.#limits.ttlMs : -Infinity;
    let doomed: string[] = [];
    let deleted = 0;
    // Keys come in key order, so one pair's events are contiguous, oldest first.
    let pair = '';
    let events: string[] = [];
    const endPair = (): void => {
      const excess = events.length - this.#limits.limit;
      events.forEach((key, i) => {
        if (i < excess || (idTime(key.slice(key.lastIndexOf('/') + 1)) ?? Infinity) < cutoff) doomed.push(key);
      });
      events = [];
    };
    for await (const found of scan(kv, keys.timelinePrefix(), { keysOnly: true, pageSize: PRUNE_PAGE })) {
      const prefix = found.key.slice(0, found.key.lastIndexOf('/') + 1);
      if (prefix !== pair) {
        endPair();
        pair = prefix;
      }
      events.push(found.key);
      if (doomed.length >= PRUNE_BATCH) {
        deleted += await deleteInBatches(kv, doomed);
        doomed = [];
      }
    }
    endPair();
    return deleted + (await deleteInBatches(kv, doomed));
  }
}
