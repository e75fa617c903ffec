import type { LoopContext } from './context.js';

/** A job that runs once per interval fleet-wide, on whichever master takes its slot first. */
export interface PeriodicJob {
  /** Its name in etcd (`P/sweeps/<name>`). */
  readonly name: string;
  /** Its interval; 0 or less disables it. */
  readonly intervalSecs: number;
  readonly run: () => Promise<unknown>;
  /** Whether it may run at all yet; asked before each slot. */
  readonly ready?: () => Promise<boolean>;
}

/**
 * How often a master asks for a job's slot: several times per interval so that some master runs
 * early in every slot, but not more often than 10 times a second nor less than every 5 s.
 */
function tickMs(intervalMs: number): number {
  return Math.min(5000, Math.max(100, Math.floor(intervalMs / 4)));
}

/** The loop of one periodic job until the scheduler stops; undefined when the job is disabled. */
export function periodicLoop(ctx: LoopContext, job: PeriodicJob): Promise<void> | undefined {
  if (job.intervalSecs <= 0) return undefined;
  const intervalMs = job.intervalSecs * 1000;
  const tick = tickMs(intervalMs);
  const { store } = ctx.deps;
  const loop = async (): Promise<void> => {
    while (!ctx.stop.aborted) {
      ctx.activity.jobs++;
      try {
        if (await (job.ready?.() ?? true)) {
          const due = await store.runEvery(job.name, intervalMs);
          // A due slot was taken with a write: etcd takes writes again if it was full.
          ctx.outage.ok(due);
          if (due) await job.run();
        }
      } catch (err) {
        ctx.outage.failed(err, `${job.name} failed`, { job: job.name });
      } finally {
        ctx.activity.jobs--;
      }
      if (!(await ctx.sleep(tick))) return;
    }
  };
  return loop();
}
