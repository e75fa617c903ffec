import type { Clock } from '../clock.js';
import type { CooldownPolicy } from '../cooldown-policy.js';
import type { Keys } from '../keys.js';
import { GroupCommitKv } from '../kv/group-commit.js';
import { cryptoRandom } from '../random.js';
import type { Session } from '../session.js';
import { Claimer } from './claimer.js';
import { ClusterStore } from './cluster-store.js';
import type { StoreContext } from './context.js';
import { CooldownStore } from './cooldown-store.js';
import { Coordination } from './coordination.js';
import { TaskHistory } from './history.js';
import { TaskLifecycle } from './lifecycle.js';
import { KnownRecords, LocalClaims } from './local-state.js';
import { ManualLane } from './manual-lane.js';
import { ParkStore } from './park-store.js';
import { QueueMirror } from './queue-mirror.js';
import { QueueShares } from './queue-shares.js';
import { StatsStore } from './stats.js';
import { TimelineStore } from './timeline-store.js';
import { AuditStore } from './audit-store.js';
import { type BulkActions, bulkActions } from './bulk-actions.js';
import { DEFAULT_STORE_OPTIONS, type TaskStoreOptions } from './store-options.js';
import { WorkerScans } from './worker-scans.js';

/** The parts a {@link TaskStore} delegates to, each owning one area of the key layout. */
export interface StoreParts {
  /** The context every part works against. */
  readonly ctx: StoreContext;
  readonly lifecycle: TaskLifecycle;
  readonly claimer: Claimer;
  /** The mirror of each queue's head that claims take their candidates from. */
  readonly queue: QueueMirror;
  /** The queued manual tasks, which claims take first (a watch's mirror: close it with the store). */
  readonly lane: ManualLane;
  /** Which queued tasks are this master's share. */
  readonly shares: QueueShares;
  readonly history: TaskHistory;
  readonly cooldowns: CooldownStore;
  readonly parks: ParkStore;
  readonly timeline: TimelineStore;
  readonly audit: AuditStore;
  readonly bulk: BulkActions;
  readonly stats: StatsStore;
  readonly workerScans: WorkerScans;
  readonly coordination: Coordination;
  readonly cluster: ClusterStore;
}

/**
 * Wires a store's parts over one {@link StoreContext}: every part gets the context, and only the
 * state that parts must share is handed between them.
 */
export function storeParts(
  o: TaskStoreOptions,
  keys: Keys,
  session: Session,
  clock: Clock,
  policy: CooldownPolicy,
): StoreParts {
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
  const coordination = new Coordination(ctx);
  const history = new TaskHistory(
    ctx,
    {
      limit: Math.max(1, o.historyLimit ?? DEFAULT_STORE_OPTIONS.historyLimit),
      ttlMs: (o.historyTtlSecs ?? DEFAULT_STORE_OPTIONS.historyTtlSecs) * 1000,
      pruneEvery: Math.max(1, o.pruneEvery ?? 50),
    },
    (name) => coordination.tryLock(name),
  );
  const timeline = new TimelineStore(ctx, {
    limit: Math.max(1, o.timelineLimit ?? DEFAULT_STORE_OPTIONS.timelineLimit),
    ttlMs: (o.timelineTtlSecs ?? DEFAULT_STORE_OPTIONS.timelineTtlSecs) * 1000,
  });
  const audit = new AuditStore(ctx, {
    limit: Math.max(1, o.auditLimit ?? DEFAULT_STORE_OPTIONS.auditLimit),
    ttlMs: (o.auditTtlSecs ?? DEFAULT_STORE_OPTIONS.auditTtlSecs) * 1000,
  });
  const parks = new ParkStore(ctx, timeline, audit);
  const cooldowns = new CooldownStore(ctx, policy, parks, timeline, audit);
  const queue = new QueueMirror(keys.queuePrefix());
  const lane = new ManualLane(ctx);
  const shares = new QueueShares(ctx);
  return {
    ctx,
    lifecycle: new TaskLifecycle(
      ctx,
      { known, claims, queue, history, cooldowns, timeline, audit, lane },
      o.maxAttempts ?? DEFAULT_STORE_OPTIONS.maxAttempts,
    ),
    claimer: new Claimer(ctx, known, claims, queue, shares, timeline, lane),
    queue,
    lane,
    shares,
    history,
    cooldowns,
    parks,
    timeline,
    audit,
    bulk: bulkActions(cooldowns, parks),
    stats: new StatsStore(ctx),
    workerScans: new WorkerScans(ctx),
    coordination,
    cluster: new ClusterStore(ctx, audit),
  };
}
