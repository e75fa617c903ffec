/**
 * pnpm bench:fleet — what a task costs the masters: real `maintd` processes (1, 3, 6) on one etcd,
 * `maintd-sim workers` answering at once, N merges (one call to each of 3 workers) enqueued over the API. Reports the masters'
 * summed CPU per task (from each master's `process_cpu_seconds_total`), tasks per second, and etcd
 * requests per task (from etcd's `grpc_server_handled_total`), beside raw etcd CAS transactions
 * per second measured in the same run (shared machines are noisy: compare ratios across runs).
 * The ratio column compares a task with the same run's reference task: the calls a task makes
 * (three worker calls, its enqueue served by a bare Hono route, one etcd transaction), each timed
 * alone: what those calls cost with nothing else in the process.
 *
 * Each row measures TASKS tasks twice: the first TASKS a fresh master takes (cold: V8 is still
 * compiling the hot path, so a task costs two to three times what it does later; the column "off
 * the main thread" shows how much of that is V8's compiler threads) and TASKS more after
 * BENCH_WARMUP_PER_MASTER tasks per master (steady: what a long-running master costs, the figure
 * the other columns describe). One master's cost per task keeps falling for its first few
 * thousand tasks; six sharing a fleet each get a sixth of the tasks, so warm-up is per master.
 *
 * BENCH_PACED=1 splits what a run of several masters costs beyond one master. For each such run
 * it adds two rows fed at that run's rate: one master alone, sent what each of those masters got
 * (its share of every batch), and the same number of masters each in a fleet of its own (its own
 * prefix: no shared queue, no peer's watch events or read-aheads). The first ratio printed is
 * what sharing a fleet costs; the second, what the masters cost each other by sharing the
 * machine (two cores here, with etcd and the workers).
 *
 * BENCH_COMPARE=<path to another build's apps/master/bin/maintd.js> runs that build's masters
 * right after each row's, under the same load, for a before-and-after in one run (a `git worktree`
 * of the older commit, installed and built).
 *
 * BENCH_HISTORY_LIMIT=<n> runs the masters with TASK_HISTORY_LIMIT=n (1000 is the default a
 * production master runs with), so the figures include pruning the history; unset, the limit is
 * above the run's task count and nothing is pruned.
 *
 * BENCH_ETCD_METHODS=1 also prints each measurement's etcd requests per task by method (`Txn`,
 * `Range`, `Put`): claims and finishes are transactions (grouped under load), page reads ranges.
 *
 * BENCH_MASTER_CPUS=<list> runs the masters under `taskset -c <list>`; with the rest of the run
 * kept off those CPUs (`taskset -c 1 env BENCH_MASTER_CPUS=0 pnpm bench:fleet`), a master's CPU
 * is its own work, not also the cost of sharing a core with etcd and the workers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort, startEtcd } from '@maintd/core/testing';
import { Etcd3 } from 'etcd3';
import { Pool, request } from 'undici';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TASKS = Number(process.env.BENCH_TASKS ?? 1000);
/** Tasks each master takes before the steady-state measurement (the cold measurement's included). */
const WARMUP_PER_MASTER = Number(process.env.BENCH_WARMUP_PER_MASTER ?? 4000);
/** BENCH_ETCD_METHODS=1 also prints each measurement's etcd requests per task by method. */
const METHODS = process.env.BENCH_ETCD_METHODS === '1';
const MASTERS = (process.env.BENCH_MASTERS ?? '1,3,6').split(',').map(Number);
/** Seconds the masters run before the tasks are sent (past TASK_WATCH_LINGER_MS and one check). */
const SETTLE_SECS = Number(process.env.BENCH_SETTLE_SECS ?? 66);
const MASTER_CPUS = process.env.BENCH_MASTER_CPUS;
const PACED = process.env.BENCH_PACED === '1';
const COMPARE = process.env.BENCH_COMPARE;
/** TASK_HISTORY_LIMIT of the masters; unset, none is pruned during a run (a task's own cost). */
const HISTORY_LIMIT = process.env.BENCH_HISTORY_LIMIT;
/** Enqueue requests in flight at once, spread over the masters. */
const BATCH = 50;
/** Tasks one run of `masters` masters takes: its warm-up, then the steady measurement. */
const runTasks = (masters: number): number => Math.max(TASKS, WARMUP_PER_MASTER * masters) + TASKS;
/** One store per task of the largest run (distinct targets: no dedupe). */
const STORES = runTasks(Math.max(...MASTERS));
/** Calls of each kind timed for the reference task. */
const REFERENCE_CALLS = 4000;
const WIDTH = String(STORES - 1).length;

const children: ChildProcess[] = [];

function spawnNode(
  args: string[],
  env: Record<string, string>,
  stdout: 'pipe' | 'ignore' = 'ignore',
  cpus?: string,
): ChildProcess {
  const [command, argv] = cpus ? ['taskset', ['-c', cpus, process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(command, argv, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', stdout, 'inherit'],
  });
  children.push(child);
  return child;
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

/** Sums every sample of a metric family in a Prometheus text exposition. */
function sample(text: string, name: string, filter = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!(line.startsWith(`${name} `) || line.startsWith(`${name}{`)) || !line.includes(filter)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

const metrics = async (url: string): Promise<string> => (await fetch(`${url}/metrics`)).text();

/**
 * CPU clock ticks the processes `pids` spent on their main threads and on all their other threads
 * (V8's compiler and garbage-collector helpers, libuv's pool), from /proc; undefined where there
 * is none (not Linux) or a process is gone.
 */
function threadTicks(pids: readonly number[]): { readonly main: number; readonly other: number } | undefined {
  let main = 0;
  let other = 0;
  try {
    for (const pid of pids) {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        // Fields after the parenthesised name: utime and stime are the 12th and 13th.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ticks = Number(fields[11]) + Number(fields[12]);
        if (tid === String(pid)) main += ticks;
        else other += ticks;
      }
    }
  } catch {
    return undefined;
  }
  return { main, other };
}

/** Raw etcd CAS transactions, 16 in flight, for 3 s: per second (the run's yardstick) and client CPU ms each. */
async function rawCas(endpoints: string[]): Promise<{ readonly rate: number; readonly cpuMs: number }> {
  const client = new Etcd3({ hosts: endpoints });
  const prefix = `/bench/raw/${randomUUID()}`;
  const revs: string[] = [];
  for (let w = 0; w < 16; w++) revs.push((await client.put(`${prefix}/${w}`).value('0').exec()).header.revision);
  let done = 0;
  const end = performance.now() + 3000;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    revs.map(async (_, w) => {
      while (performance.now() < end) {
        const key = `${prefix}/${w}`;
        const res = await client.if(key, 'Mod', '==', revs[w]!).then(client.put(key).value('x')).commit();
        revs[w] = res.header.revision;
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - t0) / 1000);
  const cpuMs = cpuMsSince(cpu0) / done;
  await client.delete().prefix(prefix);
  client.close();
  return { rate, cpuMs };
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

/** Runs `call` `total` times, `inFlight` at once. */
async function repeat(total: number, inFlight: number, call: (i: number) => Promise<void>): Promise<void> {
  await Promise.all(
    Array.from({ length: inFlight }, async (_, k) => {
      for (let i = k; i < total; i += inFlight) await call(i);
    }),
  );
}

/**
 * Client CPU ms of one worker call alone (undici, as the master calls workers, 4 in flight) to
 * the run's sim workers.
 */
async function workerCallCpu(workers: string[]): Promise<number> {
  const call = async (i: number): Promise<void> => {
    const store = `store-${String(i % STORES).padStart(WIDTH, '0')}`;
    const res = await request(`${workers[i % workers.length]}/api/v1/internal/merge-wal/${store}`, {
      method: 'POST',
      headers: { accept: 'application/json' },
    });
    JSON.parse(Buffer.from(await res.body.arrayBuffer()).toString('utf8'));
  };
  await repeat(REFERENCE_CALLS / 4, 4, call); // warm-up: connections, JIT
  const cpu0 = process.cpuUsage();
  await repeat(REFERENCE_CALLS, 4, call);
  return cpuMsSince(cpu0) / REFERENCE_CALLS;
}

/** Server CPU ms of one POST to a bare Hono route with a JSON body, in its own process, 50 in flight. */
async function barePostCpu(): Promise<number> {
  const port = await freePort();
  const server = spawnNode(
    [
      '--input-type=module',
      '-e',
      `import { serve } from '@hono/node-server'; import { Hono } from 'hono';
       const app = new Hono();
       app.post('/tasks', async (c) => c.json({ accepted: (await c.req.json()).target }, 202));
       app.get('/cpu', (c) => { const u = process.cpuUsage(); return c.json((u.user + u.system) / 1000); });
       serve({ fetch: app.fetch, hostname: '127.0.0.1', port: ${port} });`,
    ],
    {},
  );
  const base = `http://127.0.0.1:${port}`;
  await waitHttp(`${base}/cpu`);
  const pool = new Pool(base, { connections: 50 });
  const post = async (i: number): Promise<void> => {
    const res = await pool.request({
      path: '/tasks',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'merge_wal', target: `store-${i}` }),
    });
    await res.body.arrayBuffer();
  };
  const serverCpu = async (): Promise<number> => Number(await (await fetch(`${base}/cpu`)).text());
  await repeat(REFERENCE_CALLS / 4, 50, post);
  const cpu0 = await serverCpu();
  await repeat(REFERENCE_CALLS, 50, post);
  const cpuMs = ((await serverCpu()) - cpu0) / REFERENCE_CALLS;
  await pool.close();
  server.kill('SIGTERM');
  return cpuMs;
}

/** Tasks of the fleets at `prefixes` that reached a terminal state, counted from their watch. */
async function watchFinished(
  endpoints: string[],
  prefixes: readonly string[],
): Promise<{ reached(count: number): Promise<void>; close(): Promise<void> }> {
  const client = new Etcd3({ hosts: endpoints });
  const ended = new Set<string>();
  // The run awaits one count at a time.
  let waiter: { readonly count: number; readonly resolve: () => void } | undefined;
  const watchers = await Promise.all(prefixes.map((p) => client.watch().prefix(`${p}/tasks/`).create()));
  for (const watcher of watchers) {
    watcher.on('put', (kv) => {
      const { state } = JSON.parse(kv.value.toString()) as { state: string };
      if (state !== 'done' && state !== 'failed') return;
      ended.add(kv.key.toString());
      if (waiter && ended.size >= waiter.count) {
        waiter.resolve();
        waiter = undefined;
      }
    });
  }
  return {
    reached: (count) =>
      ended.size >= count ? Promise.resolve() : new Promise((resolve) => (waiter = { count, resolve })),
    close: async () => {
      await Promise.all(watchers.map((w) => w.cancel()));
      client.close();
    },
  };
}

/** How a run's masters are fed and grouped (unpaced and shared unless said). */
interface RunOptions {
  /** Enqueues sent in bursts of `burst`, `perSec` a second in all. */
  readonly pace?: { readonly perSec: number; readonly burst: number };
  /** Each master runs a fleet of its own (its own prefix): the same load, nothing shared. */
  readonly separate?: boolean;
  /** The masters column. */
  readonly label?: string;
  /** The master binary run (this checkout's unless said). */
  readonly bin?: string;
}

/** What a run's masters spent on TASKS tasks, per task. */
interface Measured {
  readonly cpuMs: number;
  /** Of `cpuMs`, what the masters' threads other than the main one spent (undefined: not known). */
  readonly offMainMs: number | undefined;
  readonly systemMs: number;
  readonly calls: number;
  readonly tasksPerSec: number;
}

interface RunResult {
  readonly cpuMsPerTask: number;
  readonly tasksPerSec: number;
  readonly row: string;
}

/**
 * One run: `masters` masters take their warm-up and TASKS more merges, sent BATCH at a time as fast
 * as the masters accept them, or as `options.pace` says.
 */
async function run(
  masters: number,
  endpoints: string[],
  etcdMetrics: string,
  workers: string,
  referenceMs: number,
  options: RunOptions = {},
): Promise<RunResult> {
  const { pace, separate = false } = options;
  const fleet = `/bench/fleet/${randomUUID()}`;
  const prefixes = separate ? Array.from({ length: masters }, (_, i) => `${fleet}/${i}`) : [fleet];
  const urls: string[] = [];
  const pids: number[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await freePort();
    // BENCH_PROFILE=<dir> writes each master's CPU profile there (open in Chrome DevTools).
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    const master = spawnNode(
      [...profile, options.bin ?? join(root, 'apps/master/bin/maintd.js')],
      {
        ETCD_ENDPOINTS: endpoints.join(','),
        ETCD_PREFIX: prefixes[i % prefixes.length]!,
        MASTER_HOST: '127.0.0.1',
        MASTER_PORT: String(port),
        MASTER_ID: `fleet-${i}`,
        WORKER_ENDPOINTS: workers,
        STATS_SCAN_INTERVAL_SECS: '0',
        MERGE_WAL_INTERVAL_SECS: '0',
        COMPACTION_INTERVAL_SECS: '0',
        TASK_HISTORY_LIMIT: HISTORY_LIMIT ?? String(runTasks(masters) * 2),
        LOG_LEVEL: 'warn',
      },
      'ignore',
      MASTER_CPUS,
    );
    urls.push(`http://127.0.0.1:${port}`);
    // taskset execs node: the pid is the master's either way.
    if (master.pid !== undefined) pids.push(master.pid);
  }
  for (const url of urls) await waitHttp(`${url}/readyz`);
  // A master keeps its task watch for its first minute (its first readers usually come then) and
  // drops it when nobody reads its tasks: measure the steady state of a running master.
  await new Promise((r) => setTimeout(r, SETTLE_SECS * 1000));
  /** A metric summed over the masters. */
  const summed = async (name: string): Promise<number> =>
    (await Promise.all(urls.map(async (u) => sample(await metrics(u), name)))).reduce((a, b) => a + b, 0);
  const cpu = (): Promise<number> => summed('process_cpu_seconds_total');
  const systemCpu = (): Promise<number> => summed('process_cpu_system_seconds_total');
  const etcdCalls = async (): Promise<number> =>
    sample(await (await fetch(etcdMetrics)).text(), 'grpc_server_handled_total', 'grpc_type="unary"');
  /** Unary etcd requests by method (`Txn`, `Range`, ...), for BENCH_ETCD_METHODS. */
  const etcdMethods = async (): Promise<Map<string, number>> => {
    const byMethod = new Map<string, number>();
    for (const line of (await (await fetch(etcdMetrics)).text()).split('\n')) {
      if (!line.startsWith('grpc_server_handled_total{') || !line.includes('grpc_type="unary"')) continue;
      const method = /grpc_method="([^"]+)"/.exec(line)?.[1] ?? '?';
      byMethod.set(method, (byMethod.get(method) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
    return byMethod;
  };
  // Counted from etcd, not asked of the masters: polling their API would bill its cost to the tasks.
  const finished = await watchFinished(endpoints, prefixes);
  // Distinct stores (no dedupe), spread over the masters' APIs as a load balancer would.
  const enqueue = async (n: number): Promise<void> => {
    const res = await fetch(`${urls[n % urls.length]}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'merge_wal', target: `store-${String(n).padStart(WIDTH, '0')}` }),
    });
    if (res.status !== 202) throw new Error(`enqueue: HTTP ${res.status} ${await res.text()}`);
  };
  /** Sends tasks `from` to `to` and waits until they have all ended. */
  const send = async (from: number, to: number): Promise<void> => {
    const t0 = performance.now();
    const batch = pace ? pace.burst : BATCH;
    const sent: Promise<unknown>[] = [];
    for (let i = from; i < to; i += batch) {
      if (pace) {
        const wait = t0 + ((i - from) / pace.perSec) * 1000 - performance.now();
        if (wait > 0) await sleep(wait);
      }
      const requests = Promise.all(Array.from({ length: Math.min(batch, to - i) }, (_, j) => enqueue(i + j)));
      if (pace) sent.push(requests);
      else await requests;
    }
    await Promise.all(sent);
    await finished.reached(to);
  };
  /** Sends tasks `from` to `from + TASKS`: what they cost the masters, per task. */
  const measure = async (from: number): Promise<Measured> => {
    const [cpu0, system0, calls0] = [await cpu(), await systemCpu(), await etcdCalls()];
    const methods0 = METHODS ? await etcdMethods() : undefined;
    const threads0 = threadTicks(pids);
    const t0 = performance.now();
    await send(from, from + TASKS);
    const seconds = (performance.now() - t0) / 1000;
    const threads1 = threadTicks(pids);
    const cpuMs = (((await cpu()) - cpu0) * 1000) / TASKS;
    if (methods0) {
      const perTask = [...(await etcdMethods())]
        .map(([method, n]) => [method, (n - (methods0.get(method) ?? 0)) / TASKS] as const)
        .filter(([, n]) => n > 0)
        .map(([method, n]) => `${method} ${n.toFixed(2)}`);
      console.log(`  ${options.label ?? masters} masters, etcd requests per task by method: ${perTask.join(', ')}`);
    }
    // The split in ticks applied to the exact total: no need to know the kernel's tick rate.
    const ticks = threads0 && threads1 && threads1.main + threads1.other - threads0.main - threads0.other;
    return {
      cpuMs,
      offMainMs: threads0 && threads1 && ticks ? (cpuMs * (threads1.other - threads0.other)) / ticks : undefined,
      systemMs: (((await systemCpu()) - system0) * 1000) / TASKS,
      calls: ((await etcdCalls()) - calls0) / TASKS,
      tasksPerSec: TASKS / seconds,
    };
  };
  const cold = await measure(0);
  const warm = runTasks(masters) - TASKS;
  await send(TASKS, warm);
  const steady = await measure(warm);
  await finished.close();
  for (const c of children.splice(-masters)) {
    c.kill('SIGTERM');
    await new Promise((r) => c.once('exit', r));
  }
  const label = options.label ?? String(masters);
  const offMain = (m: Measured): string => m.offMainMs?.toFixed(2) ?? 'n/a';
  return {
    cpuMsPerTask: steady.cpuMs,
    tasksPerSec: steady.tasksPerSec,
    row:
      `| ${label} | ${TASKS} | ${cold.cpuMs.toFixed(2)} | ${offMain(cold)} | ${steady.cpuMs.toFixed(2)} | ` +
      `${offMain(steady)} | ${steady.systemMs.toFixed(2)} | ` +
      `${(steady.cpuMs / referenceMs).toFixed(2)} | ${steady.tasksPerSec.toFixed(0)} | ${steady.calls.toFixed(1)} |`,
  };
}

const etcd = await startEtcd();
try {
  const endpoints = [etcd.clientUrl];
  const etcdMetrics = `${etcd.clientUrl}/metrics`;
  // Workers that answer at once: what is measured is the masters' own cost.
  const sim = spawnNode(
    [
      join(root, 'apps/sim/bin/maintd-sim.js'),
      'workers',
      '--workers=3',
      `--stores=${STORES}`,
      '--broken=0',
      '--merge-latency-ms=0',
      '--merge-ms-per-generation=0',
    ],
    {},
    'pipe',
  );
  const workers = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: sim.stdout! });
    lines.on('line', (line) => {
      const m = /^WORKER_ENDPOINTS=(.*)$/.exec(line);
      if (m) resolve(m[1]!);
    });
    sim.once('exit', (code) => reject(new Error(`maintd-sim exited (${code})`)));
  });
  const raw = await rawCas(endpoints);
  const workerMs = await workerCallCpu(workers.split(','));
  const postMs = await barePostCpu();
  // What the calls of a task cost with nothing else around them: its three worker calls, its
  // enqueue served, and one etcd transaction (enqueue, claim and finish batched with other tasks').
  const referenceMs = 3 * workerMs + postMs + raw.cpuMs;
  console.log(
    `maintd fleet benchmark — ${TASKS} merges over the API (3 worker calls each), sim workers at zero latency; ` +
      `cold: a fresh master's first ${TASKS}; steady: ${TASKS} after ${WARMUP_PER_MASTER} per master`,
  );
  console.log(`raw etcd CAS, 16 in flight: ${raw.rate.toFixed(0)} txn/s, ${raw.cpuMs.toFixed(3)} ms client CPU each`);
  console.log(
    `reference task, its calls alone: 3 worker calls (undici, ${workerMs.toFixed(3)} ms client CPU each) + ` +
      `a bare Hono POST served (${postMs.toFixed(3)} ms) + one etcd CAS = ${referenceMs.toFixed(2)} ms\n`,
  );
  if (MASTER_CPUS) console.log(`masters pinned to CPUs ${MASTER_CPUS}`);
  console.log(
    '| masters | tasks | summed master CPU ms per task, cold | of which off the main thread | steady | of which off the main thread | ' +
      'of which system (kernel) | ratio to the reference task | tasks/s | etcd requests per task |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const several: { readonly masters: number; readonly result: RunResult }[] = [];
  for (const m of MASTERS) {
    const result = await run(m, endpoints, etcdMetrics, workers, referenceMs);
    console.log(result.row);
    if (COMPARE)
      console.log(
        (await run(m, endpoints, etcdMetrics, workers, referenceMs, { bin: COMPARE, label: `${m}, ${COMPARE}` })).row,
      );
    if (m > 1) several.push({ masters: m, result });
  }
  const controls: string[] = [];
  for (const { masters, result } of PACED ? several : []) {
    // Each of the masters got its share of every batch, at the run's rate: one master alone fed
    // just that, then that many masters fed the same but each in a fleet of its own.
    const alone = await run(1, endpoints, etcdMetrics, workers, referenceMs, {
      pace: { perSec: result.tasksPerSec / masters, burst: Math.ceil(BATCH / masters) },
      label: `1, fed as each of ${masters} was`,
    });
    console.log(alone.row);
    const apart = await run(masters, endpoints, etcdMetrics, workers, referenceMs, {
      pace: { perSec: result.tasksPerSec, burst: BATCH },
      separate: true,
      label: `${masters}, a fleet each, fed as the ${masters} were`,
    });
    console.log(apart.row);
    const x = (a: RunResult, b: RunResult): string => (a.cpuMsPerTask / b.cpuMsPerTask).toFixed(2);
    controls.push(
      `${masters} masters: ${x(result, apart)}× the same masters in fleets of their own, ` +
        `${x(apart, alone)}× one master alone fed as each of them`,
    );
  }
  if (controls.length > 0) console.log(`\nsummed CPU per task, ${controls.join('; ')}`);
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await etcd.stop();
}
