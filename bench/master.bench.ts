/**
 * pnpm bench:master — the master's sweep cost and API throughput against a real etcd, as
 * ratios to baselines measured in the same run (one prefix read of the same stats rows; a bare
 * Hono route), plus the master's RSS with a large history. Goals of the API part (issues #16 and
 * #31): a page of 50 tasks with 100k of history and a page of 100 cooldowns at 10k cooling
 * targets each at ≥ 0.3 of the bare route, and ≤ 150 MB RSS with 50 readers of pages.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import {
  EtcdKv,
  FakeClock,
  type Kv,
  TaskStore,
  createIdGenerator,
  encodeCooldown,
  encodeTask,
  keysFor,
  seededRandom,
} from '@maintd/core';
import { type Config, Scheduler, createMetrics } from '@maintd/scheduler';
import { testConfig } from '@maintd/scheduler/testing';
import { createTestCa, freePort, startEtcd } from '@maintd/core/testing';
import { pino } from 'pino';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

/** Counts round trips through the Kv port. */
function counting(kv: Kv): { kv: Kv; calls: () => number; reset: () => void } {
  let n = 0;
  const wrap =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    (...a: A): Promise<R> => {
      n++;
      return f(...a);
    };
  return {
    kv: {
      get: wrap((k: string) => kv.get(k)),
      range: wrap((p: string, o?: Parameters<Kv['range']>[1]) => kv.range(p, o)),
      txn: wrap((c: Parameters<Kv['txn']>[0], s: Parameters<Kv['txn']>[1], f?: Parameters<Kv['txn']>[2]) =>
        kv.txn(c, s, f),
      ),
      put: wrap((k: string, v: string, o?: { lease?: string }) => kv.put(k, v, o)),
      delete: wrap((k: string) => kv.delete(k)),
      deletePrefix: wrap((p: string) => kv.deletePrefix(p)),
      grant: wrap((t: number, o?: Parameters<Kv['grant']>[1]) => kv.grant(t, o)),
      watch: (p, l, o) => kv.watch(p, l, o),
      revision: wrap(() => kv.revision()),
      close: () => kv.close(),
    },
    calls: () => n,
    reset: () => (n = 0),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function config(prefix: string, endpoints: string[]): Config {
  return testConfig({
    masterId: 'bench',
    etcd: { endpoints, prefix, leaseTtlSecs: 30 },
    workers: { timeoutSecs: 60 },
    tasks: { historyLimit: 1_000_000, historyTtlSecs: 0 },
    cooldown: { afterFailures: 1, maxPercent: 100 },
    shutdownGraceSecs: 1,
    logLevel: 'silent',
  });
}

async function sweepCost(endpoints: string[], stores: number): Promise<string> {
  const prefix = `/bench/sweep/${randomUUID()}`;
  const raw = new EtcdKv({ endpoints });
  const c = counting(raw);
  const clock = new FakeClock();
  const store = await TaskStore.open({
    kv: c.kv,
    clock,
    prefix,
    masterId: 'bench',
    historyLimit: 1_000_000,
    cooldown: config(prefix, endpoints).cooldown,
  });
  const names = Array.from({ length: stores }, (_, i) => `store-${String(i).padStart(6, '0')}`);
  const over = (i: number): boolean => i % 20 === 0; // 5% need a merge
  await store.putStats(
    names.map((name, i) => ({
      name,
      pending_wal_generations: over(i) ? 50 : 1,
      fragment_count: 1,
      row_count: 1,
      owners: [],
      scanned_at: 0,
    })),
  );
  for (let i = 0; i < stores; i += 100)
    await store.recordFailure('merge_wal', names[i]!, `t${i}`, 'Not found', 'target'); // 1% cooling
  for (let i = 0; i < stores; i++)
    if (over(i) && i % 100 !== 0) await store.enqueue('merge_wal', names[i]!, { source: 'sweep' });
  const scheduler = new Scheduler({
    store,
    kv: c.kv,
    config: config(prefix, endpoints),
    clock,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
  });

  const sweepTimes: number[] = [];
  let trips = 0;
  let last = { enqueued: 0, cooldown: 0, active: 0 };
  for (let i = 0; i < 5; i++) {
    c.reset();
    const t0 = performance.now();
    const r = await scheduler.sweepOnce('merge_wal');
    sweepTimes.push(performance.now() - t0);
    trips = c.calls();
    last = { enqueued: r.enqueued, cooldown: r.skipped.cooldown, active: r.skipped.active };
  }
  // The baseline: the stats read alone, in the sweep's own page size (a 100k-store prefix is
  // too big for one response), with no decoding.
  const baseTimes: number[] = [];
  let pages = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    pages = 0;
    for (let from: string | undefined; ;) {
      const page = await raw.range(store.keys.statsPrefix, { limit: 10_000, ...(from ? { fromKey: from } : {}) });
      pages++;
      const lastKey = page.kvs.at(-1)?.key;
      if (!page.more || !lastKey) break;
      from = `${lastKey}\0`;
    }
    baseTimes.push(performance.now() - t0);
  }
  // Ten more stores cross the threshold: the next sweep costs ten transactions more.
  await store.putStats(
    names.slice(1, 11).map((name) => ({
      name,
      pending_wal_generations: 50,
      fragment_count: 1,
      row_count: 1,
      owners: [],
      scanned_at: 0,
    })),
  );
  c.reset();
  const withNew = await scheduler.sweepOnce('merge_wal');
  const tripsWithNew = c.calls();
  await store.close();
  await raw.deletePrefix(`${prefix}/`);
  await raw.close();
  const ratio = median(sweepTimes) / median(baseTimes);
  return `| ${stores} | ${last.cooldown} cooling, ${last.active} active, ${last.enqueued} new | ${trips} (${pages} stats pages) | ${tripsWithNew} (${withNew.enqueued} new) | ${median(sweepTimes).toFixed(1)} | ${median(baseTimes).toFixed(1)} | ${ratio.toFixed(2)} |`;
}

async function seedHistory(endpoints: string[], prefix: string, tasks: number, cooldowns: number): Promise<void> {
  const kv = new EtcdKv({ endpoints });
  const keys = keysFor(prefix);
  const clock = new FakeClock(Date.now() - tasks * 10);
  const newId = createIdGenerator(clock, seededRandom(7));
  for (let i = 0; i < tasks; i += 100) {
    const ops = [];
    for (let j = i; j < Math.min(tasks, i + 100); j++) {
      await clock.advance(10);
      const id = newId();
      const t = clock.now();
      ops.push({
        type: 'put' as const,
        key: keys.task(id),
        value: encodeTask({
          id,
          kind: j % 2 ? 'merge_wal' : 'compact',
          target: `store-${j % 5000}`,
          state: 'done',
          source: 'sweep',
          enqueued_at: t,
          started_at: t,
          finished_at: t + 5,
          attempt: 1,
          detail: 'merged 12 generations across 3/3 workers',
        }),
      });
    }
    await kv.txn([], ops);
  }
  for (let i = 0; i < cooldowns; i += 100) {
    const ops = [];
    for (let j = i; j < Math.min(cooldowns, i + 100); j++) {
      const target = `broken-${j}`;
      ops.push({
        type: 'put' as const,
        key: keys.cooldown('merge_wal', target),
        value: encodeCooldown({
          kind: 'merge_wal',
          target,
          failures: 4,
          until_ms: Date.now() + 3_600_000,
          last_error: 'http://w1: HTTP 500: Not found: /data/x.lance/data/0.lance',
          last_error_class: 'target',
          first_failure_ms: 1,
          last_failure_ms: 2,
          last_task_id: 't',
        }),
      });
    }
    await kv.txn([], ops);
  }
  await kv.close();
}

function spawnNode(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The master binary on the seeded prefix, with no sweeps or scans of its own, and `env`. */
function spawnMaster(
  endpoints: string[],
  prefix: string,
  port: number,
  env: Record<string, string> = {},
): ChildProcess {
  return spawnNode([join(root, 'apps/master/bin/maintd.js')], {
    ETCD_ENDPOINTS: endpoints.join(','),
    ETCD_PREFIX: prefix,
    MASTER_HOST: '127.0.0.1',
    MASTER_PORT: String(port),
    TASK_HISTORY_LIMIT: '200000',
    TASK_HISTORY_TTL_SECS: '0',
    STATS_SCAN_INTERVAL_SECS: '0',
    MERGE_WAL_INTERVAL_SECS: '0',
    COMPACTION_INTERVAL_SECS: '0',
    LOG_LEVEL: 'warn',
    ...env,
  });
}

async function waitHttp(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never came up`);
}

async function load(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ rps: number; p99: number; errors: number }> {
  // Over https, autocannon does not verify the certificate: the handshake's cost is what counts.
  const r = await autocannon({ url, connections: 50, duration: SECONDS, headers });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/** Waits until `url` answers 200 over HTTPS, trusting `ca` (PEM). */
async function waitHttps(url: string, ca: Buffer): Promise<void> {
  const ok = (): Promise<boolean> =>
    new Promise((resolve) => {
      const req = httpsRequest(url, { ca, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
  for (let i = 0; i < 600; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never came up`);
}

/**
 * The page of 50 tasks as a production master serves it (docs/DEPLOY.md): over HTTPS, with reads
 * that need a token (MASTER_API_READS=token, a tokens file), against a bare Hono route over
 * HTTPS with the same certificate. 50 keep-alive connections: one handshake each.
 */
async function secureApi(endpoints: string[], prefix: string, children: ChildProcess[]): Promise<string[]> {
  const ca = await createTestCa();
  try {
    const { cert, key } = await ca.issue('api');
    const token = randomBytes(24).toString('base64url');
    const tokens = join(ca.dir, 'api-tokens');
    await writeFile(tokens, `reader read sha256:${createHash('sha256').update(token).digest('hex')}\n`, {
      mode: 0o600,
    });
    const barePort = await freePort();
    const bare = spawnNode(
      [
        '--input-type=module',
        '-e',
        `import { readFileSync } from 'node:fs'; import { createServer } from 'node:https'; import { serve } from '@hono/node-server'; import { Hono } from 'hono'; const app = new Hono(); app.get('/', (c) => c.json({ ok: true })); serve({ fetch: app.fetch, hostname: '127.0.0.1', port: ${barePort}, createServer, serverOptions: { cert: readFileSync(${JSON.stringify(cert)}), key: readFileSync(${JSON.stringify(key)}), minVersion: 'TLSv1.2' } });`,
      ],
      {},
    );
    children.push(bare);
    const port = await freePort();
    const master = spawnMaster(endpoints, prefix, port, {
      MASTER_TLS_CERT: cert,
      MASTER_TLS_KEY: key,
      MASTER_API_TOKENS_FILE: tokens,
      MASTER_API_READS: 'token',
    });
    children.push(master);
    const caPem = await readFile(ca.caCert);
    await waitHttps(`https://127.0.0.1:${barePort}/`, caPem);
    await waitHttps(`https://127.0.0.1:${port}/readyz`, caPem);
    await new Promise((r) => setTimeout(r, 3000));
    const bareUrl = `https://127.0.0.1:${barePort}/`;
    const before = await load(bareUrl);
    const tasks = await load(`https://127.0.0.1:${port}/api/v1/tasks?limit=50`, { authorization: `Bearer ${token}` });
    const after = await load(bareUrl);
    master.kill('SIGTERM');
    bare.kill('SIGTERM');
    await new Promise((r) => master.once('exit', r));
    const around = (before.rps + after.rps) / 2;
    return [
      `| bare Hono \`GET /\` over HTTPS (baseline, mean of its 2 runs) | ${around.toFixed(0)} | ${Math.max(before.p99, after.p99)} | ${before.errors + after.errors} | 1.000 |`,
      `| \`GET /api/v1/tasks?limit=50\` over HTTPS with a \`read\` token | ${tasks.rps.toFixed(0)} | ${tasks.p99} | ${tasks.errors} | ${(tasks.rps / around).toFixed(3)} |`,
    ];
  } finally {
    await ca.remove();
  }
}

const given = process.env.ETCD_ENDPOINTS?.split(',').filter(Boolean);
const etcd = given ? undefined : await startEtcd();
const endpoints = given ?? [etcd!.clientUrl];
const children: ChildProcess[] = [];
// `tsx bench/master.bench.ts sweep` (or `api`) runs only that part.
const only = new Set(process.argv.slice(2));
const runs = (name: string): boolean => only.size === 0 || only.has(name);
try {
  console.log(`maintd master benchmark — etcd at ${endpoints.join(',')}, ${SECONDS}s per load case`);
  if (runs('sweep')) {
    console.log('\n## Sweep cost (merge_wal; 5% of stores over threshold, 1% cooling, the rest of those active)\n');
    console.log(
      '| stores | sweep outcome | etcd round trips | with 10 new stores | sweep ms (median) | one paged read of stats ms | ratio |',
    );
    console.log('|---:|---|---:|---:|---:|---:|---:|');
    for (const n of [1000, 10_000, 100_000]) console.log(await sweepCost(endpoints, n));
  }

  if (runs('api')) {
    const prefix = `/bench/api/${randomUUID()}`;
    const t0 = performance.now();
    await seedHistory(endpoints, prefix, 100_000, 10_000);
    console.log(`\nseeded 100k tasks and 10k cooldowns in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const barePort = await freePort();
    const bare = spawnNode(
      [
        '--input-type=module',
        '-e',
        `import { serve } from '@hono/node-server'; import { Hono } from 'hono'; const app = new Hono(); app.get('/', (c) => c.json({ ok: true })); serve({ fetch: app.fetch, hostname: '127.0.0.1', port: ${barePort} });`,
      ],
      {},
    );
    children.push(bare);
    const masterPort = await freePort();
    const master = spawnMaster(endpoints, prefix, masterPort);
    children.push(master);
    await waitHttp(`http://127.0.0.1:${barePort}/`);
    await waitHttp(`http://127.0.0.1:${masterPort}/readyz`);

    const rss = async (): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${masterPort}/metrics`)).text();
      return Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1] ?? NaN) / 1024 / 1024;
    };
    // The master reads its cooldown index in the background once it is ready: let that settle.
    await new Promise((r) => setTimeout(r, 3000));
    const rssIdle = await rss();
    // The bare route runs before every case and after the last: each case's ratio is to the mean
    // of the two around it, so that load from elsewhere on a shared machine skews both alike.
    const bareUrl = `http://127.0.0.1:${barePort}/`;
    const bares = [await load(bareUrl)];
    const tasks = await load(`http://127.0.0.1:${masterPort}/api/v1/tasks?limit=50`);
    bares.push(await load(bareUrl));
    const rssTasks = await rss();
    // The dashboard's read: the first page of 100, served from the master's watch index.
    const pageUrl = `http://127.0.0.1:${masterPort}/api/v1/scheduler/cooldowns?limit=100`;
    const first = await fetch(pageUrl);
    const firstPage = (await first.json()) as unknown[];
    if (firstPage.length !== 100 || first.headers.get('x-total-count') !== '10000' || !first.headers.get('link')) {
      throw new Error(`unexpected first page: ${firstPage.length} items of ${first.headers.get('x-total-count')}`);
    }
    const paged = await load(pageUrl);
    bares.push(await load(bareUrl));
    const rssPaged = await rss();
    // Existing clients' read: the whole list, unpaged (about 3 MB).
    const cooldowns = await load(`http://127.0.0.1:${masterPort}/api/v1/scheduler/cooldowns`);
    bares.push(await load(bareUrl));
    const rssCooldowns = await rss();
    console.log('\n## API under 50 connections (autocannon), 100k tasks of history, 10k cooling targets\n');
    console.log('| route | req/s | p99 ms | errors | ratio to bare Hono (the runs before and after) |');
    console.log('|---|---:|---:|---:|---:|');
    const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    const baseline = {
      rps: mean(bares.map((b) => b.rps)),
      p99: Math.max(...bares.map((b) => b.p99)),
      errors: bares.reduce((n, b) => n + b.errors, 0),
    };
    for (const [name, r, around] of [
      ['bare Hono `GET /` (baseline, mean of its 4 runs)', baseline, baseline.rps],
      ['`GET /api/v1/tasks?limit=50` (goal ≥ 0.3)', tasks, mean([bares[0]!.rps, bares[1]!.rps])],
      ['`GET /api/v1/scheduler/cooldowns?limit=100` (goal ≥ 0.3)', paged, mean([bares[1]!.rps, bares[2]!.rps])],
      ['`GET /api/v1/scheduler/cooldowns` (unpaged, about 3 MB)', cooldowns, mean([bares[2]!.rps, bares[3]!.rps])],
    ] as const) {
      console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p99} | ${r.errors} | ${(r.rps / around).toFixed(3)} |`);
    }
    console.log('\n## Master RSS (100k tasks of history, 10k cooldowns; goal ≤ 150 MB with 50 readers of pages)\n');
    console.log('| when | RSS MB |');
    console.log('|---|---:|');
    console.log(`| started, idle (3 s after ready: watches open, cooldown index read) | ${rssIdle.toFixed(0)} |`);
    console.log(`| after the \`/tasks\` load | ${rssTasks.toFixed(0)} |`);
    console.log(`| after the paged \`/cooldowns?limit=100\` load (50 readers; goal ≤ 150) | ${rssPaged.toFixed(0)} |`);
    console.log(`| after the \`/cooldowns\` load (50 × 3 MB responses in flight) | ${rssCooldowns.toFixed(0)} |`);
    master.kill('SIGTERM');
    await new Promise((r) => master.once('exit', r));
    console.log('\n## The same over HTTPS, reads needing a token (MASTER_TLS_*, MASTER_API_READS=token)\n');
    console.log('| route | req/s | p99 ms | errors | ratio to bare Hono over HTTPS (the runs before and after) |');
    console.log('|---|---:|---:|---:|---:|');
    for (const line of await secureApi(endpoints, prefix, children)) console.log(line);
    const kv = new EtcdKv({ endpoints });
    await kv.deletePrefix(`${prefix}/`);
    await kv.close();
  }
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await etcd?.stop();
}
