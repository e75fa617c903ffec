import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CAPACITY_BUCKET_MS,
  CAPACITY_HOUR_MS,
  CAPACITY_TOP,
  CapacityLedger,
  type CapacityRecord,
  CapacityRecordSchema,
  fleetCapacity,
} from './capacity.js';

const T0 = Date.parse('2026-12-06T10:00:00Z');
const MIN = 60_000;
const slots = new Map([
  ['merge_wal', 8],
  ['compact', 4],
]);

describe('the capacity ledger', () => {
  it('answers slot time by outcome and the stores that used it, biggest first', () => {
    const l = new CapacityLedger();
    for (let i = 0; i < 5; i++) l.record('merge_wal', 'broken', 360, true, T0 + i * MIN);
    for (let i = 0; i < 20; i++) l.record('merge_wal', `ok${i}`, 30, false, T0 + i * MIN);
    const [compact, merge] = fleetCapacity([l.snapshot('m1', T0 + 30 * MIN)], slots, T0 + 30 * MIN);
    expect(compact).toMatchObject({ kind: 'compact', slots: 4, tasks: 0, failed_share: 0, top: [] });
    expect(merge).toMatchObject({
      kind: 'merge_wal',
      slots: 8,
      busy_seconds: { success: 600, failed: 1800 },
      failed_share: 0.75,
      tasks: 25,
      failed_tasks: 5,
    });
    expect(merge?.top[0]).toEqual({
      target: 'broken',
      busy_seconds: 1800,
      failed_seconds: 1800,
      tasks: 5,
      failed_tasks: 5,
    });
    expect(merge?.top).toHaveLength(CAPACITY_TOP);
  });

  it('forgets what is older than an hour', () => {
    const l = new CapacityLedger();
    l.record('merge_wal', 'old', 100, true, T0);
    l.record('merge_wal', 'new', 10, false, T0 + 50 * MIN);
    const later = T0 + CAPACITY_HOUR_MS + CAPACITY_BUCKET_MS;
    const [merge] = fleetCapacity([l.snapshot('m1', later)], new Map(), later);
    expect(merge?.busy_seconds).toEqual({ success: 10, failed: 0 });
    expect(merge?.top.map((s) => s.target)).toEqual(['new']);
    expect(l.isEmpty(T0 + 3 * CAPACITY_HOUR_MS)).toBe(true);
  });

  it('sums every master, a stopped one too until its record is an hour old', () => {
    const a = new CapacityLedger();
    const b = new CapacityLedger();
    a.record('merge_wal', 's1', 50, false, T0);
    b.record('merge_wal', 's1', 70, true, T0 + MIN);
    b.record('merge_wal', 's2', 5, false, T0 + MIN);
    const records = [a.snapshot('a', T0 + 2 * MIN), b.snapshot('b', T0 + 2 * MIN)];
    const [merge] = fleetCapacity(records, new Map(), T0 + 10 * MIN);
    expect(merge?.top[0]).toEqual({ target: 's1', busy_seconds: 120, failed_seconds: 70, tasks: 2, failed_tasks: 1 });
    expect(fleetCapacity(records, new Map(), T0 + 2 * MIN + CAPACITY_HOUR_MS + 1)).toEqual([]);
  });

  it('keeps at most 200 stores per kind and bucket, dropping the ones that used the least', () => {
    const l = new CapacityLedger();
    l.record('merge_wal', 'hog', 1000, true, T0);
    for (let i = 0; i < 1000; i++) l.record('merge_wal', `s${i}`, 1, false, T0 + 1);
    const record = l.snapshot('m', T0 + 2);
    expect(record.kinds.merge_wal?.top[0]?.target).toBe('hog');
    expect(record.kinds.merge_wal?.buckets).toEqual([[T0, 1000, 1000, 1001, 1]]);
  });

  it('writes a record its schema reads back, small whatever the fleet', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.double({ min: 0, max: 3600, noNaN: true }), fc.boolean()),
          {
            maxLength: 300,
          },
        ),
        (tasks) => {
          const l = new CapacityLedger();
          tasks.forEach(([store, s, failed], i) => l.record('merge_wal', `s${store}`, s, failed, T0 + i * 1000));
          const record = l.snapshot('m', T0 + tasks.length * 1000);
          expect(CapacityRecordSchema.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
          expect(JSON.stringify(record).length).toBeLessThan(8_000);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('keeps the fields a newer release adds to a record', () => {
    const r = { master_id: 'm', written_at: T0, bucket_ms: CAPACITY_BUCKET_MS, kinds: {}, region: 'eu' };
    expect((CapacityRecordSchema.parse(r) as CapacityRecord & { region?: string }).region).toBe('eu');
  });

  it('counts its revisions, so that a writer knows whether anything was counted since its last write', () => {
    const l = new CapacityLedger();
    expect(l.revision).toBe(0);
    l.record('compact', 'x', 1, false, T0);
    l.snapshot('m', T0);
    expect(l.revision).toBe(1);
  });
});
