import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../errors.js';
import { isParked } from '../model.js';
import { seededRandom } from '../random.js';
import { interceptKv } from './harness.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** The TaskStore contract's parks and the failure cooldown: what keeps the sweeps off a target, on the stores of `fx`. */
export function gatesContract(fx: StoreContractFixture): void {
  const { open, claimOrFail, run } = fx;

  describe('parks', () => {
    it('parks a target with who, when and why, lists it, and releases it', async () => {
      const s = await open();
      await fx.h.clock.advance(5000);
      const record = await s.park('compact', 'broken-1', {
        reason: 'manifest names a lost fragment',
        by: 'token@10.0.0.7',
      });
      expect(record).toEqual({
        kind: 'compact',
        target: 'broken-1',
        reason: 'manifest names a lost fragment',
        by: 'token@10.0.0.7',
        parked_at_ms: fx.h.clock.now(),
        until_ms: null,
      });
      await s.park('merge_wal', 'broken-2', { reason: 'r', by: '127.0.0.1' });
      expect(await s.getPark('compact', 'broken-1')).toEqual(record);
      expect(await s.getPark('merge_wal', 'broken-1')).toBeUndefined();
      expect((await s.listParks()).map((p) => `${p.kind}/${p.target}`)).toEqual([
        'compact/broken-1',
        'merge_wal/broken-2',
      ]);
      expect(await s.listParks({ kind: 'compact' })).toEqual([record]);
      expect(await s.parkedTargets('compact')).toEqual(new Set(['broken-1']));
      expect(await s.unpark('compact', 'broken-1')).toBe(true);
      expect(await s.unpark('compact', 'broken-1')).toBe(false);
      expect(await s.getPark('compact', 'broken-1')).toBeUndefined();
      expect(await s.parkedTargets('compact')).toEqual(new Set());
    });

    it('lets a park lapse at its until_ms, keeping its key until released', async () => {
      const s = await open();
      const until = fx.h.clock.now() + 60_000;
      const record = await s.park('merge_wal', 'x', { reason: 'maintenance window', by: '::1', untilMs: until });
      expect(record.until_ms).toBe(until);
      expect(isParked(record, until - 1)).toBe(true);
      expect(await s.parkedTargets('merge_wal')).toEqual(new Set(['x']));
      await fx.h.clock.advance(60_000);
      expect(await s.parkedTargets('merge_wal')).toEqual(new Set());
      expect(isParked(await s.getPark('merge_wal', 'x'), fx.h.clock.now())).toBe(false);
      expect(await s.listParks()).toEqual([record]);
      expect(await s.unpark('merge_wal', 'x')).toBe(true);
    });

    it('replaces an earlier park of the same pair, sanitising and bounding its text', async () => {
      const s = await open();
      await s.park('compact', 'x', { reason: 'first', by: 'a' });
      const second = await s.park('compact', 'x', { reason: `\u001b[31mred\u001b[0m\n${'y'.repeat(600)}`, by: 'b' });
      expect(second.reason.startsWith('red y')).toBe(true);
      expect(second.reason.length).toBe(512);
      expect(await s.listParks()).toEqual([second]);
    });

    it('rejects an empty reason, an until not in the future and a bad target, writing nothing', async () => {
      const s = await open();
      await expect(s.park('compact', 'x', { reason: '', by: 'a' })).rejects.toMatchObject({ field: 'reason' });
      await expect(s.park('compact', 'x', { reason: '\u0007\u0007', by: 'a' })).rejects.toMatchObject({
        field: 'reason',
      });
      await expect(s.park('compact', 'x', { reason: 'r', by: 'a', untilMs: fx.h.clock.now() })).rejects.toMatchObject({
        field: 'untilMs',
      });
      await expect(s.park('compact', '../x', { reason: 'r', by: 'a' })).rejects.toMatchObject({ field: 'target' });
      expect(await s.listParks()).toEqual([]);
    });

    it('keeps the park when a manual task succeeds, while the success clears the cooldown', async () => {
      const s = await open({ cooldown: { afterFailures: 1, maxPercent: 100 } });
      await s.recordFailure('compact', 'broken', 't0', 'Not found', 'target');
      await s.park('compact', 'broken', { reason: 'known broken', by: 'a' });
      await s.enqueue('compact', 'broken', { source: 'manual' });
      const ok = await s.finish(await claimOrFail(s, ['compact']), { ok: true, detail: 'fixed' });
      expect(ok.cooldown).toEqual({ type: 'cleared', existed: true });
      expect(await s.getCooldown('compact', 'broken')).toBeUndefined();
      expect(await s.parkedTargets('compact')).toEqual(new Set(['broken']));
    });

    it('leaves parked targets out of the fleet guard: parking broken stores lets the next one cool', async () => {
      const s = await open({ cooldown: { afterFailures: 1, maxPercent: 25 } });
      await s.putStats(
        Array.from({ length: 8 }, (_, i) => ({
          name: `s${i}`,
          pending_wal_generations: 10,
          fragment_count: 1,
          row_count: 1,
          owners: [],
          scanned_at: 0,
        })),
      );
      const cools = async (i: number): Promise<boolean> => {
        const r = await s.recordFailure('compact', `s${i}`, `t${i}`, 'e', 'target');
        return r.action === 'write' && r.cooling;
      };
      expect([await cools(0), await cools(1), await cools(2)]).toEqual([true, true, true]);
      await s.park('compact', 's0', { reason: 'broken', by: 'a' });
      await s.park('compact', 's1', { reason: 'broken', by: 'a' });
      // Cooling others: s2 (and then s3); the parked s0 and s1 do not count.
      expect([await cools(3), await cools(4), await cools(5)]).toEqual([true, true, false]);
    });
  });

  describe('cooldown', () => {
    const policy = { afterFailures: 2, baseSecs: 600, maxSecs: 21600, jitter: 0.1 };

    it('does not cool a target after one failure below a threshold of 2, and does after two', async () => {
      const s = await open({ cooldown: policy });
      await s.recordFailure('compact', 'broken', 't1', 'Not found: data/x.lance', 'target');
      expect(await s.listCooldowns()).toEqual([]);
      expect(await s.coolingTargets('compact')).toEqual(new Set());
      const below = await s.listCooldowns({ all: true });
      expect(below).toMatchObject([{ target: 'broken', failures: 1, until_ms: null }]);

      const second = await s.recordFailure('compact', 'broken', 't2', 'Not found: data/x.lance', 'target');
      expect(second).toMatchObject({ action: 'write', cooling: true });
      const [c] = await s.listCooldowns();
      expect(c).toMatchObject({ kind: 'compact', target: 'broken', failures: 2, last_task_id: 't2' });
      expect(c!.until_ms).toBeGreaterThan(fx.h.clock.now() + 0.9 * 600_000 - 1);
      expect(c!.until_ms).toBeLessThanOrEqual(fx.h.clock.now() + 600_000);
      expect(await s.coolingTargets('compact')).toEqual(new Set(['broken']));
      expect(await s.coolingTargets('merge_wal')).toEqual(new Set());
    });

    it('counts on after a window lapses: the next failure is N+1 with a doubled window', async () => {
      // Short real windows so that on etcd a lease as short as the window would really expire.
      const s = await open({ cooldown: { afterFailures: 2, baseSecs: 1, maxSecs: 3600, jitter: 0 } });
      await s.recordFailure('merge_wal', 'broken', 't1', 'e1', 'target');
      await s.recordFailure('merge_wal', 'broken', 't2', 'e2', 'target');
      const first = await s.getCooldown('merge_wal', 'broken');
      expect(first!.until_ms! - fx.h.clock.now()).toBe(1000);
      await fx.h.elapse(3000);
      expect(await s.coolingTargets('merge_wal')).toEqual(new Set());
      const third = await s.recordFailure('merge_wal', 'broken', 't3', 'e3', 'target');
      expect(third).toMatchObject({ action: 'write', cooling: true, windowMs: 2000, record: { failures: 3 } });
      expect((await s.getCooldown('merge_wal', 'broken'))?.failures).toBe(3);
    });

    it('loses no count among 12 concurrent failures', async () => {
      const s = await open({ cooldown: { afterFailures: 100 } });
      await run(
        Promise.all(Array.from({ length: 12 }, (_, i) => s.recordFailure('compact', 'hot', `t${i}`, 'err', 'target'))),
      );
      expect((await s.getCooldown('compact', 'hot'))?.failures).toBe(12);
    });

    it('commits concurrent failures of one target on one instance together, each with its own decision', async () => {
      const kv = await fx.h.connect();
      let writes = 0;
      const counting = interceptKv(kv, (forward, compares, success, failure) => {
        if (success.some((op) => op.type === 'put' && op.key.includes('/cooldown/'))) writes++;
        return forward(compares, success, failure);
      });
      const s = await open({ kv: counting, cooldown: { afterFailures: 100 } });
      const results = await run(
        Promise.all(Array.from({ length: 12 }, (_, i) => s.recordFailure('compact', 'hot', `t${i}`, 'err', 'target'))),
      );
      // The first call's CAS goes alone; the 11 that arrive while it is in flight share one.
      expect(writes).toBe(2);
      expect(results.map((r) => (r.action === 'write' ? r.record.failures : 0))).toEqual(
        Array.from({ length: 12 }, (_, i) => i + 1),
      );
      expect((await s.getCooldown('compact', 'hot'))?.failures).toBe(12);
    });

    it('loses no count among 64 concurrent failures spread over 6 instances', async () => {
      const six = await Promise.all(Array.from({ length: 6 }, () => open({ cooldown: { afterFailures: 100 } })));
      const results = await run(
        Promise.all(
          Array.from({ length: 64 }, (_, i) => six[i % 6]!.recordFailure('merge_wal', 'hot', `t${i}`, 'err', 'target')),
        ),
      );
      expect(results.every((r) => r.action === 'write')).toBe(true);
      expect((await six[0]!.getCooldown('merge_wal', 'hot'))?.failures).toBe(64);
    });

    it('counts the same task id once', async () => {
      const s = await open({ cooldown: policy });
      await s.recordFailure('compact', 'x', 'same', 'e', 'target');
      const again = await s.recordFailure('compact', 'x', 'same', 'e', 'target');
      expect(again.action).toBe('duplicate');
      expect((await s.getCooldown('compact', 'x'))?.failures).toBe(1);
    });

    it('counts a failed finish and deletes the record on a successful one', async () => {
      const s = await open({ cooldown: policy });
      for (let i = 0; i < 2; i++) {
        await s.enqueue('compact', 'flaky');
        const f = await s.finish(await claimOrFail(s, ['compact']), {
          ok: false,
          error: `e${i}`,
          errorClass: 'target',
        });
        expect(f.cooldown).toMatchObject({
          type: 'failure',
          result: { action: 'write', record: { failures: i + 1 } },
        });
      }
      expect(await s.coolingTargets('compact')).toEqual(new Set(['flaky']));
      await s.enqueue('compact', 'flaky', { source: 'manual' });
      const ok = await s.finish(await claimOrFail(s, ['compact']), { ok: true, detail: 'fixed' });
      expect(ok.cooldown).toEqual({ type: 'cleared', existed: true });
      expect(await s.getCooldown('compact', 'flaky')).toBeUndefined();
    });

    it('ignores infrastructure failures unless configured to count them', async () => {
      const s = await open({ cooldown: policy });
      expect(await s.recordFailure('compact', 'x', 't1', 'refused', 'infrastructure')).toEqual({
        action: 'ignore',
        reason: 'class',
      });
      expect(await s.getCooldown('compact', 'x')).toBeUndefined();
      const counting = await open({ cooldown: { ...policy, countInfrastructure: true } });
      await counting.recordFailure('compact', 'x', 't2', 'refused', 'infrastructure');
      expect((await s.getCooldown('compact', 'x'))?.failures).toBe(1);
    });

    it('ignores kinds outside the policy and everything when disabled', async () => {
      const s = await open({ cooldown: { ...policy, kinds: ['compact'] } });
      expect(await s.recordFailure('merge_wal', 'x', 't1', 'e', 'target')).toEqual({
        action: 'ignore',
        reason: 'kind',
      });
      const off = await open({ cooldown: { afterFailures: 0 } });
      expect(await off.recordFailure('compact', 'x', 't1', 'e', 'target')).toEqual({
        action: 'ignore',
        reason: 'disabled',
      });
      expect(await s.listCooldowns({ all: true })).toEqual([]);
    });

    it('lets no window an earlier policy opened gate a sweep once the cooldown is off or the kind is dropped', async () => {
      const before = await open({ cooldown: { ...policy, afterFailures: 1 } });
      await before.recordFailure('compact', 'broken', 't1', 'e', 'target');
      await before.recordFailure('merge_wal', 'broken', 't2', 'e', 'target');
      expect(await before.coolingTargets('compact')).toEqual(new Set(['broken']));
      // Masters restarted with TASK_COOLDOWN_AFTER_FAILURES=0, or TASK_COOLDOWN_KINDS=merge_wal.
      const off = await open({ cooldown: { ...policy, afterFailures: 0 } });
      expect(await off.coolingTargets('compact')).toEqual(new Set());
      expect(await off.coolingTargets('merge_wal')).toEqual(new Set());
      const mergesOnly = await open({ cooldown: { ...policy, afterFailures: 1, kinds: ['merge_wal'] } });
      expect(await mergesOnly.coolingTargets('compact')).toEqual(new Set());
      expect(await mergesOnly.coolingTargets('merge_wal')).toEqual(new Set(['broken']));
      // The records stay, for the API to show and an operator to reset: only the gate is off.
      expect((await off.listCooldowns()).map((c) => c.kind).sort()).toEqual(['compact', 'merge_wal']);
    });

    it('opens no window past MAX_PERCENT of the fleet, but keeps the count', async () => {
      const s = await open({ cooldown: { afterFailures: 1, maxPercent: 25 } });
      for (let i = 0; i < 8; i++) {
        await s.putStats([
          {
            name: `s${i}`,
            pending_wal_generations: 10,
            fragment_count: 1,
            row_count: 1,
            owners: [],
            scanned_at: 0,
          },
        ]);
      }
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await s.recordFailure('compact', `s${i}`, `t${i}`, 'e', 'target'));
      expect(results.map((r) => r.action === 'write' && r.cooling)).toEqual([true, true, true, false]);
      expect(results[3]).toMatchObject({
        action: 'write',
        guardOverflow: true,
        record: { failures: 1, until_ms: null },
      });
      expect((await s.coolingTargets('compact')).size).toBe(3);
    });

    it('sanitises and bounds the stored last error', async () => {
      const s = await open({ cooldown: policy });
      await s.recordFailure('compact', 'x', 't1', `\u001b[31mred\u001b[0m\n${'y'.repeat(2000)}`, 'target');
      const c = await s.getCooldown('compact', 'x');
      expect(c!.last_error.length).toBeLessThanOrEqual(512);
      // eslint-disable-next-line no-control-regex -- asserting that no control character survived
      expect(c!.last_error).not.toMatch(/[\u0000-\u001f]/);
      expect(c!.last_error.startsWith('red y')).toBe(true);
    });

    it('never lets a sweep enqueue a target past its threshold: a failure and its count commit together', async () => {
      // A sweep (cooling set, active set, enqueue) runs at random points around every finish
      // transaction: before it, right after it commits with its reply still on the way, or both.
      // Attempts before the first window must equal the threshold whatever the interleaving.
      const threshold = 3;
      for (let seed = 1; seed <= 12; seed++) {
        const random = seededRandom(seed);
        const kv = await fx.h.connect();
        const target = `broken-${seed}`;
        let sweepAt: 'before' | 'after' | 'both' | undefined;
        const sweeper = await open({ cooldown: { afterFailures: threshold, jitter: 0 } });
        const sweep = async (): Promise<void> => {
          const [cooling, active] = await Promise.all([
            sweeper.coolingTargets('merge_wal'),
            sweeper.activeTargets('merge_wal'),
          ]);
          if (!cooling.has(target) && !active.has(target)) {
            await sweeper.enqueue('merge_wal', target, { source: 'sweep' });
          }
        };
        const racing = interceptKv(kv, async (forward, compares, success, failure) => {
          // Only finish transactions carry a terminal task record.
          const finishing = success.some((op) => op.type === 'put' && op.value.includes('"finished_at"'));
          const at = finishing ? sweepAt : undefined;
          if (at === 'before' || at === 'both') await sweep();
          const res = await forward(compares, success, failure);
          if (at === 'after' || at === 'both') await sweep();
          return res;
        });
        const worker = await open({ kv: racing, cooldown: { afterFailures: threshold, jitter: 0 } });
        await sweeper.enqueue('merge_wal', target, { source: 'sweep' });
        let attempts = 0;
        for (;;) {
          const claim = await worker.claimNext(['merge_wal']);
          if (!claim) break;
          attempts++;
          sweepAt = (['before', 'after', 'both'] as const)[Math.floor(random.next() * 3)];
          await worker.finish(claim, { ok: false, error: 'Not found: x.lance', errorClass: 'target' });
          sweepAt = undefined;
          await sweep();
          if (attempts > threshold + 2) break;
        }
        expect({ seed, attempts }).toEqual({ seed, attempts: threshold });
        expect(await worker.getCooldown('merge_wal', target)).toMatchObject({ failures: threshold });
      }
    });

    it('commits a failing finish with its count or not at all, whichever Kv call fails', async () => {
      const kv = await fx.h.connect();
      let failAt = -1;
      let calls = 0;
      let lostReply = false;
      const broken = (): StoreUnavailableError => new StoreUnavailableError('etcd unavailable: injected');
      // Counts the calls a finish makes; the failAt-th throws, either before reaching the store
      // or, for a transaction, after committing (the reply is lost).
      const faulty: typeof kv = {
        ...interceptKv(kv, async (forward, compares, success, failure) => {
          if (++calls === failAt) {
            if (!lostReply) throw broken();
            await forward(compares, success, failure);
            throw broken();
          }
          return forward(compares, success, failure);
        }),
        get: async (key) => {
          if (++calls === failAt) throw broken();
          return kv.get(key);
        },
        grant: async (ttl, o) => {
          if (++calls === failAt) throw broken();
          return kv.grant(ttl, o);
        },
      };
      const s = await open({ kv: faulty, cooldown: { afterFailures: 1, maxPercent: 100 } });
      const reader = await open();
      for (const lose of [false, true]) {
        for (let at = 1; at <= 4; at++) {
          const target = `t-${at}-${lose}`;
          await s.enqueue('compact', target);
          const claim = await claimOrFail(s, ['compact']);
          const before = (await reader.getCooldown('compact', target))?.failures ?? 0;
          [calls, failAt, lostReply] = [0, at, lose];
          const done = await s.finish(claim, { ok: false, error: 'Not found: x.lance', errorClass: 'target' }).then(
            () => true,
            (err: unknown) => {
              if (!(err instanceof StoreUnavailableError)) throw err;
              return false;
            },
          );
          failAt = -1;
          const task = await reader.getTask(claim.task.id);
          const failures = (await reader.getCooldown('compact', target))?.failures ?? 0;
          // Both or neither, whatever the caller heard.
          expect({ at, lose, state: task?.state, counted: failures - before }).toEqual(
            task?.state === 'failed'
              ? { at, lose, state: 'failed', counted: 1 }
              : { at, lose, state: 'running', counted: 0 },
          );
          if (done) expect(task?.state).toBe('failed');
          if (task?.state === 'running') await s.finish(claim, { ok: true, detail: 'retried' });
        }
      }
    });

    it('resets one record or all records of a kind', async () => {
      const s = await open({ cooldown: { afterFailures: 1 } });
      for (const t of ['a', 'b', 'c']) await s.recordFailure('compact', t, `t-${t}`, 'e', 'target');
      await s.recordFailure('merge_wal', 'a', 't-m', 'e', 'target');
      expect(await s.clearCooldown('compact', 'a')).toBe(true);
      expect(await s.clearCooldown('compact', 'a')).toBe(false);
      expect(await s.clearCooldowns('compact')).toBe(2);
      expect((await s.listCooldowns()).map((c) => `${c.kind}/${c.target}`)).toEqual(['merge_wal/a']);
    });
  });
}
