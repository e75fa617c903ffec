import { type Keys, type Kv, MemoryKv, type TaskRecord, TaskStore, seededRandom } from '@maintd/core';
import { Scheduler, createMetrics, loadConfig, poolSizes, storeOptions } from '@maintd/scheduler';
import { pino } from 'pino';
import { Fleet } from './fleet.js';
import type { MergeRun } from './merge-executor.js';
import { SimClock } from './sim-clock.js';
import { createSimWorker, inProcessEndpoints, inProcessFetch } from './worker-app.js';

/** Parameters of the incident reproduction. */
export interface IncidentOptions {
  readonly masters: number;
  readonly stores: number;
  readonly broken: number;
  readonly hours: number;
  readonly seed: number;
  /** Run with the failure cooldown (TASK_COOLDOWN_AFTER_FAILURES=3) or without it (0). */
  readonly cooldown: boolean;
  /** The fleet's costs and rates (default {@link INCIDENT_FLEET}); for calibration and tests. */
  readonly fleet?: Partial<IncidentFleet>;
}

/** The simulated fleet's shape, costs and rates. */
export interface IncidentFleet {
  readonly workers: number;
  /**
   * Merges one worker runs at a time; further merge calls wait in its FIFO queue, and a call
   * still queued when the master times it out is dropped (see `MergeExecutor`). The workers'
   * merge lanes are `workers × mergeConcurrency`.
   */
  readonly mergeConcurrency: number;
  /** WAL generations per minute per store, drawn uniformly per store. */
  readonly ratePerMinute: readonly [number, number];
  /** Fixed cost of one healthy merge call on an owning worker (opening the table, committing). */
  readonly mergeBaseMs: number;
  /**
   * Share of the workers' merge lanes the healthy stores' generations keep busy on average
   * (their drawn rates × the cost of folding one generation). The cost per generation is derived
   * from it, so every seed runs the same load. The sweeps deliver that work in bursts.
   */
  readonly healthyLoad: number;
  /** How long each worker holding a broken store's shard works on a merge before answering 500. */
  readonly brokenLatencyMs: number;
}

/** A queue depth's minimum, mean and maximum over an hour. */
export interface QueueHour {
  readonly min: number;
  readonly mean: number;
  readonly max: number;
}

/** What one run measured. */
export interface IncidentResult {
  readonly cooldown: boolean;
  /** Merge slots in the cluster (masters × MERGE_WAL_CONCURRENCY). */
  readonly slots: number;
  /** Simulated workers, and the merges each runs at a time. */
  readonly workers: number;
  readonly mergeConcurrency: number;
  /** The derived cost of folding one WAL generation, ms (see {@link IncidentFleet.healthyLoad}). */
  readonly perGenerationMs: number;
  /** Share of merge-slot time (slots × duration) spent on broken stores, overall and per hour. */
  readonly brokenSlotShare: number;
  readonly brokenSlotShareHourly: readonly number[];
  /** Share of merge-slot time spent on broken stores after the first hour (hours 2 to the end). */
  readonly brokenSlotShareAfterFirstHour: number;
  /** Share of merge-slot time spent merging healthy stores. */
  readonly healthySlotShare: number;
  /**
   * Worker merge time per hour, ms: how long the workers' merge executors were busy (queue
   * waits excluded), summed over workers, on broken and on healthy stores.
   */
  readonly brokenWorkerMsHourly: readonly number[];
  readonly healthyWorkerMsHourly: readonly number[];
  /** Broken stores' share of the workers' merge time, overall and per hour. */
  readonly brokenWorkerShare: number;
  readonly brokenWorkerShareHourly: readonly number[];
  /** Broken stores' share of the workers' merge time in each 10-minute sweep interval. */
  readonly brokenWorkerShareSeries: readonly number[];
  /** Share of the workers' merge lanes (workers × concurrency × duration) that was busy. */
  readonly workerUtilization: number;
  /** Merge tasks run against broken stores. */
  readonly brokenTasks: number;
  /**
   * Failed merges of broken stores classed `infrastructure` (every worker call timed out), which
   * the cooldown does not count by default (TASK_COOLDOWN_COUNT_INFRA).
   */
  readonly brokenInfrastructureFailures: number;
  /** When a broken store first failed for the third time (the first cooldown window), ms from the start. */
  readonly thirdFailureAtMs: number | undefined;
  /**
   * Healthy stores' queued merge tasks: the maximum, and each hour's minimum, mean and maximum
   * (sampled every minute). Each sweep enqueues every store due, so the queue is a sawtooth; its
   * minimum is the backlog the fleet carried over from one sweep to the next.
   */
  readonly healthyQueueMax: number;
  readonly healthyQueueHourly: readonly QueueHour[];
  /** How long healthy merge tasks waited in the queue (still-queued ones count their wait so far), seconds. */
  readonly healthyWaitP50: number;
  readonly healthyWaitP95: number;
  /** How long healthy merge calls that ran waited in a worker's queue first, seconds. */
  readonly healthyWorkerWaitP50: number;
  readonly healthyWorkerWaitP95: number;
  /**
   * Healthy merge calls the master timed out (WORKER_TIMEOUT_SECS), per hour: dropped from a
   * worker's queue, or answered too late. Either way the store's task fails.
   */
  readonly healthyCallsTimedOutHourly: readonly number[];
  /** Healthy merge queue depth at the end of every simulated minute. */
  readonly series: readonly number[];
}

/** Broken stores' share of the workers' merge time over hours `from` to `to` (1-based, inclusive). */
export function brokenWorkerShareOver(r: IncidentResult, from: number, to: number): number {
  const broken = sumHours(r.brokenWorkerMsHourly, from, to);
  const total = broken + sumHours(r.healthyWorkerMsHourly, from, to);
  return total > 0 ? broken / total : 0;
}

/** Worker merge time on broken stores over hours `from` to `to` (1-based, inclusive), ms. */
export function brokenWorkerMsOver(r: IncidentResult, from: number, to: number): number {
  return sumHours(r.brokenWorkerMsHourly, from, to);
}

function sumHours(xs: readonly number[], from: number, to: number): number {
  return xs.slice(from - 1, to).reduce((a, b) => a + b, 0);
}

/** MERGE_WAL_CONCURRENCY's default (docs/ARCHITECTURE.md §3.1): merge slots per master. */
const DEFAULT_MERGE_SLOTS = 4;

const HOUR = 3_600_000;
const SWEEP = 600_000;

/** The fleet's shape and costs: the simulation's parameters (the README states them). */
export const INCIDENT_FLEET: IncidentFleet = {
  workers: 8,
  mergeConcurrency: 2,
  ratePerMinute: [0.5, 3],
  mergeBaseMs: 2000,
  healthyLoad: 0.2,
  brokenLatencyMs: 45_000,
};

/**
 * Reproduces the production incident deterministically: `masters` copies of the real master
 * scheduler run in-process on one MemoryKv and one FakeClock against simulated workers reached
 * through an in-process fetch (no sockets, no sleeps). Same options, same result, byte for byte.
 */
export async function runIncident(o: IncidentOptions): Promise<IncidentResult> {
  const start = Date.UTC(2026, 0, 1);
  const clock = new SimClock(start);
  const root = new MemoryKv({ clock, historyLimit: 1000 });
  const shape = { ...INCIDENT_FLEET, ...o.fleet };
  const fleetOptions = {
    workers: shape.workers,
    stores: o.stores,
    broken: o.broken,
    seed: o.seed,
    ratePerMinute: shape.ratePerMinute,
    brokenLatencyMs: shape.brokenLatencyMs,
    brokenOnAllWorkers: true,
  };
  const slots = o.masters * DEFAULT_MERGE_SLOTS;
  const lanes = shape.workers * shape.mergeConcurrency;
  const healthyRate = new Fleet(fleetOptions, clock).stores
    .filter((s) => !s.broken)
    .reduce((sum, s) => sum + s.ratePerMinute, 0);
  // A healthy merge holds a master slot and a worker lane at once, so the scarcer of the two is
  // the capacity the load is a share of.
  const perGenerationMs = Math.round((shape.healthyLoad * Math.min(slots, lanes) * 60_000) / healthyRate);
  const fleet = new Fleet({ ...fleetOptions, mergeLatency: { baseMs: shape.mergeBaseMs, perGenerationMs } }, clock);
  const broken = new Set(fleet.brokenNames);
  const runs: MergeRun[] = [];
  const abandoned: number[] = [];
  const mergeObserver = {
    onRun: (r: MergeRun): void => void runs.push(r),
    onAbandoned: (_worker: number, store: string): void => {
      if (!broken.has(store)) abandoned.push(clock.now());
    },
  };
  const workers = Array.from({ length: shape.workers }, (_, i) =>
    createSimWorker(fleet, i, clock, { mergeConcurrency: shape.mergeConcurrency, mergeObserver }),
  );
  const fetch = inProcessFetch(workers);
  const silent = pino({ level: 'silent' });
  const masters: { store: TaskStore; scheduler: Scheduler }[] = [];
  let timeoutMs = 0;
  for (let i = 0; i < o.masters; i++) {
    const loaded = loadConfig({
      // docs/ARCHITECTURE.md §3.1 defaults for everything the master owns; only identity, workers and the
      // cooldown switch are set.
      argv: [
        `--master-id=sim-${i}`,
        `--worker-endpoints=${inProcessEndpoints(shape.workers).join(',')}`,
        ...(o.cooldown ? [] : ['--task-cooldown-after-failures=0']),
        '--log-level=silent',
      ],
      env: {},
      hostname: 'sim',
      pid: i,
      random: () => String(i),
    });
    if (loaded.action !== 'run')
      throw new Error(`incident config: ${loaded.action === 'error' ? loaded.message : loaded.action}`);
    const config = loaded.config;
    timeoutMs = config.workers.timeoutSecs * 1000;
    const kv = root.connect();
    const store = await TaskStore.open(
      storeOptions(config, {
        kv,
        clock,
        random: seededRandom(o.seed * 1000 + i),
        info: {
          host: 'sim',
          pid: i,
          version: 'sim',
          started_at: clock.now(),
          pools: poolSizes(config.pools),
        },
      }),
    );
    const scheduler = new Scheduler({
      store,
      kv,
      config,
      clock,
      logger: silent,
      metrics: createMetrics({ processMetrics: false }),
      fetch,
    });
    masters.push({ store, scheduler });
  }
  const probe = masters[0]!.store;
  // Every merge task's timeline, from the watch: history pruning (default limits) cannot lose it.
  const timeline = new Map<string, { target: string; enqueued: number; started?: number; finished?: number }>();
  const brokenFailures: { target: string; at: number }[] = [];
  let brokenInfrastructureFailures = 0;
  const watch = await root.watch(probe.keys.tasksPrefix, (events) => {
    for (const e of events) {
      if (e.type !== 'put') continue;
      // Written by the store's own encoder a moment ago: validating each of the run's tens of
      // thousands of task writes again would only cost time.
      const t = JSON.parse(e.value) as TaskRecord;
      if (t.kind !== 'merge_wal') continue;
      const entry = timeline.get(t.id) ?? { target: t.target, enqueued: t.enqueued_at };
      if (t.state === 'running' && entry.started === undefined) entry.started = t.started_at;
      if ((t.state === 'done' || t.state === 'failed') && entry.finished === undefined) {
        entry.finished = t.finished_at;
        if (t.state === 'failed' && broken.has(t.target)) {
          brokenFailures.push({ target: t.target, at: t.finished_at ?? clock.now() });
          if (t.error_class === 'infrastructure') brokenInfrastructureFailures++;
        }
      }
      // A requeued task (its master died) starts over; it does not happen here but must not skew.
      if (t.state === 'queued') delete entry.started;
      timeline.set(t.id, entry);
    }
  });
  if (masters.reduce((n, m) => n + m.scheduler.poolSizes().merge!, 0) !== slots)
    throw new Error('the merge pools are not at their documented defaults (docs/ARCHITECTURE.md §3.1)');
  for (const m of masters) m.scheduler.start();

  const series: number[] = [];
  const minutes = Math.round(o.hours * 60);
  for (let minute = 1; minute <= minutes; minute++) {
    await clock.advance(60_000);
    series.push(await healthyQueued(root, probe.keys, broken));
  }
  const end = clock.now();
  for (const m of masters) await m.scheduler.stop(0);
  await watch.close();
  for (const m of masters) await m.store.close();
  root.destroy();

  const hours = Math.ceil(minutes / 60);
  const hourly = (): number[] => new Array<number>(hours).fill(0);
  const addHourly = (xs: number[]) => (h: number, ms: number) => {
    if (h < hours) xs[h]! += ms;
  };

  // Master slots: each task holds one from its start to its end.
  const brokenSlotMsHourly = hourly();
  let brokenTasks = 0;
  let healthySlotMs = 0;
  const waits: number[] = [];
  for (const t of timeline.values()) {
    if (broken.has(t.target)) {
      if (t.started === undefined) continue;
      brokenTasks++;
      spread(t.started - start, Math.min(t.finished ?? end, end) - start, HOUR, addHourly(brokenSlotMsHourly));
    } else {
      waits.push(((t.started ?? end) - t.enqueued) / 1000);
      if (t.started !== undefined) healthySlotMs += Math.min(t.finished ?? end, end) - t.started;
    }
  }

  // Worker lanes: each merge that ran holds one for its latency.
  const brokenWorkerMsHourly = hourly();
  const healthyWorkerMsHourly = hourly();
  const buckets = Math.ceil(minutes / 10);
  const brokenByBucket = new Array<number>(buckets).fill(0);
  const allByBucket = new Array<number>(buckets).fill(0);
  const healthyWorkerWaits: number[] = [];
  const healthyCallsTimedOutHourly = hourly();
  const timedOut = (at: number): void => addHourly(healthyCallsTimedOutHourly)(Math.floor((at - start) / HOUR), 1);
  for (const at of abandoned) timedOut(at);
  for (const r of runs) {
    const isBroken = broken.has(r.store);
    const from = r.startedAt - start;
    const to = Math.min(r.startedAt + r.busyMs, end) - start;
    spread(from, to, HOUR, addHourly(isBroken ? brokenWorkerMsHourly : healthyWorkerMsHourly));
    spread(from, to, SWEEP, (b, ms) => {
      if (b >= buckets) return;
      allByBucket[b]! += ms;
      if (isBroken) brokenByBucket[b]! += ms;
    });
    if (isBroken) continue;
    healthyWorkerWaits.push(r.waitedMs / 1000);
    if (r.waitedMs + r.busyMs > timeoutMs) timedOut(r.startedAt - r.waitedMs + timeoutMs);
  }

  const brokenSlotMs = sumHours(brokenSlotMsHourly, 1, hours);
  const brokenWorkerMs = sumHours(brokenWorkerMsHourly, 1, hours);
  const workerMs = brokenWorkerMs + sumHours(healthyWorkerMsHourly, 1, hours);
  const share = (part: number, whole: number): number => (whole > 0 ? part / whole : 0);
  return {
    cooldown: o.cooldown,
    slots,
    workers: shape.workers,
    mergeConcurrency: shape.mergeConcurrency,
    perGenerationMs,
    brokenSlotShare: share(brokenSlotMs, slots * (end - start)),
    brokenSlotShareHourly: brokenSlotMsHourly.map((ms) => ms / (slots * HOUR)),
    brokenSlotShareAfterFirstHour: share(brokenSlotMs - brokenSlotMsHourly[0]!, slots * (end - start - HOUR)),
    healthySlotShare: share(healthySlotMs, slots * (end - start)),
    brokenWorkerMsHourly,
    healthyWorkerMsHourly,
    brokenWorkerShare: share(brokenWorkerMs, workerMs),
    brokenWorkerShareHourly: brokenWorkerMsHourly.map((b, h) => share(b, b + healthyWorkerMsHourly[h]!)),
    brokenWorkerShareSeries: brokenByBucket.map((b, i) => share(b, allByBucket[i]!)),
    workerUtilization: share(workerMs, lanes * (end - start)),
    brokenTasks,
    brokenInfrastructureFailures,
    thirdFailureAtMs: thirdFailureAt(brokenFailures, start),
    healthyQueueMax: Math.max(0, ...series),
    healthyQueueHourly: Array.from({ length: hours }, (_, h) => {
      const hour = series.slice(h * 60, (h + 1) * 60);
      return {
        min: Math.min(...hour),
        mean: hour.reduce((a, b) => a + b, 0) / Math.max(1, hour.length),
        max: Math.max(0, ...hour),
      };
    }),
    healthyWaitP50: percentile(waits, 50),
    healthyWaitP95: percentile(waits, 95),
    healthyWorkerWaitP50: percentile(healthyWorkerWaits, 50),
    healthyWorkerWaitP95: percentile(healthyWorkerWaits, 95),
    healthyCallsTimedOutHourly,
    series,
  };
}

/** Calls `add(bucket, ms)` for each `size`-ms bucket the interval [from, to) covers. */
function spread(from: number, to: number, size: number, add: (bucket: number, ms: number) => void): void {
  for (let at = from; at < to;) {
    const bucket = Math.floor(at / size);
    const upTo = Math.min(to, (bucket + 1) * size);
    add(bucket, upTo - at);
    at = upTo;
  }
}

function thirdFailureAt(failures: readonly { target: string; at: number }[], start: number): number | undefined {
  const counts = new Map<string, number>();
  for (const f of [...failures].sort((a, b) => a.at - b.at)) {
    const n = (counts.get(f.target) ?? 0) + 1;
    counts.set(f.target, n);
    if (n === 3) return f.at - start;
  }
  return undefined;
}

/** Queued merge tasks of healthy stores, right now: the merge queue minus broken stores' queued tasks. */
async function healthyQueued(kv: Kv, keys: Keys, broken: ReadonlySet<string>): Promise<number> {
  const prefix = keys.queuePrefix('merge_wal');
  const queued = new Set((await kv.range(prefix, { keysOnly: true })).kvs.map((e) => e.key.slice(prefix.length)));
  let brokenQueued = 0;
  for (const target of broken) {
    const active = await kv.get(keys.dedupe('merge_wal', target));
    if (active && queued.has(active.value)) brokenQueued++;
  }
  return queued.size - brokenQueued;
}

function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}

/** The comparison tables printed by `maintd-sim incident` (no wall-clock values: they must replay exactly). */
export function formatIncident(o: Omit<IncidentOptions, 'cooldown'>, off: IncidentResult, on: IncidentResult): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const mins = (s: number): string => `${(s / 60).toFixed(1)} min`;
  const secs = (s: number): string => `${s.toFixed(0)} s`;
  const minute = (ms: number | undefined): string => (ms === undefined ? '–' : `minute ${(ms / 60_000).toFixed(1)}`);
  const workerHours = (ms: number): string => `${(ms / HOUR).toFixed(2)} h`;
  const queue = (d: QueueHour | undefined): string => (d ? `${d.min} / ${d.mean.toFixed(1)} / ${d.max}` : '–');
  const hours = off.brokenWorkerShareHourly.length;
  const late = hours >= 4 ? 4 : 1;
  const row = (label: string, a: string, b: string): string => `| ${label} | ${a} | ${b} |`;
  const lines = [
    `maintd incident reproduction — ${o.masters} masters (${off.slots} merge slots), ${off.workers} workers × ${off.mergeConcurrency} merges at a time (${off.workers * off.mergeConcurrency} merge lanes), ${o.stores} stores (${o.broken} broken), ${o.hours} h, seed ${o.seed}`,
    '',
    '| | cooldown off | cooldown on |',
    '|---|---:|---:|',
    row('worker merge time on broken stores', pct(off.brokenWorkerShare), pct(on.brokenWorkerShare)),
    row(
      `worker merge time on broken stores, hours 2–${hours}`,
      pct(brokenWorkerShareOver(off, 2, hours)),
      pct(brokenWorkerShareOver(on, 2, hours)),
    ),
    row(
      `worker merge time on broken stores, hours ${late}–${hours}`,
      pct(brokenWorkerShareOver(off, late, hours)),
      pct(brokenWorkerShareOver(on, late, hours)),
    ),
    row(
      `worker-hours on broken stores, hours 2–${hours}`,
      workerHours(brokenWorkerMsOver(off, 2, hours)),
      workerHours(brokenWorkerMsOver(on, 2, hours)),
    ),
    row('worker merge lanes busy', pct(off.workerUtilization), pct(on.workerUtilization)),
    row('merge-slot time on broken stores', pct(off.brokenSlotShare), pct(on.brokenSlotShare)),
    row(
      'merge-slot time on broken stores after hour 1',
      pct(off.brokenSlotShareAfterFirstHour),
      pct(on.brokenSlotShareAfterFirstHour),
    ),
    row('merge-slot time on healthy stores', pct(off.healthySlotShare), pct(on.healthySlotShare)),
    row(
      'third failure of a broken store (first cooldown window)',
      minute(off.thirdFailureAtMs),
      minute(on.thirdFailureAtMs),
    ),
    row('merge tasks run against broken stores', String(off.brokenTasks), String(on.brokenTasks)),
    row(
      'of which failed `infrastructure` (all calls timed out; not counted)',
      String(off.brokenInfrastructureFailures),
      String(on.brokenInfrastructureFailures),
    ),
    row('healthy merge queue, max', String(off.healthyQueueMax), String(on.healthyQueueMax)),
    row('healthy store wait p50 (master queue)', mins(off.healthyWaitP50), mins(on.healthyWaitP50)),
    row('healthy store wait p95 (master queue)', mins(off.healthyWaitP95), mins(on.healthyWaitP95)),
    row('healthy merge call wait p50 (worker queue)', secs(off.healthyWorkerWaitP50), secs(on.healthyWorkerWaitP50)),
    row('healthy merge call wait p95 (worker queue)', secs(off.healthyWorkerWaitP95), secs(on.healthyWorkerWaitP95)),
    row(
      'healthy merge calls timed out',
      String(sumHours(off.healthyCallsTimedOutHourly, 1, hours)),
      String(sumHours(on.healthyCallsTimedOutHourly, 1, hours)),
    ),
    '',
    'Hour by hour, cooldown off → on:',
    '',
    '| hour | worker merge time on broken stores | merge-slot time on broken stores | healthy merge queue, min / mean / max | healthy merge calls timed out |',
    '|---:|---:|---:|---:|---:|',
    ...off.brokenWorkerShareHourly.map((w, h) =>
      [
        '',
        ` ${h + 1} `,
        ` ${pct(w)} → ${pct(on.brokenWorkerShareHourly[h] ?? 0)} `,
        ` ${pct(off.brokenSlotShareHourly[h] ?? 0)} → ${pct(on.brokenSlotShareHourly[h] ?? 0)} `,
        ` ${queue(off.healthyQueueHourly[h])} → ${queue(on.healthyQueueHourly[h])} `,
        ` ${off.healthyCallsTimedOutHourly[h] ?? 0} → ${on.healthyCallsTimedOutHourly[h] ?? 0} `,
        '',
      ].join('|'),
    ),
  ];
  return `${lines.join('\n')}\n`;
}
