import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdKv, TaskStore } from '@maintd/core';
import { freePort } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../test/helpers.js';
import {
  type Child,
  EXPORTER_BIN,
  MASTER_BIN,
  REPO_ROOT,
  runOnce,
  start,
  stopAll,
  waitHttp,
} from '../test/processes.js';

const endpoints = inject('etcdEndpoints');

/**
 * One fleet for the whole file: a real master binary and a real exporter binary on one etcd
 * prefix, with cooldowns the test creates itself, and (in the last test) a real Prometheus
 * scraping both every second.
 */
let prefix: string;
let kv: EtcdKv;
let store: TaskStore;
let master: { child: Child; url: string };
let exporter: { child: Child; url: string };
let dir: string;

async function serve(bin: string, env: Record<string, string>, portVar: string, hostVar: string) {
  const port = await freePort();
  const child = start(process.execPath, [bin], {
    ETCD_ENDPOINTS: endpoints.join(','),
    ETCD_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    [hostVar]: '127.0.0.1',
    [portVar]: String(port),
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/healthz`, child);
  return { child, url };
}

beforeAll(async () => {
  prefix = `/e2e/${randomUUID()}`;
  dir = await mkdtemp(join(tmpdir(), 'maintd-exporter-prometheus-'));
  kv = new EtcdKv({ endpoints });
  // The test's own store: a window after one failure, so four failures make four cooling targets.
  store = await TaskStore.open({ kv, prefix, masterId: 'e2e-script', cooldown: { afterFailures: 1, maxPercent: 100 } });
  const fail = (kind: 'merge_wal' | 'compact', target: string) =>
    store.recordFailure(kind, target, randomUUID(), 'HTTP 500: Not found: /data/x.lance/data/0.lance', 'target');
  await fail('merge_wal', 'broken-1');
  await fail('merge_wal', 'broken-2');
  await fail('merge_wal', 'broken-3');
  await fail('compact', 'broken-4');
  await store.enqueue('compact', 'queued-1');
  [master, exporter] = await Promise.all([
    serve(
      MASTER_BIN,
      {
        STATS_SCAN_INTERVAL_SECS: '0',
        MERGE_WAL_INTERVAL_SECS: '0',
        COMPACTION_INTERVAL_SECS: '0',
        TASK_CONCURRENCY: '1',
        MERGE_WAL_CONCURRENCY: '1',
      },
      'MASTER_PORT',
      'MASTER_HOST',
    ),
    serve(EXPORTER_BIN, {}, 'EXPORTER_PORT', 'EXPORTER_HOST'),
  ]);
  await eventually(async () => expect((await fetch(`${exporter.url}/readyz`)).status).toBe(200));
});

afterAll(async () => {
  await stopAll();
  await store?.close();
  await kv?.deletePrefix(`${prefix}/`);
  await kv?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function promtoolCheck(url: string): Promise<{ code: number | null; out: string }> {
  const text = await (await fetch(url)).text();
  return runOnce('promtool', ['check', 'metrics'], { input: text });
}

describe('Prometheus against the exporter and a master', () => {
  it('promtool check metrics accepts the exporter’s /metrics', async () => {
    const r = await promtoolCheck(`${exporter.url}/metrics`);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('promtool check metrics accepts a master’s /metrics', async () => {
    const r = await promtoolCheck(`${master.url}/metrics`);
    // prom-client's default `nodejs_active_*_total` gauges fail this; the exporter drops them
    // (NON_COUNTER_TOTALS in @maintd/core), and the master must do the same.
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('a real Prometheus scraping both answers a PromQL query with the cooling count the test created', async () => {
    const port = await freePort();
    const config = `
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - ${join(REPO_ROOT, 'deploy/prometheus/alerts.yml')}
scrape_configs:
  - job_name: maintd-master
    static_configs: [{ targets: ['${new URL(master.url).host}'] }]
  - job_name: maintd-exporter
    static_configs: [{ targets: ['${new URL(exporter.url).host}'] }]
`;
    await writeFile(join(dir, 'prometheus.yml'), config);
    const prometheus = start('prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ]);
    const api = `http://127.0.0.1:${port}/api/v1`;
    await waitHttp(`http://127.0.0.1:${port}/-/ready`, prometheus);
    const query = async (q: string): Promise<string[]> => {
      const body = (await (await fetch(`${api}/query?query=${encodeURIComponent(q)}`)).json()) as {
        data: { result: { value: [number, string] }[] };
      };
      return body.data.result.map((r) => r.value[1]);
    };

    await eventually(async () => {
      expect(await query('sum(master_cluster_cooldowns_active)')).toEqual(['4']);
      expect(await query('master_cluster_cooldowns_active{kind="merge_wal"}')).toEqual(['3']);
    }, 20_000);
    // Both targets are scraped (each on its own schedule within the interval), and the master the
    // exporter sees registered is the one running.
    const kinds = (await store.listMasters())[0]?.kinds ?? [];
    expect(kinds).toContain('merge_wal');
    await eventually(async () => {
      expect(await query('up{job="maintd-master"}')).toEqual(['1']);
      expect(await query('up{job="maintd-exporter"}')).toEqual(['1']);
      // Pre-initialised per kind the master registered and result (success, failed).
      expect(await query('count(master_tasks_total)')).toEqual([String(kinds.length * 2)]);
    }, 10_000);
    expect(await query('master_cluster_masters')).toEqual(['1']);
    // The master claims the queued task at once (and fails it: no workers), whatever its state now.
    expect(await query('sum(master_cluster_tasks{kind="compact"})')).toEqual(['1']);
    // The alert rules load and evaluate in a real Prometheus, not only in promtool.
    const rules = (await (await fetch(`${api}/rules`)).json()) as {
      data: { groups: { name: string; rules: { health: string }[] }[] };
    };
    const group = rules.data.groups.find((g) => g.name === 'maintd');
    const alerts = (await readFile(join(REPO_ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')).match(/^\s*- alert: /gm);
    expect(alerts?.length).toBeGreaterThan(0);
    expect(group?.rules).toHaveLength(alerts?.length ?? 0);
    await eventually(async () => {
      const again = (await (await fetch(`${api}/rules`)).json()) as typeof rules;
      expect(again.data.groups[0]?.rules.map((r) => r.health)).toEqual(alerts?.map(() => 'ok'));
    }, 10_000);
    expect(await prometheus.stop()).toBe(0);
  }, 60_000);
});
