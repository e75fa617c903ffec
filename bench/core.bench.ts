/**
 * pnpm bench:core — task lifecycle and cooldown throughput against a real etcd, reported as
 * ratios to raw etcd CAS transactions measured in the same run (shared machines are noisy;
 * absolute numbers are not comparable across runs, ratios are).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Etcd3 } from 'etcd3';
import { EtcdKv, TaskStore } from '@maintd/core';
import { interceptKv, startEtcd } from '@maintd/core/testing';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = [1, 16, 64];
const DRAIN_ROUNDS = Number(process.env.BENCH_DRAIN_ROUNDS ?? 3);

async function timed(
  workers: number,
  seconds: number,
  op: (worker: number) => Promise<void>,
): Promise<{ rate: number; lat: number[] }> {
  const end = performance.now() + seconds * 1000;
  const lat: number[] = [];
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < end) {
        const s = performance.now();
        await op(w);
        lat.push(performance.now() - s);
        done++;
      }
    }),
  );
  return { rate: done / ((performance.now() - t0) / 1000), lat };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function rawCas(endpoints: string[], workers: number): Promise<number> {
  const client = new Etcd3({ hosts: endpoints });
  const prefix = `/bench/raw/${randomUUID()}`;
  const revs = new Map<number, string>();
  for (let w = 0; w < workers; w++) {
    const res = await client.put(`${prefix}/${w}`).value('0').exec();
    revs.set(w, res.header.revision);
  }
  const r = await timed(workers, SECONDS, async (w) => {
    const key = `${prefix}/${w}`;
    const res = await client.if(key, 'Mod', '==', revs.get(w)!).then(client.put(key).value('x')).commit();
    if (!res.succeeded) throw new Error('raw CAS lost its own key');
    revs.set(w, res.header.revision);
  });
  await client.delete().prefix(prefix).exec();
  client.close();
  return r.rate;
}

async function lifecycle(endpoints: string[], workers: number): Promise<number> {
  const kv = new EtcdKv({ endpoints });
  const prefix = `/bench/life/${randomUUID()}`;
  const store = await TaskStore.open({ kv, prefix, masterId: 'bench' });
  let n = 0;
  const r = await timed(workers, SECONDS, async () => {
    await store.enqueue('compact', `s-${n++}`);
    for (;;) {
      const claim = await store.claimNext(['compact']);
      if (claim) {
        await store.finish(claim, { ok: true, detail: 'ok' });
        return;
      }
    }
  });
  await store.close();
  await kv.deletePrefix(`${prefix}/`);
  await kv.close();
  return r.rate;
}

async function contendedCooldown(
  endpoints: string[],
): Promise<{ counted: number; p50: number; p99: number; conflicts: number }> {
  const prefix = `/bench/cool/${randomUUID()}`;
  const kvs = Array.from({ length: 6 }, () => new EtcdKv({ endpoints }));
  const stores = await Promise.all(
    kvs.map((kv, i) => TaskStore.open({ kv, prefix, masterId: `m${i}`, cooldown: { afterFailures: 1000 } })),
  );
  const lat: number[] = [];
  let conflicts = 0;
  await Promise.all(
    Array.from({ length: 64 }, async (_, i) => {
      const s = performance.now();
      const r = await stores[i % 6]!.recordFailure('merge_wal', 'hot', `t${i}`, 'boom', 'target');
      lat.push(performance.now() - s);
      if (r.action === 'write') conflicts += r.conflicts;
    }),
  );
  const counted = (await stores[0]!.getCooldown('merge_wal', 'hot'))?.failures ?? 0;
  for (const s of stores) await s.close();
  await kvs[0]!.deletePrefix(`${prefix}/`);
  for (const kv of kvs) await kv.close();
  return { counted, p50: pct(lat, 50), p99: pct(lat, 99), conflicts };
}

/**
 * A bulk reset of `stores` cooldown records, two ways on one etcd: one transaction per store with
 * 16 in flight (the group commit batching them), as releases before the audit trail did, and
 * `bulk.resetCooldowns`, 50 stores a transaction with the one audit entry growing in each.
 */
async function bulkReset(endpoints: string[], stores: number): Promise<{ perStore: number; chunked: number }> {
  const kv = new EtcdKv({ endpoints });
  const prefix = `/bench/bulk/${randomUUID()}`;
  const store = await TaskStore.open({ kv, prefix, masterId: 'bench', cooldown: { afterFailures: 1000 } });
  const pairs = Array.from({ length: stores }, (_, i) => ({ kind: 'compact', target: `s-${i}` }));
  const fill = async (): Promise<void> => {
    for (let i = 0; i < stores; i += 64) {
      await Promise.all(
        pairs.slice(i, i + 64).map((p, j) => store.recordFailure(p.kind, p.target, `t${i + j}`, 'boom', 'target')),
      );
    }
  };
  const by = { by: 'bench@127.0.0.1' };
  await fill();
  let next = 0;
  let t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let p = pairs[next++]; p; p = pairs[next++]) await store.clearCooldown(p.kind, p.target, by);
    }),
  );
  const perStore = performance.now() - t0;
  await fill();
  t0 = performance.now();
  const audit = { who: 'bench', client: '127.0.0.1', action: 'cooldowns.reset', route: 'DELETE /bench' };
  const done = await store.bulk.resetCooldowns(pairs, { ...by, audit });
  const chunked = performance.now() - t0;
  if (done.filter(Boolean).length !== stores) throw new Error('the bulk reset missed stores');
  await store.close();
  await kv.deletePrefix(`${prefix}/`);
  await kv.close();
  return { perStore, chunked };
}

/**
 * A queue drained by 24 claimers, spread over `instances` stores (masters) or all on one, each
 * store fed by its own queue watch as a master's is: masters can race each other for a task,
 * which one instance's claimers never do, and batch fewer claims per transaction. Counts claim
 * transactions that lost to another claimer (a batch of claims counts once).
 */
async function drain(
  endpoints: string[],
  instances: number,
): Promise<{ rate: number; lostPerClaim: number; readsPerClaim: number }> {
  const prefix = `/bench/drain/${randomUUID()}`;
  const tasks = 1200;
  const claimers = 24;
  const kvs = Array.from({ length: instances }, () => new EtcdKv({ endpoints }));
  let lostTxns = 0;
  let reads = 0;
  let counting = false;
  const stores = await Promise.all(
    kvs.map((kv, i) => {
      const counted = interceptKv(kv, async (forward, compares, success, failure) => {
        const r = await forward(compares, success, failure);
        // Group commit sends concurrent claims as one transaction, and a batch that lost a race is
        // sent again one claim at a time: a lost transaction is one whose compares failed.
        const claims = success.some((op) => op.type === 'put' && op.key.startsWith(`${prefix}/claims/`));
        if (counting && claims && !r.succeeded) lostTxns++;
        if (counting && compares.length === 0) reads++;
        return r;
      });
      // Registered like real masters: peers share the queue by the registrations they see.
      const masterId = `drain-${i}`;
      const info = {
        id: masterId,
        host: 'bench',
        pid: process.pid,
        version: 'bench',
        started_at: 0,
        pools: { merge: 4 },
      };
      return TaskStore.open({ kv: counted, prefix, masterId, info });
    }),
  );
  // Fed by a queue watch, as a master's scheduler feeds its store: claims take candidates from
  // the mirrored queue head instead of reading a page each.
  const feeds = await Promise.all(
    stores.map(async (store, i) => {
      const feed = await kvs[i]!.watch(store.keys.queuePrefix(), (events) => store.observeQueue(events));
      store.setQueueFeed(true);
      return feed;
    }),
  );
  // Enqueued through a store that claims nothing, so no claimer starts with remembered records.
  const enqueuer = await TaskStore.open({ kv: new EtcdKv({ endpoints }), prefix, masterId: 'enqueuer' });
  for (let i = 0; i < tasks; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => enqueuer.enqueue('merge_wal', `drain-${i + j}`)));
  }
  counting = true;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: claimers }, async (_, c) => {
      const store = stores[c % instances]!;
      for (;;) {
        const claim = await store.claimNext(['merge_wal']);
        if (claim) await store.finish(claim, { ok: true, detail: 'ok' });
        else if ((await store.queueDepth('merge_wal')) === 0) return;
      }
    }),
  );
  const rate = tasks / ((performance.now() - t0) / 1000);
  for (const feed of feeds) await feed.close();
  for (const s of [...stores, enqueuer]) await s.close();
  await kvs[0]!.deletePrefix(`${prefix}/`);
  for (const kv of kvs) await kv.close();
  return { rate, lostPerClaim: lostTxns / tasks, readsPerClaim: reads / tasks };
}

const given = process.env.ETCD_ENDPOINTS?.split(',').filter(Boolean);
const etcd = given ? undefined : await startEtcd();
const endpoints = given ?? [etcd!.clientUrl];
// `tsx bench/core.bench.ts cooldown drain` runs only those cases (lifecycle, cooldown, bulk, drain).
const only = new Set(process.argv.slice(2));
const runs = (name: string): boolean => only.size === 0 || only.has(name);
try {
  console.log(`maintd core benchmark — ${SECONDS}s per case, etcd at ${endpoints.join(',')}`);
  console.log('');
  console.log(
    '| concurrency | raw etcd CAS txn/s | lifecycles/s (enqueue→claim→finish) | ratio = 3 × lifecycle / raw |',
  );
  console.log('|---:|---:|---:|---:|');
  for (const c of runs('lifecycle') ? CONCURRENCY : []) {
    const raw = await rawCas(endpoints, c);
    const life = await lifecycle(endpoints, c);
    console.log(`| ${c} | ${raw.toFixed(0)} | ${life.toFixed(0)} | ${((3 * life) / raw).toFixed(2)} |`);
  }
  if (runs('cooldown')) {
    const cd = await contendedCooldown(endpoints);
    console.log('');
    console.log(
      '| 64 concurrent recordFailure, one target, 6 instances | counted | CAS conflicts (summed over callers) | p50 ms | p99 ms |',
    );
    console.log('|---|---:|---:|---:|---:|');
    console.log(`| | ${cd.counted}/64 | ${cd.conflicts} | ${cd.p50.toFixed(1)} | ${cd.p99.toFixed(1)} |`);
    if (cd.counted !== 64) process.exitCode = 1;
  }
  if (runs('bulk')) {
    // A warm-up round first: the JIT's and the client's start-up are not the comparison.
    await bulkReset(endpoints, 200);
    const b = await bulkReset(endpoints, 1000);
    console.log('');
    console.log('| bulk reset of 1,000 cooldown records | ms |');
    console.log('|---|---:|');
    console.log(`| one transaction per store, 16 in flight (before the audit trail) | ${b.perStore.toFixed(0)} |`);
    console.log(`| 50 stores a transaction, one audit entry counted in each | ${b.chunked.toFixed(0)} |`);
  }
  if (runs('drain')) {
    // Whichever layout runs first pays for the JIT's warm-up (it moved the ratio by a third), so
    // one warm-up round of each goes uncounted and the rounds after it alternate; each row is the
    // median round.
    type Drain = Awaited<ReturnType<typeof drain>>;
    const rounds: { one: Drain[]; six: Drain[] } = { one: [], six: [] };
    await drain(endpoints, 1);
    await drain(endpoints, 6);
    for (let r = 0; r < DRAIN_ROUNDS; r++) {
      rounds.one.push(await drain(endpoints, 1));
      rounds.six.push(await drain(endpoints, 6));
    }
    const mid = (ds: Drain[]): Drain => {
      const d = [...ds].sort((a, b) => a.rate - b.rate)[Math.floor(ds.length / 2)];
      if (!d) throw new Error('no drain rounds');
      return d;
    };
    const one = mid(rounds.one);
    const six = mid(rounds.six);
    console.log('');
    console.log(
      `| 1,200 queued tasks drained by 24 claimers (median of ${DRAIN_ROUNDS} alternated rounds) | tasks/s | lost claim txns per claim | read txns per claim | ratio to one instance |`,
    );
    console.log('|---|---:|---:|---:|---:|');
    for (const [name, d] of [
      ['on one instance', one],
      ['spread over 6 instances (6 masters)', six],
    ] as const) {
      console.log(
        `| ${name} | ${d.rate.toFixed(0)} | ${d.lostPerClaim.toFixed(2)} | ${d.readsPerClaim.toFixed(2)} | ${(d.rate / one.rate).toFixed(2)} |`,
      );
    }
  }
} finally {
  await etcd?.stop();
}
