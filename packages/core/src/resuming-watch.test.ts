import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from './errors.js';
import type { Kv, WatchEvent, WatchOptions } from './kv/port.js';
import { ResumingWatch, type ResumingWatchOptions, type WatchFailure } from './resuming-watch.js';
import { type KvHarness, etcdHarness, interceptKv, memoryHarness } from './testing/harness.js';
import { eventually } from './testing/kv-contract.js';
import { type EtcdServer, startEtcd } from './testing/etcd-server.js';

/** A Kv over `kv` whose watches can be made to drop, as etcd cancelling them would. */
function droppable(kv: Kv): { kv: Kv; drop: () => void; opened: () => number } {
  const errors: NonNullable<WatchOptions['onError']>[] = [];
  let opened = 0;
  return {
    kv: {
      ...interceptKv(kv, (forward, ...args) => forward(...args)),
      watch: (prefix, listener, options) => {
        opened++;
        if (options?.onError) errors.push(options.onError);
        return kv.watch(prefix, listener, options);
      },
    },
    drop: () => {
      for (const onError of errors.splice(0)) onError(new StoreUnavailableError('watch cancelled'));
    },
    opened: () => opened,
  };
}

/** What a consumer builds: the pairs, from loads and events, and every change it was handed. */
function mirror() {
  const state = new Map<string, string>();
  const applied: WatchEvent[] = [];
  const failures: WatchFailure[] = [];
  let reloads = 0;
  const hooks: Pick<ResumingWatchOptions, 'onReload' | 'onPage' | 'onEvents' | 'onFailure'> = {
    onReload: () => {
      reloads++;
      state.clear();
    },
    onPage: (_prefix, pairs) => {
      for (const p of pairs) state.set(p.key, p.value);
    },
    onEvents: (events) => {
      for (const e of events) {
        applied.push(e);
        if (e.type === 'put') state.set(e.key, e.value);
        else state.delete(e.key);
      }
    },
    onFailure: (f) => {
      failures.push(f);
      return { delayMs: 10 };
    },
  };
  return { state, applied, failures, reloads: () => reloads, hooks };
}

async function contents(kv: Kv, prefix: string): Promise<Map<string, string>> {
  const res = await kv.range(prefix);
  return new Map(res.kvs.map((p) => [p.key, p.value]));
}

/** Each change handed on once: no (key, revision) twice. */
function repeats(events: readonly WatchEvent[]): string[] {
  const seen = new Set<string>();
  return events.map((e) => `${e.key}@${e.modRevision}`).filter((id) => seen.has(id) || !seen.add(id));
}

function suite(name: string, makeHarness: () => Promise<KvHarness>): void {
  describe(`ResumingWatch on ${name}`, () => {
    let h: KvHarness;
    const open: ResumingWatch[] = [];
    afterEach(async () => {
      for (const w of open.splice(0)) await w.close();
      await h.close();
    });
    const start = (options: ResumingWatchOptions): ResumingWatch => {
      const w = new ResumingWatch(options);
      open.push(w);
      return w;
    };
    /** Waits for `check`, letting the watch's clock run (its retries wait on it). */
    const until = (check: () => Promise<void> | void): Promise<void> =>
      eventually(async () => {
        await h.clock.advance(10);
        await check();
      });

    for (const concurrentLoads of [false, true]) {
      it(`loads the prefixes${concurrentLoads ? ' side by side' : ''}, then hands on each later change once, and none the load already showed`, async () => {
        h = await makeHarness();
        const kv = await h.connect();
        const prefix = `/rw/${randomUUID()}/`;
        for (let i = 0; i < 25; i++) await kv.put(`${prefix}k${String(i).padStart(2, '0')}`, `v${i}`);
        // Writes between the load's pages: to keys of pages still to come, of pages read, and new ones.
        let pages = 0;
        const reading = interceptKv(
          kv,
          (forward, ...args) => forward(...args),
          async (forward, p, o) => {
            const page = await forward(p, o);
            if (p === prefix && pages++ === 0) {
              await kv.put(`${prefix}k20`, 'changed during the load');
              await kv.put(`${prefix}k00`, 'changed after its page');
              await kv.delete(`${prefix}k21`);
              await kv.put(`${prefix}new`, 'made during the load');
            }
            return page;
          },
        );
        const m = mirror();
        const other = `/rw/${randomUUID()}/`;
        await kv.put(`${other}x`, 'loaded');
        const w = start({
          kv: reading,
          clock: h.clock,
          watch: [prefix, other],
          load: [prefix, other],
          concurrentLoads,
          pageSize: 10,
          ...m.hooks,
        });
        await w.established();
        await kv.put(`${prefix}k03`, 'after');
        await kv.delete(`${prefix}k04`);
        await kv.put(`${other}y`, 'after');
        await until(async () =>
          expect(m.state).toEqual(new Map([...(await contents(kv, prefix)), ...(await contents(kv, other))])),
        );
        // k20 and `new` were read after their changes: the watch's replays of them are not handed on.
        const mine = m.applied.filter((e) => e.key.startsWith(prefix));
        expect(mine.map((e) => [e.type, e.key.slice(prefix.length)])).toEqual([
          ['put', 'k00'],
          ['delete', 'k21'],
          ['put', 'k03'],
          ['delete', 'k04'],
        ]);
        expect(m.applied.filter((e) => e.key.startsWith(other)).map((e) => e.key)).toEqual([`${other}y`]);
        expect(m.reloads()).toBe(1);
      });
    }

    it('resumes after its watch drops, from the last change it handed on, losing none and repeating none', async () => {
      h = await makeHarness();
      const kv = await h.connect();
      const prefix = `/rw/${randomUUID()}/`;
      await kv.put(`${prefix}a`, '1');
      const d = droppable(kv);
      const m = mirror();
      const w = start({ kv: d.kv, clock: h.clock, watch: [prefix], load: [prefix], ...m.hooks });
      await w.established();
      for (let round = 0; round < 3; round++) {
        await kv.put(`${prefix}a`, `before drop ${round}`);
        await until(async () => expect(m.state).toEqual(await contents(kv, prefix)));
        d.drop();
        // Changes while it is down arrive once it is back.
        await kv.put(`${prefix}b${round}`, 'while down');
        await kv.delete(`${prefix}a`);
        await kv.put(`${prefix}a`, `after drop ${round}`);
        await until(async () => {
          expect(w.live).toBe(true);
          expect(m.state).toEqual(await contents(kv, prefix));
        });
      }
      expect(m.reloads()).toBe(1);
      expect(m.failures.map((f) => [f.phase, f.compacted])).toEqual([
        ['watch', false],
        ['watch', false],
        ['watch', false],
      ]);
      expect(repeats(m.applied)).toEqual([]);
      // Every change after the load, each once.
      expect(m.applied).toHaveLength(3 * 4);
    });

    it('reloads once the history it would resume from is compacted, and ends at the store’s state', async () => {
      h = await makeHarness();
      const kv = await h.connect();
      const prefix = `/rw/${randomUUID()}/`;
      const watchOnly = `/rw/${randomUUID()}/`;
      await kv.put(`${prefix}a`, '1');
      await kv.put(`${prefix}b`, '1');
      const d = droppable(kv);
      const m = mirror();
      const w = start({ kv: d.kv, clock: h.clock, watch: [prefix, watchOnly], load: [prefix], ...m.hooks });
      await w.established();
      d.drop();
      await kv.delete(`${prefix}a`);
      await kv.put(`${prefix}c`, 'while down');
      await kv.put(`${watchOnly}x`, 'while down');
      await h.compact(await kv.revision());
      await until(() => {
        expect(m.reloads()).toBe(2);
        expect(w.live).toBe(true);
      });
      expect(m.state).toEqual(await contents(kv, prefix));
      expect(m.failures.map((f) => [f.phase, f.compacted])).toEqual([
        ['watch', false],
        // The resume is refused (etcd opens the watch, then cancels it; memory refuses it at once).
        [m.failures[1]!.phase, true],
      ]);
      // After a reload, the changes the load showed are not handed on: only later ones are.
      const handed = m.applied.length;
      await kv.put(`${prefix}d`, 'after');
      await kv.put(`${watchOnly}y`, 'after');
      await until(() => expect(m.applied.length).toBe(handed + 2));
      expect(m.state).toEqual(new Map([...(await contents(kv, prefix)), [`${watchOnly}y`, 'after']]));
      expect(repeats(m.applied)).toEqual([]);
    });

    it('watches an unloaded prefix from the revision it is given, and stops when close is called', async () => {
      h = await makeHarness();
      const kv = await h.connect();
      const prefix = `/rw/${randomUUID()}/`;
      const from = (await kv.revision()) + 1;
      await kv.put(`${prefix}early`, '1');
      const m = mirror();
      const w = start({ kv, clock: h.clock, watch: [prefix], fromRevision: from, ...m.hooks });
      await w.established();
      await until(() => expect([...m.state.keys()]).toEqual([`${prefix}early`]));
      await w.close();
      expect(w.live).toBe(false);
      await kv.put(`${prefix}late`, '1');
      await h.clock.advance(100);
      expect([...m.state.keys()]).toEqual([`${prefix}early`]);
      expect(m.reloads()).toBe(0);
    });
  });
}

suite('MemoryKv', memoryHarness);
// An etcd of this file's own: compaction is etcd-wide, and the shared one is compacted by other
// files' tests running beside these (the Kv contract's watch re-sync), which would turn a resume
// these tests expect into a reload.
let etcd: EtcdServer | undefined;
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});
suite('EtcdKv', () => etcdHarness([etcd!.clientUrl]));
