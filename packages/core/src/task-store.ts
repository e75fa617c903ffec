import type { CooldownPolicy } from './cooldown-policy.js';
import type { Keys } from './keys.js';
import type { WatchEvent } from './kv/port.js';
import type {
  ErrorClass,
  MasterInfo,
  ParkRecord,
  StoreStats,
  TaskCooldown,
  TaskKind,
  TaskRecord,
  WorkerScan,
} from './model.js';
import type { Session } from './session.js';
import type { Claim, ClaimOptions } from './store/claimer.js';
import type { Actor } from './store/operator-action.js';
import type { AuditTrail } from './store/audit-store.js';
import type { BulkActions } from './store/bulk-actions.js';
import { resumeLapsed } from './store/held.js';
import type { Timelines } from './store/timeline-store.js';
import type { ClusterStore } from './store/cluster-store.js';
import type { RecordFailureResult } from './store/cooldown-store.js';
import type { HeldLock } from './store/coordination.js';
import type { ListTasksQuery, TaskPage } from './store/history.js';
import type { EnqueueOptions, EnqueueResult, FinishResult, RecoveryResult, TaskOutcome } from './store/lifecycle.js';
import type { ParkOptions } from './store/park-store.js';
import { type OpenedStore, openStore, recoverOrphaned } from './store/open.js';
import type { StoreParts } from './store/parts.js';
import type { TaskStoreOptions } from './store/store-options.js';

export type { Claim, ClaimOptions } from './store/claimer.js';
export type { Actor, Pair } from './store/operator-action.js';
export type { AuditFields, AuditPage, AuditQuery, AuditTrail } from './store/audit-store.js';
export type { BulkActions } from './store/bulk-actions.js';
export type { ClusterStore } from './store/cluster-store.js';
export type { CooldownRead, RecordFailureResult } from './store/cooldown-store.js';
export type { HeldLock } from './store/coordination.js';
export type { ListTasksQuery, TaskPage } from './store/history.js';
export type {
  CooldownEffect,
  EnqueueOptions,
  EnqueueResult,
  FinishResult,
  RecoveryResult,
  TaskOutcome,
} from './store/lifecycle.js';
export type { Timelines } from './store/timeline-store.js';
export type { ParkOptions } from './store/park-store.js';
export { DEFAULT_STORE_OPTIONS, type TaskStoreOptions } from './store/store-options.js';

/**
 * The task queue, claims, history and failure cooldown, over any {@link Kv} (docs/ARCHITECTURE.md §2.6–2.7).
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
  /** The fleet-wide feature gates at `P/cluster` (docs/ARCHITECTURE.md §2.8). */
  readonly cluster: ClusterStore;
  /** Each (kind, target)'s timeline (docs/ARCHITECTURE.md §2.7): its events, and the fleet-wide prune. */
  readonly timelines: Timelines;
  /** The audit trail of operator actions (docs/ARCHITECTURE.md §2.9): its pages, and its prune. */
  readonly audit: AuditTrail;
  /** Operator actions over many stores at once, each action one audit entry (docs/ARCHITECTURE.md §2.9). */
  readonly bulk: BulkActions;
  readonly #parts: StoreParts;
  readonly #recoveredOnOpen: RecoveryResult;

  private constructor(opened: OpenedStore, masterId: string) {
    this.keys = opened.keys;
    this.session = opened.session;
    this.masterId = masterId;
    this.policy = opened.policy;
    this.cluster = opened.parts.cluster;
    this.timelines = opened.parts.timeline;
    this.audit = opened.parts.audit;
    this.bulk = opened.parts.bulk;
    this.#parts = opened.parts;
    this.#recoveredOnOpen = opened.recovered;
  }

  /** Opens a session, registers, recovers orphaned tasks and prunes history if it may hold something to prune. */
  static async open(options: TaskStoreOptions): Promise<TaskStore> {
    return new TaskStore(await openStore(options), options.masterId);
  }

  /** What {@link TaskStore.open} recovered (dead masters' tasks it requeued or failed): the scheduler logs it. */
  get recoveredOnOpen(): RecoveryResult {
    return this.#recoveredOnOpen;
  }

  /** Revokes the session: claims still held are recovered by peers at once. */
  async close(): Promise<void> {
    this.#parts.lane.setFeed(false);
    await this.session.close();
  }

  /**
   * Queues a task; one without dependencies dedupes against an active task of its kind and target (`created: false`).
   */
  enqueue(kind: TaskKind, target: string, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    return this.#parts.lifecycle.enqueue(kind, target, options);
  }

  /** The task with this id, or undefined. */
  getTask(id: string): Promise<TaskRecord | undefined> {
    return this.#parts.history.getTask(id);
  }

  /** Tasks newest first, optionally filtered, in pages. */
  listTasks(query: ListTasksQuery = {}): Promise<TaskPage> {
    return this.#parts.history.listTasks(query);
  }

  /** Number of queued tasks (of one kind, or all). */
  queueDepth(kind?: TaskKind): Promise<number> {
    return this.#parts.history.queueDepth(kind);
  }

  /**
   * Claims the next runnable task of the given kinds (queued manual tasks first, then the oldest), or returns undefined.
   * One task per store runs at a time (the per-target lock). A task whose dependency failed or vanished is failed here;
   * one whose dependency is still active is skipped. Under contention the order loosens to FIFO within the oldest few
   * (up to 32) candidates. See {@link ClaimOptions} for parks that hold tasks and kinds outside their windows.
   */
  claimNext(kinds: readonly TaskKind[], options?: ClaimOptions): Promise<Claim | undefined> {
    return this.#parts.claimer.claimNext(kinds, options);
  }

  /** Queues again the held tasks of pairs whose park lapsed or is gone (a release does its own); returns their ids. */
  resumeHeld(): Promise<string[]> {
    return resumeLapsed(this.#parts.ctx);
  }

  /**
   * Hands this store what a watch on `keys.queuePrefix()` reported, so that claims take their candidates from a mirror of
   * each queue's head, and their manual tasks from a mirror of the manual lane: only between
   * {@link TaskStore.setQueueFeed}(true) and (false); without it, claims read the queue and the lane.
   */
  observeQueue(events: readonly WatchEvent[]): void {
    this.#parts.queue.apply(events);
    this.#parts.shares.observeQueue(events);
    this.#parts.lane.observe(events);
  }

  /**
   * Says whether the queue watch feeding {@link TaskStore.observeQueue} is established (once its `watch` resolved) or
   * lost (it errored or closed). Either way the mirror is dropped, so a change missed meanwhile hides no queued task.
   */
  setQueueFeed(live: boolean): void {
    this.#parts.queue.setLive(live);
    this.#parts.lane.setFeed(live);
  }

  /**
   * Records a claimed task's outcome, its cooldown bookkeeping and timeline events in one transaction guarded by the
   * claim: a lost claim throws {@link ClaimLostError} and records nothing. History is pruned every few finishes.
   */
  finish(claim: Claim, outcome: TaskOutcome): Promise<FinishResult> {
    return this.#parts.lifecycle.finish(claim, outcome);
  }

  /**
   * Requeues running tasks whose claim is gone (their master died or was cut off) in their FIFO position (id and
   * `enqueued_at` kept); one orphaned more than `maxAttempts` times is failed instead (`infrastructure`).
   */
  recoverOrphaned(): Promise<RecoveryResult> {
    return recoverOrphaned(this.#parts);
  }

  /** Deletes terminal tasks beyond `historyLimit` or the history TTL, never one an active task depends on. */
  pruneHistory(): Promise<number> {
    return this.#parts.history.pruneHistory();
  }

  /**
   * Counts a failure of (kind, target) toward its cooldown, for callers outside the scheduler (the scheduler's own
   * failures are counted in their finish's transaction), by a CAS that re-decides on conflict. Idempotent per task id.
   * Concurrent calls for one (kind, target) on this instance commit together, each with its own decision as if applied
   * in call order.
   */
  recordFailure(
    kind: TaskKind,
    target: string,
    taskId: string,
    error: string,
    errorClass: ErrorClass,
  ): Promise<RecordFailureResult> {
    return this.#parts.cooldowns.recordFailure(kind, target, taskId, error, errorClass);
  }

  /**
   * Deletes the cooldown record of (kind, target), with a `reset` event on its timeline naming `actor` in the same
   * transaction; true if there was one.
   */
  clearCooldown(kind: TaskKind, target: string, actor?: Actor): Promise<boolean> {
    return this.#parts.cooldowns.clearCooldown(kind, target, actor);
  }

  /** Resets every cooldown record (of one kind, or all) as {@link TaskStore.bulk} does; returns how many. */
  clearCooldowns(kind?: TaskKind, actor?: Actor): Promise<number> {
    return this.#parts.cooldowns.clearCooldowns(kind, actor);
  }

  /** The cooldown record of (kind, target), active or not. */
  getCooldown(kind: TaskKind, target: string): Promise<TaskCooldown | undefined> {
    return this.#parts.cooldowns.getCooldown(kind, target);
  }

  /**
   * Cooldown records, ordered by kind then target: only active windows, or with `all` the below-threshold counters and
   * lapsed windows too.
   */
  listCooldowns(options: { readonly kind?: TaskKind; readonly all?: boolean } = {}): Promise<TaskCooldown[]> {
    return this.#parts.cooldowns.listCooldowns(options);
  }

  /**
   * Whether an active window of (kind, target) gates the automatic work on it: one key read, none where this store's
   * policy does not run the cooldown for `kind` (see `appliesTo`).
   */
  isCoolingDown(kind: TaskKind, target: string, nowMs?: number): Promise<boolean> {
    return this.#parts.cooldowns.isCoolingDown(kind, target, nowMs);
  }

  /**
   * Targets of `kind` with an active window, in one prefix read: what a sweep skips. None, and no read, where this
   * store's policy does not run the cooldown for `kind` (see `appliesTo`).
   */
  coolingTargets(kind: TaskKind, nowMs?: number): Promise<Set<string>> {
    return this.#parts.cooldowns.coolingTargets(kind, nowMs);
  }

  /**
   * Parks (kind, target): the sweeps skip it until {@link TaskStore.unpark} (or until `untilMs`), manual tasks still
   * run, and a success does not release it. Replaces an earlier park of the same pair. The reason and who parked it are
   * sanitised and bounded to 512 characters; an empty reason, or an `untilMs` not in the future, is a {@link
   * ValidationError}.
   */
  park(kind: TaskKind, target: string, options: ParkOptions): Promise<ParkRecord> {
    return this.#parts.parks.park(kind, target, options);
  }

  /**
   * Releases the park of (kind, target), lapsed or not, with a `released` event naming `actor` and the tasks it held
   * put back in their queues, in one transaction; true if there was one.
   */
  unpark(kind: TaskKind, target: string, actor?: Actor): Promise<boolean> {
    return this.#parts.parks.unpark(kind, target, actor);
  }

  /** The park of (kind, target), lapsed or not (see `isParked`). */
  getPark(kind: TaskKind, target: string): Promise<ParkRecord | undefined> {
    return this.#parts.parks.getPark(kind, target);
  }

  /** Every park (of one kind, or all), lapsed ones included, ordered by kind then target. */
  listParks(options: { readonly kind?: TaskKind } = {}): Promise<ParkRecord[]> {
    return this.#parts.parks.listParks(options);
  }

  /** Targets of `kind` with a park in force at `nowMs` (default now), in one prefix read: what a sweep skips. */
  parkedTargets(kind: TaskKind, nowMs?: number): Promise<Set<string>> {
    return this.#parts.parks.parkedTargets(kind, nowMs);
  }

  /** Writes stats rows, batched within etcd's per-transaction operation limit. */
  putStats(rows: readonly StoreStats[]): Promise<void> {
    return this.#parts.stats.putStats(rows);
  }

  /** One store's stats row. */
  getStats(name: string): Promise<StoreStats | undefined> {
    return this.#parts.stats.getStats(name);
  }

  /** Every stats row, in key order. */
  listStats(): Promise<StoreStats[]> {
    return this.#parts.stats.listStats();
  }

  /**
   * Whether any stats row exists (one key read): a fleet's sweeps wait for its first stats scan rather than spend their
   * slot on an empty table.
   */
  hasStats(): Promise<boolean> {
    return this.#parts.stats.hasStats();
  }

  /** Deletes stats rows; returns how many existed. */
  deleteStats(names: readonly string[]): Promise<number> {
    return this.#parts.stats.deleteStats(names);
  }

  /**
   * Targets with an active (queued or running) dependency-free task of `kind`, from one keys-only read of the dedupe
   * keys: what a sweep would only dedupe against.
   */
  activeTargets(kind: TaskKind): Promise<Set<string>> {
    return this.#parts.stats.activeTargets(kind);
  }

  /**
   * Records the latest stats-scan result of each given worker, replacing its previous one, batched within etcd's
   * per-transaction operation limit. Every record is validated before any is written; of two records of one endpoint,
   * the later wins. Workers not given keep their previous record.
   */
  putWorkerScans(scans: readonly WorkerScan[]): Promise<void> {
    return this.#parts.workerScans.putWorkerScans(scans);
  }

  /**
   * Every worker's latest recorded scan result, in key order, from one prefix read: whichever master ran the scan,
   * every master reads the same. Includes workers no longer configured.
   */
  listWorkerScans(): Promise<WorkerScan[]> {
    return this.#parts.workerScans.listWorkerScans();
  }

  /**
   * Deletes the recorded scans of these workers (endpoints dropped from the fleet's configuration); returns how many
   * existed.
   */
  deleteWorkerScans(endpoints: readonly string[]): Promise<number> {
    return this.#parts.workerScans.deleteWorkerScans(endpoints);
  }

  /** Takes the named lock on this session if free; undefined if someone holds it. */
  tryLock(name: string): Promise<HeldLock | undefined> {
    return this.#parts.coordination.tryLock(name);
  }

  /**
   * Claims this interval's run of a periodic job: true for exactly one caller per interval fleet-wide, however many
   * masters call and however their timers drift. Intervals are aligned slots of `intervalMs` on the clock, recorded by
   * a CAS on `P/sweeps/<name>`.
   */
  runEvery(name: string, intervalMs: number): Promise<boolean> {
    return this.#parts.coordination.runEvery(name, intervalMs);
  }

  /** Live masters, from their session-bound registrations. */
  listMasters(): Promise<MasterInfo[]> {
    return this.#parts.coordination.listMasters();
  }
}
