import { ContentionError } from '../errors.js';
import { targetFromHex } from '../keys.js';
import {
  type CooldownDecision,
  type CooldownPolicy,
  type FleetState,
  isCooling,
  nextCooldown,
  wouldCool,
} from '../cooldown-policy.js';
import { type ErrorClass, type TaskCooldown, type TaskKind, TaskCooldownSchema, encodeCooldown } from '../model.js';
import { decode } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';

const COOLDOWN_ATTEMPTS = 64;

/** Result of {@link TaskStore.recordFailure}. */
export type RecordFailureResult =
  | Exclude<CooldownDecision, { action: 'write' }>
  | (Extract<CooldownDecision, { action: 'write' }> & {
      /** CAS conflicts met before the write landed. */
      readonly conflicts: number;
    });

/**
 * The failure-cooldown records in the Kv: the I/O around the pure policy of
 * `cooldown-policy.ts`, which decides every record this writes.
 */
export class CooldownStore {
  readonly #ctx: StoreContext;
  readonly #policy: CooldownPolicy;

  constructor(ctx: StoreContext, policy: CooldownPolicy) {
    this.#ctx = ctx;
    this.#policy = policy;
  }

  /**
   * Read, decide, then CAS on `mod_revision` under a fresh lease of `maxSecs`, so the count
   * outlives a lapsed window. A conflict revokes that lease (else it would linger unused until
   * its TTL) and retries after a jittered 5–25 ms, so that contenders do not collide again.
   */
  async recordFailure(
    kind: TaskKind,
    target: string,
    taskId: string,
    error: string,
    errorClass: ErrorClass,
  ): Promise<RecordFailureResult> {
    const { kv, keys, clock, random } = this.#ctx;
    const policy = this.#policy;
    const key = keys.cooldown(kind, target);
    const report = { kind, target, taskId, error, errorClass };
    let conflicts = 0;
    for (let attempt = 0; attempt < COOLDOWN_ATTEMPTS; attempt++) {
      if (attempt > 0) await clock.sleep(5 + Math.floor(random.next() * 20));
      const found = await kv.get(key);
      const prev = found ? decode(TaskCooldownSchema, found) : undefined;
      const now = clock.now();
      // The fleet guard costs two reads: pay them only when this failure could open a window.
      const fleet = wouldCool(policy, prev) ? await this.#fleetState(kind, target, now) : undefined;
      const decision = nextCooldown(policy, prev, report, now, fleet);
      if (decision.action !== 'write') return decision;
      const lease = await kv.grant(policy.maxSecs, { keepAlive: false });
      const res = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }],
        [{ type: 'put', key, value: encodeCooldown(decision.record), lease: lease.id }],
      );
      if (res.succeeded) return { ...decision, conflicts };
      conflicts++;
      await lease.revoke().catch(() => undefined);
    }
    throw new ContentionError(`cooldown for ${kind} '${target}' contended past ${COOLDOWN_ATTEMPTS} attempts`);
  }

  async #fleetState(kind: TaskKind, target: string, now: number): Promise<FleetState> {
    // The fleet is every store with a stats row, whichever kind it needs.
    const [stats, cooling] = await Promise.all([
      this.#ctx.kv.range(this.#ctx.keys.statsPrefix, { countOnly: true }),
      this.coolingTargets(kind, now),
    ]);
    cooling.delete(target);
    return { knownStores: stats.count, coolingOthers: cooling.size };
  }

  async clearCooldown(kind: TaskKind, target: string): Promise<boolean> {
    return (await this.#ctx.kv.delete(this.#ctx.keys.cooldown(kind, target))) > 0;
  }

  async clearCooldowns(kind: TaskKind | undefined): Promise<number> {
    return this.#ctx.kv.deletePrefix(this.#ctx.keys.cooldownPrefix(kind));
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

  async coolingTargets(kind: TaskKind, nowMs = this.#ctx.clock.now()): Promise<Set<string>> {
    const prefix = this.#ctx.keys.cooldownPrefix(kind);
    const out = new Set<string>();
    for await (const found of scan(this.#ctx.kv, prefix)) {
      const c = decode(TaskCooldownSchema, found);
      if (isCooling(c, nowMs)) out.add(targetFromHex(found.key.slice(prefix.length)));
    }
    return out;
  }
}
