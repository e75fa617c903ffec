import { FakeClock, type Keys, type Kv, MemoryKv, TaskRecordSchema, TaskStore, seededRandom } from '@maintd/core';
import { Scheduler, createMetrics, loadConfig, storeOptions } from '@maintd/scheduler';
import { pino } from 'pino';
import { Fleet } from './fleet.js';
import { createWorkerApp, inProcessEndpoints, inProcessFetch } from './worker-app.js';

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
  /** WAL generations per minute per store, drawn uniformly per store. */
  readonly ratePerMinute: readonly [number, number];
  /** Fixed cost of one healthy merge call on an owning worker (opening the table, committing). */
  readonly mergeBaseMs: number;
  /**
   * Share of the cluster's merge-slot time the healthy stores' generations need (their drawn
   * rates × the cost of folding one generation): the fleet's provisioning. The cost per
   * generation is derived from it, so every seed runs the same load.
   */
  readonly healthyLoad: number;
  /** How long each worker holding a broken store's shard works on a merge before answering 500. */
  readonly brokenLatencyMs: number;
}

/** What one run measured. */
export interface IncidentResult {
  readonly cooldown: boolean;
  /** Merge slots in the cluster (masters × MERGE_WAL_CONCURRENCY). */
  readonly slots: number;
  /** Simulated workers. */
  readonly workers: number;
  /** The derived cost of folding one WAL generation, ms (see {@link IncidentFleet.healthyLoad}). */
  readonly perGenerationMs: number;
  /** Share of merge-slot time (slots × duration) spent on broken stores, overall and per hour. */
  readonly brokenSlotShare: number;
  readonly brokenSlotShareHourly: readonly number[];
  /** Share of merge-slot time spent on broken stores after the first hour (hours 2 to the end). */
  readonly brokenSlotShareAfterFirstHour: number;
  /** Share of merge-slot time spent merging healthy stores. */
  readonly healthySlotShare: number;
  /** Merge tasks run against broken stores. */
  readonly brokenTasks: number;
  /**
   * Healthy stores' queued merge tasks: the maximum, and each hour's minimum, mean and maximum
   * (sampled every minute). Each sweep enqueues every store due, so the queue is a sawtooth; its
   * minimum is the backlog the fleet carried over from one sweep to the next.
   */
  readonly healthyQueueMax: number;
  readonly healthyQueueHourly: readonly { readonly min: number; readonly mean: number; readonly max: number }[];
  /** How long healthy merge tasks waited in the queue (still-queued ones count their wait so far), seconds. */
  readonly healthyWaitP50: number;
  readonly healthyWaitP95: number;
  /** Healthy merge queue depth at the end of every simulated minute. */
  readonly series: readonly number[];
}

/** MERGE_WAL_CONCURRENCY's default (DESIGN §3.1): merge slots per master. */
const DEFAULT_MERGE_SLOTS = 4;

/** The fleet's shape and costs: the simulation's parameters (the README states them). */
export const INCIDENT_FLEET: IncidentFleet = {
  workers: 8,
  ratePerMinute: [0.5, 3],
  mergeBaseMs: 2000,
  healthyLoad: 0.93,
  brokenLatencyMs: 45_000,
};

/**
 * Reproduces the production incident deterministically: `masters` copies of the real master
 * scheduler run in-process on one MemoryKv and one FakeClock against simulated workers reached
 * through an in-process fetch (no sockets, no sleeps). Same options, same result, byte for byte.
 */
export async function runIncident(o: IncidentOptions): Promise<IncidentResult> {
  const start = Date.UTC(2026, 0, 1);
  const clock = new FakeClock(start);
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
  const healthyRate = new Fleet(fleetOptions, clock).stores
    .filter((s) => !s.broken)
    .reduce((sum, s) => sum + s.ratePerMinute, 0);
  const perGenerationMs = Math.round((shape.healthyLoad * slots * 60_000) / healthyRate);
  const fleet = new Fleet({ ...fleetOptions, mergeLatency: { baseMs: shape.mergeBaseMs, perGenerationMs } }, clock);
  const apps = Array.from({ length: shape.workers }, (_, i) => createWorkerApp(fleet, i, clock));
  const fetch = inProcessFetch(apps);
  const silent = pino({ level: 'silent' });
  const masters: { store: TaskStore; scheduler: Scheduler }[] = [];
  for (let i = 0; i < o.masters; i++) {
    const loaded = loadConfig({
      // DESIGN §3.1 defaults for everything the master owns; only identity, workers and the
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
          pools: { merge: config.pools.mergeWalConcurrency },
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
  const broken = new Set(fleet.brokenNames);
  const probe = masters[0]!.store;
  // Every merge task's timeline, from the watch: history pruning (default limits) cannot lose it.
  const timeline = new Map<string, { target: string; enqueued: number; started?: number; finished?: number }>();
  const watch = await root.watch(probe.keys.tasksPrefix, (events) => {
    for (const e of events) {
      if (e.type !== 'put') continue;
      const t = TaskRecordSchema.parse(JSON.parse(e.value));
      if (t.kind !== 'merge_wal') continue;
      const entry = timeline.get(t.id) ?? { target: t.target, enqueued: t.enqueued_at };
      if (t.state === 'running' && entry.started === undefined) entry.started = t.started_at;
      if (t.state === 'done' || t.state === 'failed') entry.finished = t.finished_at;
      // A requeued task (its master died) starts over; it does not happen here but must not skew.
      if (t.state === 'queued') delete entry.started;
      timeline.set(t.id, entry);
    }
  });
  if (masters.reduce((n, m) => n + m.scheduler.poolSizes().merge!, 0) !== slots)
    throw new Error('the merge pools are not at their DESIGN default');
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

  const hours = Math.ceil(minutes / 60);
  const brokenMsByHour = new Array<number>(hours).fill(0);
  let brokenTasks = 0;
  let healthyBusyMs = 0;
  const waits: number[] = [];
  for (const t of timeline.values()) {
    if (broken.has(t.target)) {
      if (t.started === undefined) continue;
      brokenTasks++;
      // Spread the slot time over the hours it covered.
      const to = Math.min(t.finished ?? end, end);
      for (let from = t.started; from < to;) {
        const h = Math.floor((from - start) / 3_600_000);
        const hourEnd = start + (h + 1) * 3_600_000;
        const upTo = Math.min(to, hourEnd);
        if (h < hours) brokenMsByHour[h]! += upTo - from;
        from = upTo;
      }
    } else {
      waits.push(((t.started ?? end) - t.enqueued) / 1000);
      if (t.started !== undefined) healthyBusyMs += Math.min(t.finished ?? end, end) - t.started;
    }
  }
  for (const m of masters) await m.store.close();
  root.destroy();
  const brokenSlotMs = brokenMsByHour.reduce((a, b) => a + b, 0);
  return {
    cooldown: o.cooldown,
    slots,
    workers: shape.workers,
    perGenerationMs,
    brokenSlotShare: brokenSlotMs / (slots * (end - start)),
    brokenSlotShareHourly: brokenMsByHour.map((ms) => ms / (slots * 3_600_000)),
    brokenSlotShareAfterFirstHour:
      end - start > 3_600_000 ? (brokenSlotMs - brokenMsByHour[0]!) / (slots * (end - start - 3_600_000)) : 0,
    healthySlotShare: healthyBusyMs / (slots * (end - start)),
    brokenTasks,
    healthyQueueMax: Math.max(0, ...series),
    healthyQueueHourly: Array.from({ length: Math.ceil(minutes / 60) }, (_, h) => {
      const hour = series.slice(h * 60, (h + 1) * 60);
      return {
        min: Math.min(...hour),
        mean: hour.reduce((a, b) => a + b, 0) / Math.max(1, hour.length),
        max: Math.max(0, ...hour),
      };
    }),
    healthyWaitP50: percentile(waits, 50),
    healthyWaitP95: percentile(waits, 95),
    series,
  };
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

/** The comparison table printed by `maintd-sim incident` (no wall-clock values: it must replay exactly). */
export function formatIncident(o: Omit<IncidentOptions, 'cooldown'>, off: IncidentResult, on: IncidentResult): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const mins = (s: number): string => `${(s / 60).toFixed(1)} min`;
  const queue = (d: IncidentResult['healthyQueueHourly'][number] | undefined): string =>
    d ? `${d.min} / ${d.mean.toFixed(1)} / ${d.max}` : '–';
  const lines = [
    `maintd incident reproduction — ${o.masters} masters (${off.slots} merge slots), ${o.stores} stores (${o.broken} broken), ${off.workers} workers, ${o.hours} h, seed ${o.seed}`,
    '',
    '| | cooldown off | cooldown on |',
    '|---|---:|---:|',
    `| merge-slot time on broken stores | ${pct(off.brokenSlotShare)} | ${pct(on.brokenSlotShare)} |`,
    ...off.brokenSlotShareHourly.map(
      (x, h) =>
        `| merge-slot time on broken stores in hour ${h + 1} | ${pct(x)} | ${pct(on.brokenSlotShareHourly[h] ?? 0)} |`,
    ),
    `| merge-slot time on broken stores after hour 1 | ${pct(off.brokenSlotShareAfterFirstHour)} | ${pct(on.brokenSlotShareAfterFirstHour)} |`,
    `| merge-slot time on healthy stores | ${pct(off.healthySlotShare)} | ${pct(on.healthySlotShare)} |`,
    `| merge tasks run against broken stores | ${off.brokenTasks} | ${on.brokenTasks} |`,
    `| healthy merge queue, max | ${off.healthyQueueMax} | ${on.healthyQueueMax} |`,
    ...off.healthyQueueHourly.map(
      (d, h) =>
        `| healthy merge queue in hour ${h + 1}, min / mean / max | ${queue(d)} | ${queue(on.healthyQueueHourly[h])} |`,
    ),
    `| healthy store wait p50 | ${mins(off.healthyWaitP50)} | ${mins(on.healthyWaitP50)} |`,
    `| healthy store wait p95 | ${mins(off.healthyWaitP95)} | ${mins(on.healthyWaitP95)} |`,
  ];
  return `${lines.join('\n')}\n`;
}
