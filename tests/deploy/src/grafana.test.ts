/**
 * deploy/grafana/maintd.json: job, instance and prefix variables that every query honours, and
 * panel titles a reader can tell apart. (`apps/exporter/src/deploy.e2e.test.ts` checks that the
 * metrics the panels name exist; the variable queries are checked here.)
 */
import { createExporterMetrics } from '@maintd/exporter';
import { createMetrics } from '@maintd/scheduler';
import { describe, expect, it } from 'vitest';
import { readRepoFile } from './deploy-files.js';

interface Variable {
  readonly name: string;
  readonly type: string;
  readonly datasource?: { readonly type: string; readonly uid: string };
  readonly definition?: string;
  readonly query?: string | { readonly query: string };
  readonly includeAll?: boolean;
  readonly multi?: boolean;
  readonly allValue?: string;
}

interface Panel {
  readonly id: number;
  readonly title: string;
  readonly targets: readonly { readonly refId: string; readonly expr: string }[];
}

interface Dashboard {
  readonly templating: { readonly list: readonly Variable[] };
  readonly panels: readonly Panel[];
}

const dashboard = JSON.parse(readRepoFile('deploy/grafana/maintd.json')) as Dashboard;
const variable = (name: string): Variable | undefined => dashboard.templating.list.find((v) => v.name === name);
const queryOf = (v: Variable | undefined): string => (typeof v?.query === 'string' ? v.query : (v?.query?.query ?? ''));

/** The matchers every selector must carry, so the variables narrow every panel. */
const MATCHERS = ['job=~"$job"', 'instance=~"$instance"', 'prefix=~"$prefix"'];

/**
 * Each metric selector in a PromQL expression: the metric name and its `{…}` matchers (empty
 * when it has none). maintd's metrics all start with `master_` or `maintd_`; `up` is Prometheus's.
 */
function selectors(expr: string): { readonly metric: string; readonly matchers: string }[] {
  return [...expr.matchAll(/\b((?:master|maintd)_[a-z0-9_]+|up)\b(\{[^}]*\})?/g)].map((m) => ({
    metric: m[1]!,
    matchers: m[2] ?? '',
  }));
}

/** `expr` without the dashboard's variable matchers: the query as a rule file would write it. */
function withoutVariables(expr: string): string {
  return expr
    .replace(/,?\s*[a-z]+=~"\$[a-z]+"/g, '')
    .replaceAll('{, ', '{')
    .replaceAll('{}', '');
}

/** Every metric name the exporter and a master expose. */
async function exportedNames(): Promise<Set<string>> {
  const exporter = createExporterMetrics({
    summary: () => undefined,
    status: () => ({ up: false, revision: 0, lastEventMs: undefined }),
  });
  const names = new Set<string>();
  for (const r of [exporter.registry, exporter.clusterRegistry, createMetrics().registry]) {
    for (const m of await r.getMetricsAsJSON()) names.add(m.name);
  }
  return names;
}

describe('deploy/grafana/maintd.json', () => {
  it('has job, instance, prefix and kind variables: multi-value query variables on the Prometheus data source, All = .*', () => {
    expect(variable('datasource')?.type).toBe('datasource');
    for (const name of ['job', 'instance', 'prefix', 'kind']) {
      const v = variable(name);
      expect(v, name).toBeDefined();
      expect(v?.type, name).toBe('query');
      expect(v?.datasource, name).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(queryOf(v), name).toMatch(new RegExp(`^label_values\\(.+, ${name}\\)$`));
      expect(v?.definition, name).toBe(queryOf(v));
      expect(v?.includeAll, name).toBe(true);
      expect(v?.multi, name).toBe(true);
      // `.*` also matches series without the label: with no `prefix` target label, All shows everything.
      expect(v?.allValue, name).toBe('.*');
    }
    // instance and prefix offer only what the chosen jobs have.
    expect(queryOf(variable('instance'))).toContain('job=~"$job"');
    expect(queryOf(variable('prefix'))).toContain('job=~"$job"');
    // kind offers the kinds the chosen fleets report, whichever release added them.
    for (const m of MATCHERS) expect(queryOf(variable('kind'))).toContain(m);
  });

  it('variable queries name metrics the exporter or a master exposes', async () => {
    const names = await exportedNames();
    for (const name of ['job', 'instance', 'prefix', 'kind']) {
      const q = queryOf(variable(name));
      const metrics = [...q.matchAll(/\b(?:master|maintd)_[a-z0-9_]+/g)].map((m) => m[0]);
      expect(metrics.length, name).toBeGreaterThan(0);
      for (const m of metrics) expect(names, `${name} uses ${m}`).toContain(m);
    }
  });

  it('gives every panel a distinct, non-empty title and a distinct id', () => {
    const titles = dashboard.panels.map((p) => p.title);
    for (const t of titles) expect(t.trim()).not.toBe('');
    expect(titles.filter((t, i) => titles.indexOf(t) !== i)).toEqual([]);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('filters every selector of every query by $job, $instance and $prefix', () => {
    expect(dashboard.panels.length).toBeGreaterThan(0);
    for (const p of dashboard.panels) {
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) {
        const where = `${p.title} ${t.refId}`;
        expect(t.expr, where).toContain('$job');
        const found = selectors(t.expr);
        expect(found.length, where).toBeGreaterThan(0);
        for (const s of found) for (const m of MATCHERS) expect(s.matchers, `${where}: ${s.metric}`).toContain(m);
      }
    }
  });

  it('narrows every per-kind query by $kind, so no panel names a kind of its own', () => {
    const perKind = dashboard.panels.flatMap((p) => p.targets.filter((t) => /by \(kind\b/.test(t.expr)));
    expect(perKind.length).toBeGreaterThan(0);
    for (const t of perKind) for (const s of selectors(t.expr)) expect(s.matchers, t.expr).toContain('kind=~"$kind"');
    for (const p of dashboard.panels) for (const t of p.targets) expect(t.expr, p.title).not.toMatch(/kind="/);
  });

  it("draws the failed share of slot time with MaintdCapacitySpentOnFailures' ratio, narrowed by the variables", () => {
    const rule = /- alert: MaintdCapacitySpentOnFailures\n(?:\s+#.*\n)*\s+expr: (.+) > 0\.25 and /.exec(
      readRepoFile('deploy/prometheus/alerts.yml'),
    );
    expect(rule).not.toBeNull();
    // The alert keeps each fleet apart; the panel's $prefix does that on the dashboard.
    const ratio = rule![1]!.replaceAll('by (prefix, kind)', 'by (kind)');
    const panel = dashboard.panels.find((p) => p.title === 'Slot time spent on failed tasks');
    expect(panel?.targets.map((t) => withoutVariables(t.expr))).toEqual([ratio]);
    const byResult = dashboard.panels.find((p) => p.title === 'Slot time by result');
    expect(byResult?.targets.map((t) => t.expr)).toEqual([
      expect.stringMatching(/^sum by \(kind, result\) \(rate\(master_task_busy_seconds_total\{/),
    ]);
  });

  it('would report a selector without the matchers', () => {
    expect(selectors('sum(rate(master_tasks_total[5m])) / count(up{job="x"})')).toEqual([
      { metric: 'master_tasks_total', matchers: '' },
      { metric: 'up', matchers: '{job="x"}' },
    ]);
  });
});
