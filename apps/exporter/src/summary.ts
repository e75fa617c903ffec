import { type TaskKind, type TaskState, isParked } from '@maintd/core';
import { type ClusterAggregate, STATES } from './aggregate.js';
import { heapOldest } from './queue-heap.js';

/** What the exporter reports for one kind. */
export interface KindSummary {
  readonly kind: TaskKind;
  /**
   * Tasks by state (terminal ones until history pruning removes them): today's states always, and
   * every state of a later release the aggregate has met, by its name.
   */
  readonly tasks: Readonly<Record<TaskState, number> & Record<string, number>>;
  /** Seconds since the oldest queued task was enqueued; 0 when none is queued. */
  readonly queueOldestAgeSeconds: number;
  /** Targets whose cooldown window is open at the summary's time, parked or not. */
  readonly cooldownsActive: number;
  /** Highest consecutive-failure count of any cooldown record (below-threshold ones too); 0 if none. */
  readonly cooldownFailuresMax: number;
  /**
   * Seconds since the first of the consecutive failures of the longest-failing target whose
   * window is open and which is not parked; 0 when there is none. "A store has been given up on
   * for this long": a parked one was set aside by an operator, which is no cause for an alert.
   */
  readonly cooldownOldestAgeSeconds: number;
  /** Targets with a park in force at the summary's time (open-ended, or before its `until_ms`). */
  readonly parked: number;
}

/** Everything a scrape exports about the cluster, at one instant. */
export interface ClusterSummary {
  /**
   * One per kind a live master runs or a record is of, by name: the kinds come from the
   * registrations and the records, never from a list compiled into the exporter.
   */
  readonly kinds: readonly KindSummary[];
  /** The task states each kind's `tasks` holds: today's, then those of later releases met. */
  readonly states: readonly string[];
  /** Live masters (registrations bound to their session leases). */
  readonly masters: number;
  /** Stores in the stats rows of the last scan. */
  readonly stores: number;
  /** Pending WAL generations summed over the stats rows. */
  readonly pendingWalGenerations: number;
  /** Keys left out because their value could not be decoded. */
  readonly invalidRecords: number;
}

/**
 * The exported numbers at `nowMs`. Windows are compared with `nowMs` here, not when their record
 * was written, because a window (or a park) lapses without any etcd change. Costs
 * O(kinds · log queued) plus one pass over the cooldown records and one over the parks.
 */
export function summarize(agg: ClusterAggregate, nowMs: number): ClusterSummary {
  const kinds = shownKinds(agg).map((k): KindSummary => {
    const kind = agg.kinds.names[k]!;
    const tasks = Object.fromEntries(
      agg.states.names.map((s, i) => [s, agg.taskCounts[k * STATES + i]!]),
    ) as KindSummary['tasks'];
    const oldest = heapOldest(agg.queues[k]!, agg.queuedChecks[k]!);
    const parks = agg.parks[k]!;
    let parked = 0;
    parks.forEach((park) => {
      if (isParked(park, nowMs)) parked++;
    });
    let active = 0;
    let firstFailure = Infinity;
    // forEach, not for-of over entries: a scrape walks every cooldown record, and an entry array
    // per record would make each scrape allocate in proportion to the records.
    agg.cooldowns[k]!.forEach((c, key) => {
      if (c.untilMs === null || c.untilMs <= nowMs) return;
      active++;
      if (c.firstFailureMs >= firstFailure) return;
      if (parked > 0 && isParked(parks.get(key), nowMs)) return;
      firstFailure = c.firstFailureMs;
    });
    let failuresMax = 0;
    for (const f of agg.failureCounts[k]!.keys()) if (f > failuresMax) failuresMax = f;
    return {
      kind,
      tasks,
      queueOldestAgeSeconds: oldest === undefined ? 0 : ageSeconds(nowMs, oldest),
      cooldownsActive: active,
      cooldownFailuresMax: failuresMax,
      cooldownOldestAgeSeconds: firstFailure === Infinity ? 0 : ageSeconds(nowMs, firstFailure),
      parked,
    };
  });
  return {
    kinds,
    states: [...agg.states.names],
    masters: agg.masters.size,
    stores: agg.stats.size,
    pendingWalGenerations: agg.pendingWalGenerations,
    invalidRecords: agg.invalid.size,
  };
}

/**
 * The indexes of the kinds to export, in name order: those a live master runs, and those with a
 * record now. A kind whose records are all gone and that no live master runs is left out, as a
 * kind no one has heard of would be.
 */
function shownKinds(agg: ClusterAggregate): number[] {
  const registered = new Set<string>();
  agg.masters.forEach((kinds) => kinds.forEach((k) => registered.add(k)));
  const shown: number[] = [];
  agg.kinds.names.forEach((name, k) => {
    if (registered.has(name) || hasRecords(agg, k)) shown.push(k);
  });
  const names = agg.kinds.names;
  return shown.sort((a, b) => (names[a]! < names[b]! ? -1 : 1));
}

function hasRecords(agg: ClusterAggregate, k: number): boolean {
  if (agg.cooldowns[k]!.size > 0 || agg.parks[k]!.size > 0) return true;
  for (let s = 0; s < STATES; s++) if (agg.taskCounts[k * STATES + s]! > 0) return true;
  return false;
}

/** Whole-millisecond age in seconds; a timestamp from a master whose clock runs ahead reads as 0. */
function ageSeconds(nowMs: number, thenMs: number): number {
  return Math.max(0, nowMs - thenMs) / 1000;
}
