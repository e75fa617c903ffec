/**
 * The CI check that the HTTP API only grows within a major (docs/COMPATIBILITY.md): the document
 * of a working tree against the one its previous release kept under `releases/<version>/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type OpenApiDocument, breakingChanges, formatBreakingChanges } from './api-compat.js';
import { findPreviousRelease, parseVersion } from './previous-release.js';

/** What the check concluded, and why, in words fit for a CI log. */
export type ApiCheckResult =
  { readonly ok: true; readonly note: string } | { readonly ok: false; readonly message: string };

/**
 * Compares `current`, the document of a tree at version `version`, with `openapi.json` of the
 * newest release under `releasesDir` not newer than `version`.
 *
 * Passes with nothing to compare only while the tree has never been released (version 0.0.0 and
 * no release directory): once a version is cut, a missing release document fails, since a check
 * that silently compared nothing would let the next breaking change through.
 */
export function checkApiAgainstRelease(releasesDir: string, version: string, current: OpenApiDocument): ApiCheckResult {
  const { all, previous } = findPreviousRelease(releasesDir, version);
  if (!previous) {
    if (version === '0.0.0' && all.length === 0) {
      return { ok: true, note: 'never released (version 0.0.0, releases/ is empty): nothing to compare with' };
    }
    const why =
      all.length > 0
        ? `releases/ holds ${all.join(', ')}, all newer than ${version}`
        : `the tree is at ${version}, but releases/ holds no release`;
    return {
      ok: false,
      message: `${why}: the release cut keeps releases/<version>/openapi.json, the document this check compares the API with (docs/COMPATIBILITY.md).`,
    };
  }
  const file = join(previous.dir, 'openapi.json');
  if (!existsSync(file)) {
    return {
      ok: false,
      message: `releases/${previous.version}/openapi.json is missing: the release cut keeps the released API document there, and this check compares the API with it (docs/COMPATIBILITY.md).`,
    };
  }
  const base = JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
  // Both versions parsed above (findPreviousRelease rejects what is not one).
  if (parseVersion(version)![0] > parseVersion(previous.version)![0]) {
    return { ok: true, note: `${version} starts a new major after ${previous.version}: it may break the API` };
  }
  const changes = breakingChanges(base, current);
  if (changes.length > 0) {
    return {
      ok: false,
      message: formatBreakingChanges(
        changes,
        `release ${previous.version} (releases/${previous.version}/openapi.json)`,
      ),
    };
  }
  return { ok: true, note: `no breaking change against release ${previous.version}` };
}
