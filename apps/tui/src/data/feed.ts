import { type Clock, type Random, cryptoRandom, reconnectBackoff, systemClock } from '@maintd/core';
import type { IBackoff } from 'cockatiel';
import { ApiError, type MaintdClient } from '../api/client.js';
import { type MaintdEvent, readEventStream } from '../api/events.js';
import type { Task, TaskKind, TaskPage } from '../api/types.js';
import {
  applyEvents,
  countsFrom,
  mergeInto,
  mergeRows,
  parkNotes,
  parksIn,
  parseGuardOverflow,
  pruneTasks,
} from '../state/fleet.js';
import { EMPTY_FLEET, type FleetData } from '../state/fleet-data.js';
import { cooldownKey } from '../common/cooldown-key.js';
import { appendActivity, inTimeOrder } from '../state/activity.js';
import { auditActivity } from '../state/audit-lines.js';
import { byKind, fleetKinds, withKinds } from '../state/kinds.js';
import { INSIGHTS_MS, readInsights } from './insights.js';
import type { Connection, ConnectionState, FleetSnapshot, FleetSource } from './source.js';

/** Settings of a {@link FleetFeed}. */
export interface FeedOptions {
  readonly client: MaintdClient;
  readonly token?: string | undefined;
  /** Poll period (`--refresh`). */
  readonly refreshMs: number;
  /** While the event stream is live, the big lists (cooldowns) are re-read only this often. */
  readonly resyncMs?: number;
  /**
   * Stores have no events; a fleet with more than {@link LARGE_FLEET} of them is re-read at most
   * this often (default 30 s: their stats change once per scan, every 60 s by default, and a read
   * of 10,000 is 50 pages), a smaller one every refresh.
   */
  readonly largeFleetStoresMs?: number;
  /** The capacity and the causes are read at most this often (default `INSIGHTS_MS`, data/insights.ts). */
  readonly insightsMs?: number;
  /**
   * The event stream is read at most this often (default 50 ms), and what each read brought is
   * applied as one batch: a burst of 100 changes a second costs at most 20 reads and 20 updates,
   * and the App draws a frame only for those that change what is on screen (see
   * bench/tui.bench.ts). The first change after a quiet spell is applied at once.
   */
  readonly flushMs?: number;
  /** Event-stream silence that counts as a dead connection (the master keeps alive every 15 s). */
  readonly streamIdleMs?: number;
  /** Longest wait between event-stream reconnects. */
  readonly maxBackoffMs?: number;
  /** Times polls, batches, reconnects and stream deadlines (default: the system clock). */
  readonly clock?: Clock;
  /** Jitter of the reconnect waits (default: the platform's crypto randomness). */
  readonly random?: Random;
  readonly fetch?: typeof fetch;
}

/** How many newest tasks one refresh reads (the Tasks view, recent outcomes). */
export const RECENT_TASKS = 200;
/** How many of the newest audit entries a full read takes (the Overview shows the last few). */
export const AUDIT_READ = 20;
/** Stores beyond which the stores list is re-read less often than every refresh. */
export const LARGE_FLEET = 1000;
/**
 * Tasks read beside the newest page: the held ones (a park keeps them back however old they are,
 * docs/ARCHITECTURE.md §2.7) and the master's matches of the Tasks view's search (`q=`). Each read
 * that fails costs only its rows (a master that predates `held` refuses the state; a 0.1.0 one
 * ignores `q`, and the view filters what it holds): it never resolves to an error.
 */
async function extraTasks(c: MaintdClient, search: string, signal: AbortSignal): Promise<Task[]> {
  const reads = await Promise.allSettled([
    c.tasks({ state: 'held', limit: RECENT_TASKS }, signal),
    search ? c.searchTasks(search, RECENT_TASKS, signal) : Promise.resolve(undefined),
  ]);
  return reads.flatMap((r) => (r.status === 'fulfilled' && r.value ? r.value.tasks : []));
}

/**
 * The queue's depth per kind when it is longer than the page read (one small read per kind);
 * undefined when the page holds it all. A kind whose read failed is left out.
 */
async function queueDepths(
  c: MaintdClient,
  known: readonly TaskKind[],
  queued: TaskPage,
  signal: AbortSignal,
): Promise<Record<TaskKind, number> | undefined> {
  if (queued.total <= queued.tasks.length) return undefined;
  const kinds = withKinds(
    known,
    queued.tasks.map((t) => t.kind),
  );
  const totals = await Promise.allSettled(kinds.map((kind) => c.tasks({ state: 'queued', kind, limit: 1 }, signal)));
  const depths = byKind<number>();
  kinds.forEach((kind, i) => {
    const r = totals[i];
    if (r?.status === 'fulfilled') depths[kind] = r.value.total;
  });
  return depths;
}

/** The first wait before an event-stream reconnect (it doubles up to `maxBackoffMs`). */
const FIRST_BACKOFF_MS = 250;

/** Inputs of {@link deriveConnection}. */
export interface ConnectionFacts {
  readonly streamOpen: boolean;
  /** Outcome of the latest poll: true (something answered), false (nothing did), undefined (none yet). */
  readonly pollOk: boolean | undefined;
  readonly error: string | undefined;
  readonly lastUpdateMs: number | undefined;
}

/** The connection state shown to the operator, from what the feed knows. */
export function deriveConnection(f: ConnectionFacts): Connection {
  let state: ConnectionState;
  if (f.streamOpen) state = 'live';
  else if (f.pollOk === true) state = 'polling';
  else if (f.pollOk === false) state = 'disconnected';
  else state = 'connecting';
  return { state, error: f.error, lastUpdateMs: f.lastUpdateMs };
}

/**
 * Keeps a {@link FleetSnapshot} of one master current: live over `/api/v1/events` (reconnecting
 * with backoff, forever), plus polling every `refreshMs` for what has no events (masters,
 * workers, stores, counts) and, while the stream is down, for everything. Every request has a
 * deadline and polls never overlap, so a slow or vanished master costs staleness, never a frozen
 * screen. Events that arrive while a poll is in flight are replayed on top of its result, so a
 * slow read never rolls a newer change back.
 */
export class FleetFeed implements FleetSource {
  readonly #o: Required<Omit<FeedOptions, 'token' | 'fetch'>> & Pick<FeedOptions, 'token' | 'fetch'>;
  readonly #listeners = new Set<() => void>();
  readonly #stop = new AbortController();
  #data: FleetData = EMPTY_FLEET;
  #snapshot: FleetSnapshot;
  #streamOpen = false;
  #pollOk: boolean | undefined;
  #pollError: string | undefined;
  #streamError: string | undefined;
  #lastUpdateMs: number | undefined;
  #lastFullMs = -Infinity;
  #lastStoresMs = -Infinity;
  #lastInsightsMs = -Infinity;
  #fullWanted = true;
  #wake: (() => void) | undefined;
  #pending: MaintdEvent[] = [];
  #replay: MaintdEvent[] | undefined;
  #loops: Promise<void>[] = [];
  /** The Tasks view's search (`q=`): its matches are read beside the newest tasks. */
  #taskSearch = '';

  constructor(options: FeedOptions) {
    this.#o = {
      resyncMs: 30_000,
      largeFleetStoresMs: 30_000,
      insightsMs: INSIGHTS_MS,
      flushMs: 50,
      streamIdleMs: 40_000,
      maxBackoffMs: 10_000,
      clock: systemClock,
      random: cryptoRandom,
      // An option given as undefined keeps its default.
      ...(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as FeedOptions),
    };
    this.#snapshot = { data: this.#data, connection: this.#connection() };
  }

  /** Starts polling and streaming in the background. */
  start(): void {
    if (this.#loops.length > 0) return;
    this.#loops = [this.#pollLoop(), this.#streamLoop()];
  }

  /** Stops everything, aborting requests in flight. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    await Promise.all(this.#loops);
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  getSnapshot(): FleetSnapshot {
    return this.#snapshot;
  }

  refresh(): void {
    this.#fullWanted = true;
    this.#wake?.();
  }

  /**
   * The Tasks view's search is read from the master too (`GET /tasks?q=`, beside the newest page):
   * it finds older tasks. Cooldowns need nothing: the whole list is read anyway.
   */
  search(view: string, q: string): void {
    if (view !== 'tasks' || q === this.#taskSearch) return;
    this.#taskSearch = q;
    // The next poll, at once if it sleeps; not a full read (the cooldowns are not searched).
    this.#wake?.();
  }

  #connection(): Connection {
    return deriveConnection({
      streamOpen: this.#streamOpen,
      pollOk: this.#pollOk,
      error: this.#pollError ?? this.#streamError,
      lastUpdateMs: this.#lastUpdateMs,
    });
  }

  #publish(): void {
    this.#snapshot = { data: this.#data, connection: this.#connection() };
    for (const l of this.#listeners) l();
  }

  async #pollLoop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        await this.#pollOnce(signal);
      } catch (err) {
        // A bug in handling an answer must not end polling for the rest of the session.
        this.#replay = undefined;
        this.#pollOk = false;
        this.#pollError = `internal error: ${(err as Error).message}`;
        this.#publish();
      }
      if (signal.aborted) return;
      if (this.#fullWanted) continue;
      const wake = new AbortController();
      this.#wake = () => wake.abort();
      await this.#o.clock.sleep(this.#o.refreshMs, wake.signal).catch(() => undefined);
      this.#wake = undefined;
    }
  }

  /** One round of reads; each part that fails keeps its previous value. */
  async #pollOnce(signal: AbortSignal): Promise<void> {
    const c = this.#o.client;
    const now = this.#o.clock.now();
    const full = this.#fullWanted || !this.#streamOpen || now - this.#lastFullMs >= this.#o.resyncMs;
    const storesDue =
      full || this.#data.storesTotal <= LARGE_FLEET || now - this.#lastStoresMs >= this.#o.largeFleetStoresMs;
    const insightsDue = now - this.#lastInsightsMs >= this.#o.insightsMs;
    if (insightsDue) this.#lastInsightsMs = now;
    this.#fullWanted = false;
    this.#replay = [];
    const page = (q: Parameters<MaintdClient['tasks']>[0]): Promise<TaskPage> => c.tasks(q, signal);
    const [masters, workers, stores, recent, queued, running, metrics, cooldowns, policy, extra, audit, insights] =
      await Promise.allSettled([
        c.masters(signal),
        c.workers(signal),
        storesDue ? c.stores(signal) : Promise.resolve(undefined),
        page({ limit: RECENT_TASKS }),
        page({ state: 'queued', limit: RECENT_TASKS }),
        page({ state: 'running', limit: RECENT_TASKS }),
        c.metrics(signal),
        full ? c.cooldowns(signal) : Promise.resolve(undefined),
        // The policy is read with every full read: at start, after a reconnect (the master may
        // have restarted with other settings) and on refresh.
        full ? c.policy(signal) : Promise.resolve(undefined),
        extraTasks(c, this.#taskSearch, signal),
        // The newest of the audit trail: the recent past at start, and what the stream missed
        // while it was down. Like the extra tasks, its failure costs only its lines.
        full ? c.audit(AUDIT_READ, signal) : Promise.resolve(undefined),
        // Read less often, and never an error of the poll: a failure is the section's own status.
        insightsDue ? readInsights(c, this.#data, signal) : Promise.resolve(undefined),
      ]);
    // The kinds known before this read, and those the masters just registered: a kind counts
    // from the read that first shows it.
    const known = withKinds(
      fleetKinds(this.#data),
      masters.status === 'fulfilled' ? masters.value.flatMap((m) => m.kinds ?? []) : [],
    );
    const queuedTotals = queued.status === 'fulfilled' ? await queueDepths(c, known, queued.value, signal) : undefined;
    if (signal.aborted) return;

    const results = [masters, workers, stores, recent, queued, running, metrics, cooldowns, policy];
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    // Any HTTP answer (even a 503) means the master is there; only when nothing answered is it gone.
    const answered = results.some((r) => r.status === 'fulfilled' || r.reason instanceof ApiError);
    const replay = this.#replay;
    this.#replay = undefined;

    let data = this.#data;
    if (masters.status === 'fulfilled')
      data = { ...data, masters: mergeRows(data.masters, masters.value, (m) => m.id) };
    if (workers.status === 'fulfilled') {
      data = { ...data, workers: mergeRows(data.workers, workers.value, (w) => w.endpoint) };
    }
    if (stores.status === 'fulfilled' && stores.value) {
      // Unchanged rows keep their identity (a re-read of 10,000 stores redraws only what changed).
      const rows = mergeRows(data.stores, stores.value.stores, (s) => s.name);
      data = { ...data, stores: rows, storesTotal: stores.value.total };
      this.#lastStoresMs = now;
    }
    if (metrics.status === 'fulfilled') data = { ...data, guardOverflow: parseGuardOverflow(metrics.value) };
    if (policy.status === 'fulfilled' && policy.value) data = { ...data, policy: policy.value };
    if (insights.status === 'fulfilled' && insights.value) data = { ...data, ...insights.value };
    if (queued.status === 'fulfilled' && running.status === 'fulfilled') {
      data = { ...data, counts: countsFrom(known, queued.value, running.value, queuedTotals) };
    }
    // Re-read lists are merged into the live maps (only what differs changes), then the events
    // that arrived meanwhile are replayed on top; their activity lines were noted when first
    // applied, so the replay's are dropped, and the parks the merge and replay changed in the
    // end (what the stream did not deliver) are noted instead.
    let activity = data.activity;
    const parksBefore = cooldowns.status === 'fulfilled' && cooldowns.value ? parksIn(data.cooldowns, now) : undefined;
    if (recent.status === 'fulfilled' && queued.status === 'fulfilled' && running.status === 'fulfilled') {
      const all: Task[] = [...recent.value.tasks, ...queued.value.tasks, ...running.value.tasks];
      if (extra.status === 'fulfilled') all.push(...extra.value);
      const tasks = pruneTasks(
        mergeInto(
          data.tasks,
          all.map((t) => [t.id, t] as const),
        ),
      );
      data = applyEvents(
        { ...data, tasks },
        replay.filter((e) => e.type === 'task' || e.type === 'task_deleted'),
        now,
      );
    }
    if (cooldowns.status === 'fulfilled' && cooldowns.value) {
      const merged = mergeInto(
        data.cooldowns,
        cooldowns.value.map((c) => [cooldownKey(c.kind, c.target), c] as const),
      );
      data = applyEvents(
        { ...data, cooldowns: merged },
        replay.filter((e) => e.type === 'cooldown'),
        now,
      );
      // The first read is the starting point, not news.
      if (parksBefore && this.#lastFullMs !== -Infinity) {
        activity = appendActivity(activity, parkNotes(parksBefore, data.cooldowns, now));
      }
      this.#lastFullMs = now;
    }
    if (audit.status === 'fulfilled' && audit.value) {
      activity = inTimeOrder(appendActivity(activity, [...audit.value].reverse().map(auditActivity)));
    }
    data = { ...data, activity };
    this.#data = data;
    this.#pollOk = answered;
    this.#pollError = failures.length > 0 ? (failures[0]!.reason as Error).message : undefined;
    if (answered) this.#lastUpdateMs = this.#o.clock.now();
    this.#publish();
  }

  async #streamLoop(): Promise<void> {
    const signal = this.#stop.signal;
    const schedule = reconnectBackoff({
      initialMs: FIRST_BACKOFF_MS,
      maxMs: this.#o.maxBackoffMs,
      random: this.#o.random,
    });
    // The step of the latest reconnect; undefined after an open, so the next wait is the first.
    let step: IBackoff<unknown> | undefined;
    while (!signal.aborted) {
      let end: string;
      try {
        end = await readEventStream(
          {
            url: this.#o.client.url,
            token: this.#o.token,
            connectTimeoutMs: Math.max(this.#o.refreshMs, 5000),
            idleTimeoutMs: this.#o.streamIdleMs,
            clock: this.#o.clock,
            signal,
            paceMs: this.#o.flushMs,
            ...(this.#o.fetch ? { fetch: this.#o.fetch } : {}),
          },
          {
            onOpen: () => {
              this.#streamOpen = true;
              this.#streamError = undefined;
              step = undefined;
              // Whatever changed while the stream was down is only in a full read.
              this.refresh();
              this.#publish();
            },
            onEvent: (e) => {
              this.#pending.push(e);
              this.#replay?.push(e);
            },
            onBatch: () => this.#flush(),
          },
        );
        if (end === 'closed') this.#streamError = 'event stream closed by the master';
      } catch (err) {
        end = 'error';
        this.#streamError = (err as Error).message;
      }
      if (signal.aborted) return;
      const wasOpen = this.#streamOpen;
      this.#streamOpen = false;
      this.#flush();
      if (wasOpen) {
        // Poll at once: if the master is gone the header says so now, not a refresh later.
        this.refresh();
        this.#publish();
      }
      // An overflow is the master shedding a slow reader, not a failure: reconnect at once. (It
      // still takes a step, as before: should that reconnect fail, the next wait is the second.)
      step = step ? step.next(undefined) : schedule.next();
      await this.#o.clock.sleep(end === 'overflow' ? 0 : step.duration, signal).catch(() => undefined);
    }
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    this.#data = applyEvents(this.#data, this.#pending, this.#o.clock.now());
    this.#pending = [];
    this.#lastUpdateMs = this.#o.clock.now();
    this.#publish();
  }
}
