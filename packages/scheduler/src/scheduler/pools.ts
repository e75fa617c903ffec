import type { Claim, ClaimOptions, TaskKind } from '@maintd/core';
import type { Config } from '../config.js';
import { KINDS, type KindRegistry, kindNames, kindSpec } from '../kinds/index.js';
import type { LoopContext } from './context.js';

/** How long an idle pool sleeps when no queue event wakes it. */
export const POLL_MS = 2000;

/**
 * The reason a pool's sleep is cut short. Given explicitly because `abort()` without one builds
 * a DOMException (a stack trace) per call, and pools are woken on every queue change.
 */
const WAKE = new Error('woken');

/** A pool as configured: its name, the kinds it claims and how many tasks it runs at once. */
export interface PoolPlan {
  readonly name: string;
  readonly kinds: readonly TaskKind[];
  readonly size: number;
}

/**
 * The pools of a master (docs/ARCHITECTURE.md §3.2): the general pool, and each pool a kind
 * declares with slots (`merge`: MERGE_WAL_CONCURRENCY). A pool with 0 slots is none: the general
 * pool claims its kinds.
 */
export function planPools(pools: Config['pools'], registry: KindRegistry = KINDS): PoolPlan[] {
  const own = new Map<string, TaskKind[]>();
  const general: TaskKind[] = [];
  for (const kind of kindNames(registry)) {
    const pool = kindSpec(kind, registry).pool;
    const size = pool ? (pools.own[pool.name] ?? 0) : 0;
    if (pool && size > 0) own.set(pool.name, [...(own.get(pool.name) ?? []), kind]);
    else general.push(kind);
  }
  return [
    { name: 'general', kinds: general, size: pools.taskConcurrency },
    ...[...own].map(([name, kinds]) => ({ name, kinds, size: pools.own[name] ?? 0 })),
  ];
}

/** The slots of every pool, declared ones with 0 slots included: what a master's registration shows. */
export function poolSizes(pools: Config['pools']): Record<string, number> {
  return { general: pools.taskConcurrency, ...pools.own };
}

/**
 * One pool: claims tasks of its kinds while it has free slots and runs each. A resource:
 * `loop()` it until the scheduler stops; `wake()` it when a task may be waiting.
 */
export class Pool {
  readonly name: string;
  readonly kinds: readonly TaskKind[];
  readonly size: number;
  readonly #ctx: LoopContext;
  readonly #run: (claim: Claim) => Promise<void>;
  readonly #claimOptions: () => ClaimOptions;
  readonly #running = new Set<Promise<void>>();
  #wake = new AbortController();

  /** `claimOptions`: asked before each round of claims (whether parks hold tasks can change while running). */
  constructor(
    plan: PoolPlan,
    ctx: LoopContext,
    run: (claim: Claim) => Promise<void>,
    claimOptions: () => ClaimOptions,
  ) {
    this.name = plan.name;
    this.kinds = plan.kinds;
    this.size = plan.size;
    this.#ctx = ctx;
    this.#run = run;
    this.#claimOptions = claimOptions;
  }

  /** Tasks this pool runs now. */
  get runningCount(): number {
    return this.#running.size;
  }

  /** The runs in progress, each settling when its task is finished or abandoned. */
  running(): Promise<void>[] {
    return [...this.#running];
  }

  /** Cuts the pool's sleep short: a task was queued, a slot freed, or the scheduler stops. */
  wake(): void {
    this.#wake.abort(WAKE);
  }

  /** Claims and runs tasks until the scheduler stops. */
  async loop(): Promise<void> {
    const { stop } = this.#ctx;
    while (!stop.aborted) {
      // A fresh controller only once the last one fired: an idle pool polls every POLL_MS, and
      // a controller per poll was a large share of a simulation's CPU (Node builds a
      // transferable AbortSignal for each).
      if (this.#wake.signal.aborted) this.#wake = new AbortController();
      while (this.#running.size < this.size && !stop.aborted) {
        if (await this.#claimFreeSlots()) break;
      }
      try {
        // stop() aborts every pool's wake signal too; AbortSignal.any would leak listeners on
        // the long-lived stop signal (Node 20), one per poll.
        await this.#ctx.deps.clock.sleep(POLL_MS, this.#wake.signal);
      } catch {
        // Woken: a task was queued, a slot freed, or we are stopping.
      }
    }
  }

  /** Claims a task for every free slot and starts each; true when the queue is drained (or failed). */
  async #claimFreeSlots(): Promise<boolean> {
    const { deps, activity, outage } = this.#ctx;
    // Every free slot claims at once: concurrent claims go to etcd as one transaction
    // (the store's group commit), where one after another would cost a round trip each.
    const free = this.size - this.#running.size;
    // A claim in flight may have committed already: until it is a running task, not idle.
    activity.claiming += free;
    const options = this.#claimOptions();
    const settled = await Promise.allSettled(
      Array.from({ length: free }, () =>
        deps.store.claimNext(this.kinds, options).finally(() => {
          activity.claiming--;
        }),
      ),
    );
    let drained = false;
    for (const s of settled) {
      if (s.status === 'rejected') {
        outage.failed(s.reason, 'scheduler queue poll failed', { pool: this.name });
        drained = true;
      } else if (!s.value) {
        drained = true;
      } else {
        // A claim is a write.
        outage.ok(true);
        const run: Promise<void> = this.#run(s.value).finally(() => {
          this.#running.delete(run);
          this.wake();
        });
        this.#running.add(run);
      }
    }
    return drained;
  }
}
