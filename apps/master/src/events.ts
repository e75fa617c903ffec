import {
  AuditEntrySchema,
  type Clock,
  type CooldownPolicy,
  type KeyValue,
  type Keys,
  type Kv,
  type ParkRecord,
  ParkRecordSchema,
  ResumingWatch,
  type TaskCooldown,
  TaskCooldownSchema,
  type TaskKind,
  TaskRecordSchema,
  TimelineEventSchema,
  type WatchEvent,
  parsePairKey,
} from '@maintd/core';
// The events' shapes are part of the API's route definitions (the OpenAPI document's event
// payload components), so that the document and the stream cannot drift apart.
import { type MaintdEvent, auditEntryView, timelineEventView } from '@maintd/api';
import type { Logger } from 'pino';
import { CooldownIndex } from './cooldown-index.js';
import { TaskWatch } from './task-watch.js';
import { withTimeout } from './with-timeout.js';

/** Longest a reader waits for the task watch it opened (a task list read, a new event stream). */
const TASK_WATCH_WAIT_MS = 2000;

/** Keys per round trip of the index's initial read: small pages keep the transient buffers small. */
const LOAD_PAGE = 1000;

/** Pause before the watches are opened again after a failure. */
const RETRY_MS = 1000;

/**
 * Fans task, cooldown, park, timeline and audit changes out to subscribers, from one etcd watch per
 * prefix per process (not one per client), and keeps the {@link CooldownIndex} of cooldown
 * records and parks current from the same watches: core's `ResumingWatch`, which loads the two
 * prefixes the index holds, re-opens its watches after a failure, each from the last revision it
 * saw, so a brief etcd outage loses no event, and re-reads the index from the store when a watch
 * can no longer resume (its history compacted). The task watch is a {@link TaskWatch}, open only
 * while it is used.
 */
export class EventHub {
  /**
   * Every cooldown record and park, as of the watches: trust it only while {@link EventHub.live}
   * (before the first load, and after a watch died, it may be empty or behind).
   */
  readonly cooldowns: CooldownIndex;
  readonly #kv: Kv;
  readonly #keys: Keys;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #listeners = new Set<(e: MaintdEvent) => void>();
  readonly #taskListeners = new Set<() => void>();
  readonly #tasks: TaskWatch;
  /** The watches of cooldowns, parks, the timeline and the audit trail, once started. */
  #watch: ResumingWatch | undefined;
  /** The records of the load in progress. */
  #loading: { cooldowns: KeyValue[]; parks: KeyValue[] } = { cooldowns: [], parks: [] };
  #live = false;
  #generation = 0;

  /** `policy`: the cooldown policy of this master, which says whether an entry gates its automatic work. */
  constructor(kv: Kv, keys: Keys, clock: Clock, logger: Logger, policy: CooldownPolicy) {
    this.cooldowns = new CooldownIndex(policy);
    this.#kv = kv;
    this.#keys = keys;
    this.#clock = clock;
    this.#logger = logger;
    const prefix = keys.tasksPrefix;
    this.#tasks = new TaskWatch({
      kv,
      prefix,
      clock,
      logger,
      onEvents: (events) => this.#onTasks(prefix, events),
      held: () => this.#listeners.size > 0,
    });
  }

  /** Starts watching (in the background; an unreachable store is retried). */
  start(): void {
    if (this.#watch) return;
    this.#watch = this.#open();
    // Open from the start, as a master is usually asked first just after it starts; a master
    // nobody asks drops it after the linger (opening it under a burst of readers instead cost
    // memory: docs/SCALING.md).
    this.#tasks.want();
  }

  /**
   * Registers a listener; returns its unsubscribe function. Task events flow once the task watch
   * is up ({@link EventHub.tasksWatched}).
   */
  subscribe(listener: (e: MaintdEvent) => void): () => void {
    this.#listeners.add(listener);
    this.#tasks.ensure();
    return () => this.#listeners.delete(listener);
  }

  /** A task list was read: keep (or start) the task watch for the next minute. */
  wantTasks(): void {
    this.#tasks.want();
  }

  /**
   * Resolves once the task watch is established (at once if it is), or after
   * {@link TASK_WATCH_WAIT_MS} while it cannot be (etcd away): never rejects.
   */
  tasksWatched(): Promise<void> {
    return withTimeout(this.#clock, this.#tasks.established(), TASK_WATCH_WAIT_MS).catch(() => undefined);
  }

  /** True while the task watch is established too: only then may a cached task list be kept. */
  get tasksLive(): boolean {
    return this.#live && this.#tasks.live;
  }

  /**
   * Registers a listener told only that tasks changed, once per batch of changes: it costs no
   * decoding, where a {@link EventHub.subscribe} listener makes every task change be parsed and
   * validated (three per task, on every master). Returns its unsubscribe function.
   */
  onTasksChanged(listener: () => void): () => void {
    this.#taskListeners.add(listener);
    return () => this.#taskListeners.delete(listener);
  }

  /**
   * True while every watch is established (and the index loaded): only then does every change
   * reach listeners, so only then may a listener trust a cache it invalidates on events.
   */
  get live(): boolean {
    return this.#live;
  }

  /**
   * Changes whenever the task watch or the others are (re)established or lost: stamps caches of
   * task lists, which may have missed a change meanwhile. Both counters only grow, so their sum
   * changes whenever either does.
   */
  get taskGeneration(): number {
    return this.#generation + this.#tasks.generation;
  }

  async close(): Promise<void> {
    await Promise.all([this.#watch?.close(), this.#tasks.close()]);
    if (this.#live) {
      this.#live = false;
      this.#generation++;
    }
  }

  #open(): ResumingWatch {
    const cool = this.#keys.cooldownPrefix();
    const parked = this.#keys.parkedPrefix();
    const timeline = this.#keys.timelinePrefix();
    const audit = this.#keys.auditPrefix;
    const handlers = new Map<string, (events: readonly WatchEvent[]) => void>([
      [cool, (events) => this.#onCooldowns(cool, events)],
      [parked, (events) => this.#onParks(parked, events)],
      [timeline, (events) => this.#onTimeline(events)],
      [audit, (events) => this.#onAudit(events)],
    ]);
    return new ResumingWatch({
      kv: this.#kv,
      clock: this.#clock,
      // Events carry no history, so the timeline and the audit trail (docs/ARCHITECTURE.md §2.9)
      // need no load: their watches start now, and resume from the last event they saw.
      watch: [cool, parked, timeline, audit],
      load: [cool, parked],
      // Both read at once, as one snapshot as nearly as two reads can be.
      concurrentLoads: true,
      pageSize: LOAD_PAGE,
      onReload: () => (this.#loading = { cooldowns: [], parks: [] }),
      onPage: (prefix, pairs) => (prefix === cool ? this.#loading.cooldowns : this.#loading.parks).push(...pairs),
      onLoaded: () => {
        const { cooldowns, parks } = this.#loading;
        this.#loading = { cooldowns: [], parks: [] };
        this.cooldowns.load(
          records<TaskCooldown>(cool, cooldowns, TaskCooldownSchema),
          records<ParkRecord>(parked, parks, ParkRecordSchema),
        );
      },
      onEvents: (events, prefix) => handlers.get(prefix)?.(events),
      onLive: () => {
        this.#live = true;
        this.#generation++;
      },
      onFailure: ({ error }) => {
        this.#logger.debug({ err: error }, 'event watch failed; retrying');
        this.#live = false;
        this.#generation++;
        return { delayMs: RETRY_MS };
      },
    });
  }

  #onTasks(prefix: string, events: readonly WatchEvent[]): void {
    if (events.length === 0) return;
    this.#tasksChanged();
    // Nobody streams events: a list cache to drop is all a batch of task changes is needed for.
    if (this.#listeners.size === 0) return;
    for (const e of events) {
      if (e.type === 'delete') {
        this.#emit({ type: 'task_deleted', revision: e.modRevision, id: e.key.slice(prefix.length) });
        continue;
      }
      const parsed = TaskRecordSchema.safeParse(safeJson(e.value));
      if (parsed.success) this.#emit({ type: 'task', revision: e.modRevision, task: parsed.data });
    }
  }

  #onCooldowns(prefix: string, events: readonly WatchEvent[]): void {
    for (const e of events) {
      const at = parsePairKey(prefix, e.key);
      if (!at) continue;
      if (e.type === 'delete') this.cooldowns.applyCooldown(at.kind, at.target, undefined, e.modRevision);
      else {
        const parsed = TaskCooldownSchema.safeParse(safeJson(e.value));
        if (!parsed.success) continue;
        this.cooldowns.applyCooldown(at.kind, at.target, parsed.data, e.modRevision);
      }
      this.#emitEntry(at.kind, at.target, e.modRevision);
    }
  }

  #onParks(prefix: string, events: readonly WatchEvent[]): void {
    for (const e of events) {
      const at = parsePairKey(prefix, e.key);
      if (!at) continue;
      if (e.type === 'delete') this.cooldowns.applyPark(at.kind, at.target, undefined, e.modRevision);
      else {
        const parsed = ParkRecordSchema.safeParse(safeJson(e.value));
        if (!parsed.success) continue;
        this.cooldowns.applyPark(at.kind, at.target, parsed.data, e.modRevision);
      }
      this.#emitEntry(at.kind, at.target, e.modRevision);
    }
  }

  /**
   * A `timeline` event per event added to a pair's timeline. Deletions are trims and prunes of old
   * events, not news: they are not sent. Nothing is decoded while nobody streams.
   */
  #onTimeline(events: readonly WatchEvent[]): void {
    for (const e of events) {
      if (e.type === 'delete' || this.#listeners.size === 0) continue;
      const parsed = TimelineEventSchema.safeParse(safeJson(e.value));
      // A newer release's event with a field this one does not know still parses (and is sent
      // without it); one that does not parse at all is left out, as the lists leave it out.
      if (parsed.success)
        this.#emit({ type: 'timeline', revision: e.modRevision, event: timelineEventView(parsed.data) });
    }
  }

  /**
   * An `audit` event per entry written, a bulk action's again as its count grows. Deletions are
   * prunes, not news. Nothing is decoded while nobody streams.
   */
  #onAudit(events: readonly WatchEvent[]): void {
    for (const e of events) {
      if (e.type === 'delete' || this.#listeners.size === 0) continue;
      const parsed = AuditEntrySchema.safeParse(safeJson(e.value));
      if (parsed.success) this.#emit({ type: 'audit', revision: e.modRevision, entry: auditEntryView(parsed.data) });
    }
  }

  /** A `cooldown` event with the entry as it stands now: record and park merged, or null when neither is left. */
  #emitEntry(kind: TaskKind, target: string, revision: number): void {
    this.#emit({
      type: 'cooldown',
      revision,
      kind,
      target,
      cooldown: this.cooldowns.view(kind, target, this.#clock.now()),
    });
  }

  #tasksChanged(): void {
    for (const l of this.#taskListeners) {
      try {
        l();
      } catch (err) {
        this.#logger.warn({ err }, 'change listener failed');
      }
    }
  }

  #emit(e: MaintdEvent): void {
    for (const l of this.#listeners) {
      try {
        l(e);
      } catch (err) {
        this.#logger.warn({ err }, 'event listener failed');
      }
    }
  }
}

/** The records of a read of `P/<prefix>/<kind>/<hex>` keys, each with its pair and revision. */
function records<T>(
  prefix: string,
  kvs: readonly KeyValue[],
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
): { kind: TaskKind; target: string; record: T; revision: number }[] {
  return kvs.flatMap((kv) => {
    const at = parsePairKey(prefix, kv.key);
    const parsed = schema.safeParse(safeJson(kv.value));
    // A record another version wrote (or a hand edit) is left out, as the lists' reads would fail on it.
    return at && parsed.success ? [{ ...at, record: parsed.data, revision: kv.modRevision }] : [];
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
