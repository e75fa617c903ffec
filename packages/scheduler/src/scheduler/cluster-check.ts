import {
  CLUSTER_CHECK_MS,
  type ClusterRecord,
  FEATURE_SETTLE_MS,
  type ClusterView,
  type MasterInfo,
  type TaskStore,
  clusterView,
} from '@maintd/core';
import type { LoopContext } from './context.js';

/** What one check of the cluster's feature gates found and did. */
export interface ClusterCheck {
  readonly view: ClusterView;
  /** The record after the check (with what it switched on). */
  readonly record: ClusterRecord | undefined;
  /** Features this check switched on. */
  readonly switchedOn: readonly string[];
  /** The live registrations the view was made from. */
  readonly masters: readonly MasterInfo[];
}

/**
 * Reads the live registrations and the cluster record, and switches on the features every live
 * master understands (unless an operator preserves the downgrade) — never while this master
 * itself is too old for a feature already on (docs/ARCHITECTURE.md §2.8).
 */
export async function checkCluster(store: TaskStore, own: readonly string[]): Promise<ClusterCheck> {
  const [masters, read] = await Promise.all([store.listMasters(), store.cluster.read()]);
  let record = read;
  let view = clusterView(own, masters, record);
  if (view.unknownEnabled.length > 0 || view.ready.length === 0) return { view, record, switchedOn: [], masters };
  record = await store.cluster.enable(view.ready);
  const on = new Set(record.features.map((f) => f.name));
  // `ready` holds only features that were off: those on now were switched on by this check (or by a peer's at the same moment).
  const switchedOn = view.ready.filter((name) => on.has(name));
  view = clusterView(own, masters, record);
  return { view, record, switchedOn, masters };
}

/**
 * The message a master too old for its cluster stops with. The release it names comes from what
 * the cluster records: the versions of the live masters whose registration lists every feature
 * this one lacks (so never its own, nor another's as old as it). With none of them live, the
 * record's `enabled_by` (a master id) is all there is, so it names that master.
 */
export function tooOldMessage(version: string, check: ClusterCheck): string {
  const lacking = check.view.unknownEnabled;
  const understanding = check.masters.filter((m) => lacking.every((name) => m.features?.includes(name)));
  const versions = [...new Set(understanding.map((m) => m.version))].sort();
  const enabledBy = [
    ...new Set(check.record?.features.filter((f) => lacking.includes(f.name)).map((f) => f.enabled_by)),
  ].sort();
  const install =
    versions.length > 0
      ? `Masters of ${versions.join(', ')} understand them: install ${versions.length === 1 ? versions[0] : 'the oldest of these'} or newer`
      : `No live master understands them: install the release ${enabledBy.join(', ')} ran when switching them on, or newer`;
  return (
    `this maintd (${version}) is older than its cluster: feature(s) ${lacking.join(', ')} ` +
    `are switched on, and it would misread what they write. ${install}; a downgrade is possible only ` +
    `before a feature is switched on (docs/ARCHITECTURE.md §2.8)`
  );
}

/** One line per change of what the gates say, so a rolling upgrade reads as a story in the log. */
function describe(view: ClusterView): { key: string; fields: object; msg: string } | undefined {
  const off = view.features.filter((f) => f.state !== 'enabled');
  const key = JSON.stringify([view.versions, off.map((f) => [f.name, f.state, f.waitingFor])]);
  if (off.length === 0) {
    return { key, fields: { versions: view.versions }, msg: `cluster: masters run ${view.versions.join(', ')}` };
  }
  const parts = off.map((f) =>
    f.state === 'waiting'
      ? `${f.name} waits for ${f.waitingFor.join(', ')}`
      : f.state === 'held'
        ? `${f.name} is held off by preserve_downgrade`
        : `${f.name} is ready`,
  );
  return {
    key,
    fields: {
      versions: view.versions,
      features: off.map((f) => ({ name: f.name, state: f.state, waiting_for: f.waitingFor })),
    },
    msg: `cluster: masters run ${view.versions.join(', ')}; ${parts.join('; ')}: behaving as the previous release until then`,
  };
}

/**
 * The loop that checks the cluster every {@link CLUSTER_CHECK_MS} until the scheduler stops:
 * it keeps `onRecord` current, logs each change, and calls `tooOld` (once) when a feature this
 * master does not understand has been switched on.
 */
export function clusterLoop(
  ctx: LoopContext,
  own: readonly string[],
  hooks: {
    readonly onRecord: (record: ClusterRecord | undefined) => void;
    readonly tooOld: (message: string) => void;
  },
): Promise<void> {
  const { store, logger, version = 'unknown' } = ctx.deps;
  let said: string | undefined;
  const loop = async (): Promise<void> => {
    while (!ctx.stop.aborted) {
      try {
        const check = await checkCluster(store, own);
        const { view, record, switchedOn } = check;
        hooks.onRecord(record);
        if (view.unknownEnabled.length > 0) {
          hooks.tooOld(tooOldMessage(version, check));
          return;
        }
        if (switchedOn.length > 0) {
          logger.info(
            { features: switchedOn },
            `cluster feature(s) ${switchedOn.join(', ')} switched on: every live master understands them; masters write them from ${FEATURE_SETTLE_MS / 1000} s from now`,
          );
        }
        const line = describe(view);
        if (line && line.key !== said) {
          said = line.key;
          logger.info(line.fields, line.msg);
        }
      } catch (err) {
        ctx.outage.failed(err, 'cluster check failed', { job: 'cluster' });
      }
      if (!(await ctx.sleep(CLUSTER_CHECK_MS))) return;
    }
  };
  return loop();
}
