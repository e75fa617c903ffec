import type { StoreStats, TaskKind, TaskStore } from '@maintd/core';
import type { Logger } from 'pino';
import { kindSpec } from '../kinds/index.js';
import { type SchedulerDeps, registryOf } from './context.js';
import { automaticMayStart } from './windows.js';

/** Result of one sweep. */
export interface SweepSummary {
  readonly kind: TaskKind;
  readonly candidates: number;
  readonly enqueued: number;
  /**
   * Over-threshold stores not enqueued: parked by an operator, cooling, with an active task, or
   * all of them while the kind is outside its maintenance window.
   */
  readonly skipped: {
    readonly parked: number;
    readonly cooldown: number;
    readonly active: number;
    readonly window: number;
  };
}

/**
 * One sweep: stores over the kind's threshold, biggest backlog first, minus parked targets,
 * cooling targets and targets with an active task, enqueued up to SWEEP_MAX_NEW_TASKS. Four
 * prefix reads (parks are few: that one is small) plus one transaction per new task.
 */
export async function sweepOnce(deps: SchedulerDeps, kind: TaskKind): Promise<SweepSummary> {
  const { store, config, metrics, logger, clock } = deps;
  if (!automaticMayStart(config, kind, clock.now())) return outsideWindow(deps, kind);
  const [rows, parked, cooling, active] = await Promise.all([
    store.listStats(),
    store.parkedTargets(kind),
    store.coolingTargets(kind),
    store.activeTargets(kind),
  ]);
  const sweep = kindSpec(kind, registryOf(deps)).sweep;
  const threshold = config.sweeps.kinds[kind]?.threshold;
  if (!sweep || threshold === undefined) throw new Error(`${kind} has no sweep`);
  const candidates = sweepCandidates(rows, sweep.backlog, threshold);
  let enqueued = 0;
  const skipped = { parked: 0, cooldown: 0, active: 0, window: 0 };
  for (const row of candidates) {
    if (enqueued >= config.sweeps.maxNewTasks) break;
    if (parked.has(row.name)) {
      skipped.parked++;
      continue;
    }
    if (cooling.has(row.name)) {
      skipped.cooldown++;
      continue;
    }
    if (active.has(row.name)) {
      skipped.active++;
      continue;
    }
    const res = await store.enqueue(kind, row.name, { source: 'sweep' });
    if (res.created) {
      enqueued++;
      metrics.enqueued.inc({ kind, source: 'sweep' });
    } else {
      skipped.active++;
    }
  }
  if (skipped.parked > 0) metrics.sweepSkipped.inc({ kind, reason: 'parked' }, skipped.parked);
  if (skipped.cooldown > 0) metrics.sweepSkipped.inc({ kind, reason: 'cooldown' }, skipped.cooldown);
  if (skipped.active > 0) metrics.sweepSkipped.inc({ kind, reason: 'active' }, skipped.active);
  logger.info({ kind, candidates: candidates.length, enqueued, skipped }, `${kind} sweep queued ${enqueued} task(s)`);
  return { kind, candidates: candidates.length, enqueued, skipped };
}

/**
 * A sweep outside the kind's maintenance window enqueues nothing: its due stores are counted
 * (one read, of the stats) as skipped for the window, so that a dashboard sees the work held back.
 */
async function outsideWindow(deps: SchedulerDeps, kind: TaskKind): Promise<SweepSummary> {
  const { store, config, metrics, logger } = deps;
  const sweep = kindSpec(kind, registryOf(deps)).sweep;
  const threshold = config.sweeps.kinds[kind]?.threshold;
  if (!sweep || threshold === undefined) throw new Error(`${kind} has no sweep`);
  const due = sweepCandidates(await store.listStats(), sweep.backlog, threshold).length;
  if (due > 0) metrics.sweepSkipped.inc({ kind, reason: 'window' }, due);
  const skipped = { parked: 0, cooldown: 0, active: 0, window: due };
  logger.info({ kind, candidates: due, enqueued: 0, skipped }, `${kind} sweep queued nothing: outside its window`);
  return { kind, candidates: due, enqueued: 0, skipped };
}

/** The stores at or over `threshold` of `backlog`, biggest backlog first, then by name. */
function sweepCandidates(
  rows: readonly StoreStats[],
  backlog: (row: StoreStats) => number,
  threshold: number,
): StoreStats[] {
  return rows
    .filter((r) => backlog(r) >= threshold)
    .sort((a, b) => backlog(b) - backlog(a) || (a.name < b.name ? -1 : 1));
}

/**
 * Whether sweeps may run yet. A sweep over an empty stats table finds nothing and still spends
 * its slot: a fresh fleet would idle for a whole sweep interval (600 s by default) after its
 * first stats scan. Until some master's scan has written a row, sweeps wait for it instead; once
 * one exists, sweeps do not ask again (a fleet whose stores all vanish sweeps nothing, as it
 * should).
 */
export function statsExistGate(store: TaskStore, logger: Logger): (kind: TaskKind) => Promise<boolean> {
  let seen = false;
  let waiting = false;
  return async (kind) => {
    if (seen) return true;
    seen = await store.hasStats();
    if (!seen && !waiting) {
      waiting = true;
      logger.info({ kind }, 'sweeps wait for the first stats scan: no store has stats yet');
    }
    return seen;
  };
}
