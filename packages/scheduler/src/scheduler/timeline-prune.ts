import type { LoopContext } from './context.js';
import type { PeriodicJob } from './periodic.js';

/** Its name in etcd (`P/sweeps/timeline-prune`). */
export const TIMELINE_PRUNE_JOB = 'timeline-prune';
/**
 * Hourly: a pair that gets events often is trimmed by its writes; this catches the pairs that
 * stopped getting any (a store fixed or gone) and those whose writes are too sparse to trim.
 */
const TIMELINE_PRUNE_SECS = 3600;

/**
 * The fleet-wide trim of the timelines (docs/ARCHITECTURE.md §2.7), run by one master per hour:
 * events past `TASK_TIMELINE_TTL_SECS`, and each pair's oldest beyond `TASK_TIMELINE_LIMIT`.
 */
export function timelinePruneJob(ctx: LoopContext): PeriodicJob {
  const { store, logger } = ctx.deps;
  return {
    name: TIMELINE_PRUNE_JOB,
    intervalSecs: TIMELINE_PRUNE_SECS,
    run: async () => {
      const pruned = await store.timelines.prune();
      if (pruned > 0) logger.info({ pruned }, 'pruned timeline events past their TTL or their pair’s limit');
    },
  };
}
