import { describe, expect, it } from 'vitest';
import type { Kv } from '../kv/port.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** Fields of a record that this release does not know, as a newer release would add them. */
const NEWER = { priority: 7, labels: { team: 'storage', tier: 'gold' } } as const;

/**
 * The TaskStore contract's promise to the next release (docs/ARCHITECTURE.md §2.1): a record a
 * newer master wrote keeps the fields this release does not know when this release rewrites it.
 */
export function compatContract(fx: StoreContractFixture): void {
  const { open, claimOrFail } = fx;

  /** Adds {@link NEWER} to the record stored at `key`, as a newer master would have written it. */
  const addNewerFields = async (kv: Kv, key: string): Promise<void> => {
    const found = await kv.get(key);
    if (!found) throw new Error(`no record at ${key}`);
    await kv.put(key, JSON.stringify({ ...(JSON.parse(found.value) as object), ...NEWER }));
  };

  /** The record stored at `key`, as parsed JSON: what a newer master would read back. */
  const stored = async (kv: Kv, key: string): Promise<Record<string, unknown>> => {
    const found = await kv.get(key);
    if (!found) throw new Error(`no record at ${key}`);
    return JSON.parse(found.value) as Record<string, unknown>;
  };

  /** The newer fields come back whole, after every field this release knows, in its fixed order. */
  const expectNewerFieldsLast = (record: Record<string, unknown>, known: Record<string, unknown>): void => {
    expect(record).toMatchObject({ ...known, ...NEWER });
    expect(Object.keys(record).slice(-2)).toEqual(Object.keys(NEWER));
  };

  describe('records of a newer release', () => {
    it('keeps the fields a newer master added to a queued task through its claim and its finish, done or failed', async () => {
      const kv = await fx.h.connect();
      const a = await open();
      const ok = (await a.enqueue('compact', 'store-ok')).task;
      const bad = (await a.enqueue('compact', 'store-bad')).task;
      for (const t of [ok, bad]) await addNewerFields(kv, a.keys.task(t.id));

      // Another master, which never saw these records, claims and finishes them.
      const b = await open();
      const first = await claimOrFail(b, ['compact']);
      expect(first.task.id).toBe(ok.id);
      expectNewerFieldsLast(await stored(kv, b.keys.task(ok.id)), { state: 'running', owner: b.masterId });
      // What this release serves (the API's JSON) carries only the fields it knows.
      expect(JSON.parse(JSON.stringify(first.task))).not.toHaveProperty('priority');
      await b.finish(first, { ok: true, detail: 'compacted' });
      const done = await stored(kv, b.keys.task(ok.id));
      expectNewerFieldsLast(done, { state: 'done', detail: 'compacted' });
      expect(done).not.toHaveProperty('owner');

      const second = await claimOrFail(b, ['compact']);
      expect(second.task.id).toBe(bad.id);
      await b.finish(second, { ok: false, error: 'manifest missing', errorClass: 'target' });
      expectNewerFieldsLast(await stored(kv, b.keys.task(bad.id)), {
        state: 'failed',
        error: 'manifest missing',
        error_class: 'target',
      });
      expect(JSON.parse(JSON.stringify(await b.getTask(bad.id)))).not.toHaveProperty('labels');
    });

    it('keeps them when an orphaned task is requeued, and through its next claim and finish', async () => {
      const kv = await fx.h.connect();
      const [a, b] = [await open(), await open()];
      const { task } = await a.enqueue('compact', 'store-1');
      await addNewerFields(kv, a.keys.task(task.id));
      const lost = await claimOrFail(a, ['compact']);
      expect(lost.task.id).toBe(task.id);

      await fx.h.clock.advance(5000);
      await a.session.lease!.revoke();
      expect(await b.recoverOrphaned()).toEqual({ requeued: [task.id], failed: [] });
      const requeued = await stored(kv, b.keys.task(task.id));
      expectNewerFieldsLast(requeued, { state: 'queued', attempt: 1 });
      expect(requeued).not.toHaveProperty('owner');

      const again = await claimOrFail(b, ['compact']);
      expect(again.task).toMatchObject({ id: task.id, attempt: 2 });
      await b.finish(again, { ok: true, detail: 'ok' });
      expectNewerFieldsLast(await stored(kv, b.keys.task(task.id)), { state: 'done', attempt: 2 });
    });

    it('keeps them when a queued task is failed because its prerequisite failed', async () => {
      const kv = await fx.h.connect();
      const a = await open();
      const { task: first } = await a.enqueue('compact', 'store-1');
      const { task: then } = await a.enqueue('index_id', 'store-1', { dependsOn: [first.id] });
      await addNewerFields(kv, a.keys.task(then.id));
      await a.finish(await claimOrFail(a, ['compact']), { ok: false, error: 'e', errorClass: 'target' });

      const b = await open();
      expect(await b.claimNext(['index_id'])).toBeUndefined();
      expectNewerFieldsLast(await stored(kv, b.keys.task(then.id)), {
        state: 'failed',
        error: `dependency ${first.id} did not complete`,
      });
    });

    it('keeps the fields a newer master added to a cooldown record as failures are counted and a window opens', async () => {
      const kv = await fx.h.connect();
      const s = await open({ cooldown: { afterFailures: 3, baseSecs: 600, maxSecs: 21600, jitter: 0 } });
      const key = s.keys.cooldown('compact', 'flaky');
      await s.recordFailure('compact', 'flaky', 't1', 'e1', 'target');
      await addNewerFields(kv, key);

      // Counted by a failing finish (in the finish's own transaction)…
      await s.enqueue('compact', 'flaky');
      const f = await s.finish(await claimOrFail(s, ['compact']), { ok: false, error: 'e2', errorClass: 'target' });
      expect(f.cooldown).toMatchObject({ type: 'failure', result: { action: 'write', cooling: false } });
      expectNewerFieldsLast(await stored(kv, key), { failures: 2, until_ms: null, last_error: 'e2' });

      // …and by a reported failure, which opens the window.
      const third = await s.recordFailure('compact', 'flaky', 't3', 'e3', 'target');
      expect(third).toMatchObject({ action: 'write', cooling: true });
      const cooling = await stored(kv, key);
      expectNewerFieldsLast(cooling, { failures: 3, until_ms: fx.h.clock.now() + 600_000, last_task_id: 't3' });
      expect(await s.coolingTargets('compact')).toEqual(new Set(['flaky']));
      expect(JSON.parse(JSON.stringify(await s.getCooldown('compact', 'flaky')))).not.toHaveProperty('priority');
    });

    it('keeps the fields a newer master added to a park when the pair is parked again', async () => {
      const kv = await fx.h.connect();
      const s = await open();
      await s.park('compact', 'broken', { reason: 'first look', by: 'ops' });
      await addNewerFields(kv, s.keys.parked('compact', 'broken'));
      await fx.h.clock.advance(1000);

      const again = await s.park('compact', 'broken', { reason: 'lost fragment', by: 'token@10.0.0.7' });
      expect(again).toMatchObject({ reason: 'lost fragment', by: 'token@10.0.0.7', parked_at_ms: fx.h.clock.now() });
      expect(JSON.parse(JSON.stringify(again))).not.toHaveProperty('priority');
      expectNewerFieldsLast(await stored(kv, s.keys.parked('compact', 'broken')), {
        reason: 'lost fragment',
        by: 'token@10.0.0.7',
        parked_at_ms: fx.h.clock.now(),
        until_ms: null,
      });
      expect(await s.parkedTargets('compact')).toEqual(new Set(['broken']));
    });

    it('lists the registration of a newer master, with fields this release does not know, without error', async () => {
      const kv = await fx.h.connect();
      const s = await open();
      const newer = {
        id: 'master-newer',
        host: 'host-9',
        pid: 4242,
        version: '0.2.0',
        started_at: 1_700_000_000_000,
        pools: { general: 4, merge: 1, repair: 2 },
        kinds: ['merge_wal', 'compact', 'index_id', 'repair'],
        cluster_version: '0.1',
      };
      await kv.put(s.keys.master(newer.id), JSON.stringify(newer));
      const listed = (await s.listMasters()).find((m) => m.id === newer.id);
      expect(listed).toMatchObject({
        host: 'host-9',
        pid: 4242,
        version: '0.2.0',
        pools: newer.pools,
        kinds: newer.kinds,
      });
      expect(JSON.parse(JSON.stringify(listed))).not.toHaveProperty('cluster_version');
    });
  });
}
