/**
 * Release N-1: the previous release's packed tarballs, kept in the repository, installed with npm
 * into a throwaway project. All four at once, so that the binaries' dependency on `@maintd/core`
 * resolves to the core tarball beside them and only third-party packages come from the registry.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RELEASES_DIR, keptReleases, previousMinorRelease, treeVersion } from './releases.js';

const run = promisify(execFile);

/**
 * Where N-1's tarballs are: `releases/<N-1>/` in the repository, N-1 being the newest release of
 * the minor line before the tree's (or `UPGRADE_PREVIOUS_DIR`, a directory of tarballs packed by
 * hand, e.g. to try an unreleased build as N-1).
 */
export function previousReleaseDir(): string {
  const previous = previousMinorRelease(keptReleases(), treeVersion());
  if (!previous)
    throw new Error(
      `releases/ holds no release of the minor line before ${treeVersion()}: see tests/upgrade/README.md`,
    );
  return join(RELEASES_DIR, previous);
}

/** The four published packages, by the bin each installs (`@maintd/core` has none). */
const PACKAGES = ['core', 'master', 'exporter', 'tui'] as const;

/** N-1's binaries, ready to spawn with `node`. */
export interface ReleaseN1 {
  readonly version: string;
  readonly maintd: string;
  readonly exporter: string;
  readonly top: string;
  /** Wall time of the npm install, ms. */
  readonly installMs: number;
}

interface Manifest {
  readonly version: string;
  readonly bin?: Record<string, string>;
}

/** Installs the tarballs of `dir` into `project` (an empty directory) and finds their binaries. */
export async function installReleaseN1(dir: string, project: string): Promise<ReleaseN1> {
  const tarballs = (
    await readdir(dir).catch((err: unknown) => {
      throw new Error(`N-1's tarballs are not where this test looks (${dir}): see tests/upgrade/README.md`, {
        cause: err,
      });
    })
  ).filter((f) => f.endsWith('.tgz'));
  const paths = PACKAGES.map((name) => {
    const file = tarballs.find((f) => f.startsWith(`maintd-${name}-`));
    if (!file) throw new Error(`${dir} holds no maintd-${name}-*.tgz (found: ${tarballs.join(', ') || 'none'})`);
    return join(dir, file);
  });
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'upgrade-previous', private: true }));
  const t0 = performance.now();
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', '--loglevel=error', ...paths],
    { cwd: project, env: { ...process.env, CI: 'true' }, maxBuffer: 16 << 20 },
  ).catch((err: Error & { stderr?: string }) => {
    throw new Error(`npm install of ${dir} failed:\n${err.stderr ?? err.message}`, { cause: err });
  });
  const installMs = performance.now() - t0;
  const manifest = async (name: string): Promise<Manifest> =>
    JSON.parse(await readFile(join(project, 'node_modules/@maintd', name, 'package.json'), 'utf8')) as Manifest;
  const binOf = async (name: string, command: string): Promise<string> => {
    const rel = (await manifest(name)).bin?.[command];
    if (!rel) throw new Error(`@maintd/${name} has no bin ${command}`);
    return join(project, 'node_modules/@maintd', name, rel);
  };
  const core = await manifest('core');
  // One core, the tarball's: a second copy from the registry would mean N-1 ran with another core.
  for (const name of ['master', 'exporter', 'tui']) {
    const nested = join(project, 'node_modules/@maintd', name, 'node_modules/@maintd/core');
    if (existsSync(nested)) throw new Error(`${nested} exists: the tarballs disagree on @maintd/core`);
  }
  return {
    version: core.version,
    maintd: await binOf('master', 'maintd'),
    exporter: await binOf('exporter', 'maintd-exporter'),
    top: await binOf('tui', 'maintd-top'),
    installMs,
  };
}
