/**
 * The roll from one release to the next as an operator does it (docs/DEPLOY.md §7), on what users
 * install: both releases' archived tarballs (`releases/<version>/`) published to a private
 * registry, each host's binaries installed with `npm i -g` from it. Three masters of the previous
 * minor line's release under load are replaced one at a time by the newest release (install,
 * restart, `/readyz`, `GET /api/v1/masters`); `preserve_downgrade` keeps the way back before the
 * last one, one host is rolled back and forward, then the features are let on. After each step
 * the checks of the mixed-version test; at the end, every task and failure count on etcd's log.
 */
import { createHash, randomInt } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Random, seededRandom } from '@maintd/core';
import type { EtcdServer } from '@maintd/core/testing';
import { Api } from '@maintd/faults/harness/api';
import { Cleanup } from '@maintd/faults/harness/cluster-fixture';
import { BIN, eventually, runNode } from '@maintd/faults/harness/processes';
import { TestRegistry } from '@maintd/release-tests/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELD_TASKS, type Release, type Replay, judgeTasks, judgeWorkerCalls, replay } from './checks.js';
import { Dashboard, cleanLive } from './dashboard.js';
import { type EtcdLog } from './etcd-log.js';
import { Host, type Service, type Workers, metric, startExporter } from './fleet.js';
import { RELEASES_DIR, keptReleases, previousMinorRelease } from './releases.js';
import { type Answer, type Enqueued, enqueueLoad, probeApis } from './traffic.js';
import type { CountingProxy } from './worker-proxy.js';
import {
  type Backbone,
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

const run = promisify(execFile);
/** Where the roll's log goes, for the release note: `tests/upgrade/test-results/release-roll.json`. */
const RESULTS = fileURLToPath(new URL('../test-results/', import.meta.url));

/** The newest release, and the newest of the minor line before it. */
const TO = keptReleases().at(-1)!;
const FROM = previousMinorRelease(keptReleases(), TO);
const SEED = process.env.UPGRADE_SEED ? Number(process.env.UPGRADE_SEED) : randomInt(2 ** 31);
const DWELL_MS = 6_000;
/** The features the newest release switches on when the roll ends (docs/DEPLOY.md §7). */
const GATED = [HELD_TASKS];

const log = (msg: string, fields: Record<string, unknown> = {}): void => {
  console.log(`[roll] ${msg}${Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''}`);
};

describe.skipIf(FROM === undefined)(
  `the roll from ${FROM ?? '?'} to ${TO}, installed from a registry (seed ${SEED})`,
  () => {
    const cleanup = new Cleanup();
    let scratch: string;
    let registry: TestRegistry;
    let userconfig: string;
    let backbone: Backbone;
    let etcd: EtcdServer;
    let prefix: string;
    let etcdLog: EtcdLog;
    let workers: Workers;
    let proxies: CountingProxy[];
    const hosts: Host[] = [];
    /** Each host's npm prefix (its /usr/local). */
    const prefixes = new Map<string, string>();
    const exporters: { release: Release; service: Service }[] = [];
    const dashboards: { release: Release; d: Dashboard }[] = [];
    const answers: Answer[] = [];
    const enqueued: Enqueued[] = [];
    /** What the note needs: each step's versions and gates, as `GET /api/v1/masters` said them. */
    const steps: Record<string, unknown>[] = [];
    const random: Random = seededRandom(createHash('sha256').update(`${SEED}/roll`).digest().readUInt32LE(0));
    const version = (r: Release): string => (r === 'N' ? TO : FROM!);
    const releaseOf = (id: string): Release | undefined =>
      hosts.flatMap((h) => h.incarnations).find((i) => i.id === id)?.release ??
      (id.startsWith('drain-') ? 'N' : undefined);

    /** docs/DEPLOY.md §7's install: `npm i -g --prefix <prefix> <packages>@<version>` from the registry. */
    const install = async (dir: string, release: Release, packages: readonly string[]): Promise<number> => {
      const t0 = performance.now();
      await run(
        'npm',
        [
          'i',
          '-g',
          '--prefix',
          dir,
          '--no-audit',
          '--no-fund',
          '--prefer-offline',
          ...packages.map((p) => `${p}@${version(release)}`),
        ],
        {
          env: {
            ...process.env,
            npm_config_userconfig: userconfig,
            CI: 'true',
          },
          maxBuffer: 16 << 20,
        },
      ).catch((err: Error & { stderr?: string }) => {
        throw new Error(`npm i -g of ${version(release)} into ${dir} failed:\n${err.stderr ?? err.message}`, {
          cause: err,
        });
      });
      return Math.round(performance.now() - t0);
    };

    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'maintd-roll-'));
      cleanup.add(() => rm(scratch, { recursive: true, force: true }));
      await mkdir(join(scratch, 'registry'));
      registry = await TestRegistry.start(join(scratch, 'registry'));
      cleanup.add(() => registry.close());
      // Publishing as the release job does; installing with the `.npmrc` of docs/RELEASING.md (the
      // scope from the internal registry, everything else from the usual one and npm's cache).
      const publishConfig = join(scratch, 'publish.npmrc');
      await writeFile(publishConfig, registry.npmrc());
      userconfig = join(scratch, 'npmrc');
      await writeFile(userconfig, registry.scopedNpmrc());
      // Both releases as archived: the same bytes the internal registry got.
      const tarballs = await Promise.all(
        [FROM!, TO].map(async (v) =>
          (await readdir(join(RELEASES_DIR, v))).filter((f) => f.endsWith('.tgz')).map((f) => join(RELEASES_DIR, v, f)),
        ),
      );
      await Promise.all(tarballs.flat().map((t) => registry.publish(t, publishConfig)));

      backbone = await startBackbone('roll', BIN.sim, SEED, cleanup);
      ({ etcd, prefix, etcdLog, workers, proxies } = backbone);
      const env = backbone.env;
      for (const name of ['h1', 'h2', 'h3']) {
        hosts.push(await Host.create(name, env));
        prefixes.set(name, join(scratch, name));
      }
      cleanup.add(() => Promise.all(hosts.map((h) => h.stop())));
      // A monitoring host per release: its exporter and its dashboard.
      const installs = await Promise.all([
        ...hosts.map((h) => install(prefixes.get(h.name)!, 'N-1', ['@maintd/master', '@maintd/exporter'])),
        install(join(scratch, 'mon-n1'), 'N-1', ['@maintd/exporter', '@maintd/tui']),
        // The three binaries of the newest release in one command, as docs/DEPLOY.md §3 installs them.
        install(join(scratch, 'mon-n'), 'N', ['@maintd/master', '@maintd/exporter', '@maintd/tui']),
      ]);
      log('installed', { from: FROM, to: TO, install_ms: installs });
      await Promise.all(hosts.map((h) => h.run({ release: 'N-1', maintd: join(prefixes.get(h.name)!, 'bin/maintd') })));
      const exporterEnv = { ETCD_ENDPOINTS: etcd.clientUrl, ETCD_PREFIX: prefix, EXPORTER_CHECK_INTERVAL_SECS: '1' };
      for (const [release, dir] of [
        ['N-1', 'mon-n1'],
        ['N', 'mon-n'],
      ] as const) {
        const service = await startExporter(join(scratch, dir, 'bin/maintd-exporter'), exporterEnv);
        cleanup.add(() => service.child.stop());
        exporters.push({ release, service });
        dashboards.push({ release, d: Dashboard.start(join(scratch, dir, 'bin/maintd-top'), hosts[0]!.url, dir) });
      }
      cleanup.add(() => dashboards.forEach((x) => x.d.close()));
    }, 240_000);

    afterAll(async () => {
      await cleanup.run();
    }, 60_000);

    it('npm i -g from the registry gives binaries that print their release', async () => {
      for (const [dir, release, bins] of [
        [prefixes.get('h1')!, 'N-1', ['maintd', 'maintd-exporter']],
        [join(scratch, 'mon-n1'), 'N-1', ['maintd-exporter', 'maintd-top']],
        [join(scratch, 'mon-n'), 'N', ['maintd', 'maintd-exporter', 'maintd-top']],
      ] as const)
        for (const bin of bins) {
          const out = await runNode(join(dir, 'bin', bin), ['--version'], {});
          expect(out.out.trim(), `${bin} of ${version(release)}`).toMatch(new RegExp(`(^|\\s)${version(release)}$`));
        }
    });

    it('rolls three masters forward one host at a time, one back and forward again, with nothing lost, run twice or miscounted', async () => {
      const api = (h: Host): Api => new Api(h.url);
      const live = (): Host[] => hosts.filter((h) => h.current);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random.next() * xs.length)]!;
      const healthy = workers.stores.filter((s) => !workers.broken.includes(s));
      /** etcd's log so far, replayed. */
      const judged = async (): Promise<Replay> => {
        await etcdLog.caughtUp();
        return replay(
          etcdLog.changes(),
          releaseOf,
          (j) => (j === 'merge-wal-sweep' ? 'merge_wal' : undefined),
          new Set(),
        );
      };
      const probe = probeApis(hosts, answers);
      // `merge_wal` only: both releases run the same kinds.
      const load = enqueueLoad(hosts, workers.stores, 'merge_wal', random, enqueued);
      cleanup.add(() => Promise.all([load.stop(), probe.stop()]));
      const park = await api(hosts[0]!).raw(`/scheduler/cooldowns/merge_wal/${healthy[0]!}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'roll test: parked across the releases' }),
      });
      expect(park.status, park.text).toBe(200);
      const cluster = async (body: object): Promise<void> => {
        const res = await api(pick(live())).raw('/cluster', {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status, `PATCH /cluster ${JSON.stringify(body)}: ${res.text}`).toBe(200);
      };

      await checkStep('N-1 fleet');
      const {
        order,
        back,
        steps: plan,
      } = rollPlan(
        hosts.map((h) => h.name),
        random,
      );
      // An operator installs on a host while its master still runs, then restarts it: the next
      // step's install runs during this step's dwell and checks, as it would on that host.
      const installFor = (i: number): Promise<number> | undefined =>
        plan[i] && install(prefixes.get(plan[i].host)!, plan[i].to, ['@maintd/master', '@maintd/exporter']);
      let next = installFor(0);
      for (const [i, step] of plan.entries()) {
        const host = hosts.find((h) => h.name === step.host)!;
        const installMs = await next!;
        // Keep the way back before the roll ends (docs/DEPLOY.md §7).
        if (i === order.length - 1) await cluster({ preserve_downgrade: true });
        const s0 = performance.now();
        await host.run({ release: step.to, maintd: join(prefixes.get(step.host)!, 'bin/maintd') });
        log('step', {
          host: step.host,
          to: version(step.to),
          install_ms: installMs,
          restart_ms: Math.round(performance.now() - s0),
        });
        next = installFor(i + 1);
        await new Promise((resolve) => setTimeout(resolve, DWELL_MS));
        await checkStep(`${step.host} → ${version(step.to)}`);
      }

      // Finish the upgrade: the features switch on, and the previous release may no longer join.
      await cluster({ preserve_downgrade: false });
      const releasedAt = performance.now();
      await eventually(async () => {
        const body = JSON.parse((await api(pick(live())).raw('/masters')).text) as MastersBody;
        expect(body.cluster?.features?.map((f) => `${f.name} ${f.state}`)).toEqual(GATED.map((g) => `${g} enabled`));
      }, 20_000);
      const enabledMs = Math.round(performance.now() - releasedAt);
      await recordStep('preserve_downgrade cleared');
      const late = join(scratch, 'late-n1');
      await install(late, 'N-1', ['@maintd/master']);
      const tooOld = await runLateMaster(join(late, 'bin/maintd'), backbone);
      expect(tooOld.code, `${FROM} after the features are on:\n${tooOld.out.slice(-2000)}`).toBe(2);
      const refusal = tooOld.out.split('\n').find((l) => l.includes('is older than its cluster')) ?? '';
      for (const g of GATED) expect(refusal).toContain(g);
      expect(refusal, 'the refusal names the release to install').toContain(TO);
      log('features on', { enabled_after_ms: enabledMs, previous_release_exit: tooOld.code });

      // Quiesce: the load stops, the masters stop, one master of the new release drains the queue.
      await load.stop();
      await probe.stop();
      const drain = await drainQueue(
        hosts,
        backbone.env,
        { release: 'N', maintd: join(prefixes.get(back)!, 'bin/maintd') },
        judged,
      );
      const r = await judged();
      const t = judgeTasks(r.tasks, releaseOf, () => true);
      const listed = await api(drain).allTasks();
      await drain.stop();
      const accepted = enqueued.filter((e) => e.id !== undefined);
      const calls = new Map<string, number>();
      for (const p of proxies) for (const [k, v] of p.calls()) calls.set(k, (calls.get(k) ?? 0) + v);
      const figures = {
        from: FROM,
        to: TO,
        seed: SEED,
        order,
        rollback: back,
        tasks: r.tasks.size,
        listed: listed.length,
        accepted: accepted.length,
        lost: accepted.filter((e) => !r.tasks.has(e.id!)).length,
        claimed_twice: t.claimedTwice.length,
        miscounted: r.countViolations.length,
        counted_by: r.countedBy,
        windows_by: r.windowsBy,
        claims_by: t.claimsBy,
        gated_sweeps: r.gatedSweeps,
        holds: r.holds,
        feature_enabled_ms: enabledMs,
        steps,
      };
      log('figures', figures);
      await mkdir(RESULTS, { recursive: true });
      await writeFile(join(RESULTS, 'release-roll.json'), `${JSON.stringify(figures, null, 2)}\n`);

      expect(listed.length, 'the API lists every task etcd holds').toBe(r.tasks.size);
      expectHistoryHolds(
        r,
        t,
        accepted,
        judgeWorkerCalls(calls, t.claims, { merge_wal: { route: 'merge-wal', calls: WORKERS } }),
      );
      await expectCleanRun(hosts, answers, enqueued, (e) => e.status === 200 || e.status === 202);

      /** What `GET /api/v1/masters` says now: each master's version, each feature's state. */
      async function recordStep(step: string): Promise<void> {
        const body = JSON.parse((await api(pick(live())).raw('/masters')).text) as MastersBody;
        const entry = {
          step,
          versions: Object.fromEntries(body.masters.map((m) => [m.id, m.version])),
          preserve_downgrade: body.cluster?.preserve_downgrade ?? false,
          features: (body.cluster?.features ?? []).map(
            (f) => `${f.name} ${f.state}${f.waiting_for.length ? ` for ${f.waiting_for.join(', ')}` : ''}`,
          ),
        };
        steps.push(entry);
        log('masters', entry);
      }

      /** The mixed-version test's checks after a step, against a random live master. */
      async function checkStep(step: string): Promise<void> {
        const host = pick(live());
        const a = api(host);
        expect((await a.allTasks()).length, `${step}: ${host.name} lists tasks`).toBeGreaterThan(0);
        const olds = live()
          .filter((h) => h.current!.release === 'N-1')
          .map((h) => h.current!.id)
          .sort();
        const news = live().filter((h) => h.current!.release === 'N').length;
        await eventually(async () => {
          const body = JSON.parse((await a.raw('/masters')).text) as MastersBody;
          expect(body.masters.map((m) => m.id).sort()).toEqual(
            live()
              .map((h) => h.current!.id)
              .sort(),
          );
          for (const m of body.masters) expect(m.version, `${step}: ${m.id}`).toBe(version(releaseOf(m.id)!));
          // The gate: waiting for exactly the old masters while one lives; then held by preserve_downgrade.
          const expected =
            news === 0 ? [] : GATED.map((g) => (olds.length > 0 ? `${g} waiting ${olds.join(',')}` : `${g} held `));
          expect(
            (body.cluster?.features ?? []).map((f) => `${f.name} ${f.state} ${[...f.waiting_for].sort().join(',')}`),
            `${step}: features`,
          ).toEqual(expected);
        }, 10_000);
        await recordStep(step);
        await eventually(async () => {
          await expectServedCounts(`${step}: ${host.name}`, a, await judged());
        }, 10_000);
        for (const h of live()) {
          const text = await (await fetch(`${h.url}/metrics`)).text();
          const v = version(h.current!.release);
          expect(metric(text, 'master_build_info', `version="${v}"`), `${step}: ${h.current!.id} build info`).toBe(1);
        }
        for (const { release, service } of exporters)
          await expectExporterKeepsUp(step, { release, url: service.url, version: version(release) }, live().length);
        for (const { release, d } of dashboards)
          await d.waitFor(`${step}: the fleet live (${version(release)})`, (sc) => cleanLive(sc, ['merge_wal']));
        for (const h of live()) expect(h.current!.child.running(), `${step}: ${h.current!.id} running`).toBe(true);
      }
    }, 420_000);
  },
);
