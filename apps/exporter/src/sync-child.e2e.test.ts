import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { ClosedError, EtcdKv, StoreUnavailableError, TaskStore } from '@maintd/core';
import { freePort } from '@maintd/core/testing';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { summarize } from './aggregate.js';
import { loadAggregate } from './load.js';
import { childLoader } from './sync-child.js';
import { EXPORTER_BIN } from '../test/processes.js';

const endpoints = inject('etcdEndpoints');
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Pids of this process's live children (Linux). */
async function myChildren(): Promise<string[]> {
  return (await readFile(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')).split(' ').filter(Boolean);
}

describe('a full sync in a child process (the built binary)', () => {
  it('reads the same aggregate as an in-process read, and the child is gone once it has answered', async () => {
    const prefix = `/test/${randomUUID()}`;
    const kv = new EtcdKv({ endpoints });
    cleanup.push(() => kv.close());
    const store = await TaskStore.open({
      kv,
      prefix,
      masterId: 'm1',
      info: { host: 'h', pid: 1, version: 't', started_at: 0, pools: {} },
    });
    cleanup.push(() => store.close());
    for (let i = 0; i < 30; i++) await store.enqueue(i % 2 ? 'merge_wal' : 'compact', `store-${i}`);
    await store.park('compact', 'store-3', { reason: 'disk being replaced', by: 'ops' });
    await store.putStats([
      { name: 'store-1', pending_wal_generations: 4, fragment_count: 1, row_count: 1, owners: [], scanned_at: 0 },
    ]);

    const before = await myChildren();
    const load = childLoader({ entry: EXPORTER_BIN, kv: { endpoints }, probe: kv, pageSize: 7 });
    const child = await load(prefix, new AbortController().signal);
    const here = await loadAggregate(kv, prefix);
    const now = Date.now();
    expect(summarize(child, now)).toEqual(summarize(here, now));
    expect(summarize(child, now).kinds.find((k) => k.kind === 'compact')).toMatchObject({ parked: 1 });
    expect(child.revision).toBeGreaterThan(0);
    await expect.poll(myChildren).toEqual(before);
  });

  it('fails as etcd being unavailable, starting no process, while etcd does not answer', async () => {
    const down = { endpoints: [`http://127.0.0.1:${await freePort()}`], callTimeoutMs: 500 };
    const probe = new EtcdKv(down);
    cleanup.push(() => probe.close());
    const before = await myChildren();
    const load = childLoader({ entry: EXPORTER_BIN, kv: down, probe });
    await expect(load('/maintd', new AbortController().signal)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await myChildren()).toEqual(before);
  });

  it('ends the child when the load is aborted', async () => {
    // An endpoint that accepts connections and never answers: the child's read waits on it.
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => silent.close(r)));
    const { port } = silent.address() as AddressInfo;
    const kv = new EtcdKv({ endpoints });
    cleanup.push(() => kv.close());
    const before = await myChildren();
    const stop = new AbortController();
    const load = childLoader({
      entry: EXPORTER_BIN,
      kv: { endpoints: [`http://127.0.0.1:${port}`], callTimeoutMs: 60_000 },
      probe: kv,
    });
    const loading = load('/maintd', stop.signal);
    await expect.poll(async () => (await myChildren()).length).toBeGreaterThan(before.length);
    stop.abort(new ClosedError('exporter is closing'));
    await expect(loading).rejects.toBeInstanceOf(ClosedError);
    await expect.poll(myChildren).toEqual(before);
  });
});
