import { type TaskKind, isParked } from '@maintd/core';
import { type KindRegistry, kindNames, kindSpec } from '../kinds/index.js';
import { type SchedulerDeps, registryOf } from './context.js';

/** The kinds whose spec follows a success of `kind` that reported `facts`. */
function followUpKinds(registry: KindRegistry, kind: TaskKind, facts: Readonly<Record<string, number>>): TaskKind[] {
  return kindNames(registry).filter((next) => {
    const follows = kindSpec(next, registry).follows;
    return follows !== undefined && follows.after === kind && follows.when(facts);
  });
}

/**
 * Enqueues the kinds that follow a success of `kind` (e.g. index_id after a compaction that
 * added fragments): source `sweep`, deduped, and skipped while the target is parked or cools
 * for that kind, as a sweep would. Best-effort: the finished task's outcome is committed already.
 */
export async function enqueueFollowUps(
  deps: SchedulerDeps,
  kind: TaskKind,
  target: string,
  facts: Readonly<Record<string, number>>,
): Promise<void> {
  const { store, metrics, logger, clock } = deps;
  for (const next of followUpKinds(registryOf(deps), kind, facts)) {
    try {
      const [park, cooling] = await Promise.all([store.getPark(next, target), store.isCoolingDown(next, target)]);
      if (isParked(park, clock.now())) {
        metrics.sweepSkipped.inc({ kind: next, reason: 'parked' });
        continue;
      }
      if (cooling) {
        metrics.sweepSkipped.inc({ kind: next, reason: 'cooldown' });
        continue;
      }
      const res = await store.enqueue(next, target, { source: 'sweep' });
      if (res.created) metrics.enqueued.inc({ kind: next, source: 'sweep' });
      logger.debug({ kind: next, target, after: kind, created: res.created }, 'follow-up enqueued');
    } catch (err) {
      logger.warn({ err, kind: next, target, after: kind }, 'follow-up enqueue failed');
    }
  }
}
