import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClaimLostError, StoreUnavailableError } from '../errors.js';
import { createIdGenerator } from '../ids.js';
import { type TaskKind, isParked } from '../model.js';
import { seededRandom } from '../random.js';
import { PRUNE_LOCK } from '../store/history.js';
import { rendezvousOwner } from '../store/rendezvous.js';
import { type Claim, TaskStore, type TaskStoreOptions } from '../task-store.js';
import type { Kv, RangeOptions } from '../kv/port.js';
import { type KvHarness, interceptKv, withClockRunning } from './harness.js';

/** Overrides a contract test may pass when opening a store. */
export type StoreOverrides = Partial<Omit<TaskStoreOptions, 'prefix' | 'clock'>>;

/**
 * The TaskStore contract, run against any Kv adapter: dedupe, claims, target locks,
 * dependencies, recovery, history, coordination and the failure cooldown. Every test runs
 * under its own random prefix; several store instances stand in for several masters.
 */
export function taskStoreContract(name: string, makeHarness: () => Promise<KvHarness>): void {
  describe(`TaskStore contract: ${name}`, () => {
    let h: KvHarness;
    let prefix: string;
    let stores: TaskStore[];
    let n: number;

    const open = async (overrides: StoreOverrides = {}): Promise<TaskStore> => {
      const kv = overrides.kv ?? (await h.connect());
      const store = await TaskStore.open({
        kv,
        prefix,
        clock: h.clock,
        random: seededRandom(++n),
        masterId: `master-${n}`,
        leaseTtlSecs: 5,
        ...overrides,
      });
      stores.push(store);
      return store;
    };
    /** A store fed by its own queue watch, as a master's scheduler feeds it. */
    const openFed = async (overrides: StoreOverrides = {}): Promise<TaskStore> => {
      const kv = overrides.kv ?? (await h.connect());
      const store = await open({ ...overrides, kv });
      await kv.watch(store.keys.queuePrefix(), (events) => store.observeQueue(events));
      store.setQueueFeed(true);
      return store;
    };
    const claimOrFail = async (store: TaskStore, kinds: readonly TaskKind[]): Promise<Claim> => {
      const claim = await store.claimNext(kinds);
      if (!claim) throw new Error(`expected a claim of ${kinds.join(',')}`);
      return claim;
    };
    const run = <T>(p: Promise<T>): Promise<T> => withClockRunning(h.clock, p);
    /** Four claimers per store claim and finish compactions until the queue is empty; the ids claimed. */
    const drain = async (from: readonly TaskStore[]): Promise<string[]> => {
      const claimed: string[] = [];
      await Promise.all(
        from.flatMap((s) =>
          Array.from({ length: 4 }, async () => {
            for (;;) {
              const claim = await s.claimNext(['compact']);
              if (!claim) {
                if ((await s.queueDepth('compact')) === 0) return;
                continue;
              }
              claimed.push(claim.task.id);
              await s.finish(claim, { ok: true, detail: 'ok' });
            }
          }),
        ),
      );
      return claimed;
    };

    beforeEach(async () => {
      h = await makeHarness();
      prefix = `/contract/${randomUUID()}`;
      stores = [];
      n = 0;
    });
    afterEach(async () => {
      for (const s of stores) await s.close().catch(() => undefined);
      const kv = await h.connect();
      await kv.deletePrefix(`${prefix}/`).catch(() => undefined);
      await h.close();
    });

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
        await h.clock.advance(1000);
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
        const enqueuedAt = h.clock.now();
        await h.clock.advance(4000);
        expect(await c.claimNext(['index_id'])).toBeUndefined(); // c reads the live masters: b among them
        const mine = await enqueueUntil((id) => rendezvousOwner(id, all) === c.masterId);
        await b.close();
        expect((await a.recoverOrphaned()).requeued).toEqual([orphan]);
        await h.clock.advance(2000); // c's read of the masters is 2 s old, the orphan's id 6 s
        expect(h.clock.now() - enqueuedAt).toBeGreaterThan(5000);
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
        const kv = await h.connect();
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
        const kv = await h.connect();
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
          await h.connect(),
          (forward, ...args) => forward(...args),
          (forward, p, o) => {
            if (p.startsWith(`${prefix}/queue/`)) queueReads++;
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
        const kv = await h.connect();
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
          await h.clock.advance(gap);
          ids.push((await s.enqueue('compact', `t-${i}`)).task.id);
        }
        await h.clock.advance(12 * 3_600_000);
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
        const ghost = createIdGenerator(h.clock, seededRandom(99))();
        const child = await s.enqueue('compact', 'store-1', { dependsOn: [ghost] });
        expect(await s.claimNext(['compact'])).toBeUndefined();
        expect((await s.getTask(child.task.id))?.error).toMatch(/^dependency .* did not complete$/);
      });
    });

    describe('session loss and recovery', () => {
      it('requeues the task of a revoked session in place and rejects its late finish', async () => {
        const [a, b] = [await open({ cooldown: { afterFailures: 1 } }), await open({ cooldown: { afterFailures: 1 } })];
        await a.enqueue('compact', 'before');
        const task = (await a.enqueue('compact', 'store-1')).task;
        await a.enqueue('compact', 'after');
        await a.finish(await claimOrFail(a, ['compact']), { ok: true, detail: 'ok' });
        const claimA = await claimOrFail(a, ['compact']);
        expect(claimA.task.id).toBe(task.id);

        await h.clock.advance(5000);
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
        const kv = await h.connect();
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
        const kv = await h.connect();
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
          await h.clock.advance(1000);
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
        await h.clock.advance(3600_000);
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
          const kv = await h.connect();
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
        await h.clock.advance(3600_000);
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
        const kv = await h.connect();
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

        await h.clock.advance(1000);
        const claim = await claimOrFail(peer, ['compact']);
        expect(claim.task.id).toBe(dependent.task.id);
        await peer.finish(claim, { ok: true, detail: 'ok' });
        // Done now, it protects nothing: the dependency and the next oldest go.
        expect(await s.pruneHistory()).toBe(2);
        expect(await s.getTask(oldest!)).toBeUndefined();
      });
    });

    describe('stats', () => {
      it('writes, reads, lists and deletes stats rows in batches past the transaction limit', async () => {
        const s = await open();
        expect(await s.hasStats()).toBe(false);
        const rows = Array.from({ length: 250 }, (_, i) => ({
          name: `store-${String(i).padStart(3, '0')}`,
          pending_wal_generations: i,
          fragment_count: 1,
          row_count: 10,
          owners: ['http://w1'],
          scanned_at: 1,
        }));
        await s.putStats(rows);
        expect(await s.hasStats()).toBe(true);
        expect(await s.getStats('store-007')).toEqual(rows[7]);
        expect((await s.listStats()).map((r) => r.name)).toEqual(rows.map((r) => r.name).sort());
        expect(
          await s.deleteStats(
            rows
              .slice(0, 200)
              .map((r) => r.name)
              .concat('nope'),
          ),
        ).toBe(200);
        expect(await s.listStats()).toHaveLength(50);
        await s.deleteStats(rows.slice(200).map((r) => r.name));
        expect(await s.hasStats()).toBe(false);
        await expect(s.putStats([{ ...rows[0]!, name: '../etc' }])).rejects.toMatchObject({ field: 'stats[0].name' });
      });

      it('lists the targets with an active task of a kind', async () => {
        const s = await open();
        await s.enqueue('merge_wal', 'a');
        await s.enqueue('merge_wal', 'b');
        await s.enqueue('compact', 'c');
        await s.finish(await claimOrFail(s, ['merge_wal']), { ok: true, detail: 'ok' });
        expect(await s.activeTargets('merge_wal')).toEqual(new Set(['b']));
        expect(await s.activeTargets('compact')).toEqual(new Set(['c']));
      });
    });

    describe('workers', () => {
      const scanOf = (endpoint: string, at: number, stores: number) => ({
        endpoint,
        ok: true,
        error: null,
        last_scan_at: at,
        stores,
      });

      it('keeps the last scan of each worker for every master to read', async () => {
        const scanner = await open();
        const peer = await open();
        expect(await peer.listWorkerScans()).toEqual([]);
        await scanner.putWorkerScans([scanOf('http://w1:7000', 1, 3), scanOf('http://w2:7000/', 1, 2)]);
        const down = {
          endpoint: 'http://w2:7000/',
          ok: false,
          error: 'http://w2:7000/: refused',
          last_scan_at: 2,
          stores: 2,
        };
        await scanner.putWorkerScans([down]);
        expect(await peer.listWorkerScans()).toEqual([scanOf('http://w1:7000', 1, 3), down]);
      });

      it('writes a scan of more workers than one transaction holds, and none of a scan with an invalid record', async () => {
        const s = await open();
        const scans = Array.from({ length: 250 }, (_, i) => scanOf(`http://w${String(i).padStart(3, '0')}`, 5, i));
        await s.putWorkerScans(scans);
        expect(await s.listWorkerScans()).toEqual(scans);
        await expect(
          s.putWorkerScans([scanOf('http://fresh', 6, 1), { ...scanOf('http://bad', 6, 1), stores: -1 }]),
        ).rejects.toMatchObject({ field: 'workers[1].stores' });
        expect((await s.listWorkerScans()).map((w) => w.endpoint)).not.toContain('http://fresh');
      });

      it('deletes the scans of the workers named, counting those that existed', async () => {
        const s = await open();
        await s.putWorkerScans([scanOf('http://w1', 1, 1), scanOf('http://w2', 1, 2), scanOf('http://w3', 1, 3)]);
        expect(await s.deleteWorkerScans(['http://w1', 'http://w3', 'http://w3', 'http://never'])).toBe(2);
        expect(await s.listWorkerScans()).toEqual([scanOf('http://w2', 1, 2)]);
        expect(await s.deleteWorkerScans([])).toBe(0);
      });

      it('keeps the later of two records of one worker given in one write', async () => {
        const s = await open();
        await s.putWorkerScans([scanOf('http://w1', 1, 1), scanOf('http://w1', 2, 7)]);
        expect(await s.listWorkerScans()).toEqual([scanOf('http://w1', 2, 7)]);
      });
    });

    describe('parks', () => {
      it('parks a target with who, when and why, lists it, and releases it', async () => {
        const s = await open();
        await h.clock.advance(5000);
        const record = await s.park('compact', 'broken-1', {
          reason: 'manifest names a lost fragment',
          by: 'token@10.0.0.7',
        });
        expect(record).toEqual({
          kind: 'compact',
          target: 'broken-1',
          reason: 'manifest names a lost fragment',
          by: 'token@10.0.0.7',
          parked_at_ms: h.clock.now(),
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
        const until = h.clock.now() + 60_000;
        const record = await s.park('merge_wal', 'x', { reason: 'maintenance window', by: '::1', untilMs: until });
        expect(record.until_ms).toBe(until);
        expect(isParked(record, until - 1)).toBe(true);
        expect(await s.parkedTargets('merge_wal')).toEqual(new Set(['x']));
        await h.clock.advance(60_000);
        expect(await s.parkedTargets('merge_wal')).toEqual(new Set());
        expect(isParked(await s.getPark('merge_wal', 'x'), h.clock.now())).toBe(false);
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
        await expect(s.park('compact', 'x', { reason: 'r', by: 'a', untilMs: h.clock.now() })).rejects.toMatchObject({
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

    describe('coordination', () => {
      it('runs a periodic job exactly once per interval among 6 contending instances', async () => {
        const six = await Promise.all(Array.from({ length: 6 }, () => open()));
        const intervalMs = 60_000;
        const runsPerSlot = new Map<number, number>();
        for (let tick = 0; tick < 20; tick++) {
          const wins = await Promise.all(six.map((s) => s.runEvery('merge-wal-sweep', intervalMs)));
          const slot = Math.floor(h.clock.now() / intervalMs);
          runsPerSlot.set(slot, (runsPerSlot.get(slot) ?? 0) + wins.filter(Boolean).length);
          await h.clock.advance(17_000);
        }
        expect(runsPerSlot.size).toBeGreaterThanOrEqual(5);
        expect([...runsPerSlot.values()].every((v) => v === 1)).toBe(true);
      });

      it('gives a named lock to one holder until released', async () => {
        const [a, b] = [await open(), await open()];
        const lock = await a.tryLock('stats-writer');
        expect(lock).toBeDefined();
        expect(await b.tryLock('stats-writer')).toBeUndefined();
        await lock!.release();
        expect(await b.tryLock('stats-writer')).toBeDefined();
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
        expect(c!.until_ms).toBeGreaterThan(h.clock.now() + 0.9 * 600_000 - 1);
        expect(c!.until_ms).toBeLessThanOrEqual(h.clock.now() + 600_000);
        expect(await s.coolingTargets('compact')).toEqual(new Set(['broken']));
        expect(await s.coolingTargets('merge_wal')).toEqual(new Set());
      });

      it('counts on after a window lapses: the next failure is N+1 with a doubled window', async () => {
        // Short real windows so that on etcd a lease as short as the window would really expire.
        const s = await open({ cooldown: { afterFailures: 2, baseSecs: 1, maxSecs: 3600, jitter: 0 } });
        await s.recordFailure('merge_wal', 'broken', 't1', 'e1', 'target');
        await s.recordFailure('merge_wal', 'broken', 't2', 'e2', 'target');
        const first = await s.getCooldown('merge_wal', 'broken');
        expect(first!.until_ms! - h.clock.now()).toBe(1000);
        await h.elapse(3000);
        expect(await s.coolingTargets('merge_wal')).toEqual(new Set());
        const third = await s.recordFailure('merge_wal', 'broken', 't3', 'e3', 'target');
        expect(third).toMatchObject({ action: 'write', cooling: true, windowMs: 2000, record: { failures: 3 } });
        expect((await s.getCooldown('merge_wal', 'broken'))?.failures).toBe(3);
      });

      it('loses no count among 12 concurrent failures', async () => {
        const s = await open({ cooldown: { afterFailures: 100 } });
        await run(
          Promise.all(
            Array.from({ length: 12 }, (_, i) => s.recordFailure('compact', 'hot', `t${i}`, 'err', 'target')),
          ),
        );
        expect((await s.getCooldown('compact', 'hot'))?.failures).toBe(12);
      });

      it('commits concurrent failures of one target on one instance together, each with its own decision', async () => {
        const kv = await h.connect();
        let writes = 0;
        const counting = interceptKv(kv, (forward, compares, success, failure) => {
          if (success.some((op) => op.type === 'put' && op.key.includes('/cooldown/'))) writes++;
          return forward(compares, success, failure);
        });
        const s = await open({ kv: counting, cooldown: { afterFailures: 100 } });
        const results = await run(
          Promise.all(
            Array.from({ length: 12 }, (_, i) => s.recordFailure('compact', 'hot', `t${i}`, 'err', 'target')),
          ),
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
            Array.from({ length: 64 }, (_, i) =>
              six[i % 6]!.recordFailure('merge_wal', 'hot', `t${i}`, 'err', 'target'),
            ),
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
          const kv = await h.connect();
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
        const kv = await h.connect();
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
  });
}
