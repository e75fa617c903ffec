/**
 * The releases kept in the repository (`releases/<version>/`, docs/RELEASING.md), found by their
 * folders: a clone carries no tags, so a release is its folder and its CHANGELOG entry.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareVersions, findPreviousRelease, parseVersion } from '@maintd/layout/previous-release';
import { REPO } from './build-n.js';

export const RELEASES_DIR = join(REPO, 'releases');

/** The tree's own version (the master's package: all packages share it). */
export function treeVersion(): string {
  return (JSON.parse(readFileSync(join(REPO, 'apps/master/package.json'), 'utf8')) as { version: string }).version;
}

/** The releases under `releases/`, oldest first. */
export function keptReleases(): readonly string[] {
  return findPreviousRelease(RELEASES_DIR, treeVersion()).all;
}

/**
 * N-1 of `version` (docs/COMPATIBILITY.md, "Versions"): the newest of `released` in the minor line
 * before `version`'s, so `0.1.x`'s newest for `0.2.0`, `0.2.1-next.0` and `0.2.3` alike.
 */
export function previousMinorRelease(released: readonly string[], version: string): string | undefined {
  const v = parseVersion(version);
  if (!v) throw new Error(`not a version: ${version}`);
  return released.filter((r) => compareVersions(parseVersion(r)!, [v[0], v[1], 0]) < 0).at(-1);
}
