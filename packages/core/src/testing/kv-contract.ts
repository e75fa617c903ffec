import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseNotFoundError, WatchCompactedError } from '../errors.js';
import type { Kv, WatchEvent } from '../kv/port.js';
import type { KvHarness } from './harness.js';

/**
 * The Kv port's contract: every adapter must pass it. Each test works under its own random
 * prefix and never touches keys outside it.
 */
export function kvContract(name: string, makeHarness: () => Promise<KvHarness>): void {
  describe(`Kv contract: ${name}`, () => {
    let h: KvHarness;
    let kv: Kv;
    let p: string;

    beforeEach(async () => {
      h = await makeHarness();
      kv = await h.connect();
      p = `/contract/${randomUUID()}/`;
    });
    afterEach(async () => {
      await kv.deletePrefix(p).catch(() => undefined);
      await h.close();
    });

    it('reads back what it wrote, with etcd revision semantics', async () => {
      const { revision: r1 } = await kv.put(`${p}a`, 'one');
      const a1 = await kv.get(`${p}a`);
      expect(a1).toMatchObject({ key: `${p}a`, value: 'one', createRevision: r1, modRevision: r1, version: 1 });
      const { revision: r2 } = await kv.put(`${p}a`, 'two');
      expect(r2).toBeGreaterThan(r1);
      expect(await kv.get(`${p}a`)).toMatchObject({ value: 'two', createRevision: r1, modRevision: r2, version: 2 });
      expect(await kv.get(`${p}missing`)).toBeUndefined();
      expect(await kv.revision()).toBeGreaterThanOrEqual(r2);
    });

    it('ranges over exactly the keys under a prefix, in key order, with limit, count and paging', async () => {
      for (const k of ['c', 'a', 'b', 'd']) await kv.put(`${p}x/${k}`, k);
      await kv.put(`${p}x0`, 'outside');
      await kv.put(`${p}w`, 'outside');
      const all = await kv.range(`${p}x/`);
      expect(all.kvs.map((e) => e.value)).toEqual(['a', 'b', 'c', 'd']);
      expect(all.count).toBe(4);
      expect(all.more).toBe(false);

      const page = await kv.range(`${p}x/`, { limit: 2 });
      expect(page.kvs.map((e) => e.value)).toEqual(['a', 'b']);
      expect(page.more).toBe(true);
      expect(page.count).toBe(4);

      const next = await kv.range(`${p}x/`, { limit: 2, fromKey: `${page.kvs[1]!.key}\0` });
      expect(next.kvs.map((e) => e.value)).toEqual(['c', 'd']);
      expect(next.more).toBe(false);

      const keys = await kv.range(`${p}x/`, { keysOnly: true });
      expect(keys.kvs.map((e) => [e.key, e.value])).toEqual(['a', 'b', 'c', 'd'].map((k) => [`${p}x/${k}`, '']));

      const window = await kv.range(`${p}x/`, { fromKey: `${p}x/b`, toKey: `${p}x/d` });
      expect(window.kvs.map((e) => e.value)).toEqual(['b', 'c']);
      expect(window.count).toBe(2);
      expect((await kv.range(`${p}x/`, { toKey: `${p}x/c`, countOnly: true })).count).toBe(2);
      expect((await kv.range(`${p}x/`, { toKey: `${p}y` })).count).toBe(4);

      const counted = await kv.range(`${p}x/`, { countOnly: true });
      expect(counted.count).toBe(4);
      expect(counted.kvs).toEqual([]);
    });

    it('ranges in reverse, a page ending at fromKey inclusive', async () => {
      for (const k of ['a', 'b', 'c', 'd', 'e']) await kv.put(`${p}${k}`, k);
      const first = await kv.range(p, { reverse: true, limit: 2 });
      expect(first.kvs.map((e) => e.value)).toEqual(['e', 'd']);
      expect(first.more).toBe(true);
      const second = await kv.range(p, { reverse: true, limit: 2, fromKey: `${p}c` });
      expect(second.kvs.map((e) => e.value)).toEqual(['c', 'b']);
      expect(second.more).toBe(true);
    });

    it('runs the success branch only when every compare holds, atomically', async () => {
      const key = `${p}cas`;
      const created = await kv.txn(
        [{ key, target: 'version', op: '==', value: 0 }],
        [{ type: 'put', key, value: 'v1' }],
      );
      expect(created.succeeded).toBe(true);
      const again = await kv.txn(
        [{ key, target: 'version', op: '==', value: 0 }],
        [{ type: 'put', key, value: 'v2' }],
        [{ type: 'get', key }],
      );
      expect(again.succeeded).toBe(false);
      expect(again.results[0]).toMatchObject({ type: 'get', kv: { value: 'v1', modRevision: created.revision } });
      expect((await kv.get(key))?.value).toBe('v1');

      const stale = await kv.txn(
        [{ key, target: 'modRevision', op: '==', value: created.revision - 1 }],
        [{ type: 'put', key, value: 'lost' }],
      );
      expect(stale.succeeded).toBe(false);
      const fresh = await kv.txn(
        [
          { key, target: 'modRevision', op: '==', value: created.revision },
          { key, target: 'createRevision', op: '==', value: created.revision },
          { key, target: 'value', op: '==', value: 'v1' },
          { key: `${p}absent`, target: 'version', op: '==', value: 0 },
        ],
        [
          { type: 'put', key, value: 'v2' },
          { type: 'put', key: `${p}other`, value: 'o' },
          { type: 'delete', key: `${p}absent` },
        ],
      );
      expect(fresh.succeeded).toBe(true);
      expect(fresh.results).toEqual([{ type: 'put' }, { type: 'put' }, { type: 'delete', deleted: 0 }]);
      const a = await kv.get(key);
      const o = await kv.get(`${p}other`);
      expect(a?.modRevision).toBe(fresh.revision);
      expect(o?.modRevision).toBe(fresh.revision);
    });

    it('treats a value compare against a missing key as false', async () => {
      const key = `${p}nothing`;
      const eq = await kv.txn([{ key, target: 'value', op: '==', value: '' }], [{ type: 'put', key, value: 'x' }]);
      const ne = await kv.txn([{ key, target: 'value', op: '!=', value: 'y' }], [{ type: 'put', key, value: 'x' }]);
      expect([eq.succeeded, ne.succeeded]).toEqual([false, false]);
      expect(await kv.get(key)).toBeUndefined();
    });

    it('lets exactly one of two clients win a concurrent create-if-absent', async () => {
      const other = await h.connect();
      const key = `${p}race`;
      const results = await Promise.all(
        [kv, other, kv, other].map((c, i) =>
          c.txn([{ key, target: 'version', op: '==', value: 0 }], [{ type: 'put', key, value: String(i) }]),
        ),
      );
      expect(results.filter((r) => r.succeeded)).toHaveLength(1);
    });

    it('rejects a transaction that writes one key twice, and writes nothing', async () => {
      await expect(
        kv.txn(
          [],
          [
            { type: 'put', key: `${p}dup`, value: '1' },
            { type: 'put', key: `${p}other`, value: '1' },
            { type: 'delete', key: `${p}dup` },
          ],
        ),
      ).rejects.toThrow(/duplicate key/);
      expect(await kv.get(`${p}other`)).toBeUndefined();
    });

    it('deletes single keys and whole prefixes, reporting counts', async () => {
      await kv.put(`${p}d/1`, '1');
      await kv.put(`${p}d/2`, '2');
      await kv.put(`${p}e`, 'e');
      expect(await kv.delete(`${p}d/1`)).toBe(1);
      expect(await kv.delete(`${p}d/1`)).toBe(0);
      await kv.put(`${p}d/3`, '3');
      expect(await kv.deletePrefix(`${p}d/`)).toBe(2);
      expect((await kv.range(p)).kvs.map((e) => e.key)).toEqual([`${p}e`]);
    });

    it('deletes a lease’s keys when it is revoked, and refuses writes under a dead lease', async () => {
      const lease = await kv.grant(30);
      await kv.put(`${p}l/1`, 'a', { lease: lease.id });
      await kv.txn([], [{ type: 'put', key: `${p}l/2`, value: 'b', lease: lease.id }]);
      expect((await kv.get(`${p}l/1`))?.lease).toBe(lease.id);
      await lease.revoke();
      expect((await kv.range(`${p}l/`)).count).toBe(0);
      await expect(kv.put(`${p}l/3`, 'c', { lease: lease.id })).rejects.toBeInstanceOf(LeaseNotFoundError);
      await expect(
        kv.txn(
          [],
          [
            { type: 'put', key: `${p}l/4`, value: 'd' },
            { type: 'put', key: `${p}l/5`, value: 'e', lease: lease.id },
          ],
        ),
      ).rejects.toBeInstanceOf(LeaseNotFoundError);
      expect((await kv.range(`${p}l/`)).count).toBe(0);
      await lease.revoke();
    });

    it('expires a lease that is not kept alive, and keeps one that is', async () => {
      const kept = await kv.grant(1);
      const dropped = await kv.grant(1, { keepAlive: false });
      await kv.put(`${p}kept`, 'k', { lease: kept.id });
      await kv.put(`${p}dropped`, 'd', { lease: dropped.id });
      await h.elapse(3000);
      expect(await kv.get(`${p}dropped`)).toBeUndefined();
      expect((await kv.get(`${p}kept`))?.value).toBe('k');
      expect(kept.lost.aborted).toBe(false);
      await kept.revoke();
    });

    it('streams puts and deletes under the prefix, in order, until closed', async () => {
      const seen: WatchEvent[] = [];
      const w = await kv.watch(`${p}w/`, (events) => seen.push(...events));
      await kv.put(`${p}w/x`, '1');
      await kv.put(`${p}elsewhere`, 'no');
      await kv.put(`${p}w/y`, '2');
      await kv.delete(`${p}w/x`);
      await eventually(() => expect(seen).toHaveLength(3));
      expect(seen.map((e) => [e.type, e.key.slice(p.length), e.value])).toEqual([
        ['put', 'w/x', '1'],
        ['put', 'w/y', '2'],
        ['delete', 'w/x', ''],
      ]);
      expect(seen[0]!.modRevision).toBeLessThan(seen[2]!.modRevision);
      await w.close();
      await kv.put(`${p}w/z`, '3');
      await delay(100);
      expect(seen).toHaveLength(3);
    });

    it('replays history from a past revision, and reports a compacted one', async () => {
      const { revision: r1 } = await kv.put(`${p}h/a`, '1');
      await kv.put(`${p}h/b`, '2');
      const seen: string[] = [];
      const w = await kv.watch(`${p}h/`, (events) => seen.push(...events.map((e) => e.value)), { fromRevision: r1 });
      await eventually(() => expect(seen).toEqual(['1', '2']));
      await w.close();

      const { revision: r3 } = await kv.put(`${p}h/c`, '3');
      await kv.put(`${p}h/d`, '4');
      await h.compact(r3 + 1);
      const errors: Error[] = [];
      const w2 = await kv.watch(`${p}h/`, () => undefined, { fromRevision: r3, onError: (e) => errors.push(e) });
      await eventually(() => expect(errors[0]).toBeInstanceOf(WatchCompactedError));
      await w2.close();
    });

    it('tells watchers about keys removed by a lease revoke', async () => {
      const lease = await kv.grant(30);
      await kv.put(`${p}r/a`, 'a', { lease: lease.id });
      const seen: WatchEvent[] = [];
      const w = await kv.watch(`${p}r/`, (events) => seen.push(...events));
      await lease.revoke();
      await eventually(() => expect(seen.map((e) => e.type)).toEqual(['delete']));
      await w.close();
    });
  });
}

/**
 * Retries `check` until it returns without throwing or `timeoutMs` of real time pass, then
 * rethrows its last failure; polls every `everyMs`. Resolves with `check`'s result.
 */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5000, everyMs = 10): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (performance.now() > deadline) throw err;
      await delay(everyMs);
    }
  }
}
