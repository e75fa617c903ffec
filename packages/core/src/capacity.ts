import { z } from 'zod';
import { TargetSchema, type TaskKind, TaskKindSchema } from './model.js';

/** The span `GET /api/v1/capacity` answers for. */
export const CAPACITY_HOUR_MS = 3_600_000;
/** The time buckets a master keeps its slot time in: the hour is read to this resolution. */
export const CAPACITY_BUCKET_MS = 300_000;
/** Stores a capacity answer (and a master's record) lists per kind, biggest slot time first. */
export const CAPACITY_TOP = 20;
/**
 * Stores a master tracks per kind and bucket. Past it the store with the least slot time makes
 * way (a space-saving table): the stores that use the most are never the ones dropped, and the
 * memory a master spends on this is bounded whatever the fleet's size.
 */
const STORES_PER_BUCKET = 200;
/** Stores a master's record carries per kind: more than the answer lists, so that a fleet's top is mostly exact. */
const RECORD_TOP = 2 * CAPACITY_TOP;

/** Slot time of one store, as the capacity answer lists it. */
export interface StoreUse {
  /** The store. */
  readonly target: string;
  /** Slot seconds its finished tasks used. */
  readonly busy_seconds: number;
  /** Of those, the slot seconds of its failed tasks. */
  readonly failed_seconds: number;
  /** Its finished tasks. */
  readonly tasks: number;
  /** Of those, the failed ones. */
  readonly failed_tasks: number;
}

const StoreUseSchema = z.object({
  target: TargetSchema,
  busy_seconds: z.number().nonnegative(),
  failed_seconds: z.number().nonnegative(),
  tasks: z.number().int().nonnegative(),
  failed_tasks: z.number().int().nonnegative(),
});

/** Schema of one master's slot time over its last hour, at `P/capacity/<master id>`. */
export const CapacityRecordSchema = z
  .looseObject({
    master_id: z.string(),
    written_at: z.number().int().nonnegative(),
    bucket_ms: z.number().int().positive(),
    kinds: z.record(
      TaskKindSchema,
      z.looseObject({
        /** `[start_ms, success_seconds, failed_seconds, tasks, failed_tasks]` per bucket, oldest first. */
        buckets: z.array(z.tuple([z.number(), z.number(), z.number(), z.number(), z.number()])),
        top: z.array(StoreUseSchema),
      }),
    ),
  })
  .describe("One master's slot time by kind over its last hour: totals per time bucket and its top stores.");
/** One master's slot time by kind over its last hour (docs/ARCHITECTURE.md §3.5). */
export type CapacityRecord = z.infer<typeof CapacityRecordSchema>;

interface Totals {
  success: number;
  failed: number;
  tasks: number;
  failedTasks: number;
}

interface Bucket {
  readonly start: number;
  readonly kinds: Map<TaskKind, { readonly totals: Totals; readonly stores: Map<string, Totals> }>;
}

function add(t: Totals, seconds: number, failed: boolean): void {
  if (failed) {
    t.failed += seconds;
    t.failedTasks++;
  } else t.success += seconds;
  t.tasks++;
}

const busy = (t: Totals): number => t.success + t.failed;

function storeUse(target: string, t: Totals): StoreUse {
  return {
    target,
    busy_seconds: round(busy(t)),
    failed_seconds: round(t.failed),
    tasks: t.tasks,
    failed_tasks: t.failedTasks,
  };
}

/** Millisecond precision is all a slot time carries; it keeps records short. */
const round = (s: number): number => Math.round(s * 1000) / 1000;

/** Biggest slot time first, then by name, so every master and every reader orders alike. */
function byUse(a: StoreUse, b: StoreUse): number {
  return b.busy_seconds - a.busy_seconds || (a.target < b.target ? -1 : a.target > b.target ? 1 : 0);
}

/**
 * The slot time of the tasks one master finished, over the last hour (docs/ARCHITECTURE.md §3.5):
 * bounded in memory (buckets of {@link CAPACITY_BUCKET_MS}, at most 200 stores per kind and bucket)
 * and summarised into a {@link CapacityRecord} that the master writes every few seconds. Time is
 * passed in; nothing here reads a clock.
 */
export class CapacityLedger {
  readonly #buckets: Bucket[] = [];
  #revision = 0;

  /** Counts one finished task: `seconds` of slot time on `target`, failed or not, at `nowMs`. */
  record(kind: TaskKind, target: string, seconds: number, failed: boolean, nowMs: number): void {
    const start = Math.floor(nowMs / CAPACITY_BUCKET_MS) * CAPACITY_BUCKET_MS;
    let bucket = this.#buckets.at(-1);
    // A clock that stepped back counts in the newest bucket rather than reorder them.
    if (!bucket || bucket.start < start) {
      bucket = { start, kinds: new Map() };
      this.#buckets.push(bucket);
    }
    this.#prune(nowMs);
    let k = bucket.kinds.get(kind);
    if (!k) {
      k = { totals: { success: 0, failed: 0, tasks: 0, failedTasks: 0 }, stores: new Map() };
      bucket.kinds.set(kind, k);
    }
    const s = Math.max(0, seconds);
    add(k.totals, s, failed);
    let store = k.stores.get(target);
    if (!store) {
      if (k.stores.size >= STORES_PER_BUCKET) evictSmallest(k.stores);
      store = { success: 0, failed: 0, tasks: 0, failedTasks: 0 };
      k.stores.set(target, store);
    }
    add(store, s, failed);
    this.#revision++;
  }

  /** How many tasks were counted so far: a writer compares it with what it last wrote. */
  get revision(): number {
    return this.#revision;
  }

  /** Whether the ledger holds nothing from the last hour before `nowMs`. */
  isEmpty(nowMs: number): boolean {
    this.#prune(nowMs);
    return this.#buckets.length === 0;
  }

  /** The last hour before `nowMs`, as this master writes it to `P/capacity/<masterId>`. */
  snapshot(masterId: string, nowMs: number): CapacityRecord {
    this.#prune(nowMs);
    const kinds: Record<string, CapacityRecord['kinds'][string]> = {};
    const names = new Set(this.#buckets.flatMap((b) => [...b.kinds.keys()]));
    for (const kind of [...names].sort()) {
      const buckets: [number, number, number, number, number][] = [];
      const stores = new Map<string, Totals>();
      for (const b of this.#buckets) {
        const k = b.kinds.get(kind);
        if (!k) continue;
        const t = k.totals;
        buckets.push([b.start, round(t.success), round(t.failed), t.tasks, t.failedTasks]);
        for (const [target, s] of k.stores) {
          const sum = stores.get(target) ?? { success: 0, failed: 0, tasks: 0, failedTasks: 0 };
          sum.success += s.success;
          sum.failed += s.failed;
          sum.tasks += s.tasks;
          sum.failedTasks += s.failedTasks;
          stores.set(target, sum);
        }
      }
      const top = [...stores].map(([target, t]) => storeUse(target, t)).sort(byUse);
      kinds[kind] = { buckets, top: top.slice(0, RECORD_TOP) };
    }
    return { master_id: masterId, written_at: nowMs, bucket_ms: CAPACITY_BUCKET_MS, kinds };
  }

  #prune(nowMs: number): void {
    while (this.#buckets.length > 0 && this.#buckets[0]!.start + CAPACITY_BUCKET_MS <= nowMs - CAPACITY_HOUR_MS) {
      this.#buckets.shift();
    }
  }
}

function evictSmallest(stores: Map<string, Totals>): void {
  let smallest: string | undefined;
  let least = Infinity;
  for (const [target, t] of stores) {
    if (busy(t) < least) {
      least = busy(t);
      smallest = target;
    }
  }
  if (smallest !== undefined) stores.delete(smallest);
}

/** One kind's slot time over the last hour, fleet-wide: what `GET /api/v1/capacity` answers. */
export interface KindCapacity {
  /** The kind. */
  readonly kind: TaskKind;
  /** Slots of the live masters' pools that run the kind. */
  readonly slots: number;
  /** Slot seconds of finished tasks, by outcome. */
  readonly busy_seconds: { readonly success: number; readonly failed: number };
  /** Failed slot seconds over all slot seconds (0 when none). */
  readonly failed_share: number;
  /** Finished tasks. */
  readonly tasks: number;
  /** Of those, the failed ones. */
  readonly failed_tasks: number;
  /** The stores that used the most slot time, at most {@link CAPACITY_TOP}. */
  readonly top: readonly StoreUse[];
}

/**
 * The fleet's last hour before `nowMs` from every master's record (docs/ARCHITECTURE.md §3.5):
 * bucket totals that overlap the hour are summed; a record written more than an hour ago is
 * left out. A master that stopped keeps what it counted until its record ages out, so a task's
 * slot time is counted once, by the master that finished it, and none is lost with a master.
 *
 * @param slots - the live masters' slots per kind; a kind with slots and no record answers zeros.
 */
export function fleetCapacity(
  records: readonly CapacityRecord[],
  slots: ReadonlyMap<TaskKind, number>,
  nowMs: number,
): KindCapacity[] {
  const since = nowMs - CAPACITY_HOUR_MS;
  const kinds = new Map<TaskKind, { totals: Totals; stores: Map<string, Totals> }>();
  const of = (kind: TaskKind): { totals: Totals; stores: Map<string, Totals> } => {
    let k = kinds.get(kind);
    if (!k) {
      k = { totals: { success: 0, failed: 0, tasks: 0, failedTasks: 0 }, stores: new Map() };
      kinds.set(kind, k);
    }
    return k;
  };
  for (const kind of slots.keys()) of(kind);
  for (const r of records) {
    if (r.written_at < since) continue;
    for (const [kind, k] of Object.entries(r.kinds)) {
      const into = of(kind);
      for (const [start, success, failed, tasks, failedTasks] of k.buckets) {
        if (start + r.bucket_ms <= since) continue;
        into.totals.success += success;
        into.totals.failed += failed;
        into.totals.tasks += tasks;
        into.totals.failedTasks += failedTasks;
      }
      for (const s of k.top) {
        const sum = into.stores.get(s.target) ?? { success: 0, failed: 0, tasks: 0, failedTasks: 0 };
        sum.success += s.busy_seconds - s.failed_seconds;
        sum.failed += s.failed_seconds;
        sum.tasks += s.tasks;
        sum.failedTasks += s.failed_tasks;
        into.stores.set(s.target, sum);
      }
    }
  }
  return [...kinds]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([kind, { totals, stores }]) => {
      const all = busy(totals);
      return {
        kind,
        slots: slots.get(kind) ?? 0,
        busy_seconds: { success: round(totals.success), failed: round(totals.failed) },
        failed_share: all > 0 ? Math.round((totals.failed / all) * 10_000) / 10_000 : 0,
        tasks: totals.tasks,
        failed_tasks: totals.failedTasks,
        top: [...stores]
          .map(([target, t]) => storeUse(target, t))
          .sort(byUse)
          .slice(0, CAPACITY_TOP),
      };
    });
}
