import { describe, expect, it } from 'vitest';
import { keysFor } from '@maintd/core';
import { applyChange, createAggregate } from './aggregate.js';
import { type ClusterSummary, summarize } from './summary.js';
import { createApp } from './app.js';
import { createExporterMetrics, type MetricsSource } from './metrics.js';
import type { WatcherStatus } from './watcher.js';

/** A source whose state a test sets directly (the watcher's side is tested against etcd). */
function source(): MetricsSource & {
  set(up: boolean, kinds?: readonly string[]): void;
  use(summary: ClusterSummary): void;
} {
  let status: WatcherStatus = { up: false, revision: 0, lastEventMs: undefined };
  let summary: ClusterSummary | undefined;
  return {
    summary: () => summary,
    status: () => status,
    set: (up, kinds = ['merge_wal', 'compact']) => {
      status = { up, revision: up ? 42 : 0, lastEventMs: up ? 1_700_000_000_500 : undefined };
      summary = up
        ? { ...summarize(registered(kinds), 0), masters: 2, stores: 10, pendingWalGenerations: 77 }
        : undefined;
    },
    use: (s) => {
      status = { up: true, revision: 42, lastEventMs: 1_700_000_000_500 };
      summary = s;
    },
  };
}

/** An aggregate that has seen one master registration, naming `kinds`, and no record. */
function registered(kinds: readonly string[]) {
  const agg = createAggregate();
  const value = JSON.stringify({ id: 'm1', host: 'h', pid: 1, version: '0.1.0', started_at: 0, pools: {}, kinds });
  applyChange(agg, { type: 'put', key: keysFor().master('m1'), value, modRevision: 1 });
  return agg;
}

function app() {
  const s = source();
  const metrics = createExporterMetrics(s, { defaultMetrics: false });
  return { s, metrics, app: createApp({ metrics, status: () => s.status(), prefix: '/maintd<x>' }) };
}

describe('exporter HTTP endpoints', () => {
  it('while not in sync, reports maintd_exporter_up 0 and leaves the cluster metrics out', async () => {
    const { app: a } = app();
    const res = await a.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^maintd_exporter_up 0$/m);
    expect(text).not.toMatch(/^master_cluster_/m);
    expect((await a.request('/readyz')).status).toBe(503);
    expect((await a.request('/healthz')).status).toBe(200);
  });

  it('in sync, serves every kind and state series and the exporter’s own health', async () => {
    const { s, metrics, app: a } = app();
    s.set(true);
    metrics.recordSync({ reason: 'start', durationMs: 1500, revision: 42, tasks: 0 });
    const text = await (await a.request('/metrics')).text();
    for (const kind of ['merge_wal', 'compact']) {
      for (const state of ['queued', 'running', 'done', 'failed', 'held']) {
        expect(text).toContain(`master_cluster_tasks{kind="${kind}",state="${state}"} 0`);
      }
      expect(text).toContain(`master_cluster_queue_oldest_age_seconds{kind="${kind}"} 0`);
      expect(text).toContain(`master_cluster_cooldowns_active{kind="${kind}"} 0`);
      expect(text).toContain(`master_cluster_cooldown_failures_max{kind="${kind}"} 0`);
    }
    expect(text).toMatch(/^master_cluster_masters 2$/m);
    expect(text).toMatch(/^master_cluster_stores 10$/m);
    expect(text).toMatch(/^master_cluster_pending_wal_generations 77$/m);
    expect(text).toMatch(/^maintd_exporter_up 1$/m);
    expect(text).toMatch(/^maintd_exporter_last_event_timestamp_seconds 1700000000\.5$/m);
    expect(text).toMatch(/^maintd_exporter_syncs_total\{reason="start"\} 1$/m);
    expect(text).toMatch(/^maintd_exporter_syncs_total\{reason="compacted"\} 0$/m);
    expect(text).toMatch(/^maintd_exporter_sync_duration_seconds 1\.5$/m);
    expect(await (await a.request('/readyz')).json()).toMatchObject({ ready: true, revision: 42 });

    s.set(false); // etcd went away: the numbers disappear rather than go stale
    expect(await (await a.request('/metrics')).text()).not.toMatch(/^master_cluster_/m);
  });

  it('serves the series of the kinds the summary holds now, and drops those of a kind that left it', async () => {
    const { s, app: a } = app();
    s.set(true, ['merge_wal', 'repair']);
    const before = await (await a.request('/metrics')).text();
    expect(before).toContain('master_cluster_tasks{kind="repair",state="queued"} 0');
    expect(before).toContain('master_cluster_parked{kind="repair"} 0');
    s.set(true, ['merge_wal']);
    const after = await (await a.request('/metrics')).text();
    expect(after).not.toContain('kind="repair"');
    expect(after).toContain('master_cluster_parked{kind="merge_wal"} 0');
  });

  it('serves a later release’s task state as its own state series, and drops it once a sync no longer meets it', async () => {
    const { s, app: a } = app();
    const agg = registered(['merge_wal']);
    const task = { id: '0190f0e2-0000-7000-8000-000000000001', kind: 'merge_wal', target: 'x', state: 'quarantined' };
    applyChange(agg, { type: 'put', key: keysFor().task(task.id), value: JSON.stringify(task), modRevision: 2 });
    s.use(summarize(agg, 0));
    const later = await (await a.request('/metrics')).text();
    expect(later).toContain('master_cluster_tasks{kind="merge_wal",state="quarantined"} 1');
    expect(later).toContain('master_cluster_tasks{kind="merge_wal",state="queued"} 0');
    expect(later).toContain('master_cluster_tasks{kind="merge_wal",state="held"} 0');
    expect(later).toContain('maintd_exporter_invalid_records 0');
    s.set(true, ['merge_wal']);
    const after = await (await a.request('/metrics')).text();
    expect(after).not.toContain('state="quarantined"');
    expect(after).toContain('master_cluster_tasks{kind="merge_wal",state="queued"} 0');
    expect(after).toContain('master_cluster_tasks{kind="merge_wal",state="held"} 0');
  });

  it('serves a landing page linking the endpoints, escaping what it echoes', async () => {
    const res = await app().app.request('/');
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('href="metrics"');
    expect(html).toContain('/maintd&#60;x&#62;');
    expect(await (await app().app.request('/nope')).json()).toEqual({ error: 'no route for GET /nope' });
  });
});
