import { describe, expect, it } from 'vitest';
import { ClaimLostError, StoreUnavailableError } from '../errors.js';
import { PRUNE_LOCK } from '../store/history.js';
import type { TaskStore } from '../task-store.js';
import type { Kv, RangeOptions } from '../kv/port.js';
import { interceptKv } from './harness.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** The TaskStore contract's session loss and recovery, and history, on the stores of `fx`. */
export function recoveryContract(fx: StoreContractFixture): void {
  const { open, claimOrFail, run } = fx;

  describe('session loss and recovery', () => {
    it('requeues the task of a revoked session in place and rejects its late finish', async () => {
      const [a, b] = [await open({ cooldown: { afterFailures: 1 } }), await open({ cooldown: { afterFailures: 1 } })];
      await a.enqueue('compact', 'before');
      const task = (await a.enqueue('compact', 'store-1')).task;
      await a.enqueue('compact', 'after');
      await a.finish(await claimOrFail(a, ['compact']), { ok: true, detail: 'ok' });
      const claimA = await claimOrFail(a, ['compact']);
      expect(claimA.task.id).toBe(task.id);

      await fx.h.clock.advance(5000);
      await a.session.lease!.revoke();
      const recovered = await b.recoverOrphaned();
      expect(recovered).toEqual({ requeued: [task.id], failed: [] });
      const requeued = await b.getTask(task.id);
      expect(requeued).toMatchObject({ id: task.id, state: 'queued', enqueued_at: task.enqueued_at, attempt: 1 });
      expect(requeued?.started_at).toBeUndefined();

      const claimB = await claimOrFail(b, ['compact']);
      expect(claimB.task).toMatchObject({
        id: task.id,
        enqueued_at: task.enqueued_at,
        attempt: 2,
        owner: 'master-2',
      });

      await expect(a.finish(claimA, { ok: false, error: 'late', errorClass: 'target' })).rejects.toBeInstanceOf(
        ClaimLostError,
      );
      expect(await a.getCooldown('compact', 'store-1')).toBeUndefined();
      expect((await a.getTask(task.id))?.state).toBe('running');
      await b.finish(claimB, { ok: true, detail: 'done by b' });
      expect(await a.getTask(task.id)).toMatchObject({ state: 'done', detail: 'done by b' });
    });

    it('releases its own claim whose transaction committed but whose reply was lost', async () => {
      const kv = await fx.h.connect();
      let dropReply = false;
      const lossy = interceptKv(kv, async (forward, compares, success, failure) => {
        const res = await forward(compares, success, failure);
        if (dropReply) {
          dropReply = false;
          throw new StoreUnavailableError('etcd unavailable: deadline exceeded');
        }
        return res;
      });
      const a = await open({ kv: lossy });
      const { task } = await a.enqueue('compact', 'store-1');
      dropReply = true;
      await expect(a.claimNext(['compact'])).rejects.toBeInstanceOf(StoreUnavailableError);
      expect((await a.getTask(task.id))?.state).toBe('running');
      expect(await a.recoverOrphaned()).toEqual({ requeued: [task.id], failed: [] });
      const again = await claimOrFail(a, ['compact']);
      expect(again.task).toMatchObject({ id: task.id, attempt: 2 });
      // A claim the caller does hold is left alone.
      expect(await a.recoverOrphaned()).toEqual({ requeued: [], failed: [] });
      await a.finish(again, { ok: true, detail: 'ok' });
    });

    it('leaves alone its own claim whose transaction has committed while the reply is still on its way', async () => {
      const kv = await fx.h.connect();
      let recoverDuringReply: (() => Promise<unknown>) | undefined;
      const slow = interceptKv(kv, async (forward, compares, success, failure) => {
        const res = await forward(compares, success, failure);
        // The claim is in etcd; its caller has not heard back yet when the periodic recovery runs.
        const recover = recoverDuringReply;
        recoverDuringReply = undefined;
        if (recover) await recover();
        return res;
      });
      const a = await open({ kv: slow });
      const { task } = await a.enqueue('compact', 'store-1');
      let recovered: unknown;
      recoverDuringReply = async () => (recovered = await a.recoverOrphaned());
      const claim = await claimOrFail(a, ['compact']);
      expect(recovered).toEqual({ requeued: [], failed: [] });
      expect(await a.getTask(task.id)).toMatchObject({ state: 'running', attempt: 1 });
      await a.finish(claim, { ok: true, detail: 'ran once' });
      expect(await a.getTask(task.id)).toMatchObject({ state: 'done', attempt: 1 });
    });

    it('renews a lost session and claims again under the new lease', async () => {
      const a = await open();
      const old = a.session.lease!;
      await old.revoke();
      await a.enqueue('compact', 'store-1');
      expect(await a.claimNext(['compact'])).toBeUndefined();
      await run(a.session.ready());
      expect(a.session.lease?.id).not.toBe(old.id);
      expect((await claimOrFail(a, ['compact'])).leaseId).toBe(a.session.lease!.id);
    });

    it('fails a task instead of requeueing it once it was orphaned more than maxAttempts times', async () => {
      const opts = { maxAttempts: 2 };
      const seed = await open(opts);
      const task = (await seed.enqueue('compact', 'killer')).task;
      for (let round = 1; round <= 3; round++) {
        const victim = await open(opts);
        const claim = await claimOrFail(victim, ['compact']);
        expect(claim.task.attempt).toBe(round);
        await victim.close();
        const r = await seed.recoverOrphaned();
        expect(r).toEqual(round <= 2 ? { requeued: [task.id], failed: [] } : { requeued: [], failed: [task.id] });
      }
      expect(await seed.getTask(task.id)).toMatchObject({
        state: 'failed',
        error_class: 'infrastructure',
        attempt: 3,
      });
      expect(await seed.queueDepth()).toBe(0);
      expect((await seed.enqueue('compact', 'killer')).created).toBe(true);
    });
  });

  describe('history', () => {
    const finishN = async (s: TaskStore, count: number, tag: string): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const t = (await s.enqueue('compact', `${tag}-${i}`)).task;
        await fx.h.clock.advance(1000);
        await s.finish(await claimOrFail(s, ['compact']), { ok: true, detail: 'ok' });
        ids.push(t.id);
      }
      return ids;
    };

    it('keeps the newest tasks by count, never touching active or depended-on ones', async () => {
      const s = await open({ historyLimit: 3, pruneEvery: 1000 });
      const done = await finishN(s, 6, 'd');
      const waiting = await s.enqueue('compact', 'waiting', {
        dependsOn: [done[0]!, (await s.enqueue('merge_wal', 'blocker')).task.id],
      });
      const running = await s.enqueue('compact', 'running');
      await claimOrFail(s, ['merge_wal']);
      const runningClaim = await claimOrFail(s, ['compact']);
      expect(runningClaim.task.id).toBe(running.task.id);

      expect(await s.pruneHistory()).toBe(2);
      const left = new Set((await s.listTasks({ limit: 100 })).tasks.map((t) => t.id));
      expect([...done].map((id) => left.has(id))).toEqual([true, false, false, true, true, true]);
      expect(left.has(waiting.task.id)).toBe(true);
      expect(left.has(running.task.id)).toBe(true);
    });

    it('drops terminal tasks older than the TTL, but not active ones', async () => {
      const s = await open({ historyLimit: 1000, historyTtlSecs: 3600, pruneEvery: 1000 });
      const old = await finishN(s, 3, 'old');
      const active = await s.enqueue('compact', 'active');
      await fx.h.clock.advance(3600_000);
      const fresh = await finishN(s, 1, 'fresh');
      expect(await s.pruneHistory()).toBe(3);
      const left = (await s.listTasks({ limit: 100 })).tasks.map((t) => t.id).sort();
      expect(left).toEqual([active.task.id, ...fresh].sort());
      expect(old.every((id) => !left.includes(id))).toBe(true);
    });

    it('opens without reading a history that has nothing to prune, and prunes one that has', async () => {
      const options = { historyLimit: 5, historyTtlSecs: 3600, pruneEvery: 1000 };
      const s = await open(options);
      await finishN(s, 3, 'h');
      /** A client that counts the reads of task records (not keys, not counts). */
      const reading = async (): Promise<{ kv: Kv; reads: () => number }> => {
        const kv = await fx.h.connect();
        let reads = 0;
        const spy = new Proxy(kv, {
          get(target, prop, receiver) {
            const value: unknown = Reflect.get(target, prop, receiver);
            if (prop === 'range') {
              return (prefix: string, o?: RangeOptions) => {
                if (prefix === s.keys.tasksPrefix && !o?.keysOnly && !o?.countOnly) reads++;
                return target.range(prefix, o);
              };
            }
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
        return { kv: spy, reads: () => reads };
      };
      const quiet = await reading();
      await open({ ...options, kv: quiet.kv });
      expect(quiet.reads()).toBe(0);
      // Past the TTL of the oldest task, opening reads the history and prunes it.
      await fx.h.clock.advance(3600_000);
      const due = await reading();
      const later = await open({ ...options, kv: due.kv });
      expect(due.reads()).toBeGreaterThan(0);
      expect((await later.listTasks()).total).toBe(0);
    });

    it('prunes by itself every pruneEvery finishes', async () => {
      const s = await open({ historyLimit: 2, pruneEvery: 3 });
      await finishN(s, 3, 'x');
      expect((await s.listTasks()).total).toBe(2);
    });

    it('leaves a due prune to the master already pruning', async () => {
      const s = await open({ historyLimit: 2, pruneEvery: 3 });
      const peer = await open();
      const held = await peer.tryLock(PRUNE_LOCK);
      expect(held).toBeDefined();
      await finishN(s, 3, 'x');
      expect((await s.listTasks()).total).toBe(3);
      await held?.release();
      await finishN(s, 3, 'y');
      expect((await s.listTasks()).total).toBe(2);
    });

    /** A client that counts the task records it returns (values, not keys or counts). */
    const countingRecords = async (tasksPrefix: string): Promise<{ kv: Kv; records: () => number }> => {
      const kv = await fx.h.connect();
      let records = 0;
      const counted = (key: string | undefined): void => {
        if (key?.startsWith(tasksPrefix)) records++;
      };
      const spy = new Proxy(kv, {
        get(target, prop, receiver) {
          const value: unknown = Reflect.get(target, prop, receiver);
          if (prop === 'range') {
            return async (prefix: string, o?: RangeOptions) => {
              const res = await target.range(prefix, o);
              if (!o?.keysOnly && !o?.countOnly) for (const found of res.kvs) counted(found.key);
              return res;
            };
          }
          if (prop === 'get') {
            return async (key: string) => {
              const found = await target.get(key);
              counted(found?.key);
              return found;
            };
          }
          if (prop === 'txn') {
            return async (...args: Parameters<Kv['txn']>) => {
              const res = await target.txn(...args);
              for (const r of res.results) if (r.type === 'get') counted(r.kv?.key);
              return res;
            };
          }
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      return { kv: spy, records: () => records };
    };

    it('reads, after a first prune, only the records finished elsewhere since the last one', async () => {
      const probe = await open();
      const counting = await countingRecords(probe.keys.tasksPrefix);
      const s = await open({ kv: counting.kv, historyLimit: 20, pruneEvery: 1000 });
      const peer = await open();
      await finishN(s, 25, 'first');
      expect(await s.pruneHistory()).toBe(5);

      const peerFinished = await finishN(peer, 3, 'peer');
      await finishN(s, 2, 'own');
      const before = counting.records();
      expect(await s.pruneHistory()).toBe(5);
      expect(counting.records() - before).toBe(3);
      const left = new Set((await s.listTasks({ limit: 100 })).tasks.map((t) => t.id));
      expect(left.size).toBe(20);
      expect(peerFinished.every((id) => left.has(id))).toBe(true);
    });

    it('reads again a record that changed since a prune read it', async () => {
      const s = await open({ historyLimit: 3, pruneEvery: 1000 });
      const peer = await open();
      const [oldest] = await finishN(s, 1, 'dependency');
      await finishN(s, 3, 'newer');
      const dependent = await s.enqueue('compact', 'dependent', { dependsOn: [oldest!] });
      // Beyond the limit, but the queued task waits on it.
      expect(await s.pruneHistory()).toBe(0);

      await fx.h.clock.advance(1000);
      const claim = await claimOrFail(peer, ['compact']);
      expect(claim.task.id).toBe(dependent.task.id);
      await peer.finish(claim, { ok: true, detail: 'ok' });
      // Done now, it protects nothing: the dependency and the next oldest go.
      expect(await s.pruneHistory()).toBe(2);
      expect(await s.getTask(oldest!)).toBeUndefined();
    });
  });
}
