/**
 * The release a working tree is compared against: the highest version under `releases/` (each a
 * directory named by its version, as the release cut leaves it: docs/RELEASING.md) that is not
 * newer than the tree's own version.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

type Version = readonly [number, number, number];

/** `1.2.3` (a pre-release or build suffix is ignored) as numbers; undefined for anything else. */
export function parseVersion(text: string): Version | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`. */
export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** What `releases/` holds, seen from a tree at version `current`. */
export interface ReleaseLookup {
  /** Every release directory, by version. */
  readonly all: readonly string[];
  /** The newest release not newer than `current`, if any. */
  readonly previous?: { readonly version: string; readonly dir: string };
}

/** Finds the release to compare a tree at version `current` with, under `releasesDir`. */
export function findPreviousRelease(releasesDir: string, current: string): ReleaseLookup {
  const now = parseVersion(current);
  if (!now) throw new Error(`not a version: ${JSON.stringify(current)}`);
  const all = existsSync(releasesDir)
    ? readdirSync(releasesDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && parseVersion(d.name) !== undefined)
        .map((d) => d.name)
        .sort((a, b) => compareVersions(parseVersion(a)!, parseVersion(b)!))
    : [];
  const version = all.filter((v) => compareVersions(parseVersion(v)!, now) <= 0).at(-1);
  return version === undefined ? { all } : { all, previous: { version, dir: join(releasesDir, version) } };
}
