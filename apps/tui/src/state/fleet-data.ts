import type {
  Capacity,
  Cooldown,
  FailureCause,
  Master,
  Policy,
  Store,
  Task,
  TaskKind,
  TimelineEvent,
  Worker,
} from '../api/types.js';
import type { Activity } from './activity.js';

/** Queued and running task counts of one kind. */
export interface KindCounts {
  readonly queued: number;
  readonly running: number;
}

/**
 * Everything the dashboard knows about the fleet. Every change makes a new object, so views can
 * memoise on identity; the two big maps (cooldowns, tasks) are `LiveMap`s (state/live-map.ts)
 * that change in place instead of being copied per change, and carry a revision and a log of
 * changed keys so sorted views follow them incrementally. Parts stay `undefined` until first read, so a view can
 * tell "none" from "not loaded yet".
 */
export interface FleetData {
  readonly masters: readonly Master[] | undefined;
  readonly workers: readonly Worker[] | undefined;
  /** Stats rows, by name (their embedded cooldowns are ignored: {@link cooldowns} is live). */
  readonly stores: readonly Store[] | undefined;
  /** Stores the master knows (may exceed `stores.length` on a huge fleet). */
  readonly storesTotal: number;
  /** Cooldown records by `cooldownKey`; undefined until first read. */
  readonly cooldowns: ReadonlyMap<string, Cooldown> | undefined;
  /** Recent and active tasks by id (newest pages plus live changes), bounded. */
  readonly tasks: ReadonlyMap<string, Task> | undefined;
  /** Queue depth and running count per kind (see `fleetKinds` for which kinds). */
  readonly counts: Readonly<Record<TaskKind, KindCounts>> | undefined;
  /** `master_cooldown_guard_overflow_total` per kind, from the master's /metrics. */
  readonly guardOverflow: Readonly<Record<TaskKind, number>> | undefined;
  /** The cooldown policy of the master (threshold, windows, guard); undefined until read. */
  readonly policy: Policy | undefined;
  /**
   * The audit trail's entries and the parks and releases seen on the stream, newest last, at
   * most `MAX_ACTIVITY` (state/activity.ts).
   */
  readonly activity: readonly Activity[];
  /**
   * Timeline events seen on the stream, newest last, at most `MAX_TIMELINE_TAIL` (state/fleet.ts):
   * what the detail pane adds to the timeline it read, so it stays live without reading it again.
   */
  readonly timeline: readonly TimelineEvent[];
  /**
   * The fleet's slot time over the last hour (`GET /api/v1/capacity`, read every
   * `INSIGHTS_MS`, data/insights.ts); `unsupported` from a master that predates it.
   */
  readonly capacity?: Capacity | 'unsupported' | undefined;
  /** Failures grouped by cause, the most stores first; `unsupported` from a master that predates them. */
  readonly causes?: readonly FailureCause[] | 'unsupported' | undefined;
  /** Why the latest read of the capacity or the causes failed (the previous answer stays shown). */
  readonly insightsError?: string | undefined;
}

/** Fleet data before anything was read. */
export const EMPTY_FLEET: FleetData = Object.freeze({
  masters: undefined,
  workers: undefined,
  stores: undefined,
  storesTotal: 0,
  cooldowns: undefined,
  tasks: undefined,
  counts: undefined,
  guardOverflow: undefined,
  policy: undefined,
  activity: [],
  timeline: [],
});
