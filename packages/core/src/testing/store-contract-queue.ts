import { describe, expect, it } from 'vitest';
import { createIdGenerator } from '../ids.js';
import { seededRandom } from '../random.js';
import { rendezvousOwner } from './rendezvous-owner.js';
import type { TaskStore } from '../task-store.js';
import { interceptKv } from './harness.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** The TaskStore contract's enqueue, claims, listing and dependencies, on the stores of `fx`. */
export function queueContract(fx: StoreContractFixture): void {
  const { open, openFed, claimOrFail, drain } = fx;

  describe('enqueue', () => {
    it('dedupes concurrent enqueues from two instances to one task id', async () => {
      const [a, b] = [await open(), await open()];
      const results = await Promise.all([
        a.enqueue('merge_wal', 'store-1', { source: 'sweep' }),
        b.enqueue('merge_wal', 'store-1', { source: 'sweep' }),
        a.enqueue('merge_wal', 'store-1'),
        b.enqueue('merge_wal', 'store-1'),
      ]);
      expect(new Set(results.map((r) => r.task.id)).size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(await a.queueDepth('merge_wal')).toBe(1);
    });

    it('returns the existing record unchanged on a dedupe hit', async () => {
      const s = await open();
      const first = await s.enqueue('compact', 'store-1', { source: 'sweep' });
      await fx.h.clock.advance(1000);
      const second = await s.enqueue('compact', 'store-1', { source: 'manual' });
      expect(second.created).toBe(false);
      expect(second.task).toEqual(first.task);
      expect(await s.getTask(first.task.id)).toEqual(first.task);
    });

    it('never dedupes a task with dependencies', async () => {
      const s = await open();
      const dep = await s.enqueue('merge_wal', 'store-1');
      const x = await s.enqueue('compact', 'store-1', { dependsOn: [dep.task.id] });
      const y = await s.enqueue('compact', 'store-1', { dependsOn: [dep.task.id] });
      expect([x.created, y.created]).toEqual([true, true]);
      expect(x.task.id).not.toBe(y.task.id);
      expect(x.task.depends_on).toEqual([dep.task.id]);
    });

    it('dedupes again once the previous task has finished', async () => {
      const s = await open();
      const first = await s.enqueue('compact', 'store-1');
      await s.finish(await claimOrFail(s, ['compact']), { ok: true, detail: 'ok' });
      const second = await s.enqueue('compact', 'store-1');
      expect(second.created).toBe(true);
      expect(second.task.id).not.toBe(first.task.id);
    });

    it('rejects a target outside the naming rule and writes nothing', async () => {
      const s = await open();
      for (const bad of ['../x', '', 'a/b', 'x'.repeat(256), 'bad\u001bname', '.hidden']) {
        await expect(s.enqueue('compact', bad)).rejects.toMatchObject({ field: 'target' });
      }
      expect(await s.queueDepth()).toBe(0);
      expect((await s.listTasks()).total).toBe(0);
    });
  });

  describe('claims', () => {
    it('lets exactly one of two concurrent claims win', async () => {
      const [a, b] = [await open(), await open()];
      await a.enqueue('compact', 'store-1');
      const claims = await Promise.all([a.claimNext(['compact']), b.claimNext(['compact'])]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const won = claims.find(Boolean)!;
      expect(won.task).toMatchObject({ state: 'running', attempt: 1 });
      expect(await a.queueDepth()).toBe(0);
    });

    it('claims its own share of the queue first when other masters are registered, then theirs', async () => {
      const info = { host: 'test', pid: 1, version: 'test', started_at: 0, pools: { general: 1 } };
      const a = await open({ info });
      const b = await open({ info });
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await a.enqueue('compact', `share-${i}`)).task.id);
      const peers = [a.masterId, b.masterId];
      const mine = ids.filter((id) => rendezvousOwner(id, peers) === a.masterId);
      const theirs = ids.filter((id) => rendezvousOwner(id, peers) !== a.masterId);
      expect(mine.length).toBeGreaterThan(0);
      expect(theirs.length).toBeGreaterThan(0);
      const order: string[] = [];
      for (let claim = await a.claimNext(['compact']); claim; claim = await a.claimNext(['compact'])) {
        order.push(claim.task.id);
      }
      // Own share oldest first, then the peer's (it claimed none) from its young end, where the
      // peer, working from the old end, would reach them last.
      expect(order).toEqual([...mine, ...[...theirs].reverse()]);
    });

    it('claims a dead master’s requeued task in FIFO order, not after its own share', async () => {
      const info = { host: 'test', pid: 1, version: 'test', started_at: 0, pools: { general: 1 } };
      const a = await open({ info });
      const b = await open({ info });
      const peers = [a.masterId, b.masterId];
      // The oldest task is b's (a claims the a-owned ones before it, emptying the queue of them).
      let orphan: string | undefined;
      let older = 0;
      for (; !orphan; older++) {
        const { task } = await a.enqueue('compact', `dead-${older}`);
        if (rendezvousOwner(task.id, peers) === b.masterId) orphan = task.id;
      }
      // a reads the live masters (b among them) when it claims: here its own share, every task
      // but b's, and nothing of a kind with none queued.
      expect(await a.claimNext(['index_id'])).toBeUndefined();
      for (let i = 1; i < older; i++) expect(await a.claimNext(['compact'])).toBeDefined();
      expect((await b.claimNext(['compact']))?.task.id).toBe(orphan);
      // Younger work of a's own share is queued when b dies.
      let mine: string | undefined;
      for (let i = 0; !mine; i++) {
        const { task } = await a.enqueue('compact', `alive-${i}`);
        if (rendezvousOwner(task.id, peers) === a.masterId) mine = task.id;
      }
      await b.close();
      expect((await a.recoverOrphaned()).requeued).toEqual([orphan]);
      // b is gone: its share is a's now, and the requeued task is the oldest.
      expect((await a.claimNext(['compact']))?.task.id).toBe(orphan);
    });

    it('reads the live masters again when its queue watch shows a requeued orphan', async () => {
      const info = { host: 'test', pid: 1, version: 'test', started_at: 0, pools: { general: 1 } };
      const [a, b, c] = [await open({ info }), await open({ info })].concat(await open({ info })) as [
        TaskStore,
        TaskStore,
        TaskStore,
      ];
      const all = [a.masterId, b.masterId, c.masterId];
      const afterB = [a.masterId, c.masterId];
      /** Enqueues until a task's id passes `wanted`; those that do not are claimed and finished. */
      const enqueueUntil = async (wanted: (id: string) => boolean): Promise<string> => {
        for (let i = 0; ; i++) {
          const { task } = await a.enqueue('compact', `requeued-${i}`);
          if (wanted(task.id)) return task.id;
          await a.finish(await claimOrFail(a, ['compact']), { ok: true, detail: 'ok' });
        }
      };
      // b's share while b lives, c's once it is gone.
      const orphan = await enqueueUntil(
        (id) => rendezvousOwner(id, all) === b.masterId && rendezvousOwner(id, afterB) === c.masterId,
      );
      expect((await b.claimNext(['compact']))?.task.id).toBe(orphan);
      const enqueuedAt = fx.h.clock.now();
      await fx.h.clock.advance(4000);
      expect(await c.claimNext(['index_id'])).toBeUndefined(); // c reads the live masters: b among them
      const mine = await enqueueUntil((id) => rendezvousOwner(id, all) === c.masterId);
      await b.close();
      expect((await a.recoverOrphaned()).requeued).toEqual([orphan]);
      await fx.h.clock.advance(2000); // c's read of the masters is 2 s old, the orphan's id 6 s
      expect(fx.h.clock.now() - enqueuedAt).toBeGreaterThan(5000);
      c.observeQueue([{ type: 'put', key: c.keys.queue('compact', orphan), value: '', modRevision: 0 }]);
      // b is gone for c too: the orphan is in c's share now, and older than c's own task.
      expect((await c.claimNext(['compact']))?.task.id).toBe(orphan);
      expect((await c.claimNext(['compact']))?.task.id).toBe(mine);
    });

    it('keeps two fed masters draining a deep queue each to its own share', async () => {
      const info = { host: 'test', pid: 1, version: 'test', started_at: 0, pools: { general: 1 } };
      const [a, b] = [await openFed({ info }), await openFed({ info })];
      // Past the first page (256 ids per live master): each share runs on beyond it, and a
      // master that has taken its share of the page must read on rather than take the other's.
      const ids: string[] = [];
      for (let i = 0; i < 768; i += 64) {
        const batch = await Promise.all(Array.from({ length: 64 }, (_, j) => a.enqueue('compact', `deep-${i + j}`)));
        ids.push(...batch.map((r) => r.task.id));
      }
      const peers = [a.masterId, b.masterId];
      const shares = new Map([a, b].map((s) => [s, ids.filter((id) => rendezvousOwner(id, peers) === s.masterId)]));
      const taken = new Map<TaskStore, string[]>([
        [a, []],
        [b, []],
      ]);
      for (let i = 0; i < 300; i++) {
        for (const s of [a, b]) taken.get(s)!.push((await claimOrFail(s, ['compact'])).task.id);
      }
      for (const s of [a, b]) expect(taken.get(s)).toEqual(shares.get(s)!.slice(0, 300));
    });

    it('never runs a merge_wal and a compact on the same target at once', async () => {
      const [a, b] = [await open(), await open()];
      await a.enqueue('merge_wal', 'store-1');
      await a.enqueue('compact', 'store-1');
      const merge = await claimOrFail(a, ['merge_wal']);
      expect(await b.claimNext(['compact'])).toBeUndefined();
      expect(await b.claimNext(['merge_wal', 'compact'])).toBeUndefined();
      await a.finish(merge, { ok: true, detail: 'merged' });
      const compact = await claimOrFail(b, ['compact']);
      expect(compact.task).toMatchObject({ kind: 'compact', target: 'store-1' });
    });

    it('never runs two tasks of one target at once, even when two instances race for them', async () => {
      for (let round = 0; round < 5; round++) {
        const [a, b] = [await open(), await open()];
        await a.enqueue('merge_wal', `race-${round}`);
        await a.enqueue('compact', `race-${round}`);
        const claims = await Promise.all([a.claimNext(['merge_wal']), b.claimNext(['compact'])]);
        expect(claims.filter(Boolean)).toHaveLength(1);
      }
    });

    it('does not claim a task that changed between its read and the claim transaction', async () => {
      const kv = await fx.h.connect();
      let interfere: (() => Promise<void>) | undefined;
      const paused = interceptKv(kv, async (forward, compares, success, failure) => {
        // The claim transaction is the first one with compares (records are read ahead without).
        const hook = compares.length > 0 ? interfere : undefined;
        if (hook) {
          interfere = undefined;
          await hook();
        }
        return forward(compares, success, failure);
      });
      const a = await open({ kv: paused });
      const b = await open();
      const { task } = await b.enqueue('compact', 'store-1');
      interfere = async () => {
        // Between A's read of the queued task and A's claim: B runs it to completion.
        await b.finish(await claimOrFail(b, ['compact']), { ok: true, detail: 'by b' });
      };
      expect(await a.claimNext(['compact'])).toBeUndefined();
      expect(await a.getTask(task.id)).toMatchObject({ state: 'done', detail: 'by b', attempt: 1 });
    });

    it('reaches a compact queued behind 30 merge_wal with a claim filtered to compact', async () => {
      const s = await open();
      for (let i = 0; i < 30; i++) await s.enqueue('merge_wal', `m-${i}`);
      await s.enqueue('compact', 'c-1');
      const any = await claimOrFail(s, ['merge_wal', 'compact']);
      expect(any.task.kind).toBe('merge_wal');
      const compact = await claimOrFail(s, ['compact']);
      expect(compact.task).toMatchObject({ kind: 'compact', target: 'c-1' });
      expect(await s.claimNext(['compact'])).toBeUndefined();
      expect((await claimOrFail(s, ['merge_wal'])).task.kind).toBe('merge_wal');
    });

    it('claims a task still queued behind candidates that peers claimed after the queue was read', async () => {
      const kv = await fx.h.connect();
      let interfere: (() => Promise<void>) | undefined;
      const paused = interceptKv(kv, async (forward, compares, success, failure) => {
        const hook = compares.length === 0 ? interfere : undefined;
        if (hook) {
          interfere = undefined;
          await hook();
        }
        return forward(compares, success, failure);
      });
      const a = await open({ kv: paused });
      const b = await open();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await b.enqueue('compact', `t-${i}`)).task.id);
      const byB: string[] = [];
      interfere = async () => {
        // After A read the queue, before it reads the candidates: B takes the three oldest.
        for (let i = 0; i < 3; i++) byB.push((await claimOrFail(b, ['compact'])).task.id);
      };
      const claim = await claimOrFail(a, ['compact']);
      expect(byB).toEqual(ids.slice(0, 3));
      // Contended, A draws from the oldest few still queued rather than racing B for the very oldest.
      expect(ids.slice(3)).toContain(claim.task.id);
      expect(claim.task).toMatchObject({ state: 'running', attempt: 1 });
    });

    it('claims every task exactly once when many claimers on several instances drain the queue', async () => {
      const stores = [await open(), await open(), await open()];
      const ids = new Set<string>();
      for (let i = 0; i < 40; i++) ids.add((await stores[i % 3]!.enqueue('compact', `d-${i}`)).task.id);
      const claimed = await drain(stores);
      expect(claimed).toHaveLength(40);
      expect(new Set(claimed)).toEqual(ids);
    });

    it('claims every task exactly once from a live queue feed while several instances drain the queue', async () => {
      const stores = [await openFed(), await openFed(), await openFed()];
      const ids = new Set<string>();
      for (let i = 0; i < 40; i++) ids.add((await stores[i % 3]!.enqueue('compact', `f-${i}`)).task.id);
      const claimed = await drain(stores);
      expect(claimed).toHaveLength(40);
      expect(new Set(claimed)).toEqual(ids);
    });

    it('claims in FIFO order from a live queue feed, reading the queue once', async () => {
      let queueReads = 0;
      const kv = interceptKv(
        await fx.h.connect(),
        (forward, ...args) => forward(...args),
        (forward, p, o) => {
          if (p.startsWith(`${fx.prefix}/queue/`)) queueReads++;
          return forward(p, o);
        },
      );
      const s = await openFed({ kv });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await s.enqueue('compact', `q-${i}`)).task.id);
      queueReads = 0;
      const got: string[] = [];
      for (let i = 0; i < 5; i++) got.push((await claimOrFail(s, ['compact'])).task.id);
      ids.push((await s.enqueue('compact', 'q-late')).task.id);
      got.push((await claimOrFail(s, ['compact'])).task.id);
      expect(await s.claimNext(['compact'])).toBeUndefined();
      expect(got).toEqual(ids);
      expect(queueReads).toBe(1);
    });

    it('reads the queue again once its feed is lost, and finds what was queued meanwhile', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv });
      const peer = await open();
      s.setQueueFeed(true);
      expect(await s.claimNext(['compact'])).toBeUndefined();
      // No watch feeds it: only a lost feed makes the peer's task visible to it.
      const queued = (await peer.enqueue('compact', 'lost-feed')).task.id;
      s.setQueueFeed(false);
      expect((await claimOrFail(s, ['compact'])).task.id).toBe(queued);
    });

    it('claims in FIFO order within the filter', async () => {
      const s = await open();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await s.enqueue('compact', `t-${i}`)).task.id);
      const got: string[] = [];
      for (let i = 0; i < 5; i++) got.push((await claimOrFail(s, ['compact'])).task.id);
      expect(got).toEqual(ids);
    });
  });

  describe('listing', () => {
    it('pages every task newest first, however unevenly they are spread in time', async () => {
      const s = await open();
      const ids: string[] = [];
      // Hours, not days: every fake second costs the session's keepalive loop a wake-up.
      const gaps = [0, 1, 1, 3_600_000, 5, 6 * 3_600_000, 2, 0, 60_000, 1];
      for (const [i, gap] of gaps.entries()) {
        await fx.h.clock.advance(gap);
        ids.push((await s.enqueue('compact', `t-${i}`)).task.id);
      }
      await fx.h.clock.advance(12 * 3_600_000);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await s.listTasks({ limit: 3, ...(cursor ? { cursor } : {}) });
        expect(page.total).toBe(ids.length);
        seen.push(...page.tasks.map((t) => t.id));
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      expect(seen).toEqual([...ids].reverse());
      const filtered = await s.listTasks({ target: 't-3' });
      expect(filtered.tasks.map((t) => t.id)).toEqual([ids[3]]);
    });
  });

  describe('dependencies', () => {
    it('holds a dependent while its prerequisite runs, then runs it after success', async () => {
      const s = await open();
      const dep = await s.enqueue('merge_wal', 'store-1');
      const child = await s.enqueue('compact', 'store-2', { dependsOn: [dep.task.id] });
      const first = await claimOrFail(s, ['merge_wal', 'compact']);
      expect(first.task.id).toBe(dep.task.id);
      expect(await s.claimNext(['compact'])).toBeUndefined();
      expect((await s.getTask(child.task.id))?.state).toBe('queued');
      await s.finish(first, { ok: true, detail: 'merged' });
      const second = await claimOrFail(s, ['compact']);
      expect(second.task.id).toBe(child.task.id);
    });

    it('fails a dependent whose prerequisite failed', async () => {
      const s = await open();
      const dep = await s.enqueue('merge_wal', 'store-1');
      const child = await s.enqueue('compact', 'store-1', { dependsOn: [dep.task.id] });
      await s.finish(await claimOrFail(s, ['merge_wal']), { ok: false, error: 'boom', errorClass: 'target' });
      expect(await s.claimNext(['compact'])).toBeUndefined();
      expect(await s.getTask(child.task.id)).toMatchObject({
        state: 'failed',
        error: `dependency ${dep.task.id} did not complete`,
      });
      expect(await s.queueDepth()).toBe(0);
    });

    it('fails a dependent whose prerequisite does not exist', async () => {
      const s = await open();
      const ghost = createIdGenerator(fx.h.clock, seededRandom(99))();
      const child = await s.enqueue('compact', 'store-1', { dependsOn: [ghost] });
      expect(await s.claimNext(['compact'])).toBeUndefined();
      expect((await s.getTask(child.task.id))?.error).toMatch(/^dependency .* did not complete$/);
    });
  });
}
