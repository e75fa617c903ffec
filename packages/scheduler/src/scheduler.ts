import {
  CapacityLedger,
  CapacityStore,
  type Claim,
  type ClaimOptions,
  type ClusterRecord,
  type KindCapacity,
  type TaskKind,
  featureInUse,
} from '@maintd/core';
import { setMaxListeners } from 'node:events';
import { HELD_TASKS, featureNames } from './features/index.js';
import { kindNames, kindSpec } from './kinds/index.js';
import { capacityLoop, capacityNow } from './scheduler/capacity.js';
import { clusterLoop } from './scheduler/cluster-check.js';
import { kindObservers } from './scheduler/kind-metrics.js';
import { type LoopContext, type SchedulerDeps, featuresOf, loopContext, registryOf } from './scheduler/context.js';
import { type PeriodicJob, periodicLoop } from './scheduler/periodic.js';
import { Pool, planPools } from './scheduler/pools.js';
import { QueueWatch } from './scheduler/queue-watch.js';
import { queueDepthLoop } from './scheduler/queue-depth.js';
import { recoveryLoop } from './scheduler/recovery.js';
import { SCAN_JOB, type ScanSummary, scanOnce } from './scheduler/stats-scan.js';
import { type SweepSummary, statsExistGate, sweepOnce } from './scheduler/sweep.js';
import { runTask } from './scheduler/task-run.js';
import { timelinePruneJob } from './scheduler/timeline-prune.js';
import { auditPruneJob } from './scheduler/audit-prune.js';
import { type WindowView, automaticMayStart, windowLoop, windowSignature, windowViews } from './scheduler/windows.js';
import { type WorkerStatus, workerStatus } from './scheduler/worker-status.js';
import { type StoreOutageLog, createStoreOutageLog } from './store-outage.js';

/**
 * The master's scheduler (docs/ARCHITECTURE.md §3.2): the stats scan and both sweeps (each once per interval
 * fleet-wide), the pools that claim and run tasks, and the orphan-recovery loop. A resource:
 * `start()` it, `stop()` it. It composes the parts in `scheduler/`, which share one
 * {@link LoopContext}.
 */
export class Scheduler {
  readonly #d: SchedulerDeps;
  readonly #ctx: LoopContext;
  readonly #pools: Pool[];
  readonly #stop = new AbortController();
  /** Aborts executors still running when the shutdown grace runs out. */
  readonly #abandon = new AbortController();
  readonly #loops: Promise<void>[] = [];
  /** The pools' claim loops (also in {@link #loops}): stop() waits for them before their runs. */
  readonly #claimLoops: Promise<void>[] = [];
  readonly #queueWatch: QueueWatch;
  #started = false;
  /** The cluster record as the last cluster check read it. */
  #cluster: ClusterRecord | undefined;
  /** Slot time of the tasks this master finished over the last hour (docs/ARCHITECTURE.md §3.5). */
  readonly #capacity = new CapacityLedger();
  readonly #capacityRecords: CapacityStore;

  /**
   * What this master logs about an etcd outage, whoever meets it: the loops, and the HTTP API's
   * 503s, so that one outage is one warning, one reminder a minute and one line when it ends.
   */
  readonly outage: StoreOutageLog;

  constructor(deps: SchedulerDeps) {
    this.#d = deps;
    this.outage = createStoreOutageLog(deps.logger, deps.clock);
    this.#ctx = loopContext(deps, this.#stop.signal, this.outage);
    const { kv, store, clock } = deps;
    this.#capacityRecords = new CapacityStore({ kv, keys: store.keys, masterId: store.masterId, clock });
    // Every in-flight worker call listens on these (a scan asks every worker at once): the
    // default cap of 10 listeners would warn on any fleet of ten workers.
    setMaxListeners(1000, this.#stop.signal, this.#abandon.signal);
    // A kind's own metrics are registered now, so that a scrape shows them before its first run.
    const observers = kindObservers(deps.metrics.registry, registryOf(deps));
    const run = (claim: Claim): Promise<void> =>
      runTask(deps, this.#abandon.signal, claim, observers.get(claim.task.kind), this.#capacity);
    // Until every live master can read a held task, a park does not hold: as the release before.
    // A kind outside its maintenance window has only its manual tasks claimed.
    const windowed = deps.config.windows.list.length > 0;
    const claimOptions = (): ClaimOptions => ({
      holdParked: this.featureInUse(HELD_TASKS),
      ...(windowed
        ? { automaticKinds: this.kinds.filter((k) => automaticMayStart(deps.config, k, deps.clock.now())) }
        : {}),
    });
    this.#pools = planPools(deps.config.pools, registryOf(deps)).map(
      (plan) => new Pool(plan, this.#ctx, run, claimOptions),
    );
    this.#queueWatch = new QueueWatch(
      this.#ctx,
      (kinds) => {
        for (const p of this.#pools) if (p.kinds.some((k) => kinds.has(k))) p.wake();
      },
      () => this.#wakeAll(),
    );
  }

  /** Starts every loop. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    const { intervals, sweeps } = this.#d.config;
    const jobs: PeriodicJob[] = [
      { name: SCAN_JOB, intervalSecs: intervals.statsScanSecs, run: () => this.scanOnce() },
      timelinePruneJob(this.#ctx),
      auditPruneJob(this.#ctx),
    ];
    const statsExist = statsExistGate(this.#d.store, this.#d.logger);
    const registry = registryOf(this.#d);
    for (const kind of kindNames(registry)) {
      const sweep = kindSpec(kind, registry).sweep;
      const intervalSecs = sweeps.kinds[kind]?.intervalSecs ?? 0;
      if (sweep)
        jobs.push({ name: sweep.job, intervalSecs, run: () => this.sweepOnce(kind), ready: () => statsExist(kind) });
    }
    for (const job of jobs) {
      const loop = periodicLoop(this.#ctx, job);
      if (loop) this.#loops.push(loop);
    }
    this.#loops.push(
      clusterLoop(this.#ctx, featureNames(featuresOf(this.#d)), {
        onRecord: (record) => (this.#cluster = record),
        tooOld: (message) => {
          // Not one more claim: what this master would run next may be written in the new way.
          this.#stop.abort();
          this.#wakeAll();
          this.#d.logger.fatal(message);
          this.#d.onTooOld?.(message);
        },
      }),
      recoveryLoop(this.#ctx, () => this.#wakeAll()),
      queueDepthLoop(this.#ctx),
      capacityLoop(this.#ctx, this.#capacity, this.#capacityRecords),
      windowLoop(this.#ctx, () => this.#wakeAll()),
      ...this.#pools.map((p) => this.#claimLoop(p)),
    );
    void this.#queueWatch.run();
  }

  /**
   * Stops claiming, lets running tasks finish for up to `graceMs`, then abandons the rest (their
   * executors are aborted and their claims left to expire or to be released with the session).
   */
  async stop(graceMs: number): Promise<{ finished: boolean; abandoned: number }> {
    this.#stop.abort();
    this.#wakeAll();
    await this.#queueWatch.close();
    // A claim on its way to etcd when stop() began may still commit and start a run: take the runs
    // to wait for once the pools have stopped claiming, or that run goes on after the session is
    // released and recovery runs its task a second time (docs/ARCHITECTURE.md §3.2, Stopping).
    await Promise.all(this.#claimLoops);
    const running = this.#pools.flatMap((p) => p.running());
    const grace = new AbortController();
    const allDone = Promise.all(running).then(() => true);
    const timedOut =
      graceMs > 0
        ? this.#d.clock.sleep(graceMs, grace.signal).then(
            () => false,
            () => false,
          )
        : Promise.resolve(false);
    const finished = await Promise.race([allDone, timedOut]);
    grace.abort();
    const abandoned = finished ? 0 : this.runningCount();
    if (!finished) this.#abandon.abort();
    await Promise.all(this.#loops);
    return { finished, abandoned };
  }

  /** Starts a pool's claim loop, kept for stop(). */
  #claimLoop(pool: Pool): Promise<void> {
    const loop = pool.loop();
    this.#claimLoops.push(loop);
    return loop;
  }

  /** True when no task runs and no periodic job is between waking up and finishing here. */
  get idle(): boolean {
    const { jobs, claiming } = this.#ctx.activity;
    return jobs === 0 && claiming === 0 && this.runningCount() === 0;
  }

  /** Tasks running in this process. */
  runningCount(): number {
    return this.#pools.reduce((n, p) => n + p.runningCount, 0);
  }

  /** The configured worker endpoints with the fleet's latest scan result of each, from the store. */
  workerStatus(): Promise<WorkerStatus[]> {
    return workerStatus(this.#d.store, this.#d.config.workers.endpoints);
  }

  /** The kinds this scheduler runs (its registry's), in registry order. */
  get kinds(): readonly TaskKind[] {
    return kindNames(registryOf(this.#d));
  }

  /**
   * Whether the cluster feature `name` is switched on and settled, so that this master may write
   * what it changes (docs/ARCHITECTURE.md §2.8). False until the first cluster check has read the
   * record, and for a feature outside this master's registry.
   */
  featureInUse(name: string): boolean {
    return Object.hasOwn(featuresOf(this.#d), name) && featureInUse(this.#cluster, name, this.#d.clock.now());
  }

  /**
   * The fleet's slot time over the last hour by kind, outcome and store (`GET /api/v1/capacity`):
   * every master's record, this master's own from memory.
   */
  capacity(): Promise<KindCapacity[]> {
    return capacityNow(this.#d, this.#capacity, this.#capacityRecords);
  }

  /** This master's maintenance windows as they stand now (`GET /api/v1/scheduler/policy`). */
  windows(): WindowView[] {
    return windowViews(this.#d.config, this.#d.clock.now());
  }

  /** This master's windows as its registration names them (`kind=spec@tz`), for peers to compare. */
  windowSignature(): string[] {
    return windowSignature(this.#d.config);
  }

  /** Pool sizes, for the master's registration. */
  poolSizes(): Record<string, number> {
    return Object.fromEntries(this.#pools.map((p) => [p.name, p.size]));
  }

  /** Scans every worker's stores once and writes what changed (see `scheduler/stats-scan.ts`). */
  scanOnce(): Promise<ScanSummary> {
    return scanOnce(this.#d, this.#stop.signal);
  }

  /** Sweeps `kind` once: enqueues the stores over its threshold (see `scheduler/sweep.ts`). */
  sweepOnce(kind: TaskKind): Promise<SweepSummary> {
    return sweepOnce(this.#d, kind);
  }

  #wakeAll(): void {
    for (const p of this.#pools) p.wake();
  }
}
