import type { LoopContext } from './context.js';

/**
 * Requeues or fails the tasks of masters whose session ended (docs/ARCHITECTURE.md §2.6), and
 * queues again the held tasks of parks that lapsed (§2.7), every half lease TTL (at least 1 s)
 * until the scheduler stops, and wakes the pools when it put any back. The store recovered
 * orphans once already when it opened: that is logged first.
 */
export async function recoveryLoop(ctx: LoopContext, wakeAll: () => void): Promise<void> {
  const { store, logger, config } = ctx.deps;
  const everyMs = Math.max(1000, (config.etcd.leaseTtlSecs * 1000) / 2);
  const opened = store.recoveredOnOpen;
  if (opened.requeued.length > 0 || opened.failed.length > 0)
    logger.info({ requeued: opened.requeued, failed: opened.failed, at: 'start' }, 'recovered orphaned tasks');
  while (await ctx.sleep(everyMs)) {
    try {
      const r = await store.recoverOrphaned();
      ctx.outage.ok(r.requeued.length > 0 || r.failed.length > 0);
      if (r.requeued.length > 0 || r.failed.length > 0) {
        logger.info({ requeued: r.requeued, failed: r.failed }, 'recovered orphaned tasks');
        wakeAll();
      }
    } catch (err) {
      ctx.outage.failed(err, 'orphan recovery failed');
    }
    try {
      const resumed = await store.resumeHeld();
      ctx.outage.ok(resumed.length > 0);
      if (resumed.length > 0) {
        logger.info({ resumed }, 'queued again the tasks of parks that lapsed');
        wakeAll();
      }
    } catch (err) {
      ctx.outage.failed(err, 'resuming held tasks failed');
    }
  }
}
