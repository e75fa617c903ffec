import { type Clock, systemClock } from './clock.js';
import { type CooldownPolicy, DEFAULT_COOLDOWN_POLICY } from './cooldown-policy.js';
import { type Keys, keysFor } from './keys.js';
import type { Kv, WatchEvent } from './kv/port.js';
import { GroupCommitKv } from './kv/group-commit.js';
import type {
  ErrorClass,
  MasterInfo,
  ParkRecord,
  StoreStats,
  TaskCooldown,
  TaskKind,
  TaskRecord,
  TaskSource,
  WorkerScan,
} from './model.js';
import { type Random, cryptoRandom } from './random.js';
import { DEFAULT_SESSION_TTL_SECS, Session, type SessionEvent } from './session.js';
import { type Claim, Claimer } from './store/claimer.js';
import { QueueMirror } from './store/queue-mirror.js';
import type { StoreContext } from './store/context.js';
import { CooldownStore, type RecordFailureResult } from './store/cooldown-store.js';
import { Coordination, type HeldLock } from './store/coordination.js';
import { type ListTasksQuery, TaskHistory, type TaskPage } from './store/history.js';
import {
  type EnqueueResult,
  type FinishResult,
  type RecoveryResult,
  TaskLifecycle,
  type TaskOutcome,
} from './store/lifecycle.js';
import { KnownRecords, LocalClaims } from './store/local-state.js';
import { type ParkOptions, ParkStore } from './store/park-store.js';
import { StatsStore } from './store/stats.js';
import { WorkerScans } from './store/worker-scans.js';

export type { Claim } from './store/claimer.js';
export type { CooldownRead, RecordFailureResult } from './store/cooldown-store.js';
export type { HeldLock } from './store/coordination.js';
export type { ListTasksQuery, TaskPage } from './store/history.js';
export type { CooldownEffect, EnqueueResult, FinishResult, RecoveryResult, TaskOutcome } from './store/lifecycle.js';
export type { ParkOptions } from './store/park-store.js';

/**
 * The defaults of the store's options (DESIGN §2.5, §2.6): written once here, and used as the
 * defaults of the master's settings (`ETCD_LEASE_TTL_SECS`, `TASK_MAX_ATTEMPTS`,
 * `TASK_HISTORY_LIMIT`, `TASK_HISTORY_TTL_SECS`).
 */
export const DEFAULT_STORE_OPTIONS = Object.freeze({
  /** Session lease TTL in seconds. */
  leaseTtlSecs: DEFAULT_SESSION_TTL_SECS,
  /** A task orphaned more often than this is failed instead of requeued. */
  maxAttempts: 5,
  /** Terminal tasks kept. */
  historyLimit: 1000,
  /** Terminal tasks older than this (seconds) are pruned; 0 = count cap only. */
  historyTtlSecs: 86400,
});

/** Options of {@link TaskStore.open}. */
export interface TaskStoreOptions {
  /** The store to keep state in (etcd, or MemoryKv embedded). */
  readonly kv: Kv;
  /** This master's id: written as claim owner and registration key. */
  readonly masterId: string;
  /** Key prefix (default `/maintd`). */
  readonly prefix?: string;
  /** Time source (default: the system clock). */
  readonly clock?: Clock;
  /** Randomness for ids and retry jitter (default: crypto). */
  readonly random?: Random;
  /** Session lease TTL in seconds (default 30, minimum 5). */
  readonly leaseTtlSecs?: number;
  /** A task orphaned more often than this is failed instead of requeued (default 5). */
  readonly maxAttempts?: number;
  /** Terminal tasks kept (default 1000). */
  readonly historyLimit?: number;
  /** Terminal tasks older than this are pruned; 0 = count cap only (default 86400). */
  readonly historyTtlSecs?: number;
  /** Finishes between two history prunes of this instance (default 50). */
  readonly pruneEvery?: number;
  /** Cooldown policy overrides. */
  readonly cooldown?: Partial<CooldownPolicy>;
  /** Registration published at `P/masters/<id>` while the session lives. */
  readonly info?: Omit<MasterInfo, 'id'>;
  /** Session lifecycle notifications (lost, renewed). */
  readonly onSessionEvent?: (event: SessionEvent) => void;
}

/**
 * The task queue, claims, history and failure cooldown, over any {@link Kv} (DESIGN §2.6–2.7).
 * Safe to use from many instances (masters) at once: every state change is one guarded
 * transaction. Holds a session lease; call {@link TaskStore.close} to release it.
 */
export class TaskStore {
  /** The key layout under this store’s prefix. */
  readonly keys: Keys;
  /** This instance’s master id (claim owner). */
  readonly masterId: string;
  /** The effective cooldown policy. */
  readonly policy: CooldownPolicy;
  /** This instance’s session lease. */
  readonly session: Session;
  readonly #lifecycle: TaskLifecycle;
  readonly #claimer: Claimer;
  readonly #queue: QueueMirror;
  readonly #history: TaskHistory;
  readonly #cooldowns: CooldownStore;
  readonly #parks: ParkStore;
  readonly #stats: StatsStore;
  #recoveredOnOpen: RecoveryResult = { requeued: [], failed: [] };
  readonly #workerScans: WorkerScans;
  readonly #coordination: Coordination;

  private constructor(o: TaskStoreOptions, keys: Keys, session: Session, clock: Clock) {
    this.keys = keys;
    this.session = session;
    this.masterId = o.masterId;
    this.policy = Object.freeze({ ...DEFAULT_COOLDOWN_POLICY, ...o.cooldown });
    const ctx: StoreContext = {
      kv: new GroupCommitKv(o.kv, clock),
      keys,
      clock,
      random: o.random ?? cryptoRandom,
      masterId: o.masterId,
      session,
    };
    // The only state two parts share: records enqueue wrote for the claimer, and claims that
    // recovery must leave alone.
    const known = new KnownRecords();
    const claims = new LocalClaims();
    this.#coordination = new Coordination(ctx);
    this.#history = new TaskHistory(
      ctx,
      {
        limit: Math.max(1, o.historyLimit ?? DEFAULT_STORE_OPTIONS.historyLimit),
        ttlMs: (o.historyTtlSecs ?? DEFAULT_STORE_OPTIONS.historyTtlSecs) * 1000,
        pruneEvery: Math.max(1, o.pruneEvery ?? 50),
      },
      (name) => this.#coordination.tryLock(name),
    );
    this.#stats = new StatsStore(ctx);
    this.#workerScans = new WorkerScans(ctx);
    this.#parks = new ParkStore(ctx);
    this.#cooldowns = new CooldownStore(ctx, this.policy, this.#parks);
    this.#queue = new QueueMirror(keys.queuePrefix());
    this.#claimer = new Claimer(ctx, known, claims, this.#queue);
    this.#lifecycle = new TaskLifecycle(
      ctx,
      { known, claims, queue: this.#queue, history: this.#history, cooldowns: this.#cooldowns },
      o.maxAttempts ?? DEFAULT_STORE_OPTIONS.maxAttempts,
    );
  }

  /**
   * Opens a session, registers, recovers orphaned tasks and prunes history when it may hold
   * something to prune (counts first: a history within its limits is not read).
   */
  static async open(options: TaskStoreOptions): Promise<TaskStore> {
    const clock = options.clock ?? systemClock;
    const keys = keysFor(options.prefix);
    const session = await Session.open({
      kv: options.kv,
      keys,
      clock,
      masterId: options.masterId,
      ...(options.leaseTtlSecs !== undefined ? { ttlSecs: options.leaseTtlSecs } : {}),
      ...(options.info ? { info: options.info } : {}),
      ...(options.onSessionEvent ? { onEvent: options.onSessionEvent } : {}),
    });
    const store = new TaskStore(options, keys, session, clock);
    try {
      store.#recoveredOnOpen = await store.recoverOrphaned();
      await store.#history.maybePrune();
    } catch (err) {
      await session.close();
      throw err;
    }
    return store;
  }

  /**
   * What {@link TaskStore.open} recovered: the tasks of dead masters it requeued or failed
   * before this store was handed out (the scheduler logs them when it starts).
   */
  get recoveredOnOpen(): RecoveryResult {
    return this.#recoveredOnOpen;
  }

  /** Revokes the session: claims still held are recovered by peers at once. */
  async close(): Promise<void> {
    await this.session.close();
  }

  // ---------------------------------------------------------------- tasks

  /**
   * Queues a task. A task without dependencies dedupes against an active (queued or running)
   * task of the same kind and target and returns it with `created: false`. Never gated by
   * cooldown.
   */
  enqueue(
    kind: TaskKind,
    target: string,
    options: { readonly dependsOn?: readonly string[]; readonly source?: TaskSource } = {},
  ): Promise<EnqueueResult> {
    return this.#lifecycle.enqueue(kind, target, options);
  }

  /** The task with this id, or undefined. */
  getTask(id: string): Promise<TaskRecord | undefined> {
    return this.#history.getTask(id);
  }

  /** Tasks newest first, optionally filtered, in pages. */
  listTasks(query: ListTasksQuery = {}): Promise<TaskPage> {
    return this.#history.listTasks(query);
  }

  /** Number of queued tasks (of one kind, or all). */
  queueDepth(kind?: TaskKind): Promise<number> {
    return this.#history.queueDepth(kind);
  }

  /**
   * Claims the oldest runnable task of the given kinds, or returns undefined. Every kind takes
   * the per-target lock, so at most one task per store runs at a time. A task whose dependency
   * failed or vanished is failed here; one whose dependency is still active is skipped.
   *
   * Under contention the order is FIFO within a window: a claimer that loses a race to another
   * instance draws its next tries from the oldest few (up to 32) candidates, widening per loss and
   * narrowing per win, so that masters stop racing each other for the very oldest task. Uncontended,
   * the oldest runnable task is claimed.
   */
  claimNext(kinds: readonly TaskKind[]): Promise<Claim | undefined> {
    return this.#claimer.claimNext(kinds);
  }

  /**
   * Hands this store the changes a watch on `keys.queuePrefix()` reported, so that claims take
   * their candidates from a mirror of each queue's head instead of reading a page of the queue
   * per claim. Only used between {@link TaskStore.setQueueFeed}(true) and (false): without a
   * live feed, every claim reads the queue.
   */
  observeQueue(events: readonly WatchEvent[]): void {
    this.#queue.apply(events);
    this.#claimer.observeQueue(events);
  }

  /**
   * Says whether the queue watch feeding {@link TaskStore.observeQueue} is established (call
   * once its `watch` resolved) or lost (call when it errors or closes). Either way what was
   * mirrored is dropped, so a change missed in between cannot hide a queued task.
   */
  setQueueFeed(live: boolean): void {
    this.#queue.setLive(live);
  }

  /**
   * Records a claimed task's outcome in one transaction guarded by the claim. A lost claim
   * throws {@link ClaimLostError} and records nothing, cooldown included. After the commit,
   * best-effort: a success clears the target's cooldown (inside the same transaction), a
   * failure is counted toward it, and history is pruned every few finishes.
   */
  finish(claim: Claim, outcome: TaskOutcome): Promise<FinishResult> {
    return this.#lifecycle.finish(claim, outcome);
  }

  /**
   * Requeues running tasks whose claim is gone (their master died or was cut off), keeping id
   * and `enqueued_at` so they keep their FIFO position. A task orphaned more than `maxAttempts`
   * times is failed instead (`infrastructure`), so a task that kills masters cannot loop forever.
   */
  async recoverOrphaned(): Promise<RecoveryResult> {
    const result = await this.#lifecycle.recoverOrphaned();
    if (result.requeued.length > 0) this.#claimer.mastersChanged();
    return result;
  }

  /**
   * Deletes terminal tasks beyond the newest `historyLimit` or older than the history TTL. Never
   * touches active tasks or a terminal task that an active task depends on.
   */
  pruneHistory(): Promise<number> {
    return this.#history.pruneHistory();
  }

  // ---------------------------------------------------------------- cooldown

  /**
   * Counts a failure of (kind, target) toward its cooldown, for callers outside the scheduler
   * (the scheduler's own failures are counted in their finish's transaction): read, compute the
   * next record with the pure policy, CAS it on `mod_revision` under a lease of `maxSecs` (so the
   * count outlives a lapsed window), and on a conflict re-decide from the record the losing
   * transaction read, backing off 5–25 ms after the first few. Idempotent per task id. Concurrent
   * calls for one (kind, target) on this instance commit together in one CAS (each still gets
   * its own decision, as if applied in call order).
   */
  recordFailure(
    kind: TaskKind,
    target: string,
    taskId: string,
    error: string,
    errorClass: ErrorClass,
  ): Promise<RecordFailureResult> {
    return this.#cooldowns.recordFailure(kind, target, taskId, error, errorClass);
  }

  /** Deletes the cooldown record of (kind, target); true if there was one. */
  clearCooldown(kind: TaskKind, target: string): Promise<boolean> {
    return this.#cooldowns.clearCooldown(kind, target);
  }

  /** Deletes every cooldown record (of one kind, or all); returns how many. */
  clearCooldowns(kind?: TaskKind): Promise<number> {
    return this.#cooldowns.clearCooldowns(kind);
  }

  /** The cooldown record of (kind, target), active or not. */
  getCooldown(kind: TaskKind, target: string): Promise<TaskCooldown | undefined> {
    return this.#cooldowns.getCooldown(kind, target);
  }

  /**
   * Cooldown records, ordered by kind then target: only active windows, or with `all` the
   * below-threshold counters and lapsed windows too.
   */
  listCooldowns(options: { readonly kind?: TaskKind; readonly all?: boolean } = {}): Promise<TaskCooldown[]> {
    return this.#cooldowns.listCooldowns(options);
  }

  /**
   * Whether an active window of (kind, target) gates the automatic work on it: one key read, none
   * where this store's policy does not run the cooldown for `kind` (see `appliesTo`).
   */
  isCoolingDown(kind: TaskKind, target: string, nowMs?: number): Promise<boolean> {
    return this.#cooldowns.isCoolingDown(kind, target, nowMs);
  }

  /**
   * Targets of `kind` with an active window, in one prefix read: what a sweep skips. None, and no
   * read, where this store's policy does not run the cooldown for `kind` (see `appliesTo`).
   */
  coolingTargets(kind: TaskKind, nowMs?: number): Promise<Set<string>> {
    return this.#cooldowns.coolingTargets(kind, nowMs);
  }

  // ---------------------------------------------------------------- parks

  /**
   * Parks (kind, target): the sweeps skip it until {@link TaskStore.unpark} (or until
   * `untilMs`), manual tasks still run, and a success does not release it. Replaces an earlier
   * park of the same pair. The reason and who parked it are sanitised and bounded to 512
   * characters; an empty reason, or an `untilMs` not in the future, is a {@link ValidationError}.
   */
  park(kind: TaskKind, target: string, options: ParkOptions): Promise<ParkRecord> {
    return this.#parks.park(kind, target, options);
  }

  /** Releases the park of (kind, target), lapsed or not; true if there was one. */
  unpark(kind: TaskKind, target: string): Promise<boolean> {
    return this.#parks.unpark(kind, target);
  }

  /** The park of (kind, target), lapsed or not (see `isParked`). */
  getPark(kind: TaskKind, target: string): Promise<ParkRecord | undefined> {
    return this.#parks.getPark(kind, target);
  }

  /** Every park (of one kind, or all), lapsed ones included, ordered by kind then target. */
  listParks(options: { readonly kind?: TaskKind } = {}): Promise<ParkRecord[]> {
    return this.#parks.listParks(options);
  }

  /** Targets of `kind` with a park in force at `nowMs` (default now), in one prefix read: what a sweep skips. */
  parkedTargets(kind: TaskKind, nowMs?: number): Promise<Set<string>> {
    return this.#parks.parkedTargets(kind, nowMs);
  }

  // ---------------------------------------------------------------- stats

  /** Writes stats rows, batched within etcd's per-transaction operation limit. */
  putStats(rows: readonly StoreStats[]): Promise<void> {
    return this.#stats.putStats(rows);
  }

  /** One store's stats row. */
  getStats(name: string): Promise<StoreStats | undefined> {
    return this.#stats.getStats(name);
  }

  /** Every stats row, in key order. */
  listStats(): Promise<StoreStats[]> {
    return this.#stats.listStats();
  }

  /**
   * Whether any stats row exists (one key read): a fleet's sweeps wait for its first stats scan
   * rather than spend their slot on an empty table.
   */
  hasStats(): Promise<boolean> {
    return this.#stats.hasStats();
  }

  /** Deletes stats rows; returns how many existed. */
  deleteStats(names: readonly string[]): Promise<number> {
    return this.#stats.deleteStats(names);
  }

  /**
   * Targets with an active (queued or running) dependency-free task of `kind`, from one
   * keys-only read of the dedupe keys: what a sweep would only dedupe against.
   */
  activeTargets(kind: TaskKind): Promise<Set<string>> {
    return this.#stats.activeTargets(kind);
  }

  // ---------------------------------------------------------------- workers

  /**
   * Records the latest stats-scan result of each given worker, replacing its previous one,
   * batched within etcd's per-transaction operation limit. Every record is validated before any
   * is written; of two records of one endpoint, the later wins. Workers not given keep their
   * previous record.
   */
  putWorkerScans(scans: readonly WorkerScan[]): Promise<void> {
    return this.#workerScans.putWorkerScans(scans);
  }

  /**
   * Every worker's latest recorded scan result, in key order, from one prefix read: whichever
   * master ran the scan, every master reads the same. Includes workers no longer configured.
   */
  listWorkerScans(): Promise<WorkerScan[]> {
    return this.#workerScans.listWorkerScans();
  }

  /**
   * Deletes the recorded scans of these workers (endpoints dropped from the fleet's
   * configuration); returns how many existed.
   */
  deleteWorkerScans(endpoints: readonly string[]): Promise<number> {
    return this.#workerScans.deleteWorkerScans(endpoints);
  }

  // ---------------------------------------------------------------- coordination

  /** Takes the named lock on this session if free; undefined if someone holds it. */
  tryLock(name: string): Promise<HeldLock | undefined> {
    return this.#coordination.tryLock(name);
  }

  /**
   * Claims this interval's run of a periodic job: true for exactly one caller per interval
   * fleet-wide, however many masters call and however their timers drift. Intervals are
   * aligned slots of `intervalMs` on the clock, recorded by a CAS on `P/sweeps/<name>`.
   */
  runEvery(name: string, intervalMs: number): Promise<boolean> {
    return this.#coordination.runEvery(name, intervalMs);
  }

  /** Live masters, from their session-bound registrations. */
  listMasters(): Promise<MasterInfo[]> {
    return this.#coordination.listMasters();
  }
}
