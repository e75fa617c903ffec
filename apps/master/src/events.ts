import {
  AuditEntrySchema,
  type Clock,
  type CooldownPolicy,
  type KeyValue,
  type Keys,
  type Kv,
  type ParkRecord,
  ParkRecordSchema,
  type TaskCooldown,
  TaskCooldownSchema,
  type TaskKind,
  TaskKindSchema,
  TaskRecordSchema,
  TimelineEventSchema,
  type Watch,
  type WatchEvent,
  targetFromHex,
  whenAborted,
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

/**
 * Fans task, cooldown, park, timeline and audit changes out to subscribers, from one etcd watch per
 * prefix per process (not one per client), and keeps the {@link CooldownIndex} of cooldown
 * records and parks current from the same watches. Re-opens its watches after a failure, each from the last
 * revision it saw, so a brief etcd outage loses no event; a watch that can no longer resume (its
 * history compacted) re-reads the index from the store. The task watch is a {@link TaskWatch},
 * open only while it is used.
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
  readonly #stop = new AbortController();
  readonly #tasks: TaskWatch;
  #watches: Watch[] = [];
  /** Per watched prefix, the revision to resume from (absent: from now). */
  readonly #resume = new Map<string, number>();
  /** True while the index holds a load that the watches have kept current since. */
  #synced = false;
  #live = false;
  #generation = 0;
  #loop: Promise<void> | undefined;

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
    if (this.#loop) return;
    this.#loop = this.#run();
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
    this.#stop.abort();
    await Promise.all(this.#watches.map((w) => w.close().catch(() => undefined)));
    await Promise.all([this.#loop, this.#tasks.close()]);
  }

  async #run(): Promise<void> {
    const cool = this.#keys.cooldownPrefix();
    const parked = this.#keys.parkedPrefix();
    const timeline = this.#keys.timelinePrefix();
    const audit = this.#keys.auditPrefix;
    while (!this.#stop.signal.aborted) {
      const dead = new AbortController();
      try {
        if (!this.#synced) {
          const [cooldownRevision, parkRevision] = await this.#loadIndex(cool, parked);
          // Each watch replays from its snapshot's first read: a change made while the rest of the
          // snapshot was read arrives as an event, and revisions make applying it twice harmless.
          this.#resume.set(cool, cooldownRevision + 1);
          this.#resume.set(parked, parkRevision + 1);
          this.#synced = true;
        }
        const opts = (prefix: string): { fromRevision?: number; onError: () => void } => {
          const from = this.#resume.get(prefix);
          return { ...(from ? { fromRevision: from } : {}), onError: () => dead.abort() };
        };
        this.#watches = [];
        this.#watches.push(await this.#kv.watch(cool, (events) => this.#onCooldowns(cool, events), opts(cool)));
        this.#watches.push(await this.#kv.watch(parked, (events) => this.#onParks(parked, events), opts(parked)));
        // Events carry no history, so the timeline needs no load: its watch starts now, and
        // resumes from the last event it saw after a break it can resume from.
        this.#watches.push(
          await this.#kv.watch(timeline, (events) => this.#onTimeline(timeline, events), opts(timeline)),
        );
        // The same for the audit trail (docs/ARCHITECTURE.md §2.9).
        this.#watches.push(await this.#kv.watch(audit, (events) => this.#onAudit(audit, events), opts(audit)));
        this.#live = true;
        this.#generation++;
        // Either may have fired while the watches were being opened.
        await whenAborted(dead.signal, this.#stop.signal);
      } catch (err) {
        this.#logger.debug({ err }, 'event watch failed; retrying');
      }
      this.#live = false;
      this.#generation++;
      await Promise.all(this.#watches.map((w) => w.close().catch(() => undefined)));
      this.#watches = [];
      if (dead.signal.aborted) {
        // Compacted or broken: resume from now, after reading the index afresh.
        this.#resume.clear();
        this.#synced = false;
      }
      try {
        await this.#clock.sleep(1000, this.#stop.signal);
      } catch {
        return;
      }
    }
  }

  /** Reads every cooldown record and park into the index; returns the revision of each prefix's first read. */
  async #loadIndex(cool: string, parked: string): Promise<[number, number]> {
    const [cooldowns, parks] = await Promise.all([readAll(this.#kv, cool), readAll(this.#kv, parked)]);
    this.cooldowns.load(
      records<TaskCooldown>(cool, cooldowns.kvs, TaskCooldownSchema),
      records<ParkRecord>(parked, parks.kvs, ParkRecordSchema),
    );
    return [cooldowns.revision, parks.revision];
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
      this.#resume.set(prefix, e.modRevision + 1);
      const at = keyTarget(prefix, e.key);
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
      this.#resume.set(prefix, e.modRevision + 1);
      const at = keyTarget(prefix, e.key);
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
  #onTimeline(prefix: string, events: readonly WatchEvent[]): void {
    for (const e of events) {
      this.#resume.set(prefix, e.modRevision + 1);
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
  #onAudit(prefix: string, events: readonly WatchEvent[]): void {
    for (const e of events) {
      this.#resume.set(prefix, e.modRevision + 1);
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

/** The (kind, target) a `P/<prefix>/<kind>/<hex>` key names, or undefined for a key of another shape. */
function keyTarget(prefix: string, key: string): { kind: TaskKind; target: string } | undefined {
  const [kindText, hex, extra] = key.slice(prefix.length).split('/');
  const kind = TaskKindSchema.safeParse(kindText);
  if (!kind.success || !hex || extra !== undefined) return undefined;
  return { kind: kind.data, target: targetFromHex(hex) };
}

/** The records of a read of `P/<prefix>/<kind>/<hex>` keys, each with its pair and revision. */
function records<T>(
  prefix: string,
  kvs: readonly KeyValue[],
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
): { kind: TaskKind; target: string; record: T; revision: number }[] {
  return kvs.flatMap((kv) => {
    const at = keyTarget(prefix, kv.key);
    const parsed = schema.safeParse(safeJson(kv.value));
    // A record another version wrote (or a hand edit) is left out, as the lists' reads would fail on it.
    return at && parsed.success ? [{ ...at, record: parsed.data, revision: kv.modRevision }] : [];
  });
}

/** Every key under `prefix`, in pages; the revision is that of the first page. */
async function readAll(kv: Kv, prefix: string): Promise<{ kvs: KeyValue[]; revision: number }> {
  const kvs: KeyValue[] = [];
  let revision = 0;
  let from: string | undefined;
  for (;;) {
    const page = await kv.range(prefix, { limit: LOAD_PAGE, ...(from !== undefined ? { fromKey: from } : {}) });
    if (revision === 0) revision = page.revision;
    kvs.push(...page.kvs);
    const last = page.kvs.at(-1);
    if (!page.more || !last) return { kvs, revision };
    from = `${last.key}\0`; // the smallest key after `last`
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
