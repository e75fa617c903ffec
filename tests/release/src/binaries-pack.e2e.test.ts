import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = (name: string): string => join(repoRoot, 'node_modules/.bin', name);

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly bin?: Record<string, string>;
  readonly exports?: unknown;
  readonly dependencies?: Record<string, string>;
}

/**
 * `licences`: a package that bundles third-party code (the dashboard, Ink) ships their licence
 * texts, and its bundle's chunks (dist/chunks/: code only a dynamic import loads).
 */
const BINARIES = [
  { dir: 'apps/master', name: '@maintd/master', command: 'maintd', file: 'maintd.js', licences: false },
  {
    dir: 'apps/exporter',
    name: '@maintd/exporter',
    command: 'maintd-exporter',
    file: 'maintd-exporter.js',
    licences: false,
  },
  { dir: 'apps/tui', name: '@maintd/tui', command: 'maintd-top', file: 'maintd-top.js', licences: true },
] as const;

/**
 * Packs each binary's package as it would be published (the build bundles the private workspace
 * packages into dist/main.js), checks what the tarball holds, runs it with only its declared
 * runtime dependencies beside it, and lints it with publint and @arethetypeswrong.
 */
describe.each(BINARIES)('the packed $name tarball', ({ dir, name, command, file, licences }) => {
  const appDir = join(repoRoot, dir);
  let scratch: string;
  let tarball: string;
  let installed: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'maintd-pack-bin-'));
    const { stdout } = await run('pnpm', ['pack', '--pack-destination', scratch], { cwd: appDir });
    tarball = stdout.trim().split('\n').at(-1)!;
    installed = join(scratch, 'node_modules', name);
    await mkdir(installed, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    // Only what npm would install beside it: the runtime dependencies, never the workspace's
    // private packages (the bundle must not need them).
    const manifest = JSON.parse(await readFile(join(appDir, 'package.json'), 'utf8')) as Manifest;
    for (const dep of Object.keys(manifest.dependencies ?? {})) {
      const to = join(scratch, 'node_modules', dep);
      await mkdir(dirname(to), { recursive: true });
      await symlink(join(appDir, 'node_modules', dep), to);
    }
  }, 60_000);
  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('ships the bin, the bundle and its docs, nothing else', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n').sort();
    const expected = [
      `package/bin/${file}`,
      'package/dist/main.js',
      'package/dist/main.js.map',
      'package/package.json',
      ...(licences ? ['package/dist/THIRD-PARTY-LICENSES.txt'] : []),
    ];
    const chunks = files.filter((f) => /^package\/dist\/chunks\/[\w-]+\.js(\.map)?$/.test(f));
    expect(chunks.length > 0).toBe(licences);
    // README always; CHANGELOG.md once a release has written one.
    expect(files.filter((f) => !/^package\/(README|CHANGELOG)\.md$/.test(f) && !chunks.includes(f))).toEqual(
      expected.sort(),
    );
    expect(files).toContain('package/README.md');
  });

  it('publishes a manifest with the bin, only published @maintd dependencies, and no entry to import', async () => {
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.private).toBeUndefined();
    expect(manifest.bin).toEqual({ [command]: `./bin/${file}` });
    const internal = Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith('@maintd/'));
    expect(internal).toEqual(['@maintd/core']);
    expect(manifest.exports).toEqual({ './package.json': './package.json' });
  });

  it('runs from the tarball with only its runtime dependencies installed', async () => {
    const { stdout } = await run(process.execPath, [join(installed, 'bin', file), '--help'], { cwd: scratch });
    expect(stdout).toMatch(new RegExp(`Usage: ${command}\\b`));
    // The bundle imports no workspace package but @maintd/core (published).
    const bundle = await readFile(join(installed, 'dist/main.js'), 'utf8');
    const imported = new Set([...bundle.matchAll(/^import .* from "(@maintd\/[^/"]+)/gm)].map((m) => m[1]));
    expect([...imported].filter((p) => p !== '@maintd/core')).toEqual([]);
  });

  it.runIf(licences)('ships the licence text of every third-party package its bundle holds', async () => {
    const notices = await readFile(join(installed, 'dist/THIRD-PARTY-LICENSES.txt'), 'utf8');
    expect(notices).toMatch(/^ink@6\.8\.0 \(MIT\)$/m);
    expect(notices).toContain('Copyright (c) Vadim Demedes');
    expect(notices).toMatch(/^yoga-layout@\S+ \(MIT\)$/m);
    // The bundle holds Ink, as patched in the workspace; React stays the one copy npm installs.
    const bundle = await readFile(join(installed, 'dist/main.js'), 'utf8');
    expect(bundle).toContain('function styledCharsOf(');
    expect(bundle).toMatch(/^import .* from "react";$/m);
  });

  it('passes publint', async () => {
    const { stdout } = await run(bin('publint'), ['run', '--strict', tarball], { cwd: scratch });
    expect(stdout).toContain('All good!');
  });

  // A bin-only package: its exports name only package.json, so there are no types to resolve.
  // attw still runs (it fails on a broken package or exports map); the verdict pins that nothing
  // typed is published by accident — should one of these become a library, check its resolutions
  // here as package.e2e.test.ts does for @maintd/core.
  it('passes @arethetypeswrong (ESM-only profile) with no types to resolve', async () => {
    const { stdout } = await run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'json'], {
      cwd: scratch,
    }).catch((err: Error & { stdout?: string }) => {
      throw new Error(`attw found problems:\n${err.stdout ?? err.message}`, { cause: err });
    });
    const { analysis } = JSON.parse(stdout) as { analysis: { packageName: string; types: unknown } };
    expect(analysis.packageName).toBe(name);
    expect(analysis.types).toBe(false);
  });
});
