import { ClaimLostError, ContentionError } from '../errors.js';
import { createIdGenerator } from '../ids.js';
import type { Compare, Lease, TxnOp } from '../kv/port.js';
import {
  type ErrorClass,
  type TaskKind,
  type TaskRecord,
  type TaskSource,
  TaskKindSchema,
  TaskRecordSchema,
  TargetSchema,
  encodeCooldown,
  encodeTask,
  isTerminal,
} from '../model.js';
import { type CooldownDecision, sanitizeError } from '../cooldown-policy.js';
import type { TimelineEntry } from '../timeline.js';
import type { Claim } from './claimer.js';
import { decode, parseInput, stripRun } from './codec.js';
import type { StoreContext } from './context.js';
import { type CooldownStore, type RecordFailureResult, cooldownRead, failureEvents } from './cooldown-store.js';
import type { TaskHistory } from './history.js';
import type { KnownRecords, LocalClaims } from './local-state.js';
import { MANUAL_QUEUE_MARK, type ManualLane, queueValue } from './manual-lane.js';
import type { QueueMirror } from './queue-mirror.js';
import { scan } from './scan.js';
import { resumed } from './held.js';
import type { TimelineStore } from './timeline-store.js';
import type { AuditIntent } from '../audit.js';
import type { AuditStore } from './audit-store.js';

const ENQUEUE_ATTEMPTS = 4;
/** Finish transactions tried while only the cooldown record changes under them. */
const FINISH_ATTEMPTS = 16;

/**
 * The cooldown effect of a committed finish: what its decision wrote, or, for a success, whether
 * it deleted a record (its transaction was guarded on the record as read).
 */
function finishEffect(decision: CooldownDecision | undefined, existed: boolean, conflicts: number): CooldownEffect {
  if (!decision) return { type: 'cleared', existed };
  if (decision.action !== 'write') return { type: 'failure', result: decision };
  return { type: 'failure', result: { ...decision, conflicts } };
}

/** What {@link TaskStore.enqueue} did. */
export interface EnqueueResult {
  /** The new task, or the active one it deduped to. */
  readonly task: TaskRecord;
  /** False on a dedupe hit. */
  readonly created: boolean;
}

/** How {@link TaskStore.enqueue} queues a task. */
export interface EnqueueOptions {
  /** Ids of tasks that must be done first; a task with dependencies is never deduped. */
  readonly dependsOn?: readonly string[];
  /** Who asked for it (default `manual`). */
  readonly source?: TaskSource;
  /** Who asked, for a manual task: its `manual_run` timeline event names them. */
  readonly by?: string;
  /**
   * The request to record in the audit trail, in the transaction that queues the task (or puts
   * a held one back as a manual task): none on a dedupe hit, which commits nothing.
   */
  readonly audit?: AuditIntent;
}

/** How a task ended. */
export type TaskOutcome =
  | { readonly ok: true; readonly detail: string }
  | { readonly ok: false; readonly error: string; readonly errorClass: ErrorClass };

/** Cooldown bookkeeping that followed a committed finish. */
export type CooldownEffect =
  | { readonly type: 'cleared'; readonly existed: boolean }
  | { readonly type: 'failure'; readonly result: RecordFailureResult }
  | { readonly type: 'error'; readonly error: unknown };

/** Result of {@link TaskStore.finish}. */
export interface FinishResult {
  /** The task record. */
  readonly task: TaskRecord;
  /** What the cooldown bookkeeping did. */
  readonly cooldown: CooldownEffect;
  /** Terminal tasks pruned after this finish (amortised; usually 0). */
  readonly pruned: number;
}

/** Result of {@link TaskStore.recoverOrphaned}. */
export interface RecoveryResult {
  /** Ids put back in the queue, FIFO position kept. */
  readonly requeued: readonly string[];
  /** Ids failed for exceeding the attempt limit. */
  readonly failed: readonly string[];
}

/** The parts a lifecycle hands work to after its own transaction. */
export interface LifecycleParts {
  readonly known: KnownRecords;
  readonly claims: LocalClaims;
  readonly queue: QueueMirror;
  readonly history: TaskHistory;
  readonly cooldowns: CooldownStore;
  readonly timeline: TimelineStore;
  readonly audit: AuditStore;
  readonly lane: ManualLane;
}

/** A task's way in and out of the queue: enqueue with dedupe, finish, and orphan recovery. */
export class TaskLifecycle {
  readonly #ctx: StoreContext;
  readonly #parts: LifecycleParts;
  readonly #maxAttempts: number;
  readonly #newId: () => string;

  constructor(ctx: StoreContext, parts: LifecycleParts, maxAttempts: number) {
    this.#ctx = ctx;
    this.#parts = parts;
    this.#maxAttempts = maxAttempts;
    this.#newId = createIdGenerator(ctx.clock, ctx.random);
  }

  async enqueue(kind: TaskKind, target: string, options: EnqueueOptions): Promise<EnqueueResult> {
    const { kv, keys: k, clock } = this.#ctx;
    parseInput(TaskKindSchema, kind, 'kind');
    parseInput(TargetSchema, target, 'target');
    const dependsOn = [...new Set(options.dependsOn ?? [])];
    for (const [i, dep] of dependsOn.entries()) parseInput(TaskRecordSchema.shape.id, dep, `depends_on[${i}]`);
    const task: TaskRecord = {
      id: this.#newId(),
      kind,
      target,
      state: 'queued',
      source: options.source ?? 'manual',
      enqueued_at: clock.now(),
      attempt: 0,
      ...(dependsOn.length > 0 ? { depends_on: dependsOn } : {}),
    };
    const writes: TxnOp[] = [
      { type: 'put', key: k.task(task.id), value: encodeTask(task) },
      { type: 'put', key: k.queue(kind, task.id), value: queueValue(task.source) },
    ];
    // An operator's run is on the store's timeline and in the manual lane, with the task it queued.
    const manual = task.source === 'manual';
    if (manual) {
      writes.push({ type: 'put', key: k.manual(kind, task.id), value: '' });
      const by = options.by !== undefined ? { by: options.by } : {};
      writes.push(...this.#parts.timeline.ops(kind, target, [{ type: 'manual_run', task_id: task.id, ...by }]).ops);
    }
    const audit = this.#parts.audit.write(options.audit, { kind, target, task_id: task.id, outcome: 'queued' });
    writes.push(...audit.ops);
    if (dependsOn.length > 0) {
      const res = await kv.txn([], writes);
      this.#queued(task, res.revision);
      if (manual) void this.#parts.timeline.afterWrite(kind, target);
      this.#parts.audit.written(audit);
      return { task, created: true };
    }
    const dedupeKey = k.dedupe(kind, target);
    for (let attempt = 0; attempt < ENQUEUE_ATTEMPTS; attempt++) {
      const res = await kv.txn(
        [{ key: dedupeKey, target: 'version', op: '==', value: 0 }],
        [...writes, { type: 'put', key: dedupeKey, value: task.id }],
        [{ type: 'get', key: dedupeKey }],
      );
      if (res.succeeded) {
        this.#queued(task, res.revision);
        if (manual) void this.#parts.timeline.afterWrite(kind, target);
        this.#parts.audit.written(audit);
        return { task, created: true };
      }
      const held = res.results[0]?.type === 'get' ? res.results[0].kv : undefined;
      if (!held) continue;
      const found = await kv.get(k.task(held.value));
      const existing = found ? decode(TaskRecordSchema, found) : undefined;
      if (existing && found && existing.state === 'held' && manual) {
        // An operator's run of a parked pair runs the work the park holds, as a manual task.
        const promoted = await this.#promote(existing, found.modRevision, options);
        if (promoted) return { task: promoted, created: false };
        continue;
      }
      if (existing && !isTerminal(existing.state)) return { task: existing, created: false };
      // The key outlived its task: remove it only if it still says what we read, then retry.
      await kv.txn(
        [{ key: dedupeKey, target: 'modRevision', op: '==', value: held.modRevision }],
        [{ type: 'delete', key: dedupeKey }],
      );
    }
    throw new ContentionError(`failed to resolve concurrent task enqueue for ${kind} '${target}'`);
  }

  /** Puts a held task back in its queue as a manual one (`manual_run` event), guarded; undefined if it changed. */
  async #promote(task: TaskRecord, modRevision: number, options: EnqueueOptions): Promise<TaskRecord | undefined> {
    const { kv, keys: k } = this.#ctx;
    const { kind, target, id } = task;
    const next: TaskRecord = { ...resumed(task), source: 'manual' };
    const by = options.by !== undefined ? { by: options.by } : {};
    const timeline = this.#parts.timeline.ops(kind, target, [{ type: 'manual_run', task_id: id, ...by }]);
    const audit = this.#parts.audit.write(options.audit, { kind, target, task_id: id, outcome: 'promoted' });
    const res = await kv.txn(
      [{ key: k.task(task.id), target: 'modRevision', op: '==', value: modRevision }],
      [
        { type: 'put', key: k.task(task.id), value: encodeTask(next) },
        { type: 'put', key: k.queue(task.kind, task.id), value: MANUAL_QUEUE_MARK },
        { type: 'put', key: k.manual(task.kind, task.id), value: '' },
        { type: 'delete', key: k.held(task.kind, task.target, task.id) },
        ...timeline.ops,
        ...audit.ops,
      ],
    );
    if (!res.succeeded) return undefined;
    this.#queued(next, res.revision);
    void this.#parts.timeline.afterWrite(task.kind, task.target);
    this.#parts.audit.written(audit);
    return next;
  }

  /** A task this instance queued: its claim needs neither a read of its record nor of the queue. */
  #queued(task: TaskRecord, revision: number): void {
    this.#parts.known.remember(task, revision);
    if (task.source === 'manual') this.#parts.lane.noted(task.kind, task.id, true);
    this.#parts.queue.apply([{ type: 'put', key: this.#ctx.keys.queue(task.kind, task.id), modRevision: revision }]);
  }

  /**
   * One transaction, guarded by the claim and by the revision of the task's cooldown record read
   * at claim time: the terminal record, the release of claim, running, lock and dedupe keys, and
   * the cooldown's next record (a failure) or its deletion (a success). So no sweep sees a failed
   * task without its count, and no crash between two writes loses one. A changed cooldown record
   * (an operator reset, another writer) fails only the second guard: the transaction's failure
   * branch returns the fresh record, and the finish is decided again on it.
   */
  async finish(claim: Claim, outcome: TaskOutcome): Promise<FinishResult> {
    const { kv, keys: k, clock } = this.#ctx;
    const { cooldowns } = this.#parts;
    const t = claim.task;
    const base = { ...t, finished_at: clock.now() };
    delete base.owner;
    const record: TaskRecord = outcome.ok
      ? { ...base, state: 'done', detail: sanitizeError(outcome.detail, 2048) }
      : { ...base, state: 'failed', error: sanitizeError(outcome.error, 2048), error_class: outcome.errorClass };
    const cooldownKey = k.cooldown(t.kind, t.target);
    const release: TxnOp[] = [
      { type: 'put', key: k.task(t.id), value: encodeTask(record) },
      { type: 'delete', key: k.claim(t.id) },
      { type: 'delete', key: k.running(t.id) },
      { type: 'delete', key: k.targetLock(t.target) },
    ];
    // While a depless task is active its dedupe key can only point at it (enqueue creates the key
    // only when absent, and removes it only once its task is terminal), so this delete is owned.
    if (!t.depends_on) release.push({ type: 'delete', key: k.dedupe(t.kind, t.target) });
    const claimGuard: Compare = { key: k.claim(t.id), target: 'createRevision', op: '==', value: claim.revision };
    const reread: TxnOp[] = [
      { type: 'get', key: k.claim(t.id) },
      { type: 'get', key: cooldownKey },
    ];

    let read = claim.cooldown ?? (await cooldowns.read(t.kind, t.target));
    let lease: Lease | undefined;
    // Whether a transaction carrying the lease may have committed: one that threw (a lost reply)
    // may have, and revoking its lease then would delete the count it wrote.
    let maybeCommitted: boolean | undefined;
    let conflicts = 0;
    try {
      for (let attempt = 0; ; attempt++) {
        const compares = [claimGuard];
        const ops = [...release];
        let decision: CooldownDecision | undefined;
        let events: TimelineEntry[] = [];
        if (outcome.ok) {
          ops.push({ type: 'delete', key: cooldownKey });
          // A success that clears a count says so on the timeline: guarded on the record read, so
          // the event names the count it cleared (and a record written meanwhile is decided again).
          compares.push({ key: cooldownKey, target: 'modRevision', op: '==', value: read.modRevision });
          if (read.modRevision !== 0) {
            events = [{ type: 'cleared', task_id: t.id, ...(read.record ? { failures: read.record.failures } : {}) }];
          }
        } else {
          const report = {
            kind: t.kind,
            target: t.target,
            taskId: t.id,
            error: outcome.error,
            errorClass: outcome.errorClass,
          };
          decision = await cooldowns.decide(report, read.record);
          events = failureEvents(report, decision);
          if (decision.action === 'write') {
            lease ??= await cooldowns.grantLease();
            ops.push({ type: 'put', key: cooldownKey, value: encodeCooldown(decision.record), lease: lease.id });
            compares.push({ key: cooldownKey, target: 'modRevision', op: '==', value: read.modRevision });
          }
        }
        ops.push(...this.#parts.timeline.ops(t.kind, t.target, events).ops);
        maybeCommitted = lease !== undefined;
        const res = await kv.txn(compares, ops, reread);
        if (res.succeeded) {
          this.#parts.claims.settle(t.id, claim.revision);
          if (events.length > 0) void this.#parts.timeline.afterWrite(t.kind, t.target);
          return {
            task: record,
            cooldown: finishEffect(decision, read.modRevision !== 0, conflicts),
            pruned: await this.#prune(record, res.revision),
          };
        }
        maybeCommitted = false;
        const [claimNow, cooldownNow] = res.results;
        if (claimNow?.type !== 'get' || claimNow.kv?.createRevision !== claim.revision) {
          this.#parts.claims.settle(t.id, claim.revision);
          throw new ClaimLostError(t.id);
        }
        if (++conflicts >= FINISH_ATTEMPTS) {
          throw new ContentionError(`finish of ${t.id}: its cooldown record kept changing (${conflicts} conflicts)`);
        }
        // No pause: the failure branch returned the fresh record, and the only writers racing a
        // finish are operators and recordFailure callers, never another finish of this target.
        read = cooldownRead(cooldownNow?.type === 'get' ? cooldownNow.kv : undefined);
      }
    } catch (err) {
      // A lease that carried nothing would linger until its TTL.
      if (lease && !maybeCommitted) await lease.revoke().catch(() => undefined);
      throw err;
    }
  }

  /** Best-effort: the task's outcome is committed, and a failed prune is retried by a later one. */
  async #prune(finished: TaskRecord, revision: number): Promise<number> {
    if (!this.#parts.history.finished(finished, revision)) return 0;
    return this.#parts.history.maybePrune().catch(() => 0);
  }

  async recoverOrphaned(): Promise<RecoveryResult> {
    const { kv, keys: k, clock, session, masterId } = this.#ctx;
    const requeued: string[] = [];
    const failed: string[] = [];
    const claimed = new Set<string>();
    const lease = session.lease;
    for await (const found of scan(kv, k.claimsPrefix)) {
      const id = found.key.slice(k.claimsPrefix.length);
      // A claim under our own live session that no caller holds: its transaction committed but
      // the reply was lost (etcd timeout). Nobody would ever finish it, so release it here. A
      // claim still being attempted may have committed with its reply on the way: not stray.
      if (lease && found.lease === lease.id && found.value === masterId && !this.#parts.claims.owns(id)) {
        if (await this.#releaseStrayClaim(id, found.createRevision)) continue;
      }
      claimed.add(id);
    }
    const orphans: string[] = [];
    for await (const found of scan(kv, k.runningPrefix, { keysOnly: true })) {
      const id = found.key.slice(k.runningPrefix.length);
      if (!claimed.has(id)) orphans.push(id);
    }
    for (const id of orphans) {
      const found = await kv.get(k.task(id));
      if (!found) {
        await kv.txn(
          [{ key: k.claim(id), target: 'version', op: '==', value: 0 }],
          [{ type: 'delete', key: k.running(id) }],
        );
        continue;
      }
      const task = decode(TaskRecordSchema, found);
      if (task.state !== 'running') continue;
      const giveUp = task.attempt > this.#maxAttempts;
      const next: TaskRecord = giveUp
        ? {
            ...stripRun(task),
            state: 'failed',
            finished_at: clock.now(),
            error: `task was orphaned ${task.attempt} times (its master died or lost its session each time); giving up`,
            error_class: 'infrastructure',
          }
        : { ...stripRun(task), state: 'queued' };
      const ops: TxnOp[] = [
        { type: 'put', key: k.task(id), value: encodeTask(next) },
        { type: 'delete', key: k.running(id) },
      ];
      if (giveUp && !task.depends_on) ops.push({ type: 'delete', key: k.dedupe(task.kind, task.target) });
      if (!giveUp) ops.push({ type: 'put', key: k.queue(task.kind, id), value: queueValue(task.source) });
      if (!giveUp && task.source === 'manual') ops.push({ type: 'put', key: k.manual(task.kind, id), value: '' });
      const res = await kv.txn(
        [
          { key: k.task(id), target: 'modRevision', op: '==', value: found.modRevision },
          { key: k.claim(id), target: 'version', op: '==', value: 0 },
          { key: k.running(id), target: 'version', op: '>', value: 0 },
        ],
        ops,
      );
      if (res.succeeded) (giveUp ? failed : requeued).push(id);
    }
    return { requeued, failed };
  }

  async #releaseStrayClaim(id: string, createRevision: number): Promise<boolean> {
    const { kv, keys: k } = this.#ctx;
    const task = await this.#parts.history.getTask(id);
    const ops: TxnOp[] = [{ type: 'delete', key: k.claim(id) }];
    if (task) ops.push({ type: 'delete', key: k.targetLock(task.target) });
    const res = await kv.txn(
      [
        { key: k.claim(id), target: 'createRevision', op: '==', value: createRevision },
        ...(task ? [{ key: k.targetLock(task.target), target: 'value' as const, op: '==' as const, value: id }] : []),
      ],
      ops,
    );
    return res.succeeded;
  }
}
