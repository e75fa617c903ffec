/**
 * What both rolls share (the mixed-version test and the release-to-release roll): the masters'
 * settings, how a roll ends (a drain of the queue) and the checks that hold at every step and at
 * the end whichever releases are rolled.
 */
import { randomInt } from 'node:crypto';
import { type EtcdServer, freePort, startEtcd } from '@maintd/core/testing';
import { expect } from 'vitest';
import type { Api } from '@maintd/faults/harness/api';
import type { Cleanup } from '@maintd/faults/harness/cluster-fixture';
import { eventually, runNode } from '@maintd/faults/harness/processes';
import type { Random } from '@maintd/core';
import type { Release, Replay, TaskFindings } from './checks.js';
import { EtcdLog } from './etcd-log.js';
import { type Binaries, Host, type Workers, metric, startWorkers } from './fleet.js';
import { type Answer, type Enqueued, badAnswers } from './traffic.js';
import { type CountingProxy, startCountingProxy } from './worker-proxy.js';

/** Short intervals and a short cooldown base, so that sweeps, failures and windows are live. */
export const MASTER_ENV = {
  ETCD_LEASE_TTL_SECS: '5',
  STATS_SCAN_INTERVAL_SECS: '2',
  MERGE_WAL_INTERVAL_SECS: '2',
  MERGE_WAL_MIN_GENERATIONS: '1',
  COMPACTION_INTERVAL_SECS: '0',
  TASK_COOLDOWN_AFTER_FAILURES: '2',
  TASK_COOLDOWN_BASE_SECS: '3',
  // Also the lease of a failure count: no count may age out during the test.
  TASK_COOLDOWN_MAX_SECS: '3600',
  TASK_COOLDOWN_MAX_PERCENT: '100',
  // Finished tasks stay: every task's history is judged at the end.
  TASK_HISTORY_LIMIT: '1000000',
  TASK_HISTORY_TTL_SECS: '0',
  WORKER_TIMEOUT_SECS: '10',
  SHUTDOWN_GRACE_SECS: '20',
  LOG_LEVEL: 'info',
};

/** `GET /api/v1/masters`, as far as the checks read it. */
export interface MastersBody {
  readonly masters: { id: string; version: string; kinds?: string[]; pools?: Record<string, number> }[];
  readonly cluster?: {
    readonly preserve_downgrade?: boolean;
    readonly features?: {
      name: string;
      state: string;
      understood_by: string[];
      waiting_for: string[];
      enabled_at: number | null;
    }[];
  };
}

/**
 * Ends a roll: the masters of `hosts` stop, and one master of `bins` without sweeps (on `env`, a
 * {@link Backbone}'s)
 * runs until `replayed()` has every task done or failed. Returns the drain's host, running.
 */
export async function drainQueue(
  hosts: Host[],
  env: Readonly<Record<string, string>>,
  bins: Binaries,
  replayed: () => Promise<Replay>,
): Promise<Host> {
  await Promise.all(hosts.map((h) => h.stop()));
  const drain = await Host.create('drain', {
    ...env,
    STATS_SCAN_INTERVAL_SECS: '0',
    MERGE_WAL_INTERVAL_SECS: '0',
  });
  await drain.run(bins);
  hosts.push(drain);
  await eventually(
    async () => {
      const open = [...(await replayed()).tasks.values()].filter(
        (c) => c.at(-1)?.record && !['done', 'failed'].includes(c.at(-1)!.record!.state),
      );
      expect(open.length).toBe(0);
    },
    60_000,
    250,
  );
  return drain;
}

/** The failure counts a master serves are etcd's, and etcd's are the tasks' (`rep`, replayed so far). */
export async function expectServedCounts(step: string, api: Api, rep: Replay): Promise<void> {
  expect(rep.countViolations, `${step}: failure counts`).toEqual([]);
  expect(rep.gateViolations, `${step}: sweeps inside windows or parks`).toEqual([]);
  expect(rep.heldViolations, `${step}: holds while N-1 lived or before held_tasks was on`).toEqual([]);
  const served = Object.fromEntries(
    (await api.cooldowns(true)).filter((c) => c.failures > 0).map((c) => [`${c.kind} ${c.target}`, c.failures]),
  );
  const replayedCounts = Object.fromEntries([...rep.cooldowns].map(([k, v]) => [k, v.failures as number]));
  expect(served, `${step}: cooldowns served`).toEqual(replayedCounts);
}

/**
 * No master crashed (each exited when told to, with 0 and no error line), and every live master
 * answered: 5xx only as 503, and only while it restarted; `enqueueOk` judges the enqueues.
 */
export async function expectCleanRun(
  hosts: readonly Host[],
  answers: readonly Answer[],
  enqueued: readonly Enqueued[],
  enqueueOk: (e: Enqueued) => boolean,
): Promise<void> {
  for (const i of hosts.flatMap((h) => h.incarnations)) {
    expect(await i.child.exited, `${i.id} exit`).toBe(0);
    expect(i.child.output(), i.id).not.toMatch(/"level":(50|60)/);
  }
  expect(
    badAnswers(answers, (a) => a.status === 200 || (a.restarting && (a.status === 503 || a.status === 0))),
    'API answers',
  ).toEqual([]);
  expect(
    badAnswers(enqueued, (a) => {
      const e = a as Enqueued;
      return (e.restarting && (e.status === 503 || e.status === 0)) || enqueueOk(e);
    }),
    'enqueue answers',
  ).toEqual([]);
}

/** The simulated fleet's workers: each `merge_wal` run calls every one of them. */
export const WORKERS = 3;
const STORES = 12;
const BROKEN = 3;

/** What a roll runs on: etcd with its log of the prefix, and the workers behind counting proxies. */
export interface Backbone {
  readonly etcd: EtcdServer;
  readonly prefix: string;
  readonly etcdLog: EtcdLog;
  readonly workers: Workers;
  readonly proxies: CountingProxy[];
  /** A master's settings on it: {@link MASTER_ENV}, etcd, the prefix and the proxies. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Starts etcd with a fresh prefix `/<name>-<hex>` and its log, and `maintd-sim workers` (`sim`:
 * {@link WORKERS} workers, 12 stores, 3 broken, seeded) behind counting proxies, which the masters
 * are given instead of the workers; all of it stops with `cleanup`.
 */
export async function startBackbone(name: string, sim: string, seed: number, cleanup: Cleanup): Promise<Backbone> {
  const etcd = await startEtcd();
  cleanup.add(() => etcd.stop());
  const prefix = `/${name}-${randomInt(2 ** 31).toString(16)}`;
  const etcdLog = await EtcdLog.start(etcd.clientUrl, prefix);
  cleanup.add(() => etcdLog.close());
  const workers = await startWorkers(sim, [
    ...['--workers', String(WORKERS), '--stores', String(STORES), '--broken', String(BROKEN)],
    ...['--seed', String(seed % 1000), '--broken-latency-ms', '300', '--merge-latency-ms', '100'],
  ]);
  cleanup.add(() => workers.child.stop());
  const proxies = await Promise.all(workers.endpoints.map((e) => startCountingProxy(e)));
  cleanup.add(() => Promise.all(proxies.map((p) => p.close())));
  const env = {
    ...MASTER_ENV,
    ETCD_ENDPOINTS: etcd.clientUrl,
    ETCD_PREFIX: prefix,
    WORKER_ENDPOINTS: proxies.map((p) => p.url).join(','),
  };
  return { etcd, prefix, etcdLog, workers, proxies, env };
}

/**
 * An exporter keeps up: up, its own `version`, one master per live master, no invalid record, and
 * whatever `more` asserts of its exposition.
 */
export async function expectExporterKeepsUp(
  step: string,
  exporter: { release: string; url: string; version: string },
  liveMasters: number,
  more: (text: string) => void = () => undefined,
): Promise<void> {
  await eventually(async () => {
    const text = await (await fetch(`${exporter.url}/metrics`)).text();
    const what = `${step}: ${exporter.release} exporter`;
    expect(metric(text, 'maintd_exporter_up'), `${what} up`).toBe(1);
    expect(metric(text, 'maintd_exporter_build_info', `version="${exporter.version}"`), `${what} build info`).toBe(1);
    expect(metric(text, 'master_cluster_masters'), `${what}'s masters`).toBe(liveMasters);
    expect(metric(text, 'maintd_exporter_invalid_records') ?? 0, `${what}'s invalid records`).toBe(0);
    more(text);
  }, 15_000);
}

/** A roll's steps: every host to N in `order`, then `back` to N-1 and to N again. */
export interface RollPlan {
  readonly order: readonly string[];
  readonly back: string;
  readonly steps: readonly { host: string; to: Release }[];
}

/** The roll of `hosts` in an order drawn from `random` (Fisher–Yates: the same seed, the same order). */
export function rollPlan(hosts: readonly string[], random: Random): RollPlan {
  const order = [...hosts];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const back = order[Math.floor(random.next() * order.length)]!;
  return {
    order,
    back,
    steps: [...order.map((host) => ({ host, to: 'N' as const })), { host: back, to: 'N-1' }, { host: back, to: 'N' }],
  };
}

/**
 * What the whole history of a roll must show, whichever releases rolled: no accepted task lost
 * (`accepted`), each task's life legal and claimed once, the workers' calls those of the claims
 * (`callViolations`), every failure counted once and by both releases, no hold N-1 could misread,
 * no sweep inside a window or park.
 */
export function expectHistoryHolds(
  r: Replay,
  t: TaskFindings,
  accepted: readonly Enqueued[],
  callViolations: readonly string[],
): void {
  expect(
    accepted.filter((e) => !r.tasks.has(e.id!)),
    'accepted enqueues missing from etcd',
  ).toEqual([]);
  expect(t.lifecycle, 'task lifecycles').toEqual([]);
  expect(callViolations, 'worker calls against claims').toEqual([]);
  expect(t.claimedTwice, 'tasks claimed twice').toEqual([]);
  // Every failure counted exactly once, whichever version finished it, at every revision.
  expect(r.countViolations, 'failure counts').toEqual([]);
  expect(r.countedBy['N-1']).toBeGreaterThan(0);
  expect(r.countedBy.N).toBeGreaterThan(0);
  // N holds no task while an N-1 master lives, nor before held_tasks is on (N-1 cannot read the state).
  expect(r.heldViolations, 'holds while N-1 lived or before held_tasks was on').toEqual([]);
  // Windows opened by one version gate the other's sweeps; parks are honoured by both.
  expect(r.gateViolations, 'sweeps inside windows or parks').toEqual([]);
}

/**
 * Starts one more master of `maintd` (a release's binary) against `backbone`'s etcd and prefix, with
 * no workers, and waits for it to exit: once N's features are on, N-1's must refuse to start
 * (exit 2, naming them) before it touches anything.
 */
export async function runLateMaster(
  maintd: string,
  backbone: Backbone,
): Promise<{ code: number | string; out: string }> {
  const { WORKER_ENDPOINTS: _workers, ...env } = backbone.env;
  return runNode(maintd, [], {
    ...env,
    MASTER_ID: 'late-n1',
    MASTER_HOST: '127.0.0.1',
    MASTER_PORT: String(await freePort()),
  });
}
