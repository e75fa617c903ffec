import {
  CAPACITY_BUCKET_MS,
  type CapacityLedger,
  type CapacityStore,
  type KindCapacity,
  type TaskKind,
  fleetCapacity,
} from '@maintd/core';
import { kindNames, kindSpec } from '../kinds/index.js';
import { type LoopContext, type SchedulerDeps, registryOf } from './context.js';

/**
 * How often a master writes its slot-time record when it finished tasks since the last write: an
 * answer of `GET /api/v1/capacity` is at most this old (plus the read), and a master costs etcd at
 * most one small put this often, nothing per task.
 */
export const CAPACITY_WRITE_MS = 10_000;

/**
 * Writes this master's slot time to `P/capacity/<id>` every {@link CAPACITY_WRITE_MS} when it
 * changed, and once a bucket while it holds anything, so that what ages out of its hour leaves
 * the record too. A failed write is retried at the next turn; the ledger keeps counting meanwhile.
 */
export async function capacityLoop(ctx: LoopContext, ledger: CapacityLedger, records: CapacityStore): Promise<void> {
  const { store, clock } = ctx.deps;
  let written = 0;
  let writtenAt = Number.NEGATIVE_INFINITY;
  while (await ctx.sleep(CAPACITY_WRITE_MS)) {
    const now = clock.now();
    const due = ledger.revision !== written || (now - writtenAt >= CAPACITY_BUCKET_MS && !ledger.isEmpty(now));
    if (!due) continue;
    const revision = ledger.revision;
    try {
      await records.write(ledger.snapshot(store.masterId, now));
      written = revision;
      writtenAt = now;
    } catch (err) {
      ctx.outage.failed(err, 'capacity record write failed');
    }
  }
}

/**
 * The fleet's last hour (docs/ARCHITECTURE.md §3.5): every master's record, this master's own
 * taken from its ledger rather than from etcd (so it is current), and the slots of the live
 * masters' pools that run each kind.
 */
export async function capacityNow(
  deps: SchedulerDeps,
  ledger: CapacityLedger,
  stored: CapacityStore,
): Promise<KindCapacity[]> {
  const { store, clock } = deps;
  const [records, masters] = await Promise.all([stored.read(), store.listMasters()]);
  const now = clock.now();
  const own = ledger.snapshot(store.masterId, now);
  const registry = registryOf(deps);
  const slots = new Map<TaskKind, number>();
  for (const m of masters) {
    for (const kind of m.kinds ?? kindNames(registry)) {
      // A kind this master's registry lacks runs in the general pool of the master that has it.
      const pool = kindNames(registry).includes(kind) ? kindSpec(kind, registry).pool : undefined;
      const size = pool ? (m.pools[pool.name] ?? 0) : 0;
      slots.set(kind, (slots.get(kind) ?? 0) + (size > 0 ? size : (m.pools.general ?? 0)));
    }
  }
  return fleetCapacity([...records.filter((r) => r.master_id !== store.masterId), own], slots, now);
}
