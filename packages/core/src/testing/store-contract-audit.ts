import { describe, expect, it } from 'vitest';
import { type AuditEntry, AuditEntrySchema, type AuditIntent } from '../audit.js';
import { StoreUnavailableError, ValidationError } from '../errors.js';
import type { KeyValue, Kv } from '../kv/port.js';
import type { TaskStore } from '../task-store.js';
import type { StoreContractFixture } from './store-contract-fixture.js';

/** An intent as the master builds one for `action`. */
function intent(action: string, extra: Partial<AuditIntent> = {}): AuditIntent {
  return { who: 'alice', client: '10.0.0.7', action, route: `X /api/v1/${action}`, ...extra };
}

/** Every stored audit entry, oldest first, with its key's revisions. */
async function entries(kv: Kv, s: TaskStore): Promise<{ entry: AuditEntry; kv: KeyValue }[]> {
  const res = await kv.range(s.keys.auditPrefix);
  return res.kvs.map((found) => ({ entry: AuditEntrySchema.parse(JSON.parse(found.value)), kv: found }));
}

/**
 * `kv`, whose transactions pass through `before` first once `arm()` was called, numbered from 1:
 * a test's way to change a record between a store's read and its guarded write, or to fail a write.
 */
function intercepted(kv: Kv, before: (n: number) => Promise<void>): { kv: Kv; arm: () => void } {
  let n = 0;
  let armed = false;
  const proxy = new Proxy(kv, {
    get(target, name, receiver) {
      if (name === 'txn') {
        return async (...args: Parameters<Kv['txn']>) => {
          if (armed) await before(++n);
          return target.txn(...args);
        };
      }
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { kv: proxy, arm: () => (armed = true) };
}

/** The TaskStore contract's audit trail (docs/ARCHITECTURE.md §2.9), on the stores of `fx`. */
export function auditContract(fx: StoreContractFixture): void {
  const { open } = fx;

  describe('audit trail', () => {
    it('writes each action’s entry in the transaction of what it commits, naming who, what and the outcome', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv, cooldown: { afterFailures: 1, maxPercent: 100 } });
      const written: AuditEntry[] = [];
      const audit = (action: string): AuditIntent => intent(action, { written: (e) => written.push(e) });
      await s.recordFailure('compact', 'x', '01890a5d-ac96-774b-bcce-b302099a8057', 'boom', 'target');

      const { task } = await s.enqueue('compact', 'x', {
        source: 'manual',
        by: 'alice@10.0.0.7',
        audit: audit('task.enqueue'),
      });
      const park = await s.park('compact', 'x', {
        reason: 'disk swap',
        by: 'alice@10.0.0.7',
        audit: audit('cooldown.park'),
      });
      expect(await s.clearCooldown('compact', 'x', { by: 'alice@10.0.0.7', audit: audit('cooldown.reset') })).toBe(
        true,
      );
      expect(await s.unpark('compact', 'x', { by: 'alice@10.0.0.7', audit: audit('cooldown.release') })).toBe(true);
      await s.cluster.setPreserveDowngrade(true, 'alice@10.0.0.7', audit('cluster.update'));

      const stored = await entries(kv, s);
      expect(stored.map(({ entry }) => [entry.action, entry.outcome, entry.kind ?? '', entry.target ?? ''])).toEqual([
        ['task.enqueue', 'queued', 'compact', 'x'],
        ['cooldown.park', 'parked', 'compact', 'x'],
        ['cooldown.reset', 'reset', 'compact', 'x'],
        ['cooldown.release', 'released', 'compact', 'x'],
        ['cluster.update', 'preserve_downgrade_set', '', ''],
      ]);
      expect(written).toEqual(stored.map(({ entry }) => entry));
      for (const { entry } of stored) {
        expect(entry).toMatchObject({ who: 'alice', client: '10.0.0.7', master_id: s.masterId });
      }
      expect(stored[0]!.entry.task_id).toBe(task.id);
      expect(stored[1]!.entry).toMatchObject({ reason: 'disk swap', until_ms: null });
      expect(park.reason).toBe('disk swap');
      // Same revision: each entry was created by the very transaction of its mutation.
      const timeline = (await kv.range(s.keys.timelinePrefix('compact', 'x'))).kvs;
      const revisionOf = (type: string): number | undefined =>
        timeline.find((t) => (JSON.parse(t.value) as { type: string }).type === type)?.createRevision;
      expect(stored.slice(0, 4).map(({ kv: k }) => k.createRevision)).toEqual([
        revisionOf('manual_run'),
        revisionOf('parked'),
        revisionOf('reset'),
        revisionOf('released'),
      ]);
      expect(stored[4]!.kv.createRevision).toBe((await kv.get(s.keys.cluster))!.modRevision);
    });

    it('writes no entry for an action that commits nothing: a reset or release of nothing, a dedupe hit, no cluster change, a refused bulk', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv });
      expect(await s.clearCooldown('compact', 'none', { by: 'a', audit: intent('cooldown.reset') })).toBe(false);
      expect(await s.unpark('compact', 'none', { by: 'a', audit: intent('cooldown.release') })).toBe(false);
      await s.enqueue('compact', 'y', { source: 'sweep' });
      const hit = await s.enqueue('compact', 'y', { source: 'manual', by: 'a', audit: intent('task.enqueue') });
      expect(hit.created).toBe(false);
      await s.cluster.setPreserveDowngrade(false, 'a', intent('cluster.update'));
      expect(
        await s.bulk.resetCooldowns([{ kind: 'compact', target: 'none' }], {
          by: 'a',
          audit: intent('cooldowns.reset'),
        }),
      ).toEqual([false]);
      // A store named twice is refused before anything is written.
      const twice = [
        { kind: 'compact', target: 'y' },
        { kind: 'compact', target: 'y' },
      ];
      await expect(
        s.bulk.park(twice, { reason: 'r', by: 'a', audit: intent('cooldowns.park') }),
      ).rejects.toBeInstanceOf(ValidationError);
      expect(await s.getPark('compact', 'y')).toBeUndefined();
      expect((await kv.range(s.keys.auditPrefix, { countOnly: true })).count).toBe(0);
    });

    it('records an operator’s run of a held task as promoted, in the transaction that queues it again', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv });
      const { task } = await s.enqueue('compact', 'x', { source: 'sweep' });
      await s.park('compact', 'x', { reason: 'r', by: 'ops' });
      expect(await s.claimNext(['compact'], { holdParked: true })).toBeUndefined();
      const asked = await s.enqueue('compact', 'x', { source: 'manual', by: 'a', audit: intent('task.enqueue') });
      expect(asked).toMatchObject({ created: false, task: { id: task.id, state: 'queued' } });
      const stored = await entries(kv, s);
      expect(stored.map(({ entry }) => [entry.action, entry.outcome, entry.task_id])).toEqual([
        ['task.enqueue', 'promoted', task.id],
      ]);
      expect(stored[0]!.kv.createRevision).toBe((await kv.get(s.keys.task(task.id)))!.modRevision);
    });

    it('writes one entry for a park whose first compare-and-swap lost to another writer', async () => {
      const base = await fx.h.connect();
      const s0 = await open({ kv: base });
      const key = s0.keys.parked('compact', 'x');
      const { kv, arm } = intercepted(base, async (n) => {
        // Another master parks the pair between this park's read and its write.
        if (n === 1) await s0.park('compact', 'x', { reason: 'first', by: 'bob' });
      });
      const s = await open({ kv });
      arm();
      await s.park('compact', 'x', { reason: 'second', by: 'alice', audit: intent('cooldown.park') });
      const stored = await entries(base, s);
      expect(stored).toHaveLength(1);
      expect(stored[0]!.entry.reason).toBe('second');
      expect(stored[0]!.kv.createRevision).toBe((await base.get(key))!.modRevision);
    });

    it('records a bulk reset as one entry whose count is what committed, chunk by chunk', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv, cooldown: { afterFailures: 3, maxPercent: 100 } });
      const targets = Array.from({ length: 120 }, (_, i) => `store-${String(i).padStart(3, '0')}`);
      for (let i = 0; i < targets.length; i += 20) {
        await Promise.all(
          targets
            .slice(i, i + 20)
            .map((t, j) =>
              s.recordFailure(
                'compact',
                t,
                `01890a5d-ac96-774b-bcce-b3020${String(i + j).padStart(7, '0')}`,
                'x',
                'target',
              ),
            ),
        );
      }
      const pairs = [...targets.map((target) => ({ kind: 'compact', target })), { kind: 'compact', target: 'gone' }];
      const heard: string[] = [];
      const written: AuditEntry[] = [];
      const done = await s.bulk.resetCooldowns(
        pairs,
        {
          by: 'alice@10.0.0.7',
          audit: intent('cooldowns.reset', {
            matched: 121,
            filter: { kind: 'compact' },
            written: (e) => written.push(e),
          }),
        },
        (p) => heard.push(p.target),
      );
      expect(done.filter(Boolean)).toHaveLength(120);
      expect(done.at(-1)).toBe(false);
      expect(heard.sort()).toEqual(targets);
      expect((await kv.range(s.keys.cooldownPrefix(), { countOnly: true })).count).toBe(0);
      const stored = await entries(kv, s);
      expect(stored).toHaveLength(1);
      const [{ entry, kv: found }] = stored as [{ entry: AuditEntry; kv: KeyValue }];
      expect(entry).toMatchObject({
        action: 'cooldowns.reset',
        outcome: 'reset',
        count: 120,
        matched: 121,
        filter: { kind: 'compact' },
      });
      // Created in the first chunk's transaction, rewritten in each later one's: 50, 50, 20.
      expect(found.version).toBe(3);
      const resets = (await kv.range(s.keys.timelinePrefix())).kvs.filter((t) => t.value.includes('"reset"'));
      expect(found.createRevision).toBe(Math.min(...resets.map((t) => t.createRevision)));
      expect(found.modRevision).toBe(Math.max(...resets.map((t) => t.createRevision)));
      expect(written).toEqual([entry]);
    });

    it('counts exactly what committed when a bulk park stops midway', async () => {
      const base = await fx.h.connect();
      const { kv, arm } = intercepted(base, (n) =>
        // The first transaction reads the first chunk, the second parks it, the third reads the next.
        n === 4 ? Promise.reject(new StoreUnavailableError('etcd went away')) : Promise.resolve(),
      );
      const s = await open({ kv });
      arm();
      const pairs = Array.from({ length: 70 }, (_, i) => ({ kind: 'compact', target: `s-${i}` }));
      await expect(
        s.bulk.park(pairs, { reason: 'rack 7', by: 'alice', audit: intent('cooldowns.park', { matched: 70 }) }),
      ).rejects.toBeInstanceOf(StoreUnavailableError);
      const parks = await s.listParks();
      const stored = await entries(base, s);
      expect(stored).toHaveLength(1);
      expect(stored[0]!.entry).toMatchObject({ action: 'cooldowns.park', count: parks.length, reason: 'rack 7' });
      expect(parks.length).toBe(50);
    });

    it('serves the trail newest first in pages, filtered by who, action, kind and target', async () => {
      const s = await open();
      for (let i = 0; i < 6; i++) {
        await s.park('compact', `t-${i}`, {
          reason: 'r',
          by: 'x',
          audit: intent('cooldown.park', { who: i % 2 === 0 ? 'alice' : 'bob' }),
        });
        await fx.h.clock.advance(5);
      }
      const first = await s.audit.read({ limit: 4 });
      expect(first.entries.map((e) => e.target)).toEqual(['t-5', 't-4', 't-3', 't-2']);
      const second = await s.audit.read({ limit: 4, cursor: first.next! });
      expect(second.entries.map((e) => e.target)).toEqual(['t-1', 't-0']);
      expect(second.next).toBeUndefined();
      const alice = await s.audit.read({ limit: 2, who: 'alice' });
      expect(alice.entries.map((e) => e.target)).toEqual(['t-4', 't-2']);
      const rest = await s.audit.read({ limit: 2, who: 'alice', cursor: alice.next! });
      expect(rest.entries.map((e) => e.target)).toEqual(['t-0']);
      expect(
        (await s.audit.read({ limit: 9, target: 't-3', kind: 'compact', action: 'cooldown.park' })).entries,
      ).toHaveLength(1);
      expect((await s.audit.read({ limit: 9, action: 'task.enqueue' })).entries).toEqual([]);
    });

    it('prunes the oldest entries beyond the limit and those past the TTL, from keys alone', async () => {
      const kv = await fx.h.connect();
      const s = await open({ kv, auditLimit: 4, auditTtlSecs: 3600 });
      for (let i = 0; i < 6; i++) {
        await s.park('compact', `t-${i}`, { reason: 'r', by: 'x', audit: intent('cooldown.park') });
        await fx.h.clock.advance(i === 2 ? 3_600_000 : 1000);
      }
      // Six entries: two beyond the limit, and t-2 (with t-0, t-1) past the TTL.
      expect(await s.audit.prune()).toBe(3);
      expect((await entries(kv, s)).map(({ entry }) => entry.target)).toEqual(['t-3', 't-4', 't-5']);
      expect(await s.audit.prune()).toBe(0);
    });
  });
}
