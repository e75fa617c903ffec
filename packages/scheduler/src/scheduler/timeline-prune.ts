import type { LoopContext } from './context.js';
import type { PeriodicJob } from './periodic.js';

/** Its name in etcd (`P/sweeps/timeline-prune`). */
export const TIMELINE_PRUNE_JOB = 'timeline-prune';
/**
 * Hourly: a pair that still gets events is trimmed by its writes; this catches the pairs that
 * stopped getting any (a store fixed or gone), whose events would otherwise stay forever.
 */
const TIMELINE_PRUNE_SECS = 3600;

/**
 * The fleet-wide prune of timeline events past `TASK_TIMELINE_TTL_SECS` (docs/ARCHITECTURE.md
 * §2.7), run by one master per hour; disabled when the TTL is 0 (the count alone bounds a pair).
 */
export function timelinePruneJob(ctx: LoopContext): PeriodicJob {
  const { store, logger, config } = ctx.deps;
  return {
    name: TIMELINE_PRUNE_JOB,
    intervalSecs: config.tasks.timelineTtlSecs > 0 ? TIMELINE_PRUNE_SECS : 0,
    run: async () => {
      const pruned = await store.timelines.prune();
      if (pruned > 0) logger.info({ pruned }, 'pruned timeline events past their TTL');
    },
  };
}
