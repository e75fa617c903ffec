/**
 * A release is found without tags (docs/RELEASING.md, "Finding a release"): by its folder under
 * `releases/`, whose tarballs say its version, and by its entry in each published package's
 * CHANGELOG. A clone of main carries no tags, so nothing else may be needed to find one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findPreviousRelease } from './previous-release.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RELEASES = join(ROOT, 'releases');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'apps/master/package.json'), 'utf8')) as { version: string })
  .version;
/** The published packages (docs/ARCHITECTURE.md §1): tarball name → workspace directory. */
const PUBLISHED = { core: 'packages/core', master: 'apps/master', exporter: 'apps/exporter', tui: 'apps/tui' };

const releases = findPreviousRelease(RELEASES, VERSION).all;

describe('the releases kept under releases/', () => {
  it('include the release the tree follows', () => {
    expect(findPreviousRelease(RELEASES, VERSION).previous?.version).toBeDefined();
  });

  it.each(releases)('%s holds the four published tarballs of its version and its OpenAPI document', (version) => {
    const dir = join(RELEASES, version);
    expect(readdirSync(dir).sort()).toEqual([
      ...Object.keys(PUBLISHED)
        .sort()
        .map((name) => `maintd-${name}-${version}.tgz`),
      'openapi.json',
    ]);
    for (const name of Object.keys(PUBLISHED)) {
      const manifest = JSON.parse(
        execFileSync('tar', ['-xzOf', join(dir, `maintd-${name}-${version}.tgz`), 'package/package.json'], {
          encoding: 'utf8',
        }),
      ) as { name: string; version: string };
      expect(manifest, `maintd-${name}-${version}.tgz`).toMatchObject({ name: `@maintd/${name}`, version });
    }
    expect(existsSync(join(dir, 'openapi.json'))).toBe(true);
  });

  it.each(releases)('%s has its entry in the CHANGELOG of each published package', (version) => {
    for (const dir of Object.values(PUBLISHED)) {
      const changelog = readFileSync(join(ROOT, dir, 'CHANGELOG.md'), 'utf8');
      expect(changelog.split('\n'), `${dir}/CHANGELOG.md`).toContain(`## ${version}`);
    }
  });
});
