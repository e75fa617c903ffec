import type { MaintdClient } from '../api/client.js';
import type { FleetData } from '../state/fleet-data.js';

/**
 * How often the capacity and the causes are read: the master writes what it counted every 10 s,
 * so an answer is up to 15 s stale anyway, and a cause changes with a failure, not a frame.
 */
export const INSIGHTS_MS = 15_000;

/** What one read of the capacity and the causes brought, as the fleet data holds it. */
export type Insights = Pick<FleetData, 'capacity' | 'causes' | 'insightsError'>;

/**
 * Reads the capacity and the causes side by side. Never rejects: a master that predates a route
 * makes it `unsupported` (shown as such, never an error), and a failed read keeps the previous
 * answer (`previous`) with the reason in `insightsError`.
 */
export async function readInsights(c: MaintdClient, previous: Insights, signal: AbortSignal): Promise<Insights> {
  const [capacity, causes] = await Promise.allSettled([c.capacity(signal), c.causes(signal)]);
  const failed = [capacity, causes].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  return {
    capacity: capacity.status === 'fulfilled' ? (capacity.value ?? 'unsupported') : previous.capacity,
    causes: causes.status === 'fulfilled' ? (causes.value ?? 'unsupported') : previous.causes,
    insightsError: failed ? (failed.reason as Error).message : undefined,
  };
}
