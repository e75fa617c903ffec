/**
 * The API's views of stored records (docs/ARCHITECTURE.md §3.4): what a route serves for a
 * cooldown record and its park, or for a master's cooldown policy. Pure functions of the
 * records and the time.
 */
import {
  CAPACITY_HOUR_MS,
  type CooldownPolicy,
  type KindCapacity,
  type ParkRecord,
  type TaskCooldown,
  type TaskKind,
  type TimelineEvent,
  appliesTo,
  cooldownState,
  failureCause,
} from '@maintd/core';
import type { CooldownView, ParkView } from './schemas/cooldown.js';
import type { PolicyView } from './schemas/policy.js';
import type { CapacityBody } from './schemas/capacity.js';
import type { TimelineEventView } from './schemas/timeline.js';
import { withIsoTimes } from './schemas/common.js';

/** ISO 8601 text of a time in ms since the Unix epoch (millisecond precision, UTC). */
const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The API's view of one (kind, store) at `nowMs`: its cooldown record with `until` beside
 * `until_ms`, merged with its park when one is in force, and whether it gates the automatic work
 * of a master running `policy`. Null when there is neither a record nor a park in force (a lapsed
 * park alone is not shown: it gates nothing).
 */
export function cooldownView(
  cooldown: TaskCooldown | undefined,
  parked: ParkRecord | undefined,
  nowMs: number,
  policy: CooldownPolicy,
): CooldownView | null {
  const state = cooldownState(cooldown, parked, nowMs);
  if (state === undefined) return null;
  // A window opened under a policy that no longer counts its kind is listed until it lapses, but
  // this master's sweeps skip no window of a kind it does not count.
  const kindOf = cooldown?.kind ?? parked!.kind;
  const gating = state === 'parked' || (state === 'cooling' && appliesTo(policy, kindOf));
  const p = state === 'parked' ? parked : undefined;
  const parkView: ParkView | undefined = p && {
    reason: p.reason,
    by: p.by,
    parked_at_ms: p.parked_at_ms,
    parked_at: iso(p.parked_at_ms),
    until_ms: p.until_ms,
    until: p.until_ms === null ? null : iso(p.until_ms),
  };
  if (!cooldown) {
    const only = p!;
    return {
      kind: only.kind,
      target: only.target,
      state,
      gating,
      failures: 0,
      until_ms: null,
      until: null,
      last_error: '',
      parked: parkView!,
    };
  }
  return {
    kind: cooldown.kind,
    target: cooldown.target,
    state,
    gating,
    failures: cooldown.failures,
    until_ms: cooldown.until_ms,
    until: cooldown.until_ms === null ? null : iso(cooldown.until_ms),
    last_error: cooldown.last_error,
    last_error_class: cooldown.last_error_class,
    cause: failureCause(cooldown.last_error, cooldown.target),
    first_failure_ms: cooldown.first_failure_ms,
    last_failure_ms: cooldown.last_failure_ms,
    last_task_id: cooldown.last_task_id,
    ...(parkView ? { parked: parkView } : {}),
  };
}

/**
 * The API's view of a cooldown policy, run by master `masterId`, which runs `runs`: a policy for
 * `all` kinds lists those.
 */
export function policyView(
  policy: CooldownPolicy,
  masterId: string,
  runs: readonly TaskKind[],
  windows: readonly WindowInput[] = [],
): PolicyView {
  return {
    threshold: policy.afterFailures,
    base_secs: policy.baseSecs,
    max_secs: policy.maxSecs,
    jitter: policy.jitter,
    kinds: policy.kinds === 'all' ? [...runs] : [...policy.kinds],
    guard_percent: policy.maxPercent,
    count_infrastructure_failures: policy.countInfrastructure,
    master_id: masterId,
    ...(windows.length > 0
      ? {
          windows: windows.map((w) => ({
            kind: w.kind,
            spec: w.spec,
            tz: w.tz,
            open: w.open,
            next_change: w.next_change_ms === null ? null : iso(w.next_change_ms),
          })),
        }
      : {}),
  };
}

/** A maintenance window as the scheduler reports it (`next_change_ms`: epoch ms, or null). */
export interface WindowInput {
  readonly kind: TaskKind;
  readonly spec: string;
  readonly tz: string;
  readonly open: boolean;
  readonly next_change_ms: number | null;
}

/** The API's view of the fleet's slot time at `nowMs` (see `fleetCapacity` in core). */
export function capacityBody(kinds: readonly KindCapacity[], nowMs: number): CapacityBody {
  return {
    window_secs: CAPACITY_HOUR_MS / 1000,
    at: iso(nowMs),
    kinds: kinds.map((k) => ({
      kind: k.kind,
      slots: k.slots,
      busy_seconds: { ...k.busy_seconds },
      failed_share: k.failed_share,
      tasks: k.tasks,
      failed_tasks: k.failed_tasks,
      top: k.top.map((s) => ({ ...s })),
    })),
  };
}

/**
 * The API's view of one timeline event: the stored event with `at` (ISO 8601) beside `at_ms`, and
 * `until` beside `until_ms` where the event has one (null where that is null).
 */
export function timelineEventView(e: TimelineEvent): TimelineEventView {
  return withIsoTimes(e);
}
