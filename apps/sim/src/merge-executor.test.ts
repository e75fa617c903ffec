import { FakeClock } from '@maintd/core';
import { describe, expect, it } from 'vitest';
import type { SimReply } from './fleet.js';
import { AbandonedError, MergeExecutor, type MergeRun } from './merge-executor.js';

const work =
  (latencyMs: number): (() => SimReply) =>
  () => ({ status: 200, body: { reclaimed: 1 }, latencyMs });

describe('a worker’s merge executor', () => {
  it('runs at most `concurrency` merges at once and starts the others in arrival order', async () => {
    const clock = new FakeClock(0);
    const runs: MergeRun[] = [];
    const executor = new MergeExecutor(clock, 3, 2, { onRun: (r) => runs.push(r) });
    const done: string[] = [];
    const call = (store: string, ms: number): Promise<void> =>
      executor.run(store, work(ms)).then(() => void done.push(`${store}@${clock.now()}`));
    const all = Promise.all([call('a', 45_000), call('b', 10_000), call('c', 10_000), call('d', 10_000)]);
    await clock.advance(0);
    expect([executor.running, executor.queued]).toEqual([2, 2]);
    await clock.advance(60_000);
    await all;
    expect(done).toEqual(['b@10000', 'c@20000', 'd@30000', 'a@45000']);
    expect(runs.map((r) => [r.store, r.startedAt, r.busyMs, r.waitedMs])).toEqual([
      ['a', 0, 45_000, 0],
      ['b', 0, 10_000, 0],
      ['c', 10_000, 10_000, 10_000],
      ['d', 20_000, 10_000, 20_000],
    ]);
    expect(runs.every((r) => r.worker === 3)).toBe(true);
    expect([executor.running, executor.queued]).toEqual([0, 0]);
  });

  it('drops a queued merge whose caller went away, and finishes one already running', async () => {
    const clock = new FakeClock(0);
    const abandoned: [string, number][] = [];
    const runs: string[] = [];
    const executor = new MergeExecutor(clock, 0, 1, {
      onRun: (r) => runs.push(r.store),
      onAbandoned: (_w, store, waitedMs) => abandoned.push([store, waitedMs]),
    });
    const first = new AbortController();
    const second = new AbortController();
    const running = executor.run('broken', work(45_000), first.signal);
    const queued = executor.run('healthy', work(5_000), second.signal);
    const rejected = expect(queued).rejects.toBeInstanceOf(AbandonedError);
    await clock.advance(30_000);
    first.abort();
    second.abort();
    await rejected;
    expect(abandoned).toEqual([['healthy', 30_000]]);
    await clock.advance(15_000);
    await expect(running).resolves.toMatchObject({ status: 200 });
    expect(runs).toEqual(['broken']);
    await expect(executor.run('late', work(1), second.signal)).rejects.toBeInstanceOf(AbandonedError);
  });

  it('never queues without a bound, and refuses a bound below one', async () => {
    const clock = new FakeClock(0);
    const executor = new MergeExecutor(clock, 0);
    const calls = Array.from({ length: 50 }, (_, i) => executor.run(`s${i}`, work(1000)));
    await clock.advance(0);
    expect([executor.running, executor.queued]).toEqual([50, 0]);
    await clock.advance(1000);
    await Promise.all(calls);
    expect(() => new MergeExecutor(clock, 0, 0)).toThrow(RangeError);
  });
});
