import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { LeaseNotFoundError, StoreUnavailableError } from '../errors.js';
import { type KvHarness, etcdHarness, interceptKv, memoryHarness } from '../testing/harness.js';
import { kvContract } from '../testing/kv-contract.js';
import { GROUP_COMMIT_STALL_MS, GroupCommitKv } from './group-commit.js';
import type { Kv, TxnResult } from './port.js';

const adapters: readonly [string, () => Promise<KvHarness>][] = [
  ['MemoryKv', memoryHarness],
  ['EtcdKv', () => etcdHarness(inject('etcdEndpoints'))],
];

/** A harness whose clients batch their transactions: the Kv contract must hold unchanged. */
const batching = (make: () => Promise<KvHarness>) => async (): Promise<KvHarness> => {
  const h = await make();
  return { ...h, connect: async () => new GroupCommitKv(await h.connect(), h.clock) };
};

for (const [name, make] of adapters) {
  kvContract(`GroupCommitKv over ${name}`, batching(make));

  describe(`GroupCommitKv over ${name}`, () => {
    let h: KvHarness;
    let base: Kv;
    let p: string;
    /** Transactions that reached the store, with their compare counts. */
    let sent: number[];

    beforeEach(async () => {
      h = await make();
      base = await h.connect();
      p = `/group-commit/${randomUUID()}/`;
      sent = [];
    });
    afterEach(async () => {
      await base.deletePrefix(p).catch(() => undefined);
      await h.close();
    });

    const counted = (kv: Kv = base): Kv =>
      interceptKv(kv, (forward, compares, success, failure) => {
        sent.push(compares.length);
        return forward(compares, success, failure);
      });

    it('commits concurrent transactions on distinct keys in fewer store calls, each with its own results and the batch revision', async () => {
      const kv = new GroupCommitKv(counted(), h.clock, { maxInFlight: 1 });
      for (let i = 0; i < 10; i++) await base.put(`${p}k${i}`, 'old');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          kv.txn(
            [{ key: `${p}k${i}`, target: 'value', op: '==', value: 'old' }],
            [
              { type: 'put', key: `${p}k${i}`, value: `new${i}` },
              { type: 'get', key: `${p}other${i}` },
            ],
          ),
        ),
      );
      // The first goes out alone; the nine queued behind it go out as one.
      expect(sent).toEqual([1, 9]);
      for (const res of results) {
        expect(res.succeeded).toBe(true);
        expect(res.results).toEqual([{ type: 'put' }, { type: 'get', kv: undefined }]);
      }
      expect(new Set(results.slice(1).map((r) => r.revision)).size).toBe(1);
      for (let i = 0; i < 10; i++) {
        expect(await base.get(`${p}k${i}`)).toMatchObject({ value: `new${i}`, modRevision: results[i]!.revision });
      }
    });

    it('puts the next transactions of the callers a batch answered into one batch, not two', async () => {
      const kv = new GroupCommitKv(counted(), h.clock, { maxInFlight: 1 });
      const rounds = 6;
      // Four callers that each send their next transaction as soon as the last one is answered
      // (a pool slot's claim, then its finish): freeing the slot the moment a batch returned split
      // them into two alternating batches of two, a store call per caller every round.
      await Promise.all(
        Array.from({ length: 4 }, async (_, c) => {
          for (let r = 0; r < rounds; r++) {
            await kv.txn([], [{ type: 'put', key: `${p}c${c}`, value: `${r}` }]);
            await Promise.resolve();
          }
        }),
      );
      // The first call goes out alone (the store was idle) and the other three behind it; from
      // then on the four move together.
      expect(sent.length).toBeLessThanOrEqual(rounds + 2);
      for (let c = 0; c < 4; c++) expect((await base.get(`${p}c${c}`))?.value).toBe(`${rounds - 1}`);
    });

    it("gives a transaction whose compare fails its own failure branch, and still commits the others'", async () => {
      const kv = new GroupCommitKv(counted(), h.clock, { maxInFlight: 1 });
      await base.put(`${p}first`, '');
      await base.put(`${p}taken`, 'someone');
      const [first, lost, won] = await Promise.all([
        kv.txn([], [{ type: 'put', key: `${p}first`, value: 'x' }]),
        kv.txn(
          [{ key: `${p}taken`, target: 'version', op: '==', value: 0 }],
          [{ type: 'put', key: `${p}taken`, value: 'me' }],
          [{ type: 'get', key: `${p}taken` }],
        ),
        kv.txn(
          [{ key: `${p}free`, target: 'version', op: '==', value: 0 }],
          [{ type: 'put', key: `${p}free`, value: 'me' }],
        ),
      ]);
      expect(first.succeeded).toBe(true);
      expect(lost.succeeded).toBe(false);
      expect(lost.results).toEqual([{ type: 'get', kv: expect.objectContaining({ value: 'someone' }) as unknown }]);
      expect(won.succeeded).toBe(true);
      expect((await base.get(`${p}taken`))?.value).toBe('someone');
      expect((await base.get(`${p}free`))?.value).toBe('me');
      // Alone, batched (its compares did not all hold), then each of the two again alone.
      expect(sent).toEqual([0, 2, 1, 1]);
    });

    it('never puts two transactions on one key in a batch: concurrent compare-and-set increments all count', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 12 }),
          async (maxInFlight, writers) => {
            const run = `${p}${randomUUID()}/`;
            const kv = new GroupCommitKv(base, h.clock, { maxInFlight });
            let committed = 0;
            await Promise.all(
              writers.map(async (slot) => {
                const key = `${run}counter${slot}`;
                for (;;) {
                  const found = await kv.get(key);
                  const n = found ? Number(found.value) : 0;
                  const res = await kv.txn(
                    [{ key, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }],
                    [{ type: 'put', key, value: String(n + 1) }],
                  );
                  if (res.succeeded) break;
                }
                committed++;
              }),
            );
            let total = 0;
            for (const slot of [0, 1, 2]) total += Number((await kv.get(`${run}counter${slot}`))?.value ?? 0);
            expect(total).toBe(committed);
            expect(committed).toBe(writers.length);
          },
        ),
        { numRuns: name === 'EtcdKv' ? 15 : 60, seed: 20261203 },
      );
    });

    it('rejects every transaction of a batch whose call fails, with that error', async () => {
      const failing = interceptKv(base, (forward, compares, success, failure) => {
        sent.push(compares.length);
        if (success.length > 1) return Promise.reject(new StoreUnavailableError('etcd is unreachable'));
        return forward(compares, success, failure);
      });
      const kv = new GroupCommitKv(failing, h.clock, { maxInFlight: 1 });
      const outcomes = await Promise.allSettled(
        [0, 1, 2].map((i) => kv.txn([], [{ type: 'put', key: `${p}k${i}`, value: 'v' }])),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
      for (const o of outcomes.slice(1)) {
        expect((o as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
      }
      expect(await base.get(`${p}k1`)).toBeUndefined();
    });

    it('fails only the transaction whose lease is gone when it shared a batch', async () => {
      const kv = new GroupCommitKv(counted(), h.clock, { maxInFlight: 1 });
      const lease = await base.grant(60);
      await lease.revoke();
      const outcomes = await Promise.allSettled([
        kv.txn([], [{ type: 'put', key: `${p}first`, value: 'x' }]),
        kv.txn([], [{ type: 'put', key: `${p}leased`, value: 'x', lease: lease.id }]),
        kv.txn([], [{ type: 'put', key: `${p}plain`, value: 'x' }]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseNotFoundError);
      expect((await base.get(`${p}plain`))?.value).toBe('x');
      expect(await base.get(`${p}leased`)).toBeUndefined();
      // Alone, batched (refused), then each of the two again alone.
      expect(sent).toEqual([0, 0, 0, 0]);
    });

    it('sends a transaction that waited GROUP_COMMIT_STALL_MS behind a stalled call, without waiting for it', async () => {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const stalled = interceptKv(base, async (forward, compares, success, failure) => {
        sent.push(success.length);
        if (success.some((op) => op.key === `${p}stuck`)) await held;
        return forward(compares, success, failure);
      });
      const kv = new GroupCommitKv(stalled, h.clock, { maxInFlight: 1 });
      const stuck = kv.txn([], [{ type: 'put', key: `${p}stuck`, value: 'v' }]);
      const next = kv.txn([], [{ type: 'put', key: `${p}next`, value: 'v' }]);
      await h.clock.advance(GROUP_COMMIT_STALL_MS - 1);
      expect(sent).toEqual([1]);
      await h.clock.advance(1);
      expect((await next).succeeded).toBe(true);
      expect(sent).toEqual([1, 1]);
      release();
      expect((await stuck).succeeded).toBe(true);
    });

    it('sends a read-only transaction at once, even with writes waiting for a batch', async () => {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const slow = interceptKv(base, async (forward, compares, success, failure) => {
        sent.push(compares.length);
        if (success.some((op) => op.type === 'put')) await held;
        return forward(compares, success, failure);
      });
      const kv = new GroupCommitKv(slow, h.clock, { maxInFlight: 1 });
      const writes = [0, 1].map((i) => kv.txn([], [{ type: 'put', key: `${p}k${i}`, value: 'v' }]));
      const read: TxnResult = await kv.txn([], [{ type: 'get', key: `${p}k0` }]);
      expect(read).toMatchObject({ succeeded: true, results: [{ type: 'get', kv: undefined }] });
      release();
      await Promise.all(writes);
      expect(sent).toEqual([0, 0, 0]);
    });
  });
}
