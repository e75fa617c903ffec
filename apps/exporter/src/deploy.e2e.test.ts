import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMetrics } from '@maintd/scheduler';
import { serverTlsMetrics } from '@maintd/settings/tls';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runOnce } from '../test/processes.js';
import { createExporterMetrics } from './metrics.js';

const PROMETHEUS_DIR = join(REPO_ROOT, 'deploy/prometheus');

/** Every metric name the exporter and a master expose (histograms with their series suffixes). */
async function exportedNames(): Promise<Set<string>> {
  const exporter = createExporterMetrics({
    summary: () => undefined,
    status: () => ({ up: false, revision: 0, lastEventMs: undefined }),
  });
  // The TLS metrics of a master and an exporter serving HTTPS (registered only then).
  const tls = new Registry();
  serverTlsMetrics(tls, 'master');
  serverTlsMetrics(tls, 'maintd_exporter');
  const registries = [exporter.registry, exporter.clusterRegistry, createMetrics().registry, tls];
  const names = new Set<string>();
  for (const r of registries) {
    for (const m of await r.getMetricsAsJSON()) {
      names.add(m.name);
      // The typings say a numeric enum; at runtime prom-client reports the type name.
      if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
    }
  }
  return names;
}

/** maintd metric names a PromQL expression mentions. */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b(?:master|maintd)_[a-z0-9_]+/g)].map((m) => m[0]);
}

describe('deploy/: Prometheus rules and configuration, Grafana dashboard', () => {
  it('promtool check rules accepts the alert rules', async () => {
    const r = await runOnce('promtool', ['check', 'rules', 'alerts.yml'], { cwd: PROMETHEUS_DIR });
    const alerts = (await readFile(join(PROMETHEUS_DIR, 'alerts.yml'), 'utf8')).match(/^\s*- alert: /gm)?.length ?? 0;
    expect(alerts).toBeGreaterThan(0);
    expect(r.out).toContain(`SUCCESS: ${alerts} rules found`);
    expect(r.code).toBe(0);
  });

  // promtool evaluates every case over its simulated hours: about 7 s of CPU here, so with both
  // Node lines' suites and a soak on two cores it has taken over 30 s. Its figure is not under test.
  it('promtool test rules passes, with a firing case for every alert', { timeout: 120_000 }, async () => {
    const r = await runOnce('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: PROMETHEUS_DIR });
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.code).toBe(0);
    const rules = await readFile(join(PROMETHEUS_DIR, 'alerts.yml'), 'utf8');
    const tests = await readFile(join(PROMETHEUS_DIR, 'alerts.test.yml'), 'utf8');
    const alerts = [...rules.matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]!);
    expect(alerts).toHaveLength(11);
    for (const alert of alerts) {
      // A test whose expected alerts are non-empty: `alertname: X` followed by an exp_labels list.
      expect(tests, `no firing test for ${alert}`).toMatch(
        new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`),
      );
    }
    const names = await exportedNames();
    for (const [, expr] of rules.matchAll(/^\s*expr: (.+)$/gm)) {
      for (const name of metricsIn(expr!)) expect(names, `alerts.yml uses ${name}`).toContain(name);
    }
  });

  it('promtool check config accepts the example scrape configuration with its rule file', async () => {
    const r = await runOnce('promtool', ['check', 'config', 'prometheus.yml'], { cwd: PROMETHEUS_DIR });
    expect(r.out).toMatch(/SUCCESS: prometheus.yml is valid/);
    expect(r.code).toBe(0);
  });

  it('the Grafana dashboard is valid JSON and every panel queries metrics that exist', async () => {
    const dash = JSON.parse(await readFile(join(REPO_ROOT, 'deploy/grafana/maintd.json'), 'utf8')) as {
      uid: string;
      panels: { title: string; gridPos: object; targets: { expr: string }[] }[];
    };
    expect(dash.uid).toBeTruthy();
    const titles = dash.panels.map((p) => p.title);
    for (const t of [
      'Queue by kind',
      'Oldest queued task age',
      'Cooling by kind',
      'Task outcomes',
      'Worker results (merge-wal calls)',
      'Masters alive',
    ]) {
      expect(titles).toContain(t);
    }
    const names = await exportedNames();
    for (const p of dash.panels) {
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) {
        expect(t.expr, p.title).toBeTruthy();
        for (const name of metricsIn(t.expr)) expect(names, `${p.title} uses ${name}`).toContain(name);
      }
    }
  });
});
