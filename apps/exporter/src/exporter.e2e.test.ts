import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { EtcdKv, TaskStore } from '@maintd/core';
import { freePort } from '@maintd/core/testing';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../test/helpers.js';
import { EXPORTER_BIN, runOnce, start, stopAll, waitHttp } from '../test/processes.js';
import { settings } from './env.js';
import { VERSION } from './version.js';

const endpoints = inject('etcdEndpoints');

afterAll(stopAll);

/** Pids of the live children of `pid` (Linux). */
async function childrenOf(pid: number): Promise<string[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return text.split(' ').filter(Boolean);
}

async function startExporter(env: Record<string, string>) {
  const port = await freePort();
  const child = start(process.execPath, [EXPORTER_BIN, '--host=127.0.0.1', `--port=${port}`], {
    LOG_LEVEL: 'debug',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/healthz`, child);
  return { child, url };
}

describe('the maintd-exporter binary', () => {
  it('documents every setting in --help and refuses a bad one with exit code 2, naming it', async () => {
    const help = await runOnce(process.execPath, [EXPORTER_BIN, '--help']);
    expect(help.code).toBe(0);
    for (const s of settings) expect(help.out).toContain(s.env);
    const bad = await runOnce(process.execPath, [EXPORTER_BIN, '--etcd-endpoints', endpoints.join(','), '--port', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/invalid EXPORTER_PORT \(--exporter-port\)/);
    const none = await runOnce(process.execPath, [EXPORTER_BIN]);
    expect(none.code).toBe(2);
    expect(none.out).toMatch(/invalid ETCD_ENDPOINTS/);
  });

  it('serves the cluster state of a real etcd under its prefix, parks apart from cooling, serves on through SIGHUP, and exits 0 on SIGTERM', async () => {
    const prefix = `/e2e/${randomUUID()}`;
    const kv = new EtcdKv({ endpoints });
    const store = await TaskStore.open({
      kv,
      prefix,
      masterId: 'e2e-master',
      info: { host: 'h', pid: 1, version: 't', started_at: 0, pools: {} },
    });
    try {
      await store.enqueue('merge_wal', 'store-1');
      const { child, url } = await startExporter({ ETCD_ENDPOINTS: endpoints.join(','), ETCD_PREFIX: prefix });
      await eventually(async () => expect((await fetch(`${url}/readyz`)).status).toBe(200));
      // A sync runs in-process: the exporter has no child process.
      await eventually(async () => expect(await childrenOf(child.proc.pid!)).toEqual([]));
      await store.enqueue('compact', 'store-2');
      await store.park('merge_wal', 'store-9', { reason: 'disk being replaced', by: 'e2e' });
      await eventually(async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        expect(text).toMatch(/^maintd_exporter_up 1$/m);
        expect(text).toContain(`maintd_exporter_build_info{version="${VERSION}",node="${process.versions.node}"} 1`);
        expect(text).toMatch(/^master_cluster_tasks\{kind="merge_wal",state="queued"\} 1$/m);
        expect(text).toMatch(/^master_cluster_tasks\{kind="compact",state="queued"\} 1$/m);
        expect(text).toMatch(/^master_cluster_masters 1$/m);
        expect(text).toMatch(/^master_cluster_parked\{kind="merge_wal"\} 1$/m);
        expect(text).toMatch(/^master_cluster_parked\{kind="compact"\} 0$/m);
        expect(text).toMatch(/^master_cluster_cooldowns_active\{kind="merge_wal"\} 0$/m);
        expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      });
      expect(await (await fetch(url)).text()).toContain(prefix);
      // SIGHUP (no reload) is logged, and the exporter serves on.
      child.proc.kill('SIGHUP');
      await eventually(() =>
        expect(child.output()).toMatch(
          /"level":40,.*"msg":"SIGHUP ignored: maintd-exporter reads its settings only when it starts[^"]*","signal":"SIGHUP"/,
        ),
      );
      expect((await fetch(`${url}/metrics`)).status).toBe(200);
      expect(await child.stop()).toBe(0);
      expect(child.output()).toMatch(/"msg":"stopped"/);
    } finally {
      await store.close();
      await kv.deletePrefix(`${prefix}/`);
      await kv.close();
    }
  });

  it('keeps serving, with maintd_exporter_up 0 and no cluster metrics, while etcd cannot be reached', async () => {
    const { child, url } = await startExporter({ ETCD_ENDPOINTS: `http://127.0.0.1:${await freePort()}` });
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toMatch(/^maintd_exporter_up 0$/m);
    expect(text).not.toMatch(/^master_cluster_/m);
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    expect(child.proc.exitCode).toBeNull();
    expect(await child.stop()).toBe(0);
  });
});
