/**
 * Every query of deploy/grafana/maintd.json is valid PromQL once Grafana has substituted its
 * variables — checked by Prometheus's own parser (`promtool check rules`, Debian's `prometheus`
 * package), with each query as the expression of a recording rule.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRepoFile, run } from './deploy-files.js';

interface Dashboard {
  readonly panels: readonly { readonly title: string; readonly targets: readonly { readonly expr: string }[] }[];
}

/** What Grafana puts in place of each variable when All is selected (and a typical range). */
const SUBSTITUTIONS: Readonly<Record<string, string>> = {
  $job: '.*',
  $instance: '.*',
  $prefix: '.*',
  $kind: '.*',
  $__rate_interval: '1m',
};

function substitute(expr: string): string {
  return expr.replace(/\$[a-z_]+/g, (v) => {
    const s = SUBSTITUTIONS[v];
    if (s === undefined) throw new Error(`unknown variable ${v} in ${expr}`);
    return s;
  });
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maintd-grafana-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('deploy/grafana/maintd.json, checked by promtool', () => {
  it('every panel query parses as PromQL', async () => {
    const dashboard = JSON.parse(readRepoFile('deploy/grafana/maintd.json')) as Dashboard;
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => substitute(t.expr)));
    expect(exprs.length).toBeGreaterThan(0);
    // JSON strings are valid YAML scalars, so each expression is quoted as JSON.
    const rules = [
      'groups:',
      '  - name: dashboard',
      '    rules:',
      ...exprs.flatMap((expr, i) => [`      - record: dashboard:query${i}`, `        expr: ${JSON.stringify(expr)}`]),
    ].join('\n');
    const file = join(dir, 'dashboard.rules.yml');
    await writeFile(file, `${rules}\n`);
    const r = await run('promtool', ['check', 'rules', file]);
    expect(r.stdout + r.stderr).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.code).toBe(0);
  });

  it('would report a query that does not parse', async () => {
    const file = join(dir, 'bad.rules.yml');
    await writeFile(
      file,
      'groups:\n  - name: bad\n    rules:\n      - record: bad:query\n        expr: "max(up{job=~})"\n',
    );
    const r = await run('promtool', ['check', 'rules', file]);
    expect(r.code).not.toBe(0);
  });
});
