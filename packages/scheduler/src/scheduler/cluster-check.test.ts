import { FEATURE_SETTLE_MS, FakeClock, MemoryKv } from '@maintd/core';
import { eventually } from '@maintd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestScheduler, openScheduler } from '../testing/index.js';

const HELD = { held_tasks: { description: 'queued tasks of a parked store are held' } };

describe('the cluster check', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  function fleet(): { kv: MemoryKv; clock: FakeClock; prefix: string } {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const kv = new MemoryKv({ clock });
    cleanup.push(() => kv.close());
    return { kv, clock, prefix: `/test/${Math.random().toString(36).slice(2)}` };
  }

  const open = async (
    f: { kv: MemoryKv; clock: FakeClock; prefix: string },
    version: string,
    features: Record<string, { description: string }>,
    onTooOld?: (message: string) => void,
  ): Promise<TestScheduler> => {
    const s = await openScheduler(
      f.kv,
      f.clock,
      { etcd: { prefix: f.prefix } },
      { version, features, ...(onTooOld ? { onTooOld } : {}) },
    );
    cleanup.push(() => s.close());
    return s;
  };
  const messages = (s: TestScheduler): string[] => s.logs.map((l) => String(l.msg));

  it('keeps a feature off while an older master is live, says so, and switches it on once that master has left', async () => {
    const f = fleet();
    const older = await open(f, '0.1.0', {});
    const newer = await open(f, '0.2.0', HELD);
    newer.scheduler.start();
    await eventually(() =>
      expect(messages(newer)).toContain(
        `cluster: masters run 0.1.0, 0.2.0; held_tasks waits for ${older.config.masterId}: behaving as the previous release until then`,
      ),
    );
    expect(await newer.store.cluster.read()).toBeUndefined();
    expect(newer.scheduler.featureInUse('held_tasks')).toBe(false);

    await older.close();
    await f.clock.advance(5_000);
    await eventually(async () =>
      expect((await newer.store.cluster.read())?.features.map((x) => x.name)).toEqual(['held_tasks']),
    );
    expect(messages(newer)).toContain(
      `cluster feature(s) held_tasks switched on: every live master understands them; masters write them from ${FEATURE_SETTLE_MS / 1000} s from now`,
    );
    // Written only once every master has had a check to learn of it.
    expect(newer.scheduler.featureInUse('held_tasks')).toBe(false);
    await f.clock.advance(FEATURE_SETTLE_MS);
    expect(newer.scheduler.featureInUse('held_tasks')).toBe(true);
  });

  it('switches nothing on while an operator preserves the downgrade', async () => {
    const f = fleet();
    const a = await open(f, '0.2.0', HELD);
    await a.store.cluster.setPreserveDowngrade(true, 'ops');
    a.scheduler.start();
    await eventually(() =>
      expect(messages(a)).toContain(
        'cluster: masters run 0.2.0; held_tasks is held off by preserve_downgrade: behaving as the previous release until then',
      ),
    );
    await f.clock.advance(20_000);
    expect((await a.store.cluster.read())?.features).toEqual([]);
  });

  it('stops claiming and asks to stop when a feature it does not understand is switched on', async () => {
    const f = fleet();
    const stopped: string[] = [];
    const older = await open(f, '0.1.0', {}, (m) => stopped.push(m));
    const newer = await open(f, '0.2.0', HELD);
    // As if the older master had registered just after a newer one read the registrations.
    await newer.store.cluster.enable(['held_tasks']);
    older.scheduler.start();
    await eventually(() => expect(stopped).toHaveLength(1));
    expect(stopped[0]).toMatch(
      /^this maintd \(0\.1\.0\) is older than its cluster: feature\(s\) held_tasks are switched on/,
    );
    expect(older.logs.find((l) => l.level === 60)?.msg).toBe(stopped[0]);
    expect(older.scheduler.runningCount()).toBe(0);
  });

  it('names, as the release to install, the version of the live masters that understand what it lacks, never its own', async () => {
    const f = fleet();
    const stopped: string[] = [];
    const older = await open(f, '0.1.0', {}, (m) => stopped.push(m));
    const newer = await open(f, '0.2.0-next.3', HELD);
    // A master as old as the refused one is live too: its version is no answer either.
    await open(f, '0.1.0', {});
    await newer.store.cluster.enable(['held_tasks']);
    older.scheduler.start();
    await eventually(() => expect(stopped).toHaveLength(1));
    expect(stopped[0]).toContain(
      'feature(s) held_tasks are switched on, and it would misread what they write. Masters of 0.2.0-next.3 understand them: install 0.2.0-next.3 or newer;',
    );
    expect(stopped[0]).not.toMatch(/install 0\.1\.0/);
  });

  it('names the master that switched a feature on when no live master understands it', async () => {
    const f = fleet();
    const stopped: string[] = [];
    const newer = await open(f, '0.2.0', HELD);
    await newer.store.cluster.enable(['held_tasks']);
    await newer.close();
    const older = await open(f, '0.1.0', {}, (m) => stopped.push(m));
    older.scheduler.start();
    await eventually(() => expect(stopped).toHaveLength(1));
    expect(stopped[0]).toContain(
      `No live master understands them: install the release ${newer.config.masterId} ran when switching them on, or newer;`,
    );
  });
});
