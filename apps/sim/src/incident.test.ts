import { describe, expect, it } from 'vitest';
import { formatIncident, runIncident } from './incident.js';

describe('incident simulation', () => {
  it('is deterministic: the same seed gives a byte-identical table', async () => {
    const o = { masters: 3, stores: 40, broken: 2, hours: 1, seed: 3 };
    const run = async (): Promise<string> =>
      formatIncident(o, await runIncident({ ...o, cooldown: false }), await runIncident({ ...o, cooldown: true }));
    const first = await run();
    expect(await run()).toBe(first);
    expect(first).toContain('merge-slot time on broken stores');
  }, 60_000);

  it('spends fewer tasks and less merge-slot time on broken stores with the cooldown on', async () => {
    const o = { masters: 2, stores: 20, broken: 2, hours: 1, seed: 5 };
    const on = await runIncident({ ...o, cooldown: true });
    const off = await runIncident({ ...o, cooldown: false });
    expect(on.brokenTasks).toBeLessThan(off.brokenTasks);
    expect(on.brokenSlotShare).toBeLessThan(off.brokenSlotShare);
  }, 60_000);
});

describe('the incident with the README defaults (6 masters, 200 stores, 5 broken, 6 h, seed 1)', () => {
  it('grows the healthy queue hour over hour with the cooldown off, and holds broken stores under 2% after the first hour with it on', async () => {
    const o = { masters: 6, stores: 200, broken: 5, hours: 6, seed: 1 };
    const off = await runIncident({ ...o, cooldown: false });
    const on = await runIncident({ ...o, cooldown: true });
    // Off: the backlog carried from sweep to sweep (the hourly minimum) and the mean rise every hour.
    for (let h = 1; h < 6; h++) {
      expect(off.healthyQueueHourly[h]!.min).toBeGreaterThanOrEqual(off.healthyQueueHourly[h - 1]!.min);
      expect(off.healthyQueueHourly[h]!.mean).toBeGreaterThan(off.healthyQueueHourly[h - 1]!.mean);
    }
    expect(off.healthyQueueHourly[5]!.min).toBeGreaterThan(50);
    // On: the broken stores' share after hour 1 is under 2%, and once their windows have grown
    // the fleet carries no backlog from one sweep to the next.
    expect(on.brokenSlotShareAfterFirstHour).toBeLessThan(0.02);
    expect(off.brokenSlotShare).toBeGreaterThan(3 * on.brokenSlotShareAfterFirstHour);
    for (const h of [3, 4, 5]) expect(on.healthyQueueHourly[h]!.min).toBe(0);
    expect(on.healthyWaitP50).toBeLessThan(off.healthyWaitP50);
  }, 120_000);
});
