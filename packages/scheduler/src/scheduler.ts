import {
  type Claim,
  ClaimLostError,
  type Clock,
  type FinishResult,
  type Kv,
  type StoreStats,
  StoreUnavailableError,
  type TaskKind,
  isParked,
  type TaskOutcome,
  type TaskStore,
  type WorkerScan,
  whenAborted,
} from '@maintd/core';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { WorkerAttempt } from './executor.js';
import { KIND_NAMES, kindSpec } from './kinds/index.js';
import type { KindRun, PoolName } from './kinds/spec.js';
import type { Metrics } from './metrics.js';
import { type StoreOutageLog, createStoreOutageLog } from './store-outage.js';
import { scanWorkers } from './workers/scan.js';

/** What the scheduler needs; `main.ts` wires the real ones, tests wire their own. */
export interface SchedulerDeps {
  readonly store: TaskStore;
  readonly kv: Kv;
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Worker transport; default the platform's `fetch` (simulations pass an in-process one). */
  readonly fetch?: typeof fetch;
}

/**
 * A configured worker with the fleet's latest stats scan of it, for `GET /workers`: the same on
 * every master, whichever ran the scan. `ok` and `last_scan_at` are null before its first scan.
 */
export interface WorkerStatus {
  readonly endpoint: string;
  readonly ok: boolean | null;
  readonly error: string | null;
  readonly last_scan_at: number | null;
  readonly stores: number;
}

/** Result of one sweep. */
export interface SweepSummary {
  readonly kind: TaskKind;
  readonly candidates: number;
  readonly enqueued: number;
  /** Over-threshold stores not enqueued: parked by an operator, cooling, or with an active task. */
  readonly skipped: { readonly parked: number; readonly cooldown: number; readonly active: number };
}

/** Result of one stats scan. */
export interface ScanSummary {
  readonly stores: number;
  readonly written: number;
  readonly deleted: number;
  readonly complete: boolean;
}

interface Pool {
  readonly name: PoolName;
  readonly kinds: readonly TaskKind[];
  readonly size: number;
  readonly running: Set<Promise<void>>;
  wake: AbortController;
}

/** The stats scan's periodic job, named as in etcd (`P/sweeps/<name>`); sweeps are named by their kinds. */
const SCAN_JOB = 'stats-scan';

/**
 * The reason a pool's sleep is cut short. Given explicitly because `abort()` without one builds
 * a DOMException (a stack trace) per call, and pools are woken on every queue change.
 */
const WAKE = new Error('woken');

/** Scan intervals after which the recorded scan of a worker no master scans any more is deleted. */
const STALE_WORKER_SCANS = 3;

/** How long an idle pool sleeps when no queue event wakes it. */
const POLL_MS = 2000;
const QUEUE_DEPTH_EVERY_MS = 5000;

/**
 * The master's scheduler (DESIGN §3.2): the stats scan and both sweeps (each once per interval
 * fleet-wide), the pools that claim and run tasks, and the orphan-recovery loop. A resource:
 * `start()` it, `stop()` it.
 */
export class Scheduler {
  readonly #d: SchedulerDeps;
  readonly #pools: Pool[];
  readonly #stop = new AbortController();
  /** Aborts executors still running when the shutdown grace runs out. */
  readonly #abandon = new AbortController();
  readonly #loops: Promise<void>[] = [];
  #queueWatch: { close(): Promise<void> } | undefined;
  #started = false;
  /** Periodic jobs (scan, sweeps) between waking up and finishing, this process. */
  #jobs = 0;
  /** Claims in flight in the pools. */
  #claiming = 0;
  /** Some stats row existed when a sweep last asked (see `#statsExist`). */
  #statsSeen = false;
  #waitingForStats = false;
  readonly #outage: StoreOutageLog;

  constructor(deps: SchedulerDeps) {
    this.#d = deps;
    this.#outage = createStoreOutageLog(deps.logger, deps.clock);
    // Every in-flight worker call listens on these (a scan asks every worker at once): the
    // default cap of 10 listeners would warn on any fleet of ten workers.
    setMaxListeners(1000, this.#stop.signal, this.#abandon.signal);
    const { taskConcurrency, mergeWalConcurrency } = deps.config.pools;
    const of = (name: PoolName): TaskKind[] => KIND_NAMES.filter((k) => kindSpec(k).pool === name);
    this.#pools =
      mergeWalConcurrency > 0
        ? [pool('general', of('general'), taskConcurrency), pool('merge', of('merge'), mergeWalConcurrency)]
        : [pool('general', KIND_NAMES, taskConcurrency)];
  }

  /** Starts every loop. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    const { intervals, sweeps } = this.#d.config;
    this.#periodic(SCAN_JOB, intervals.statsScanSecs, () => this.scanOnce());
    for (const kind of KIND_NAMES) {
      const sweep = kindSpec(kind).sweep;
      const every = sweeps.kinds[kind]?.intervalSecs ?? 0;
      if (sweep)
        this.#periodic(
          sweep.job,
          every,
          () => this.sweepOnce(kind),
          () => this.#statsExist(kind),
        );
    }
    this.#loops.push(this.#recoveryLoop(), this.#queueDepthLoop(), ...this.#pools.map((p) => this.#poolLoop(p)));
    void this.#watchQueue();
  }

  /**
   * Stops claiming, lets running tasks finish for up to `graceMs`, then abandons the rest (their
   * executors are aborted and their claims left to expire or to be released with the session).
   */
  async stop(graceMs: number): Promise<{ finished: boolean; abandoned: number }> {
    this.#stop.abort();
    for (const p of this.#pools) p.wake.abort(WAKE);
    await this.#queueWatch?.close().catch(() => undefined);
    const running = this.#pools.flatMap((p) => [...p.running]);
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

  /** True when no task runs and no periodic job is between waking up and finishing here. */
  get idle(): boolean {
    return this.#jobs === 0 && this.#claiming === 0 && this.runningCount() === 0;
  }

  /** Tasks running in this process. */
  runningCount(): number {
    return this.#pools.reduce((n, p) => n + p.running.size, 0);
  }

  /**
   * The configured worker endpoints with their latest scan result, from one store read: the scan
   * runs on one master per interval, so its result is read from the store, not kept here. A
   * worker dropped from this master's configuration is left out though its record remains.
   */
  async workerStatus(): Promise<WorkerStatus[]> {
    const scans = new Map((await this.#d.store.listWorkerScans()).map((w) => [w.endpoint, w]));
    return [...new Set(this.#d.config.workers.endpoints)].map(
      (endpoint) => scans.get(endpoint) ?? { endpoint, ok: null, error: null, last_scan_at: null, stores: 0 },
    );
  }

  /** Pool sizes, for the master's registration. */
  poolSizes(): Record<string, number> {
    return Object.fromEntries(this.#pools.map((p) => [p.name, p.size]));
  }

  /**
   * Scans every worker's stores and writes the changed stats rows and each worker's result. Rows
   * of stores no worker reports are deleted only when every worker answered: a partial scan
   * never erases the fleet.
   */
  async scanOnce(): Promise<ScanSummary> {
    const { config, store, clock, logger } = this.#d;
    const result = await scanWorkers(config.workers.endpoints, {
      timeoutMs: config.workers.timeoutSecs * 1000,
      token: config.workers.token,
      signal: this.#stop.signal,
      clock: this.#d.clock,
      ...(this.#d.fetch ? { fetch: this.#d.fetch } : {}),
    });
    const now = clock.now();
    // A worker that did not answer keeps the store count it last reported, which only a
    // previous scan (likely another master's) knows.
    const previous = new Map((await store.listWorkerScans()).map((w) => [w.endpoint, w]));
    const scans: WorkerScan[] = [];
    for (const endpoint of result.answered) {
      let stores = 0;
      for (const row of result.rows.values()) if (row.owners.includes(endpoint)) stores++;
      scans.push({ endpoint, ok: true, error: null, last_scan_at: now, stores });
    }
    for (const f of result.failed) {
      const stores = previous.get(f.endpoint)?.stores ?? 0;
      scans.push({ endpoint: f.endpoint, ok: false, error: f.error, last_scan_at: now, stores });
    }
    const existing = new Map((await store.listStats()).map((r) => [r.name, r]));
    const changed: StoreStats[] = [];
    for (const row of result.rows.values()) {
      const prev = existing.get(row.name);
      if (!prev || !sameStats(prev, row)) changed.push({ ...row, scanned_at: now });
    }
    await store.putStats(changed);
    const gone = result.complete ? [...existing.keys()].filter((name) => !result.rows.has(name)) : [];
    const deleted = gone.length > 0 ? await store.deleteStats(gone) : 0;
    await store.putWorkerScans(scans);
    // A worker dropped from the configuration would keep its last record for good. It goes once no
    // master has scanned it for a few intervals: one still configured with it (a rollout of the
    // new list in progress) keeps it fresh, and so listed.
    const staleMs = STALE_WORKER_SCANS * config.intervals.statsScanSecs * 1000;
    const configured = new Set(config.workers.endpoints);
    const dropped = [...previous.values()]
      .filter((w) => staleMs > 0 && !configured.has(w.endpoint) && now - w.last_scan_at > staleMs)
      .map((w) => w.endpoint);
    if (dropped.length > 0) {
      await store.deleteWorkerScans(dropped);
      logger.info({ workers: dropped }, 'forgot the scans of workers no master has scanned for a while');
    }
    if (result.failed.length > 0) {
      logger.warn({ failed: result.failed }, 'stats scan: some workers did not answer; keeping their stores');
    }
    logger.debug({ stores: result.rows.size, written: changed.length, deleted }, 'stats scan done');
    return { stores: result.rows.size, written: changed.length, deleted, complete: result.complete };
  }

  /**
   * One sweep: stores over the kind's threshold, biggest backlog first, minus parked targets,
   * cooling targets and targets with an active task, enqueued up to SWEEP_MAX_NEW_TASKS. Four
   * prefix reads (parks are few: that one is small) plus one transaction per new task.
   */
  async sweepOnce(kind: TaskKind): Promise<SweepSummary> {
    const { store, config, metrics, logger } = this.#d;
    const [rows, parked, cooling, active] = await Promise.all([
      store.listStats(),
      store.parkedTargets(kind),
      store.coolingTargets(kind),
      store.activeTargets(kind),
    ]);
    const sweep = kindSpec(kind).sweep;
    const threshold = config.sweeps.kinds[kind]?.threshold;
    if (!sweep || threshold === undefined) throw new Error(`${kind} has no sweep`);
    const metric = sweep.backlog;
    const candidates = rows
      .filter((r) => metric(r) >= threshold)
      .sort((a, b) => metric(b) - metric(a) || (a.name < b.name ? -1 : 1));
    let enqueued = 0;
    const skipped = { parked: 0, cooldown: 0, active: 0 };
    for (const row of candidates) {
      if (enqueued >= config.sweeps.maxNewTasks) break;
      if (parked.has(row.name)) {
        skipped.parked++;
        continue;
      }
      if (cooling.has(row.name)) {
        skipped.cooldown++;
        continue;
      }
      if (active.has(row.name)) {
        skipped.active++;
        continue;
      }
      const res = await store.enqueue(kind, row.name, { source: 'sweep' });
      if (res.created) {
        enqueued++;
        metrics.enqueued.inc({ kind, source: 'sweep' });
      } else {
        skipped.active++;
      }
    }
    if (skipped.parked > 0) metrics.sweepSkipped.inc({ kind, reason: 'parked' }, skipped.parked);
    if (skipped.cooldown > 0) metrics.sweepSkipped.inc({ kind, reason: 'cooldown' }, skipped.cooldown);
    if (skipped.active > 0) metrics.sweepSkipped.inc({ kind, reason: 'active' }, skipped.active);
    logger.info({ kind, candidates: candidates.length, enqueued, skipped }, `${kind} sweep queued ${enqueued} task(s)`);
    return { kind, candidates: candidates.length, enqueued, skipped };
  }

  /**
   * A sweep over an empty stats table finds nothing and still spends its slot: a fresh fleet
   * would idle for a whole sweep interval (600 s by default) after its first stats scan. Until
   * some master's scan has written a row, sweeps wait for it instead; once one exists, sweeps do
   * not ask again (a fleet whose stores all vanish sweeps nothing, as it should).
   */
  async #statsExist(kind: TaskKind): Promise<boolean> {
    if (this.#statsSeen) return true;
    this.#statsSeen = await this.#d.store.hasStats();
    if (!this.#statsSeen && !this.#waitingForStats) {
      this.#waitingForStats = true;
      this.#d.logger.info({ kind }, 'sweeps wait for the first stats scan: no store has stats yet');
    }
    return this.#statsSeen;
  }

  #periodic(
    name: string,
    intervalSecs: number,
    job: () => Promise<unknown>,
    ready: () => Promise<boolean> = () => Promise.resolve(true),
  ): void {
    if (intervalSecs <= 0) return;
    const intervalMs = intervalSecs * 1000;
    // Check several times per interval so that some master runs early in every slot.
    const tickMs = Math.min(5000, Math.max(100, Math.floor(intervalMs / 4)));
    const loop = async (): Promise<void> => {
      while (!this.#stop.signal.aborted) {
        this.#jobs++;
        try {
          if (await ready()) {
            const due = await this.#d.store.runEvery(name, intervalMs);
            // A due slot was taken with a write: etcd takes writes again if it was full.
            this.#outage.ok(due);
            if (due) await job();
          }
        } catch (err) {
          this.#outage.failed(err, `${name} failed`, { job: name });
        } finally {
          this.#jobs--;
        }
        if (!(await this.#sleep(tickMs))) return;
      }
    };
    this.#loops.push(loop());
  }

  async #recoveryLoop(): Promise<void> {
    const everyMs = Math.max(1000, (this.#d.config.etcd.leaseTtlSecs * 1000) / 2);
    // The store recovered orphans when it opened (DESIGN: "on start and periodically").
    const opened = this.#d.store.recoveredOnOpen;
    if (opened.requeued.length > 0 || opened.failed.length > 0)
      this.#d.logger.info(
        { requeued: opened.requeued, failed: opened.failed, at: 'start' },
        'recovered orphaned tasks',
      );
    while (await this.#sleep(everyMs)) {
      try {
        const r = await this.#d.store.recoverOrphaned();
        this.#outage.ok(r.requeued.length > 0 || r.failed.length > 0);
        if (r.requeued.length > 0 || r.failed.length > 0) {
          this.#d.logger.info({ requeued: r.requeued, failed: r.failed }, 'recovered orphaned tasks');
          this.#wakeAll();
        }
      } catch (err) {
        this.#outage.failed(err, 'orphan recovery failed');
      }
    }
  }

  async #queueDepthLoop(): Promise<void> {
    do {
      try {
        for (const kind of KIND_NAMES) this.#d.metrics.queueDepth.set({ kind }, await this.#d.store.queueDepth(kind));
      } catch {
        // The gauge keeps its last value while the store is away; readiness reports the outage.
      }
    } while (await this.#sleep(QUEUE_DEPTH_EVERY_MS));
  }

  /** Wakes pools as soon as a task is queued anywhere in the fleet; polling covers a dead watch. */
  async #watchQueue(): Promise<void> {
    const prefix = this.#d.store.keys.queuePrefix();
    while (!this.#stop.signal.aborted) {
      try {
        const dead = new AbortController();
        this.#queueWatch = await this.#d.kv.watch(
          prefix,
          (events) => {
            this.#d.store.observeQueue(events);
            const kinds = new Set<string>();
            for (const e of events) if (e.type === 'put') kinds.add(e.key.slice(prefix.length).split('/')[0] ?? '');
            for (const p of this.#pools) if (p.kinds.some((k) => kinds.has(k))) p.wake.abort(WAKE);
          },
          { onError: () => dead.abort() },
        );
        if (this.#stop.signal.aborted) break;
        // A watch that failed while it was being opened is no feed: poll, then open another.
        if (!dead.signal.aborted) {
          this.#d.store.setQueueFeed(true);
          // Anything queued before the watch existed raised no event: look once more.
          this.#wakeAll();
          await whenAborted(dead.signal, this.#stop.signal);
          this.#d.store.setQueueFeed(false);
        }
        await this.#queueWatch.close().catch(() => undefined);
      } catch (err) {
        this.#d.logger.debug({ err }, 'queue watch failed; polling until it is back');
      }
      if (!(await this.#sleep(POLL_MS))) break;
    }
    await this.#queueWatch?.close().catch(() => undefined);
  }

  async #poolLoop(p: Pool): Promise<void> {
    while (!this.#stop.signal.aborted) {
      // A fresh controller only once the last one fired: an idle pool polls every POLL_MS, and
      // a controller per poll was a large share of a simulation's CPU (Node builds a
      // transferable AbortSignal for each).
      if (p.wake.signal.aborted) p.wake = new AbortController();
      while (p.running.size < p.size && !this.#stop.signal.aborted) {
        // Every free slot claims at once: concurrent claims go to etcd as one transaction
        // (the store's group commit), where one after another would cost a round trip each.
        const free = p.size - p.running.size;
        // A claim in flight may have committed already: until it is a running task, not idle.
        this.#claiming += free;
        const settled = await Promise.allSettled(
          Array.from({ length: free }, () =>
            this.#d.store.claimNext(p.kinds).finally(() => {
              this.#claiming--;
            }),
          ),
        );
        let drained = false;
        for (const s of settled) {
          if (s.status === 'rejected') {
            this.#outage.failed(s.reason, 'scheduler queue poll failed', { pool: p.name });
            drained = true;
          } else if (!s.value) {
            drained = true;
          } else {
            // A claim is a write.
            this.#outage.ok(true);
            const run: Promise<void> = this.#run(s.value).finally(() => {
              p.running.delete(run);
              p.wake.abort(WAKE);
            });
            p.running.add(run);
          }
        }
        if (drained) break;
      }
      try {
        // stop() aborts every pool's wake signal too; AbortSignal.any would leak listeners on
        // the long-lived stop signal (Node 20), one per poll.
        await this.#d.clock.sleep(POLL_MS, p.wake.signal);
      } catch {
        // Woken: a task was queued, a slot freed, or we are stopping.
      }
    }
  }

  async #run(claim: Claim): Promise<void> {
    const { config, clock, metrics, store } = this.#d;
    const { task } = claim;
    const started = clock.now();
    let run: KindRun;
    try {
      run = await kindSpec(task.kind).run(task.target, {
        endpoints: config.workers.endpoints,
        timeoutMs: config.workers.timeoutSecs * 1000,
        token: config.workers.token,
        signal: this.#abandon.signal,
        now: () => clock.now(),
        clock,
        metrics,
        owners: async () => (await store.getStats(task.target).catch(() => undefined))?.owners,
        ...(this.#d.fetch ? { fetch: this.#d.fetch } : {}),
      });
    } catch (err) {
      run = {
        outcome: { ok: false, error: `executor failed: ${String(err)}`, errorClass: 'infrastructure' },
        attempts: [],
      };
    }
    const { outcome } = run;
    const attempts: readonly WorkerAttempt[] = run.attempts;
    if (this.#abandon.signal.aborted) {
      this.#d.logger.warn(
        { task_id: task.id, kind: task.kind, target: task.target },
        'task abandoned at shutdown; peers will recover it',
      );
      return;
    }
    const seconds = (clock.now() - started) / 1000;
    metrics.tasks.inc({ kind: task.kind, result: outcome.ok ? 'success' : 'failed' });
    metrics.taskDuration.observe({ kind: task.kind }, seconds);
    const finished = await this.#finish(claim, outcome);
    const line = {
      task_id: task.id,
      kind: task.kind,
      target: task.target,
      attempt: task.attempt,
      source: task.source,
      duration_ms: Math.round(seconds * 1000),
      workers: attempts.length,
    };
    if (!finished) return;
    if (outcome.ok) {
      this.#d.logger.info({ ...line, state: 'done', detail: outcome.detail }, 'task done');
      await this.#followUps(task.kind, task.target, run.facts ?? {});
    } else
      this.#d.logger.warn(
        { ...line, state: 'failed', error: outcome.error, error_class: outcome.errorClass },
        'task failed',
      );
    this.#cooldownEffects(finished);
  }

  /** Finishes a claim, retrying while etcd is away; a lost claim discards the result. */
  async #finish(claim: Claim, outcome: TaskOutcome): Promise<FinishResult | undefined> {
    let backoff = 200;
    for (;;) {
      try {
        return await this.#d.store.finish(claim, outcome);
      } catch (err) {
        if (err instanceof ClaimLostError) {
          this.#d.logger.warn(
            { task_id: claim.task.id, kind: claim.task.kind, target: claim.task.target },
            'claim lost before completion; result discarded',
          );
          return undefined;
        }
        if (!(err instanceof StoreUnavailableError) || this.#abandon.signal.aborted) {
          this.#d.logger.error({ err, task_id: claim.task.id }, 'failed to persist task completion');
          return undefined;
        }
        try {
          await this.#d.clock.sleep(backoff, this.#abandon.signal);
        } catch {
          return undefined;
        }
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  /**
   * Enqueues the kinds that follow a success of `kind` (e.g. index_id after a compaction that
   * added fragments): source `sweep`, deduped, and skipped while the target is parked or cools
   * for that kind, as a sweep would. Best-effort: the finished task's outcome is committed already.
   */
  async #followUps(kind: TaskKind, target: string, facts: Readonly<Record<string, number>>): Promise<void> {
    const { store, metrics, logger, clock } = this.#d;
    for (const next of KIND_NAMES) {
      const follows = kindSpec(next).follows;
      if (!follows || follows.after !== kind || !follows.when(facts)) continue;
      try {
        const [park, cooling] = await Promise.all([store.getPark(next, target), store.isCoolingDown(next, target)]);
        if (isParked(park, clock.now())) {
          metrics.sweepSkipped.inc({ kind: next, reason: 'parked' });
          continue;
        }
        if (cooling) {
          metrics.sweepSkipped.inc({ kind: next, reason: 'cooldown' });
          continue;
        }
        const res = await store.enqueue(next, target, { source: 'sweep' });
        if (res.created) metrics.enqueued.inc({ kind: next, source: 'sweep' });
        logger.debug({ kind: next, target, after: kind, created: res.created }, 'follow-up enqueued');
      } catch (err) {
        logger.warn({ err, kind: next, target, after: kind }, 'follow-up enqueue failed');
      }
    }
  }

  #cooldownEffects(f: FinishResult): void {
    const { metrics, logger } = this.#d;
    const { kind, target } = f.task;
    const c = f.cooldown;
    if (c.type === 'cleared') {
      if (c.existed) {
        metrics.cooldownCleared.inc({ kind, reason: 'success' });
        logger.info({ kind, target }, 'target succeeded; cooldown cleared');
      }
      return;
    }
    if (c.type === 'error') {
      logger.warn({ err: c.error, kind, target }, 'cooldown bookkeeping failed');
      return;
    }
    const r = c.result;
    if (r.action !== 'write') return;
    if (r.conflicts > 0) metrics.casConflicts.inc({ op: 'record_failure' }, r.conflicts);
    if (r.guardOverflow) {
      metrics.guardOverflow.inc({ kind });
      logger.warn(
        { kind, target, failures: r.record.failures, last_error: r.record.last_error },
        'fleet guard: too much of the fleet is cooling; counted the failure but opened no window',
      );
    }
    if (r.cooling) {
      metrics.cooldowns.inc({ kind });
      logger.warn(
        {
          kind,
          target,
          failures: r.record.failures,
          cooldown_secs: Math.round(r.windowMs / 1000),
          until_ms: r.record.until_ms,
          last_error: r.record.last_error,
        },
        'target failed repeatedly; sweeps will skip it until the cooldown lapses',
      );
    }
  }

  #wakeAll(): void {
    for (const p of this.#pools) p.wake.abort(WAKE);
  }

  /** Sleeps on the clock; false once the scheduler is stopping. */
  async #sleep(ms: number): Promise<boolean> {
    try {
      await this.#d.clock.sleep(ms, this.#stop.signal);
      return true;
    } catch {
      return false;
    }
  }
}

function pool(name: PoolName, kinds: readonly TaskKind[], size: number): Pool {
  return { name, kinds, size, running: new Set(), wake: new AbortController() };
}

function sameStats(a: StoreStats, b: Omit<StoreStats, 'scanned_at'>): boolean {
  return (
    a.pending_wal_generations === b.pending_wal_generations &&
    a.fragment_count === b.fragment_count &&
    a.row_count === b.row_count &&
    a.owners.length === b.owners.length &&
    a.owners.every((o, i) => o === b.owners[i])
  );
}
