/**
 * docs/DEPLOY.md and the binaries' READMEs name only settings that exist, and the Prometheus
 * configuration DEPLOY.md shows is one Prometheus accepts (`promtool check config`, with the
 * alert rules it loads).
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settings } from '@maintd/master';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORTER_BIN, REPO_ROOT, readRepoFile, run } from './deploy-files.js';

const DOCS = ['docs/DEPLOY.md', 'apps/master/README.md', 'apps/sim/README.md'];

/** Setting-like names: the prefixes maintd's and the exporter's settings use. */
const SETTING_NAME =
  /\b(?:MASTER|ETCD|WORKER|STATS|MERGE_WAL|COMPACTION|MIN|SWEEP|TASK|SHUTDOWN|LOG|EXPORTER)_[A-Z0-9_]*[A-Z0-9]\b/g;

/**
 * etcd's own `ETCD_*` variables: those a fenced block configuring etcd itself (the one setting
 * `ETCD_NAME=`) assigns. The doc may mention them elsewhere too.
 */
function etcdServerVariables(markdown: string): Set<string> {
  const blocks = [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const config = blocks.filter((b) => /^ETCD_NAME=/m.test(b)).join('\n');
  return new Set([...config.matchAll(/^(ETCD_[A-Z0-9_]+)=/gm)].map((m) => m[1]!));
}

let known: Set<string>;
let dir: string;

beforeAll(async () => {
  const help = await run(process.execPath, [EXPORTER_BIN, '--help']);
  expect(help.code, help.stderr).toBe(0);
  const exporter = [...help.stdout.matchAll(/\(env ([A-Z][A-Z0-9_]*);/g)].map((m) => m[1]!);
  expect(exporter).toContain('EXPORTER_PORT');
  known = new Set([...settings.map((s) => s.env), ...exporter]);
  dir = await mkdtemp(join(tmpdir(), 'maintd-docs-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('deployment docs', () => {
  for (const doc of DOCS) {
    it(`${doc} names only settings maintd or maintd-exporter has`, () => {
      const text = readRepoFile(doc);
      const etcd = etcdServerVariables(text);
      const names = new Set([...text.matchAll(SETTING_NAME)].map((m) => m[0]));
      const unknown = [...names].filter((n) => !known.has(n) && !etcd.has(n));
      expect(unknown).toEqual([]);
    });
  }

  it("DEPLOY.md's Prometheus configuration passes promtool check config, with deploy/prometheus/alerts.yml", async () => {
    const blocks = [...readRepoFile('docs/DEPLOY.md').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const config = blocks.find((b) => b.includes('scrape_configs:'));
    expect(config).toBeDefined();
    const rules = /^\s+- (\S+\.yml)/m.exec(config ?? '')?.[1];
    expect(rules).toBeDefined();
    // The rule file is loaded from where the doc installs it; here, from the temp dir.
    await copyFile(join(REPO_ROOT, 'deploy/prometheus/alerts.yml'), join(dir, 'alerts.yml'));
    await writeFile(join(dir, 'prometheus.yml'), (config ?? '').replace(rules ?? '', 'alerts.yml'));
    const r = await run('promtool', ['check', 'config', 'prometheus.yml'], { cwd: dir });
    expect(r.stdout + r.stderr).toContain('SUCCESS: prometheus.yml is valid');
    const alerts = readRepoFile('deploy/prometheus/alerts.yml').match(/^\s*- alert: /gm)?.length ?? 0;
    expect(alerts).toBeGreaterThan(0);
    expect(r.stdout + r.stderr).toContain(`SUCCESS: ${alerts} rules found`);
    expect(r.code).toBe(0);
    // Both jobs the alert rules and the dashboard expect, each target labelled with its fleet.
    expect(config).toContain('job_name: maintd-master');
    expect(config).toContain('job_name: maintd-exporter');
    expect(config?.match(/prefix: \/maintd\b/g)).toHaveLength(2);
  });
});
