import { describe, expect, it } from 'vitest';
import { KEY, fakeApi, mountedEach, sampleFleet } from '../test/app-harness.js';
import { ApiError } from './api/client.js';

const mount = mountedEach();

const entries = sampleFleet().cooldowns!.values();
/** The master's dry run: 14 matches, of which it lists the first. */
const bulk = { count: 14, entries: [...entries] };

describe('bulk actions over the Cooldowns view’s search', () => {
  it('P asks for one reason, confirms with the master’s dry-run count, then parks with the same filter and reports the count done', async () => {
    const m = mount({ api: fakeApi({ bulk }), size: { columns: 100, rows: 30 } });
    await m.press('3', '/', 'HTTP 500', KEY.enter);
    expect(m.frame()).toContain('P/C park/reset all matches');
    await m.press('P');
    expect(m.frame()).toContain("Park every store matching 'HTTP 500'?");
    await m.press('restore planned', KEY.enter);
    await m.settle();
    expect(m.frame()).toContain("Park 14 stores matching 'HTTP 500'?");
    expect(m.frame()).toContain('merge_wal broken-store');
    expect(m.frame()).toContain('… and 12 more');
    expect(m.frame()).toContain('Reason: restore planned');
    expect(m.api.calls).toEqual([{ op: 'bulk-park', target: 'HTTP 500', reason: 'restore planned', dryRun: true }]);
    await m.press('y');
    await m.settle();
    expect(m.api.calls.at(-1)).toEqual({
      op: 'bulk-park',
      target: 'HTTP 500',
      reason: 'restore planned',
      dryRun: false,
    });
    expect(m.frame()).toContain("parked 14 matching 'HTTP 500'");
    expect(m.source.refreshes).toBe(1);
  });

  it('C asks the master for a dry run and confirms the reset with its count; n changes nothing', async () => {
    const m = mount({ api: fakeApi({ bulk }) });
    await m.press('3', '/', 'broken', KEY.enter, 'C');
    await m.settle();
    expect(m.frame()).toContain("Reset 14 stores matching 'broken'?");
    expect(m.frame()).toContain('parks stay');
    await m.press('n');
    expect(m.api.calls).toEqual([{ op: 'bulk-reset', target: 'broken', dryRun: true }]);
    await m.press('C');
    await m.settle();
    await m.press('y');
    await m.settle();
    expect(m.api.calls.at(-1)).toEqual({ op: 'bulk-reset', target: 'broken', dryRun: false });
    expect(m.frame()).toContain("reset 14 matching 'broken'");
  });

  it('asks for a search first, says when nothing matches on the master, and is off under --readonly', async () => {
    const m = mount({ api: fakeApi({ bulk: { count: 0, entries: [] } }) });
    await m.press('3', 'P');
    expect(m.frame()).toContain('search with / first');
    await m.press('/', 'zz', KEY.enter, 'C');
    await m.settle();
    expect(m.frame()).toContain("nothing matches 'zz' on the master");
    const ro = mount({ readonly: true });
    await ro.press('3', '/', 'broken', KEY.enter, 'P');
    expect(ro.frame()).toContain('read-only mode');
    await ro.press('C');
    expect(ro.frame()).toContain('read-only mode');
    expect(ro.api.calls).toEqual([]);
  });

  it('against a master that predates bulk actions shows its refusal: nothing changed', async () => {
    const bulkError = new ApiError(400, "HTTP 400: unknown query parameter 'q'");
    const m = mount({ api: fakeApi({ bulkError }), size: { columns: 140, rows: 24 } });
    await m.press('3', '/', 'broken', KEY.enter, 'C');
    await m.settle();
    expect(m.frame()).toContain(
      "bulk actions need a newer master (it answered HTTP 400: unknown query parameter 'q'); nothing changed",
    );
    expect(m.frame()).not.toContain('Reset');
    expect(m.api.calls).toEqual([{ op: 'bulk-reset', target: 'broken', dryRun: true }]);
  });

  it('leaves the single-row park and the marks as they were', async () => {
    const m = mount({ api: fakeApi({ bulk }) });
    await m.press('3', '/', 'store', KEY.enter, KEY.space, KEY.space, 'p', 'why', KEY.enter);
    expect(m.frame()).toContain('Park 2 targets?');
    await m.press('y');
    await m.settle();
    expect(m.api.calls.map((c) => c.op)).toEqual(['park', 'park']);
  });
});
