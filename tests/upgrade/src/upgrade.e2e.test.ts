/**
 * The mixed-version rolling upgrade (issue 32, point 5; docs/ARCHITECTURE.md §2.1): three masters,
 * exporters and dashboards of both releases on one etcd, with simulated workers (broken stores
 * among them) under a small enqueue load, failures, cooldown windows and a park live. The masters
 * are replaced by N one at a time in a seeded random order; one is rolled back to N-1 and forward
 * again. N runs a kind N-1 does not know. After each step, checks against a random live master;
 * at the end, every task and every failure count is judged on etcd's ordered history.
 */
import { createHash, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdKv, type Random, TaskStore, keysFor, seededRandom } from '@maintd/core';
import { featureNames } from '@maintd/scheduler';
import type { EtcdServer } from '@maintd/core/testing';
import { Api } from '@maintd/faults/harness/api';
import { Cleanup } from '@maintd/faults/harness/cluster-fixture';
import { BIN, eventually } from '@maintd/faults/harness/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EXPECTED_DIFF,
  EXTRA_FEATURE,
  EXTRA_KIND,
  EXTRA_KIND_ENV,
  EXTRA_KIND_METRIC,
  REPO,
  type ReleaseN,
  buildReleaseN,
} from './build-n.js';
import { HELD_TASKS, type Release, judgeTasks, judgeWorkerCalls, replay } from './checks.js';
import { Dashboard, cleanLive } from './dashboard.js';
import { EtcdLog } from './etcd-log.js';
import { type Binaries, Host, type Service, type Workers, metric, startExporter } from './fleet.js';
import { type ReleaseN1, installReleaseN1, previousReleaseDir } from './release-n1.js';
import { type Answer, type Enqueued, enqueueLoad, probeApis } from './traffic.js';
import type { CountingProxy } from './worker-proxy.js';
import { injectField } from './inject.js';
import {
  type Backbone,
  MASTER_ENV,
  type MastersBody,
  WORKERS,
  drainQueue,
  expectCleanRun,
  expectExporterKeepsUp,
  expectHistoryHolds,
  expectServedCounts,
  rollPlan,
  runLateMaster,
  startBackbone,
} from './scenario.js';

/** The seed of the upgrade order and of every random choice: `UPGRADE_SEED`, else a fresh one. */
const SEED = process.env.UPGRADE_SEED ? Number(process.env.UPGRADE_SEED) : randomInt(2 ** 31);
/** N-1's tarballs: the kept release, or `UPGRADE_PREVIOUS_DIR` to try another build as N-1. */
const PREVIOUS_DIR = process.env.UPGRADE_PREVIOUS_DIR ?? previousReleaseDir();

/** How long the fleet runs under load after each step, before its checks. */
const DWELL_MS = 10_000;
/** The shipped kinds both releases run; N adds {@link EXTRA_KIND}. */
const SHIPPED = ['merge_wal', 'compact', 'index_id'];
const JOB_KIND: Record<string, string> = {
  'merge-wal-sweep': 'merge_wal',
  'compaction-sweep': 'compact',
  [`${EXTRA_KIND}-sweep`]: EXTRA_KIND,
};

/** N's dashboard: the workspace's build. */
const N_TOP = join(REPO, 'apps/tui/bin/maintd-top.js');
/** N's extra kind sweeps too. */
const N_ENV = { [EXTRA_KIND_ENV.interval]: '3' };
/**
 * The cluster features N understands: the workspace's registry (`held_tasks`, the first real one)
 * and the synthetic one build-n.ts adds. N-1 (0.1.0) understands none.
 */
const N_FEATURES = [...featureNames(), EXTRA_FEATURE].sort();

/**
 * A generator for one use of the seed: xoroshiro's first draws from nearby small seeds are close
 * to each other (seeds 7 and 31 gave one order), so each stream starts from a hash of seed and use.
 */
const stream = (use: string): Random =>
  seededRandom(createHash('sha256').update(`${SEED}/${use}`).digest().readUInt32LE(0));

const log = (msg: string, fields: Record<string, unknown> = {}): void => {
  console.log(`[upgrade] ${msg}${Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''}`);
};

describe(`rolling upgrade N-1 → N → N-1 → N under load (seed ${SEED})`, () => {
  const cleanup = new Cleanup();
  let scratch: string;
  let n1: ReleaseN1;
  let n: ReleaseN;
  let backbone: Backbone;
  let etcd: EtcdServer;
  let prefix: string;
  let workers: Workers;
  let proxies: CountingProxy[];
  let etcdLog: EtcdLog;
  /** An exporter of each release, both watching the whole roll. */
  const exporters: { release: Release; service: Service }[] = [];
  /** A dashboard of each release, on different hosts. */
  const dashboards: { release: Release; d: Dashboard }[] = [];
  const hosts: Host[] = [];
  const answers: Answer[] = [];
  const enqueued: Enqueued[] = [];
  const injected = new Set<number>();
  let random: Random;
  const figures: Record<string, unknown> = { seed: SEED };

  const bins = (release: Release): Binaries =>
    release === 'N' ? { release, maintd: n.maintd } : { release, maintd: n1.maintd };
  const releaseOf = (id: string): Release | undefined =>
    hosts.flatMap((h) => h.incarnations).find((i) => i.id === id)?.release ??
    (id.startsWith('drain-') ? 'N' : undefined);
  const runs = (release: Release, kind: string): boolean =>
    SHIPPED.includes(kind) || (release === 'N' && kind === EXTRA_KIND);

  beforeAll(async () => {
    random = stream('plan');
    log('seed', { seed: SEED, previous: PREVIOUS_DIR });
    scratch = await mkdtemp(join(tmpdir(), 'maintd-upgrade-'));
    cleanup.add(() => rm(scratch, { recursive: true, force: true }));
    const t0 = performance.now();
    [n1, n] = await Promise.all([
      installReleaseN1(PREVIOUS_DIR, await mkdtemp(join(scratch, 'n1-'))),
      buildReleaseN(join(scratch, 'n')),
    ]);
    figures.previous_version = n1.version;
    figures.install_ms = Math.round(n1.installMs);
    figures.setup_binaries_ms = Math.round(performance.now() - t0);
    log('binaries', { n1: n1.version, n: n.version, install_ms: figures.install_ms, diff: n.diff });
    // Every check of "which release said this" below needs the two to say different versions.
    expect(n.version, 'N (the workspace) and N-1 (the kept release) have different versions').not.toBe(n1.version);

    backbone = await startBackbone('upgrade', n.sim, SEED, cleanup);
    ({ etcd, prefix, etcdLog, workers, proxies } = backbone);
    const env = backbone.env;
    for (const name of ['h1', 'h2', 'h3']) hosts.push(await Host.create(name, env));
    cleanup.add(() => Promise.all(hosts.map((h) => h.stop())));
    await Promise.all(hosts.map((h) => h.run(bins('N-1'))));

    // An exporter and a dashboard of each release (docs/COMPATIBILITY.md, promise 2): N's are the
    // workspace's builds, which take their kinds from the registrations as N-1's do.
    const exporterEnv = { ETCD_ENDPOINTS: etcd.clientUrl, ETCD_PREFIX: prefix, EXPORTER_CHECK_INTERVAL_SECS: '1' };
    for (const [release, bin] of [
      ['N-1', n1.exporter],
      ['N', BIN.exporter],
    ] as const) {
      const service = await startExporter(bin, exporterEnv);
      cleanup.add(() => service.child.stop());
      exporters.push({ release, service });
    }
    dashboards.push({ release: 'N-1', d: Dashboard.start(n1.top, hosts[0]!.url, 'n1') });
    dashboards.push({ release: 'N', d: Dashboard.start(N_TOP, hosts[1]!.url, 'n') });
    cleanup.add(() => dashboards.forEach((x) => x.d.close()));
  }, 180_000);

  afterAll(async () => {
    await cleanup.run();
  }, 60_000);

  it('adds the extra kind, with a pool and a metric of its own, to N as one kind file and its registry entry', async () => {
    expect(n.diff).toEqual(EXPECTED_DIFF);
    // The gate is rolled with both: the release's own feature, and the one the test adds.
    expect(N_FEATURES).toEqual([HELD_TASKS, EXTRA_FEATURE]);
    // The copy compiles as the scheduler does: the two places are all a kind needs.
    expect(await n.typecheck()).toBe('');
  });

  it('upgrades, rolls back and forward with no task lost or run twice and every failure counted once', async () => {
    const t0 = performance.now();
    const api = (h: Host): Api => new Api(h.url);
    const live = (): Host[] => hosts.filter((h) => h.current);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random.next() * xs.length)]!;
    const healthy = workers.stores.filter((s) => !workers.broken.includes(s));

    // ---- N-1 alone: tasks, failures, windows and a park are live --------------------------------
    const probe = probeApis(hosts, answers);
    const load = enqueueLoad(hosts, workers.stores, EXTRA_KIND, stream('load'), enqueued);
    // A failed check must not leave the loops running against stopped daemons (stop() is idempotent).
    cleanup.add(() => Promise.all([load.stop(), probe.stop()]));
    const [parkedStore] = healthy;
    const park = await api(hosts[0]!).raw(`/scheduler/cooldowns/merge_wal/${parkedStore!}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'upgrade test: parked across the versions' }),
    });
    expect(park.status, park.text).toBe(200);
    // And N's kind, through N-1, which does not run it: N's sweeps must honour that park too.
    const parkExtra = await api(hosts[2]!).raw(`/scheduler/cooldowns/${EXTRA_KIND}/${parkedStore!}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: `upgrade test: ${EXTRA_KIND} parked by N-1, which does not run it` }),
    });
    expect(parkExtra.status, parkExtra.text).toBe(200);
    await eventually(
      async () => {
        await etcdLog.caughtUp();
        const r = replay(etcdLog.changes(), releaseOf, (j) => JOB_KIND[j], injected);
        expect(r.windowsBy['N-1']).toBeGreaterThan(0);
      },
      60_000,
      500,
    );

    // N's fields survive N-1's rewrites: a task record (claimed and finished by N-1) and a
    // cooldown record (its next failure counted by N-1), each given a field N-1 does not know.
    const fields = await injectField(etcdLog, keysFor(prefix), api(hosts[1]!), {
      healthy,
      broken: workers.broken,
      injected,
    });
    for (const f of fields) expect(f.after, f.what).toMatchObject(f.expected);
    figures.kept_fields = fields.map((f) => f.what);

    // ---- the upgrade, host by host, in a seeded order; then a rollback and a roll forward -------
    const { order, back, steps } = rollPlan(
      hosts.map((h) => h.name),
      random,
    );
    log('plan', { seed: SEED, order, rollback: back, steps });
    figures.order = order;
    figures.rollback = back;
    // Keep the way back (docs/DEPLOY.md §7): N's feature stays off until released below. Set
    // through an N-1 master: 0.1.0 has the route.
    const held = await api(hosts[0]!).raw('/cluster', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ preserve_downgrade: true }),
    });
    expect(held.status, `preserve_downgrade through N-1: ${held.text}`).toBe(200);
    await checkStep('N-1 fleet');
    const runStep = async (step: { host: string; to: Release }): Promise<void> => {
      const host = hosts.find((h) => h.name === step.host)!;
      const s0 = performance.now();
      await host.run(bins(step.to), step.to === 'N' ? N_ENV : {});
      log('step', { host: step.host, to: step.to, ms: Math.round(performance.now() - s0) });
      // The mixed fleet under load for a while: sweeps of both versions meet each other's windows.
      await new Promise((resolve) => setTimeout(resolve, DWELL_MS));
      await checkStep(`${step.host} → ${step.to}`);
    };
    for (const step of steps) await runStep(step);
    // Which master takes a sweep's slot is a race, so a run may end with no sweep of one version
    // inside a window the other opened, and the gate check below would then have judged nothing
    // in that direction. Rather than hoping, roll the same host back and forward again (at most
    // three more times) until both directions happened; the history is judged whole either way.
    const crossed = async (): Promise<string[]> => {
      await etcdLog.caughtUp();
      const g = replay(etcdLog.changes(), releaseOf, (j) => JOB_KIND[j], injected).gatedSweeps;
      return ['N-1 → N', 'N → N-1'].filter((k) => (g[k] ?? 0) === 0);
    };
    let extraRounds = 0;
    for (let missing = await crossed(); missing.length > 0 && extraRounds < 3; missing = await crossed()) {
      extraRounds++;
      log('gated sweeps not seen yet: one more rollback and roll forward', { missing, round: extraRounds });
      await runStep({ host: back, to: 'N-1' });
      await runStep({ host: back, to: 'N' });
    }
    figures.extra_rounds = extraRounds;

    // ---- finish the upgrade: release the feature; from then on N-1 may not join ---------------------
    const released = await api(pick(live())).raw('/cluster', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ preserve_downgrade: false }),
    });
    expect(released.status, `preserve_downgrade cleared: ${released.text}`).toBe(200);
    const releasedAt = performance.now();
    await eventually(async () => {
      const body = JSON.parse((await api(pick(live())).raw('/masters')).text) as MastersBody;
      expect(body.cluster?.features?.map((f) => `${f.name} ${f.state}`)).toEqual(
        N_FEATURES.map((name) => `${name} enabled`),
      );
    }, 20_000);
    figures.feature_enabled_ms = Math.round(performance.now() - releasedAt);
    const refused = await runLateMaster(n1.maintd, backbone);
    expect(refused.code, `N-1 after the feature is on:\n${refused.out.slice(-2000)}`).toBe(2);
    expect(refused.out).toContain('is older than its cluster: feature(s) ');
    // It names every feature it lacks: both of N's are on.
    const lacking = /older than its cluster: feature\(s\) (.*?) are switched on/.exec(refused.out)?.[1];
    expect(lacking?.split(', ').sort(), refused.out.slice(-2000)).toEqual(N_FEATURES);
    // The release it is told to install is N's, which the live masters run.
    const refusal = refused.out.split('\n').find((l) => l.includes('is older than its cluster'));
    expect(refusal, 'the refusal names N').toContain(n.version);
    log('feature', { enabled_after_ms: figures.feature_enabled_ms, n1_exit: refused.code });

    // ---- quiesce: stop the load and the masters; one N master with no sweeps drains the queue ---
    await load.stop();
    await probe.stop();
    const drain = await drainQueue(hosts, backbone.env, bins('N'), async () => {
      await etcdLog.caughtUp();
      return replay(etcdLog.changes(), releaseOf, (j) => JOB_KIND[j], injected);
    });

    // ---- judged on the whole history -------------------------------------------------------------
    await etcdLog.caughtUp();
    const r = replay(etcdLog.changes(), releaseOf, (j) => JOB_KIND[j], injected);
    const t = judgeTasks(r.tasks, releaseOf, runs);

    // Each exporter counts what the API (N) lists, by kind and state, and what etcd holds.
    const listed = await api(drain).allTasks();
    const byKindState = (xs: readonly { kind: string; state: string }[]): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const x of xs) out[`${x.kind} ${x.state}`] = (out[`${x.kind} ${x.state}`] ?? 0) + 1;
      return out;
    };
    const inEtcd = byKindState([...r.tasks.values()].flatMap((c) => (c.at(-1)?.record ? [c.at(-1)!.record!] : [])));
    expect(byKindState(listed)).toEqual(inEtcd);
    for (const exporter of exporters)
      await eventually(async () => {
        const text = await (await fetch(`${exporter.service.url}/metrics`)).text();
        const fromExporter: Record<string, number> = {};
        for (const key of new Set([...Object.keys(inEtcd), ...SHIPPED.map((k) => `${k} done`)])) {
          const [kind, state] = key.split(' ');
          const v = metric(text, 'master_cluster_tasks', `kind="${kind!}",state="${state!}"`) ?? 0;
          if (v > 0) fromExporter[key] = v;
        }
        expect(fromExporter, `the ${exporter.release} exporter`).toEqual(inEtcd);
      }, 15_000);
    await drain.stop();

    // The run's figures first, so that a failure below still reports them.
    const accepted = enqueued.filter((e) => e.id !== undefined);
    const calls = new Map<string, number>();
    for (const p of proxies) for (const [k, v] of p.calls()) calls.set(k, (calls.get(k) ?? 0) + v);
    Object.assign(figures, {
      violations: {
        lifecycle: t.lifecycle.length,
        claimed_twice: t.claimedTwice.length,
        counts: r.countViolations.length,
        gates: r.gateViolations.length,
        foreign_claims: t.foreignClaims.length,
      },
      ms: Math.round(performance.now() - t0),
      tasks: r.tasks.size,
      enqueued: enqueued.length,
      accepted: accepted.length,
      claims_by: t.claimsBy,
      counted_by: r.countedBy,
      windows_by: r.windowsBy,
      gated_sweeps: r.gatedSweeps,
      parked_sweeps: r.parkedSweeps,
      parked_sweeps_of: r.parkedSweepsOf,
      sweep_tasks_checked: r.sweepTasks,
      worker_calls: [...calls.values()].reduce((a, b) => a + b, 0),
      answers: answers.length,
      answers_503: answers.filter((a) => a.status === 503).length,
      answers_refused: answers.filter((a) => a.status === 0).length,
      watch_resumes: etcdLog.resumes,
      holds: r.holds,
    });
    log('figures', figures);

    // Diagnostics first, so that a failure below comes with the history it judged.
    for (const v of t.claimedTwice) {
      const id = v.split(':')[0]!;
      const changes = r.tasks.get(id) ?? [];
      const owners = new Set(changes.flatMap((c) => (c.record?.owner ? [c.record.owner] : [])));
      log('claimed twice', {
        id,
        changes: changes.map((c) => ({ rev: c.revision, seen: c.seenAt, ...c.record })),
        logs: [...owners].map((o) => ({
          owner: o,
          lines: hosts
            .flatMap((h) => h.incarnations)
            .find((i) => i.id === o)
            ?.child.output()
            .split('\n')
            .filter((l) => l.includes(id) || /shutting down|grace|stopped/.test(l)),
        })),
      });
    }
    const callViolations = judgeWorkerCalls(calls, t.claims, {
      merge_wal: { route: 'merge-wal', calls: WORKERS },
      [EXTRA_KIND]: { route: EXTRA_KIND, calls: 1 },
    });
    for (const v of callViolations) {
      const [kind, target] = v.split(':')[0]!.split(' ');
      for (const [id, changes] of r.tasks) {
        const last = changes.at(-1)?.record;
        if (!last || last.kind !== kind || last.target !== target) continue;
        const owner = changes.find((c) => c.record?.state === 'running')?.record?.owner;
        log('task of a pair whose calls differ', {
          id,
          owner,
          state: last.state,
          detail: last.detail,
          error: last.error,
        });
      }
    }
    // No task lost, none run twice (one claim each, and the workers saw exactly the claims' runs),
    // every failure counted once, no hold N-1 could misread, windows and parks gating both
    // (every task ended done or failed: the drain above waited for it).
    expectHistoryHolds(r, t, accepted, callViolations);
    expect(r.windowsBy.N).toBeGreaterThan(0);
    expect(r.gatedSweeps['N-1 → N'] ?? 0).toBeGreaterThan(0);
    expect(r.gatedSweeps['N → N-1'] ?? 0).toBeGreaterThan(0);
    expect(r.parkedSweeps['N-1']).toBeGreaterThan(0);
    expect(r.parkedSweeps.N).toBeGreaterThan(0);
    expect(r.parkedSweepsOf[EXTRA_KIND] ?? 0, `${EXTRA_KIND} sweeps while N-1's park of it held`).toBeGreaterThan(0);
    // N-1 never claims the kind it does not run, and N ran it.
    expect(t.foreignClaims, 'claims of a kind the claimer does not run').toEqual([]);
    expect(t.claimsBy[`N ${EXTRA_KIND}`] ?? 0).toBeGreaterThan(0);
    // No master crashed; every live master answered, 5xx only as 503 while it restarted.
    await expectCleanRun(hosts, answers, enqueued, (e) =>
      e.kind === EXTRA_KIND && e.release === 'N-1' ? e.status === 400 : e.status === 200 || e.status === 202,
    );

    /** The checks after each step, against a randomly chosen live master. */
    async function checkStep(step: string): Promise<void> {
      const host = pick(live());
      const inc = host.current!;
      const a = api(host);
      // It lists every task, the kinds it does not run included.
      const all = await a.allTasks();
      expect(all.length, `${step}: ${host.name} lists tasks`).toBeGreaterThan(0);
      // Once N has run, its kind's records are in every master's list (issue 32: one record of a
      // kind a master did not know once made the whole list a 500).
      if (step !== 'N-1 fleet')
        expect(
          all.some((x) => x.kind === EXTRA_KIND),
          `${step}: ${host.name} lists ${EXTRA_KIND} tasks`,
        ).toBe(true);
      const extra = await a.raw(`/tasks?kind=${EXTRA_KIND}&limit=5`);
      expect(extra.status, `${step}: ${host.name} lists ${EXTRA_KIND}: ${extra.text}`).toBe(200);
      // It accepts the extra kind only if it runs it.
      const res = await a.raw('/tasks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: EXTRA_KIND, target: pick(workers.stores) }),
      });
      if (inc.release === 'N-1') expect(res.status, `${step}: N-1 enqueue of ${EXTRA_KIND}: ${res.text}`).toBe(400);
      else expect([200, 202], `${step}: N enqueue of ${EXTRA_KIND}: ${res.text}`).toContain(res.status);
      const id = (JSON.parse(res.text) as { id?: string }).id;
      if (id)
        enqueued.push({
          host: host.name,
          what: 'check',
          status: res.status,
          restarting: false,
          kind: EXTRA_KIND,
          target: '',
          release: inc.release,
          id,
        });

      // It sees every live master, each with its version's kinds.
      await eventually(async () => {
        const body = JSON.parse((await a.raw('/masters')).text) as MastersBody;
        expect(body.masters.map((m) => m.id).sort()).toEqual(
          live()
            .map((h) => h.current!.id)
            .sort(),
        );
        for (const m of body.masters) {
          expect(m.version, `${m.id} version`).toBe(releaseOf(m.id) === 'N' ? n.version : n1.version);
          expect(m.kinds?.includes(EXTRA_KIND), m.id).toBe(releaseOf(m.id) === 'N');
          expect(Object.keys(m.pools ?? {}).includes(EXTRA_KIND), `${m.id} pools`).toBe(releaseOf(m.id) === 'N');
        }
        checkClusterFeatures(step, body);
      }, 10_000);

      // The failure counts it serves are etcd's, and etcd's are the tasks' (replayed so far).
      await eventually(async () => {
        await etcdLog.caughtUp();
        const rep = replay(etcdLog.changes(), releaseOf, (j) => JOB_KIND[j], injected);
        await expectServedCounts(`${step}: ${host.name}`, a, rep);
        const tj = judgeTasks(rep.tasks, releaseOf, runs);
        expect(tj.foreignClaims, `${step}: foreign claims`).toEqual([]);
      }, 10_000);

      // Each master's build info names its own release's version.
      for (const h of live()) {
        const text = await (await fetch(`${h.url}/metrics`)).text();
        const version = h.current!.release === 'N' ? n.version : n1.version;
        expect(metric(text, 'master_build_info', `version="${version}"`), `${step}: ${h.current!.id} build info`).toBe(
          1,
        );
      }

      // The N masters' own metric of the kind counts its runs.
      const ns = live().filter((h) => h.current!.release === 'N');
      if (ns.length > 0) {
        const texts = await Promise.all(ns.map(async (h) => (await fetch(`${h.url}/metrics`)).text()));
        const runsCounted = texts.reduce((sum, text) => sum + (metric(text, EXTRA_KIND_METRIC) ?? 0), 0);
        expect(runsCounted, `${step}: ${EXTRA_KIND_METRIC} on the N masters`).toBeGreaterThan(0);
      }

      // Each exporter keeps up: every master, no record invalid, the extra kind counted.
      for (const { release, service } of exporters) {
        const version = release === 'N' ? n.version : n1.version;
        await expectExporterKeepsUp(step, { release, url: service.url, version }, live().length, (text) => {
          if (step !== 'N-1 fleet')
            expect(
              metric(text, 'master_cluster_tasks', `kind="${EXTRA_KIND}"`) ?? 0,
              `${step}: ${release} exporter counts ${EXTRA_KIND}`,
            ).toBeGreaterThan(0);
        });
      }

      // Each dashboard shows the fleet live, no error in its header, the new kind included.
      const kinds = step === 'N-1 fleet' ? ['merge_wal'] : ['merge_wal', EXTRA_KIND];
      for (const { release, d } of dashboards)
        await d.waitFor(`${step}: the fleet live with ${kinds.join(', ')} (${release})`, (sc) => cleanLive(sc, kinds));
      // No master has crashed meanwhile.
      for (const h of live()) expect(h.current!.child.running(), `${step}: ${h.current!.id} running`).toBe(true);
      log('checked', { step, against: inc.id });
    }

    /**
     * The cluster-features gate (docs/ARCHITECTURE.md §2.8) as `GET /api/v1/masters` says it:
     * while an N-1 master lives, each of N's features (`held_tasks` and the test's own) waits for
     * exactly the N-1 masters (and N logs that it behaves as N-1); once only N runs,
     * `preserve_downgrade` holds them off; nothing switches one on.
     */
    function checkClusterFeatures(step: string, body: MastersBody): void {
      const ids = (r: Release): string[] =>
        live()
          .filter((h) => h.current!.release === r)
          .map((h) => h.current!.id)
          .sort();
      const [olds, news] = [ids('N-1'), ids('N')];
      expect(body.cluster?.preserve_downgrade, `${step}: preserve_downgrade`).toBe(true);
      const features = body.cluster?.features ?? [];
      if (news.length === 0) {
        expect(features, `${step}: no master knows a feature`).toEqual([]);
        return;
      }
      expect(
        features.map((f) => ({
          ...f,
          understood_by: [...f.understood_by].sort(),
          waiting_for: [...f.waiting_for].sort(),
        })),
        `${step}: ${N_FEATURES.join(', ')}`,
      ).toEqual(
        N_FEATURES.map((name) => ({
          name,
          state: olds.length > 0 ? 'waiting' : 'held',
          understood_by: news,
          waiting_for: olds,
          enabled_at: null,
        })),
      );
      if (olds.length > 0) {
        for (const h of live().filter((x) => x.current!.release === 'N'))
          for (const name of N_FEATURES)
            expect(h.current!.child.output(), `${step}: ${h.current!.id} says ${name} waits`).toContain(
              `${name} waits for`,
            );
      }
    }
  }, 290_000);

  it('runs a manual task enqueued through N once whichever release claims it, and leaves nothing stuck when the last N master is rolled back', async () => {
    // A fleet of its own on a fresh prefix (the roll above released the feature gate on its
    // prefix, so N-1 may no longer join there): one N-1 master and one N master, sweeps off.
    const lanePrefix = `/upgrade-lane-${randomInt(2 ** 31).toString(16)}`;
    const keys = keysFor(lanePrefix);
    const laneLog = await EtcdLog.start(etcd.clientUrl, lanePrefix);
    cleanup.add(() => laneLog.close());
    const kv = new EtcdKv({ endpoints: [etcd.clientUrl] });
    cleanup.add(() => kv.close());
    // Opened before any lane key is stale: opening a store removes those (its recovery).
    const store = await TaskStore.open({ kv, masterId: 'upgrade-lane-enqueuer', prefix: lanePrefix });
    cleanup.add(() => store.close());
    const env = {
      ...MASTER_ENV,
      ETCD_ENDPOINTS: etcd.clientUrl,
      ETCD_PREFIX: lanePrefix,
      WORKER_ENDPOINTS: proxies.map((p) => p.url).join(','),
      STATS_SCAN_INTERVAL_SECS: '0',
      MERGE_WAL_INTERVAL_SECS: '0',
    };
    // N's compaction window is closed now: an hour starting two hours from now (UTC).
    const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);
    const now = Date.now();
    const windows = { TASK_WINDOWS: `compact=${hhmm(now + 2 * 3_600_000)}-${hhmm(now + 3 * 3_600_000)}` };
    const old = await Host.create('lane-n1', env);
    const mixed = await Host.create('lane-n', env);
    hosts.push(old, mixed);
    const oldId = (await old.run(bins('N-1'))).id;
    const nId = (await mixed.run(bins('N'), windows)).id;
    const api = new Api(mixed.url);

    // N flags the N-1 master, which registers no windows: it claims what N's windows hold back.
    const masters = JSON.parse((await api.raw('/masters')).text) as {
      window_disagreements?: { id: string; windows: string[] }[];
    };
    expect(masters.window_disagreements).toEqual([{ id: oldId, windows: [] }]);
    const compact = await store.enqueue('compact', 'lane-automatic', { source: 'sweep' });

    // A burst of manual runs through N, then N rolled back while they are queued: N-1, alone,
    // claims what is left in FIFO order, leaving the lane keys of what it claimed.
    const targets = Array.from({ length: 24 }, (_, i) => `lane-${i}`);
    const ids: string[] = [];
    for (const target of targets) ids.push((await api.enqueue('merge_wal', target)).id);
    await mixed.run(bins('N-1'));
    const finished = async (): Promise<Map<string, { state: string; owner: string | undefined }>> => {
      await laneLog.caughtUp();
      const tasks = replay(laneLog.changes(), releaseOf, () => undefined, new Set()).tasks;
      const out = new Map<string, { state: string; owner: string | undefined }>();
      for (const [id, changes] of tasks) {
        const last = changes.at(-1)?.record;
        if (!last || !['done', 'failed'].includes(last.state)) throw new Error(`task ${id} still ${last?.state}`);
        out.set(id, { state: last.state, owner: changes.find((c) => c.record?.state === 'running')?.record?.owner });
      }
      return out;
    };
    // Nothing is stuck: every task ends, with N-1 masters alone.
    const ended = await eventually(finished, 60_000, 250);
    expect([...ended.keys()].sort()).toEqual([...ids, compact.task.id].sort());
    expect((await kv.range(keys.queuePrefix(), { keysOnly: true })).kvs).toEqual([]);
    // Windows hold nothing on N-1: the automatic compaction outside N's window was N-1's.
    expect(releaseOf(ended.get(compact.task.id)?.owner ?? '')).toBe('N-1');
    // Each manual run ran once: one claim, and one call to each worker.
    await laneLog.caughtUp();
    const judged = judgeTasks(replay(laneLog.changes(), releaseOf, () => undefined, new Set()).tasks, releaseOf, runs);
    expect(judged.lifecycle, 'task lifecycles').toEqual([]);
    expect(judged.claimedTwice, 'tasks claimed twice').toEqual([]);
    const calls = new Map<string, number>();
    for (const p of proxies) for (const [k, v] of p.calls()) calls.set(k, (calls.get(k) ?? 0) + v);
    for (const target of targets) expect(calls.get(`merge-wal ${target}`), target).toBe(WORKERS);
    for (const id of ids) expect(ended.get(id)?.state, id).toBe('done');
    const byN1 = ids.filter((id) => releaseOf(ended.get(id)?.owner ?? '') === 'N-1');
    log('lane', { manual: ids.length, claims_by: judged.claimsBy, claimed_by_n1: byN1.length });
    expect(byN1.length).toBeGreaterThan(0);

    // Harmless leftovers: lane keys of manual tasks N-1 claimed, which no master reads as work;
    // the next N master's recovery removes them, and runs nothing again. While the N master still
    // ran, its own periodic recovery removed those of N-1's claims it saw, so what is left is
    // every task N-1 claimed once N had deregistered, and at most the others N-1 claimed.
    const lane = async (): Promise<string[]> =>
      (await kv.range(keys.manualPrefix(), { keysOnly: true })).kvs.map((x) => x.key.split('/').at(-1)!).sort();
    const changes = laneLog.changes();
    const nGone = changes.find((c) => c.key === `masters/${nId}` && c.value === undefined)?.revision;
    expect(nGone, `${nId} deregistered`).toBeDefined();
    const claimedAfterN = byN1.filter((id) =>
      changes.some((c) => c.key === `tasks/${id}` && c.value?.state === 'running' && c.revision > nGone!),
    );
    const left = await lane();
    log('lane leftovers', { left: left.length, claimed_by_n1: byN1.length, claimed_after_n: claimedAfterN.length });
    expect(byN1, 'every lane key left is one of a task N-1 claimed').toEqual(expect.arrayContaining(left));
    expect(left, 'no N master removed those of tasks claimed after it left').toEqual(
      expect.arrayContaining(claimedAfterN),
    );
    await mixed.run(bins('N'), windows);
    await eventually(async () => expect(await lane()).toEqual([]), 10_000, 100);
    const again = new Map<string, number>();
    for (const p of proxies) for (const [k, v] of p.calls()) again.set(k, (again.get(k) ?? 0) + v);
    for (const target of targets) expect(again.get(`merge-wal ${target}`), target).toBe(WORKERS);
    await Promise.all([old.stop(), mixed.stop()]);
    for (const i of [...old.incarnations, ...mixed.incarnations]) {
      expect(await i.child.exited, `${i.id} exit`).toBe(0);
      expect(i.child.output(), i.id).not.toMatch(/"level":(50|60)/);
    }
  }, 120_000);
});
