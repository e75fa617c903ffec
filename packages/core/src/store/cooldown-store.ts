import { ContentionError } from '../errors.js';
import { parsePairKey, targetFromHex } from '../keys.js';
import type { KeyValue, Lease, TxnOp } from '../kv/port.js';
import {
  type CooldownDecision,
  type CooldownPolicy,
  type FailureReport,
  type FleetState,
  appliesTo,
  isCooling,
  nextCooldown,
  wouldCool,
} from '../cooldown-policy.js';
import {
  type ErrorClass,
  type TaskCooldown,
  type TaskKind,
  TaskCooldownSchema,
  TaskKindSchema,
  encodeCooldown,
} from '../model.js';
import { decode, parseInput } from './codec.js';
import type { StoreContext } from './context.js';
import type { ParkStore } from './park-store.js';
import { scan } from './scan.js';
import type { TimelineStore } from './timeline-store.js';
import type { TimelineEntry } from '../timeline.js';
import type { AuditStore } from './audit-store.js';
import { swapInChunks } from './bulk-swap.js';
import type { Actor, Pair } from './operator-action.js';

const COOLDOWN_ATTEMPTS = 64;
/** Lost CASes retried at once, with the winner's record read by the losing transaction. */
const IMMEDIATE_RETRIES = 8;
/** Resets of one record tried while other writers keep changing it. */
const RESET_ATTEMPTS = 8;
/**
 * The timeline events a failure records (docs/ARCHITECTURE.md §2.7): the failure itself, with
 * the count when it counted, and the window it opened, if any. None for a duplicate report.
 */
export function failureEvents(report: FailureReport, decision: CooldownDecision): TimelineEntry[] {
  if (decision.action === 'duplicate') return [];
  const at = decision.action === 'write' ? { at_ms: decision.record.last_failure_ms } : {};
  const failure: TimelineEntry = {
    type: 'failure',
    ...at,
    task_id: report.taskId,
    error: report.error,
    error_class: report.errorClass,
    ...(decision.action === 'write' ? { failures: decision.record.failures } : {}),
  };
  if (decision.action !== 'write' || !decision.cooling) return [failure];
  return [
    failure,
    {
      type: 'window_opened',
      ...at,
      failures: decision.record.failures,
      window_ms: decision.windowMs,
      until_ms: decision.record.until_ms,
    },
  ];
}

/** Result of {@link TaskStore.recordFailure}. */
export type RecordFailureResult =
  | Exclude<CooldownDecision, { action: 'write' }>
  | (Extract<CooldownDecision, { action: 'write' }> & {
      /** CAS conflicts met before the write landed. */
      readonly conflicts: number;
    });

/** One {@link CooldownStore.recordFailure} call waiting for its group's commit. */
interface PendingFailure {
  readonly report: FailureReport;
  readonly resolve: (result: RecordFailureResult) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * A target's cooldown record as read at some revision, for a compare-and-swap on it: `record`
 * undefined and `modRevision` 0 when there is none.
 */
export interface CooldownRead {
  /** The record, or undefined when absent (or unreadable: the next write replaces it). */
  readonly record: TaskCooldown | undefined;
  /** Its `mod_revision`; 0 when absent. */
  readonly modRevision: number;
}

/** A cooldown read from a key as a transaction returned it; a corrupt record reads as none. */
export function cooldownRead(found: KeyValue | undefined): CooldownRead {
  if (!found) return { record: undefined, modRevision: 0 };
  try {
    return { record: decode(TaskCooldownSchema, found), modRevision: found.modRevision };
  } catch {
    // Read after a transaction committed: throwing would lose its reply, and the CAS that
    // follows overwrites the bad record anyway.
    return { record: undefined, modRevision: found.modRevision };
  }
}

/**
 * The failure-cooldown records in the Kv: the I/O around the pure policy of
 * `cooldown-policy.ts`, which decides every record this writes.
 */
export class CooldownStore {
  readonly #ctx: StoreContext;
  readonly #policy: CooldownPolicy;
  /** Failures waiting for the next group commit, by cooldown key. */
  readonly #waiting = new Map<string, PendingFailure[]>();
  /** Cooldown keys with a group commit in flight. */
  readonly #committing = new Set<string>();
  readonly #parks: ParkStore;
  readonly #timeline: TimelineStore;
  readonly #audit: AuditStore;

  /**
   * `parks`: read by the fleet guard, which leaves parked targets out of the cooling count.
   * `timeline`: where each counted failure and reset is recorded, in the transaction of its write.
   * `audit`: where an operator's reset is recorded, in the same transaction.
   */
  constructor(ctx: StoreContext, policy: CooldownPolicy, parks: ParkStore, timeline: TimelineStore, audit: AuditStore) {
    this.#ctx = ctx;
    this.#policy = policy;
    this.#parks = parks;
    this.#timeline = timeline;
    this.#audit = audit;
  }

  /** Where the events of a finish and of the other writers of this record go. */
  get timeline(): TimelineStore {
    return this.#timeline;
  }

  /**
   * Counts one failure. Concurrent failures of one (kind, target) on this instance are committed
   * together (group commit): the first starts a CAS of every report waiting at that moment,
   * applied in arrival order; reports that arrive meanwhile form the next group. A CAS storm
   * between instances then has one contender per instance, not one per failure.
   */
  recordFailure(
    kind: TaskKind,
    target: string,
    taskId: string,
    error: string,
    errorClass: ErrorClass,
  ): Promise<RecordFailureResult> {
    return new Promise((resolve, reject) => {
      // A kind is a key segment, and this is open to callers outside the scheduler (a throw here
      // rejects the promise with the ValidationError).
      const key = this.#ctx.keys.cooldown(parseInput(TaskKindSchema, kind, 'kind'), target);
      const pending: PendingFailure = { report: { kind, target, taskId, error, errorClass }, resolve, reject };
      const waiting = this.#waiting.get(key);
      if (waiting) waiting.push(pending);
      else this.#waiting.set(key, [pending]);
      if (!this.#committing.has(key)) void this.#commitGroups(key);
    });
  }

  /** Commits the groups waiting on `key`, one after another, until none is left. */
  async #commitGroups(key: string): Promise<void> {
    this.#committing.add(key);
    try {
      for (let group = this.#waiting.get(key); group; group = this.#waiting.get(key)) {
        this.#waiting.delete(key);
        try {
          const results = await this.#commitGroup(
            key,
            group.map((p) => p.report),
          );
          group.forEach((p, i) => p.resolve(results[i]!));
        } catch (err) {
          for (const p of group) p.reject(err);
        }
      }
    } finally {
      this.#committing.delete(key);
    }
  }

  /**
   * Read, decide each report in turn, then CAS the last record on `mod_revision` under a lease of
   * `maxSecs`, so the count outlives a lapsed window. A lost CAS reads the winner's record in the
   * same transaction and retries at once (each round has a winner, so a storm drains); only
   * after {@link IMMEDIATE_RETRIES} losses does it back off a jittered 5–25 ms. The lease is
   * granted once per group and revoked if it ends unused.
   */
  async #commitGroup(key: string, reports: readonly FailureReport[]): Promise<RecordFailureResult[]> {
    const { kv } = this.#ctx;
    let conflicts = 0;
    let lease: Lease | undefined;
    let found = await kv.get(key);
    try {
      for (let attempt = 0; attempt < COOLDOWN_ATTEMPTS; attempt++) {
        if (attempt > IMMEDIATE_RETRIES) {
          await this.backoff();
          found = await kv.get(key);
        }
        let record = found ? decode(TaskCooldownSchema, found) : undefined;
        const decisions: CooldownDecision[] = [];
        const events: TimelineEntry[] = [];
        let writes = false;
        for (const report of reports) {
          const decision = await this.decide(report, record);
          decisions.push(decision);
          if (decision.action === 'write') {
            record = decision.record;
            writes = true;
            events.push(...failureEvents(report, decision));
          }
        }
        if (!writes || !record) return decisions as RecordFailureResult[];
        lease ??= await this.grantLease();
        const timeline = this.#timeline.ops(record.kind, record.target, events);
        const res = await kv.txn(
          [{ key, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }],
          [{ type: 'put', key, value: encodeCooldown(record), lease: lease.id }, ...timeline.ops],
          [{ type: 'get', key }],
        );
        if (res.succeeded) {
          lease = undefined;
          void this.#timeline.afterWrite(record.kind, record.target);
          return decisions.map((d) => (d.action === 'write' ? { ...d, conflicts } : d));
        }
        conflicts++;
        const current = res.results[0];
        found = current?.type === 'get' ? current.kv : undefined;
      }
    } finally {
      // Unused: it would otherwise linger until its TTL.
      if (lease) await lease.revoke().catch(() => undefined);
    }
    const [first] = reports;
    throw new ContentionError(
      `cooldown for ${first?.kind ?? '?'} '${first?.target ?? '?'}' contended past ${COOLDOWN_ATTEMPTS} attempts`,
    );
  }

  /**
   * The policy's decision on one more failure after `prev`, at the clock's now. The fleet guard
   * costs two reads: they are paid only when this failure could open a window.
   */
  async decide(report: FailureReport, prev: TaskCooldown | undefined): Promise<CooldownDecision> {
    const now = this.#ctx.clock.now();
    const fleet = wouldCool(this.#policy, prev) ? await this.#fleetState(report.kind, report.target, now) : undefined;
    return nextCooldown(this.#policy, prev, report, now, fleet);
  }

  /** A fresh lease for one record write: TTL the window's cap, so the count outlives a lapsed window. */
  grantLease(): Promise<Lease> {
    return this.#ctx.kv.grant(this.#policy.maxSecs, { keepAlive: false });
  }

  /** A jittered 5–25 ms pause after a lost CAS, so that contenders do not collide again. */
  backoff(): Promise<void> {
    return this.#ctx.clock.sleep(5 + Math.floor(this.#ctx.random.next() * 20));
  }

  /** The record of one (kind, target) with its revision. */
  async read(kind: TaskKind, target: string): Promise<CooldownRead> {
    return cooldownRead(await this.#ctx.kv.get(this.#ctx.keys.cooldown(kind, target)));
  }

  async #fleetState(kind: TaskKind, target: string, now: number): Promise<FleetState> {
    // The fleet is every store with a stats row, whichever kind it needs.
    const [stats, cooling, parked] = await Promise.all([
      this.#ctx.kv.range(this.#ctx.keys.statsPrefix, { countOnly: true }),
      this.coolingTargets(kind, now),
      this.#parks.parkedTargets(kind, now),
    ]);
    cooling.delete(target);
    // A parked store is an operator's decision, not the scheduler giving up on a failing fleet:
    // parking many broken stores must not stop the next broken one from cooling.
    for (const t of parked) cooling.delete(t);
    return { knownStores: stats.count, coolingOthers: cooling.size };
  }

  /**
   * An operator's reset of one record: deleted with a `reset` event (who, and the count it
   * cleared) and the actor's audit entry in one transaction, guarded on the record as read.
   * False, and nothing written, when there was no record.
   */
  async clearCooldown(kind: TaskKind, target: string, actor?: Actor): Promise<boolean> {
    const { kv, keys } = this.#ctx;
    const key = keys.cooldown(kind, target);
    let read = cooldownRead(await kv.get(key));
    for (let attempt = 0; attempt < RESET_ATTEMPTS; attempt++) {
      if (read.modRevision === 0) return false;
      const audit = this.#audit.write(actor?.audit, { kind, target, outcome: 'reset' });
      const res = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: read.modRevision }],
        [...this.#resetOps(kind, target, read, actor), ...audit.ops],
        [{ type: 'get', key }],
      );
      if (res.succeeded) {
        void this.#timeline.afterWrite(kind, target);
        this.#audit.written(audit);
        return true;
      }
      const current = res.results[0];
      read = cooldownRead(current?.type === 'get' ? current.kv : undefined);
    }
    throw new ContentionError(`reset of ${kind} '${target}' contended past ${RESET_ATTEMPTS} attempts`);
  }

  /** The deletion of a record as read, and its `reset` event naming the actor. */
  #resetOps(kind: TaskKind, target: string, read: CooldownRead, actor: Actor | undefined): TxnOp[] {
    const timeline = this.#timeline.ops(kind, target, [
      {
        type: 'reset',
        ...(read.record ? { failures: read.record.failures } : {}),
        ...(actor ? { by: actor.by } : {}),
      },
    ]);
    return [{ type: 'delete', key: this.#ctx.keys.cooldown(kind, target) }, ...timeline.ops];
  }

  /**
   * Resets the records of `pairs`, each as {@link CooldownStore.clearCooldown} does (its `reset`
   * event naming the actor), in chunks of up to 50 a transaction, and records the whole action as
   * one audit entry whose count grows in each chunk's transaction (docs/ARCHITECTURE.md §2.9).
   * `onReset` hears each pair as its chunk commits. Answers, per pair, whether its record was
   * reset (false: it had none by then).
   */
  async resetMany(pairs: readonly Pair[], actor?: Actor, onReset?: (pair: Pair) => void): Promise<boolean[]> {
    const chain = this.#audit.chain(actor?.audit, { outcome: 'reset' });
    try {
      return await swapInChunks(
        this.#ctx,
        pairs.map(({ kind, target }) => ({
          key: this.#ctx.keys.cooldown(kind, target),
          ops: (found) => (found ? this.#resetOps(kind, target, cooldownRead(found), actor) : undefined),
        })),
        chain,
        (indexes) => {
          for (const i of indexes) {
            const pair = pairs[i]!;
            void this.#timeline.afterWrite(pair.kind, pair.target);
            onReset?.(pair);
          }
        },
      );
    } finally {
      chain?.finish();
    }
  }

  /** Resets every record (of one kind, or all) as {@link CooldownStore.resetMany} does; returns how many. */
  async clearCooldowns(kind: TaskKind | undefined, actor?: Actor): Promise<number> {
    const pairs: Pair[] = [];
    const prefix = this.#ctx.keys.cooldownPrefix();
    for await (const found of scan(this.#ctx.kv, this.#ctx.keys.cooldownPrefix(kind), { keysOnly: true })) {
      const pair = parsePairKey(prefix, found.key);
      if (pair) pairs.push(pair);
    }
    return (await this.resetMany(pairs, actor)).filter(Boolean).length;
  }

  async getCooldown(kind: TaskKind, target: string): Promise<TaskCooldown | undefined> {
    const found = await this.#ctx.kv.get(this.#ctx.keys.cooldown(kind, target));
    return found ? decode(TaskCooldownSchema, found) : undefined;
  }

  async listCooldowns(options: { readonly kind?: TaskKind; readonly all?: boolean }): Promise<TaskCooldown[]> {
    const now = this.#ctx.clock.now();
    const out: TaskCooldown[] = [];
    for await (const found of scan(this.#ctx.kv, this.#ctx.keys.cooldownPrefix(options.kind))) {
      const c = decode(TaskCooldownSchema, found);
      if (options.all || isCooling(c, now)) out.push(c);
    }
    return out;
  }

  async isCoolingDown(kind: TaskKind, target: string, nowMs = this.#ctx.clock.now()): Promise<boolean> {
    // As in coolingTargets: no record gates anything where this policy does not run the cooldown.
    return appliesTo(this.#policy, kind) && isCooling(await this.getCooldown(kind, target), nowMs);
  }

  async coolingTargets(kind: TaskKind, nowMs = this.#ctx.clock.now()): Promise<Set<string>> {
    const out = new Set<string>();
    // Records an earlier configuration left gate nothing once this one turned the cooldown off.
    if (!appliesTo(this.#policy, kind)) return out;
    const prefix = this.#ctx.keys.cooldownPrefix(kind);
    for await (const found of scan(this.#ctx.kv, prefix)) {
      const c = decode(TaskCooldownSchema, found);
      if (isCooling(c, nowMs)) out.add(targetFromHex(found.key.slice(prefix.length)));
    }
    return out;
  }
}
