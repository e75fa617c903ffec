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
