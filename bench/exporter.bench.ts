/**
 * pnpm bench:exporter — maintd-exporter's scrape latency and memory with 100k tasks and 10k
 * cooldowns in etcd, against a baseline measured in the same run: a process that serves an
 * equal-sized prom-client registry (the same metric families and series, values fixed) through
 * the same HTTP stack, serialising it on every request. Goals: scrape p99 ≤ 2× the baseline's;
 * peak RSS of the exporter's whole process tree during the first full sync ≤ 150 MB, in one
 * process; RSS settled after the sync and the load ≤ 1.3× the baseline's. The memory rows break
 * RSS down into the V8 heap (committed and used) and memory outside it (Buffers, native), from
 * the exporter's own process metrics, and give the RSS of malloc's main heap (the `[heap]` mapping
 * of /proc/<pid>/smaps: what the process freed but glibc kept). For reference, not a goal: the
 * settled RSS of a second baseline that also holds an etcd client watching the prefix, as any
 * exporter must.
 *
 * `BENCH_EXPORTER_ENV` (a JSON object) adds to the exporter's environment, to measure a setting or
 * a runtime flag: `{"EXPORTER_SYNC_PAGE_SIZE":"100"}`, `{"NODE_OPTIONS":"--max-semi-space-size=2"}`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import {
  EtcdKv,
  FakeClock,
  type TaskRecord,
  type TaskState,
  type TxnOp,
  createIdGenerator,
  encodeCooldown,
  encodeTask,
  keysFor,
  seededRandom,
} from '@maintd/core';
import { freePort, startEtcd } from '@maintd/core/testing';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const exporterDir = join(root, 'apps/exporter');
const TASKS = Number(process.env.BENCH_TASKS ?? 100_000);
const COOLDOWNS = Number(process.env.BENCH_COOLDOWNS ?? 10_000);
const STORES = 10_000;
/** The kinds the seeded records are of: the exporter learns them from the records. */
const KINDS = ['merge_wal', 'compact', 'index_id'] as const;
const SCRAPES = Number(process.env.BENCH_SCRAPES ?? 2000);
/** Task changes per second streamed while scraping: a busy fleet (a real one makes tens). */
const CHANGES_PER_SEC = Number(process.env.BENCH_CHANGES_PER_SEC ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Idle time before a "settled" memory reading: V8 returns memory some seconds after a burst. */
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 35);

/** Writes `ops` in transactions of 100 (etcd's limit is 128), 8 in flight. */
async function writeAll(kv: EtcdKv, ops: TxnOp[]): Promise<void> {
  const batches: TxnOp[][] = [];
  for (let i = 0; i < ops.length; i += 100) batches.push(ops.slice(i, i + 100));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < batches.length) await kv.txn([], batches[next++]!);
    }),
  );
}

/** 100k tasks (5% queued, 0.5% running, the rest history), 10k cooldowns (70% cooling), 10k stats rows. */
async function seed(kv: EtcdKv, prefix: string): Promise<TaskRecord[]> {
  const keys = keysFor(prefix);
  const random = seededRandom(7);
  const clock = new FakeClock(Date.now() - 24 * 3600 * 1000);
  const newId = createIdGenerator(clock, random);
  const step = Math.floor((24 * 3600 * 1000) / TASKS);
  const tasks: TaskRecord[] = [];
  for (let i = 0; i < TASKS; i++) {
    await clock.advance(step);
    const r = random.next();
    const state: TaskState = r < 0.05 ? 'queued' : r < 0.055 ? 'running' : r < 0.9 ? 'done' : 'failed';
    const t = clock.now();
    tasks.push({
      id: newId(),
      kind: KINDS[i % KINDS.length]!,
      target: `store-${String(i % STORES).padStart(5, '0')}`,
      state,
      source: 'sweep',
      enqueued_at: t,
      attempt: state === 'queued' ? 0 : 1,
      ...(state === 'queued' ? {} : { started_at: t + 1000 }),
      ...(state === 'running' ? { owner: 'bench-master' } : {}),
      ...(state === 'done' ? { finished_at: t + 5000, detail: 'merged 12 generations across 3/3 workers' } : {}),
      ...(state === 'failed'
        ? {
            finished_at: t + 5000,
            error:
              'merged 0 generations across 0/3 workers; http://w1: HTTP 500: Not found: /data/s.lance/data/0.lance',
            error_class: 'target' as const,
          }
        : {}),
    });
  }
  const now = Date.now();
  await writeAll(kv, [
    ...tasks.map((t) => ({ type: 'put' as const, key: keys.task(t.id), value: encodeTask(t) })),
    ...Array.from({ length: COOLDOWNS }, (_, j) => {
      const kind = KINDS[j % KINDS.length]!;
      const target = `broken-${j}`;
      const cooling = j % 10 < 7;
      return {
        type: 'put' as const,
        key: keys.cooldown(kind, target),
        value: encodeCooldown({
          kind,
          target,
          failures: cooling ? 3 + (j % 5) : 1,
          until_ms: cooling ? now + 600_000 + j * 1000 : null,
          last_error: 'http://w1: HTTP 500: Not found: /data/x.lance/data/0.lance',
          last_error_class: 'target',
          first_failure_ms: now - 3_600_000 + j,
          last_failure_ms: now - 60_000,
          last_task_id: randomUUID(),
        }),
      };
    }),
    ...Array.from({ length: STORES }, (_, j) => {
      const name = `store-${String(j).padStart(5, '0')}`;
      return {
        type: 'put' as const,
        key: keys.stats(name),
        value: JSON.stringify({
          name,
          pending_wal_generations: j % 50,
          fragment_count: j % 30,
          row_count: 1000,
          owners: ['http://w1:8080'],
          scanned_at: now,
        }),
      };
    }),
    ...['m1', 'm2', 'm3'].map((id) => ({ type: 'put' as const, key: keys.master(id), value: '{}' })),
  ]);
  return tasks;
}

/**
 * The baseline server: the exporter's metric families (parsed from its output) registered as
 * plain prom-client metrics with fixed values, next to the same default process metrics, served
 * by the same Hono + @hono/node-server stack. Run from the exporter's package so it resolves the
 * same prom-client.
 */
const BASELINE = `
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import client from 'prom-client';
const { Registry, Gauge, Counter, collectDefaultMetrics } = client;
const registry = new Registry();
collectDefaultMetrics({ register: registry });
for (const n of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(n);
const families = new Map();
const base = (name) => name.replace(/_(bucket|sum|count)$/, '');
for (const line of readFileSync(process.env.FAMILIES, 'utf8').split('\\n')) {
  let m;
  if ((m = /^# HELP (\\S+) (.*)$/.exec(line))) families.set(m[1], { help: m[2], type: 'gauge', samples: [] });
  else if ((m = /^# TYPE (\\S+) (\\S+)$/.exec(line))) families.get(m[1]).type = m[2];
  else if ((m = /^([a-zA-Z_:][\\w:]*)(?:\\{(.*)\\})? (\\S+)$/.exec(line))) {
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\\w+)="((?:[^"\\\\]|\\\\.)*)"/g)].map((l) => [l[1], l[2]]));
    (families.get(m[1]) ?? families.get(base(m[1])))?.samples.push({ labels, value: Number(m[3]) });
  }
}
let series = 0;
for (const [name, f] of families) {
  const own = registry.getSingleMetric(name);
  if (own && f.type === 'histogram') {
    // Default histograms (GC durations by kind): the same label sets as the exporter has seen.
    const sets = new Map(f.samples.map((s) => { const { le, ...rest } = s.labels; return [JSON.stringify(rest), rest]; }));
    for (const labels of sets.values()) if (Object.keys(labels).length > 0) own.observe(labels, 0);
  }
  if (own || f.samples.length === 0) continue;
  const labelNames = [...new Set(f.samples.flatMap((s) => Object.keys(s.labels)))];
  const metric = new (f.type === 'counter' ? Counter : Gauge)({ name, help: f.help, labelNames, registers: [registry] });
  for (const s of f.samples) (f.type === 'counter' ? metric.inc(s.labels, s.value) : metric.set(s.labels, s.value), series++);
}
const app = new Hono();
app.get('/metrics', async (c) => c.text(await registry.metrics(), 200, { 'content-type': registry.contentType }));
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT) }, () => console.error('baseline: ' + series + ' exporter series registered'));
// The second baseline also holds what any exporter must: an etcd client, watching the prefix.
if (process.env.WATCH_ENDPOINTS) {
  const { EtcdKv } = await import('@maintd/core');
  await new EtcdKv({ endpoints: process.env.WATCH_ENDPOINTS.split(',') }).watch(process.env.WATCH_PREFIX + '/', () => {});
}
`;

/** The exporter's memory, in MB, from its own process metrics. */
interface Memory {
  readonly rss: number;
  /** V8 heap committed. */
  readonly heapTotal: number;
  /** V8 heap in use (live and not yet collected). */
  readonly heap: number;
  /** Outside the V8 heap but held by its objects: Buffers and other native memory. */
  readonly external: number;
  /** Resident in malloc's main heap (the `[heap]` mapping), freed or not. */
  readonly mallocHeap: number;
}

function spawnNode(args: string[], env: Record<string, string>, cwd: string): ChildProcess {
  return spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Resident MB of the `[heap]` mapping of `pid`: malloc's main arena (Linux). */
function mallocHeapMb(pid: number): number {
  let kb = 0;
  let inHeap = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inHeap = line.endsWith(' [heap]');
    else if (inHeap) kb += Number(/^Rss:\s+(\d+) kB/.exec(line)?.[1] ?? 0);
  }
  return kb / 1024;
}

/** A line of `/proc/<pid>/status`, in MB (Linux). */
function statusMb(pid: number | string, field: 'VmRSS' | 'VmHWM'): number {
  return (
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) /
    1024
  );
}

/**
 * Samples the RSS of `pid` and its children, summed, every 20 ms until `stop()`: the peak of the
 * whole process tree, and the most processes seen in it at once.
 */
function watchTreePeak(pid: number): { stop(): { peakMb: number; processes: number } } {
  let peakMb = 0;
  let processes = 1;
  const timer = setInterval(() => {
    try {
      const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
      processes = Math.max(processes, 1 + children.length);
      let sum = statusMb(pid, 'VmRSS');
      for (const child of children) sum += statusMb(child, 'VmRSS');
      peakMb = Math.max(peakMb, sum);
    } catch {
      // a process exited between the reads
    }
  }, 20);
  return {
    stop: () => {
      clearInterval(timer);
      // The exporter's own high-water mark catches a peak between two samples.
      return { peakMb: Math.max(peakMb, statusMb(pid, 'VmHWM')), processes };
    },
  };
}

async function waitOk(url: string, timeoutMs = 120_000): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    try {
      if ((await fetch(url)).ok) return performance.now() - t0;
    } catch {
      // not up yet
    }
    if (performance.now() - t0 > timeoutMs) throw new Error(`${url} not ready within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};

const metric = (text: string, name: string): number =>
  Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

async function scrape(url: string): Promise<{ ms: number; text: string }> {
  const t0 = performance.now();
  const res = await fetch(url);
  const text = await res.text();
  return { ms: performance.now() - t0, text };
}

/** Sequential scrapes (as Prometheus does), the two targets interleaved in rounds so drift hits both. */
async function sequential(urls: readonly string[], n: number): Promise<number[][]> {
  const times = urls.map((): number[] => []);
  const rounds = 20;
  for (let r = 0; r < rounds; r++) {
    for (const [i, url] of urls.entries()) {
      for (let k = 0; k < n / rounds; k++) times[i]!.push((await scrape(url)).ms);
    }
  }
  return times;
}

const given = process.env.ETCD_ENDPOINTS?.split(',').filter(Boolean);
const etcd = given ? undefined : await startEtcd();
const endpoints = given ?? [etcd!.clientUrl];
const children: ChildProcess[] = [];
const prefix = `/bench/exporter/${randomUUID()}`;
const kv = new EtcdKv({ endpoints });
const dir = await mkdtemp(join(tmpdir(), 'maintd-exporter-bench-'));
try {
  console.log(`maintd-exporter benchmark — etcd at ${endpoints.join(',')}`);
  const t0 = performance.now();
  const tasks = await seed(kv, prefix);
  console.log(
    `seeded ${TASKS} tasks, ${COOLDOWNS} cooldowns, ${STORES} stats rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const exporterPort = await freePort();
  const exporterUrl = `http://127.0.0.1:${exporterPort}/metrics`;
  const exporter = spawnNode(
    [join(exporterDir, 'bin/maintd-exporter.js')],
    {
      ETCD_ENDPOINTS: endpoints.join(','),
      ETCD_PREFIX: prefix,
      EXPORTER_HOST: '127.0.0.1',
      EXPORTER_PORT: String(exporterPort),
      LOG_LEVEL: 'warn',
      ...(JSON.parse(process.env.BENCH_EXPORTER_ENV ?? '{}') as Record<string, string>),
    },
    exporterDir,
  );
  children.push(exporter);
  const treePeak = watchTreePeak(exporter.pid!);
  await waitOk(`http://127.0.0.1:${exporterPort}/healthz`);
  const readyMs = await waitOk(`http://127.0.0.1:${exporterPort}/readyz`);
  const syncPeak = treePeak.stop();
  const first = (await scrape(exporterUrl)).text;
  const syncSecs = metric(first, 'maintd_exporter_sync_duration_seconds');
  const memory = async (): Promise<Memory> => {
    const text = (await scrape(exporterUrl)).text;
    const mb = (name: string): number => metric(text, name) / 2 ** 20;
    return {
      rss: mb('process_resident_memory_bytes'),
      heapTotal: mb('nodejs_heap_size_total_bytes'),
      heap: mb('nodejs_heap_size_used_bytes'),
      external: mb('nodejs_external_memory_bytes'),
      mallocHeap: mallocHeapMb(exporter.pid!),
    };
  };
  const settle = async (): Promise<Memory> => {
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
    return memory();
  };
  const synced = await memory();
  const syncedSettled = await settle();
  const queued = /master_cluster_tasks\{kind="merge_wal",state="queued"\} (\d+)/.exec(first)?.[1];
  const cooling = /master_cluster_cooldowns_active\{kind="merge_wal"\} (\d+)/.exec(first)?.[1];

  const families = join(dir, 'families.prom');
  await writeFile(families, first);
  const baselinePort = await freePort();
  const baselineUrl = `http://127.0.0.1:${baselinePort}/metrics`;
  const baseline = spawnNode(
    ['--input-type=module', '-e', BASELINE],
    { FAMILIES: families, PORT: String(baselinePort) },
    exporterDir,
  );
  children.push(baseline);
  // Not a goal's reference: what the settled figure would be measured against if the baseline
  // also carried an etcd client (@maintd/core's EtcdKv) watching the prefix, as an exporter must.
  const watchingPort = await freePort();
  const watchingUrl = `http://127.0.0.1:${watchingPort}/metrics`;
  const watching = spawnNode(
    ['--input-type=module', '-e', BASELINE],
    {
      FAMILIES: families,
      PORT: String(watchingPort),
      WATCH_ENDPOINTS: endpoints.join(','),
      WATCH_PREFIX: prefix,
    },
    exporterDir,
  );
  children.push(watching);
  await waitOk(baselineUrl);
  await waitOk(watchingUrl);
  const series = (text: string): number => text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
  const baselineText = (await scrape(baselineUrl)).text;

  // Warm both up (JIT, sockets), then measure.
  await sequential([exporterUrl, baselineUrl], 200);
  const [exp, base] = await sequential([exporterUrl, baselineUrl], SCRAPES);

  // The same, while etcd streams task changes to the exporter (a busy fleet).
  const keys = keysFor(prefix);
  let changes = 0;
  let writing = true;
  const active = tasks.filter((t) => t.state === 'queued' || t.state === 'running');
  const writer = (async () => {
    const random = seededRandom(9);
    const start = performance.now();
    while (writing && active.length > 0) {
      // Distinct tasks: etcd refuses a transaction that writes one key twice.
      const picked = new Set<TaskRecord>();
      while (picked.size < Math.min(50, active.length)) picked.add(active[Math.floor(random.next() * active.length)]!);
      const ops: TxnOp[] = [...picked].map((t) => {
        t.state = t.state === 'queued' ? 'running' : 'queued';
        return { type: 'put', key: keys.task(t.id), value: encodeTask(t) };
      });
      await kv.txn([], ops);
      changes += ops.length;
      const ahead = (changes / CHANGES_PER_SEC) * 1000 - (performance.now() - start);
      if (ahead > 0) await new Promise((r) => setTimeout(r, ahead));
    }
  })();
  writer.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  const churnStart = performance.now();
  const [expChurn] = await sequential([exporterUrl], SCRAPES);
  const churnRate = changes / ((performance.now() - churnStart) / 1000);
  writing = false;
  await writer;

  const load = async (url: string) => {
    const r = await autocannon({ url, connections: 10, duration: SECONDS });
    return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
  };
  const expLoad = await load(exporterUrl);
  const baseLoad = await load(baselineUrl);
  await load(watchingUrl);
  const loaded = await memory();
  const loadedSettled = await settle();
  const baseRss = metric((await scrape(baselineUrl)).text, 'process_resident_memory_bytes') / 2 ** 20;
  const watchingRss = metric((await scrape(watchingUrl)).text, 'process_resident_memory_bytes') / 2 ** 20;

  const f = (x: number): string => x.toFixed(2);
  console.log(
    `\nexporter in sync after ${(readyMs / 1000).toFixed(1)} s (full range read ${syncSecs.toFixed(2)} s); it reports ${queued} queued merge_wal tasks, ${cooling} cooling merge_wal targets`,
  );
  console.log(
    `series per scrape: exporter ${series(first)}, baseline ${series(baselineText)}; bytes: exporter ${first.length}, baseline ${baselineText.length}`,
  );
  console.log(`\n## Scrape latency, ${SCRAPES} sequential scrapes each (ms)\n`);
  console.log('| target | p50 | p99 | max | p99 ratio to baseline (goal ≤ 2) |');
  console.log('|---|---:|---:|---:|---:|');
  const row = (name: string, xs: number[]): void =>
    console.log(
      `| ${name} | ${f(quantile(xs, 0.5))} | ${f(quantile(xs, 0.99))} | ${f(Math.max(...xs))} | ${f(quantile(xs, 0.99) / quantile(base!, 0.99))} |`,
    );
  row('baseline: equal-sized prom-client registry, serialised per request', base!);
  row(`maintd-exporter, ${TASKS / 1000}k tasks + ${COOLDOWNS / 1000}k cooldowns in memory`, exp!);
  row(`maintd-exporter while applying ${churnRate.toFixed(0)} task changes/s from the watch`, expChurn!);
  console.log(`\n## Under 10 concurrent connections, ${SECONDS} s (autocannon)\n`);
  console.log('| target | req/s | p99 ms | errors | req/s ratio to baseline |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(`| baseline | ${baseLoad.rps.toFixed(0)} | ${baseLoad.p99} | ${baseLoad.errors} | 1.00 |`);
  console.log(
    `| maintd-exporter | ${expLoad.rps.toFixed(0)} | ${expLoad.p99} | ${expLoad.errors} | ${f(expLoad.rps / baseLoad.rps)} |`,
  );
  console.log('\n## Memory (goals: peak ≤ 150 MB during the first sync, one process; settled ≤ 1.3× the baseline)\n');
  console.log('| maintd-exporter | RSS MB | V8 heap committed MB | heap used MB | external MB | malloc heap MB |');
  console.log('|---|---:|---:|---:|---:|---:|');
  const mem = (name: string, m: Memory): void =>
    console.log(
      `| ${name} | ${m.rss.toFixed(0)} | ${m.heapTotal.toFixed(0)} | ${m.heap.toFixed(0)} | ${m.external.toFixed(0)} | ${m.mallocHeap.toFixed(0)} |`,
    );
  mem('just in sync', synced);
  mem(`in sync, ${SETTLE_SECONDS} s later`, syncedSettled);
  mem('right after the scrapes, the change stream and the concurrent load', loaded);
  mem(`${SETTLE_SECONDS} s later`, loadedSettled);
  console.log(
    `\npeak RSS of the exporter's process tree until it was in sync: ${syncPeak.peakMb.toFixed(0)} MB, ${syncPeak.processes} process(es)`,
  );
  console.log(
    `settled after the sync and the load: exporter ${loadedSettled.rss.toFixed(0)} MB, baseline server ${baseRss.toFixed(0)} MB: ${f(loadedSettled.rss / baseRss)}×`,
  );
  console.log(
    `for reference, the baseline with an etcd client watching the prefix (the same load): ${watchingRss.toFixed(0)} MB; the exporter is ${f(loadedSettled.rss / watchingRss)}× that`,
  );
} finally {
  const running = children.filter((c) => c.exitCode === null);
  for (const c of running) c.kill('SIGTERM');
  await Promise.all(running.map((c) => new Promise((r) => c.once('exit', r))));
  await kv.deletePrefix(`${prefix}/`).catch(() => undefined);
  await kv.close();
  await rm(dir, { recursive: true, force: true });
  await etcd?.stop();
}
