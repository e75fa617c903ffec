import { FakeClock, MemoryKv, type TaskRecord } from '@maintd/core';
import { eventually } from '@maintd/core/testing';
import { Counter } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { planPools } from '../scheduler/pools.js';
import { type TestScheduler, openScheduler } from '../testing/index.js';
import { KINDS, KIND_NAMES, type KindRegistry, kindNames, kindSpec } from './index.js';
import type { KindSpec } from './spec.js';

/** A plain kind as a test adds it: one spec, and one line in a registry of its own. */
const vacuum: KindSpec = {
  route: 'vacuum',
  settings: {},
  run: (target) => Promise.resolve({ outcome: { ok: true, detail: `vacuumed ${target}` }, attempts: [] }),
};
const WITH_VACUUM: KindRegistry = { ...KINDS, vacuum };

/** A kind with a pool and metrics of its own, both declared in its spec: still one spec and one line. */
const defrag: KindSpec = {
  route: 'defrag',
  pool: { name: 'defrag', sizeSetting: 'DEFRAG_CONCURRENCY' },
  settings: {},
  metrics: (registry) => {
    const moved = new Counter({ name: 'master_defrag_pages_moved_total', help: 'Pages moved.', registers: [registry] });
    return (run) => moved.inc(run.facts?.moved ?? 0);
  },
  run: () => Promise.resolve({ outcome: { ok: true, detail: 'moved 3 pages' }, attempts: [], facts: { moved: 3 } }),
};
const WITH_DEFRAG: KindRegistry = { ...KINDS, defrag };

describe('the kind registry', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function open(kv: MemoryKv, clock: FakeClock, prefix: string, kinds?: KindRegistry): Promise<TestScheduler> {
    const s = await openScheduler(kv, clock, { etcd: { prefix } }, kinds ? { kinds } : {});
    cleanup.push(() => s.close());
    return s;
  }

  it("names a registry's kinds in registry order and refuses a spec lookup outside it", () => {
    expect(kindNames(WITH_VACUUM)).toEqual([...KIND_NAMES, 'vacuum']);
    expect(kindSpec('vacuum', WITH_VACUUM)).toBe(vacuum);
    expect(() => kindSpec('vacuum')).toThrow("kind 'vacuum' is not in this master's registry");
    expect(() => kindSpec('constructor')).toThrow('not in this master');
  });

  it('runs a task of a kind added by one registry line, which a master without that line leaves queued', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    const prefix = `/test/registry-${clock.now()}`;

    // A master of the shipped registry: it lists the task and never claims it.
    const older = await open(kv, clock, prefix);
    older.scheduler.start();
    const { task } = await older.store.enqueue('vacuum', 'store-1', { source: 'manual' });
    await older.store.enqueue('compact', 'store-2', { source: 'manual' });
    await eventually(async () => expect(await older.store.queueDepth('compact')).toBe(0));
    expect(await older.store.getTask(task.id)).toMatchObject({ state: 'queued', attempt: 0 });

    // A master whose registry has the extra line runs it, and says so in its registration.
    const newer = await open(kv, clock, prefix, WITH_VACUUM);
    expect(newer.scheduler.kinds).toEqual([...KIND_NAMES, 'vacuum']);
    newer.scheduler.start();
    const done = await eventually(async () => {
      const t = await newer.store.getTask(task.id);
      expect(t?.state).toBe('done');
      return t as TaskRecord;
    });
    expect(done).toMatchObject({ kind: 'vacuum', detail: 'vacuumed store-1', attempt: 1 });
    const masters = await older.store.listMasters();
    expect(masters.find((m) => m.id === newer.config.masterId)?.kinds).toEqual([...KIND_NAMES, 'vacuum']);
    expect(masters.find((m) => m.id === older.config.masterId)?.kinds).toEqual(KIND_NAMES);
    expect(await newer.metrics.registry.metrics()).toMatch(/^master_tasks_total\{kind="vacuum",result="success"\} 1$/m);
  });

  it('plans a pool a kind declares as its own once its setting gives it slots, and the general pool runs it at 0', () => {
    expect(planPools({ taskConcurrency: 4, own: { merge: 2, defrag: 1 } }, WITH_DEFRAG)).toEqual([
      { name: 'general', kinds: ['compact', 'index_id'], size: 4 },
      { name: 'merge', kinds: ['merge_wal'], size: 2 },
      { name: 'defrag', kinds: ['defrag'], size: 1 },
    ]);
    expect(planPools({ taskConcurrency: 4, own: { merge: 0, defrag: 0 } }, WITH_DEFRAG)).toEqual([
      { name: 'general', kinds: ['merge_wal', 'compact', 'index_id', 'defrag'], size: 4 },
    ]);
  });

  it('runs a kind with its own pool and metrics, both from its spec, and registers the metrics before its first run', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    const s = await openScheduler(
      kv,
      clock,
      { etcd: { prefix: `/test/defrag-${clock.now()}` }, pools: { own: { defrag: 1 } } },
      { kinds: WITH_DEFRAG },
    );
    cleanup.push(() => s.close());
    expect(s.scheduler.poolSizes()).toEqual({ general: 4, merge: 4, defrag: 1 });
    expect(await s.metrics.registry.metrics()).toMatch(/^master_defrag_pages_moved_total 0$/m);
    const { task } = await s.store.enqueue('defrag', 'store-1', { source: 'manual' });
    s.scheduler.start();
    await eventually(async () => expect((await s.store.getTask(task.id))?.state).toBe('done'));
    expect(await s.metrics.registry.metrics()).toMatch(/^master_defrag_pages_moved_total 3$/m);
  });
});
