import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Manifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

/** Every workspace package under `dir` (apps, packages, tests, tools), with its manifest. */
function manifests(dir: string): { readonly path: string; readonly manifest: Manifest }[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(dir, d.name, 'package.json'))
    .map((path) => ({ path, manifest: JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Manifest }));
}

function dependencyNames(m: Manifest): string[] {
  return [m.dependencies, m.devDependencies, m.peerDependencies, m.optionalDependencies].flatMap((d) =>
    Object.keys(d ?? {}),
  );
}

/** Dependencies of each manifest on any of `forbidden`, as `path → name` lines. */
export function violations(
  packages: readonly { readonly path: string; readonly manifest: Manifest }[],
  forbidden: ReadonlySet<string>,
): string[] {
  return packages.flatMap(({ path, manifest }) =>
    dependencyNames(manifest)
      .filter((name) => forbidden.has(name))
      .map((name) => `${path} → ${name}`),
  );
}

/** Source files (not tests) under `dir`, relative to the root. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f))
    .map((f) => join(dir, f));
}

/** Lines of `text` that read `process.env` in code (comments that name it do not count). */
export function envReads(text: string): number[] {
  return text
    .split('\n')
    .flatMap((line, i) => (/process\.env\b/.test(line) && !/^\s*(\*|\/\/|\/\*)/.test(line) ? [i + 1] : []));
}

describe('the workspace layout (docs/ARCHITECTURE.md §1)', () => {
  const apps = manifests('apps');
  const appNames = new Set(apps.map((a) => a.manifest.name));

  it('finds every app', () => {
    expect([...appNames].sort()).toEqual(['@maintd/exporter', '@maintd/master', '@maintd/sim', '@maintd/tui']);
  });

  it('has no app that depends on another app, dev or not', () => {
    expect(violations(apps, appNames)).toEqual([]);
  });

  it('has no package that depends on an app', () => {
    expect(violations(manifests('packages'), appNames)).toEqual([]);
  });

  it('would report an app that depends on another app', () => {
    const bad = {
      path: 'apps/tui/package.json',
      manifest: { name: '@maintd/tui', devDependencies: { '@maintd/master': 'workspace:*' } },
    };
    expect(violations([bad], appNames)).toEqual(['apps/tui/package.json → @maintd/master']);
  });

  it('reads process.env only in an env.ts, the configuration edge of each binary', () => {
    const roots = ['apps', 'packages', 'tools'].flatMap((top) =>
      readdirSync(join(ROOT, top), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => join(top, d.name, 'src')),
    );
    const readers = roots
      .flatMap((dir) => sources(dir))
      // The test helper that finds the suite's etcd (ETCD_ENDPOINTS) runs inside vitest, not a binary.
      .filter((path) => !path.endsWith('packages/core/src/testing/vitest-etcd.ts'))
      .filter((path) => envReads(readFileSync(join(ROOT, path), 'utf8')).length > 0);
    expect(readers.filter((path) => !path.endsWith('/env.ts'))).toEqual([]);
    expect(readers.length).toBeGreaterThanOrEqual(4);
  });

  it('tells a read of process.env from a comment that names it', () => {
    expect(envReads('// process.env is read in env.ts\n * never process.env\nconst a = process.env.X;')).toEqual([3]);
  });
});
