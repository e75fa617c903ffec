import { kindNames } from '../kinds/index.js';
import { type LoopContext, registryOf } from './context.js';

const QUEUE_DEPTH_EVERY_MS = 5000;

/** Keeps the queue-depth gauge of every kind current until the scheduler stops. */
export async function queueDepthLoop(ctx: LoopContext): Promise<void> {
  const { store, metrics } = ctx.deps;
  do {
    try {
      for (const kind of kindNames(registryOf(ctx.deps)))
        metrics.queueDepth.set({ kind }, await store.queueDepth(kind));
    } catch {
      // The gauge keeps its last value while the store is away; readiness reports the outage.
    }
  } while (await ctx.sleep(QUEUE_DEPTH_EVERY_MS));
}
