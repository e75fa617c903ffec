import type { LoopContext } from './context.js';
import type { PeriodicJob } from './periodic.js';

/** Its name in etcd (`P/sweeps/audit-prune`). */
export const AUDIT_PRUNE_JOB = 'audit-prune';
/** Hourly: entries are written only by operators, so the trail grows slowly between prunes. */
const AUDIT_PRUNE_SECS = 3600;

/**
 * The prune of the audit trail (docs/ARCHITECTURE.md §2.9), run by one master per hour, from
 * keys alone: entries past `AUDIT_TTL_SECS`, and the oldest beyond `AUDIT_LIMIT`.
 */
export function auditPruneJob(ctx: LoopContext): PeriodicJob {
  const { store, logger } = ctx.deps;
  return {
    name: AUDIT_PRUNE_JOB,
    intervalSecs: AUDIT_PRUNE_SECS,
    run: async () => {
      const pruned = await store.audit.prune();
      if (pruned > 0) logger.info({ pruned }, 'pruned audit entries past their TTL or the limit');
    },
  };
}
