import { EVENT_LOOP_SAMPLE_MS, NON_COUNTER_TOTALS } from '@maintd/core';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ClusterSummary } from './summary.js';
import { SYNC_REASONS, type SyncInfo, type WatcherStatus } from './watcher.js';

/** What the metrics read at scrape time: memory only, never etcd. */
export interface MetricsSource {
  /** The cluster numbers now; undefined while the exporter is not in sync with etcd. */
  summary(): ClusterSummary | undefined;
  status(): WatcherStatus;
}

/** The exporter's metrics on a registry of its own (docs/ARCHITECTURE.md §5). */
export interface ExporterMetrics {
  /** The exporter's own metrics (and Node's process metrics). */
  readonly registry: Registry;
  /** The `master_cluster_*` gauges, serialised only while in sync. */
  readonly clusterRegistry: Registry;
  /** Content type of {@link ExporterMetrics.render}'s text. */
  readonly contentType: string;
  /** Refreshes every gauge from memory and serialises the registry: one scrape. */
  render(): Promise<string>;
  /** Counts a completed full sync (wire to `ClusterWatcher`'s `onSync`). */
  recordSync(info: SyncInfo): void;
}

/**
 * Creates the metric set. Cluster gauges exist only while the exporter is in sync: numbers from
 * a watch that stopped seeing changes would look current and be wrong, so while etcd is
 * unreachable a scrape shows `maintd_exporter_up 0` and the exporter's own metrics alone.
 * No per-target or per-task labels: label sets are the task kinds (those the live masters run and
 * those of the records, see `summarize`) and states.
 */
export function createExporterMetrics(
  source: MetricsSource,
  options: { readonly defaultMetrics?: boolean; readonly version?: string } = {},
): ExporterMetrics {
  const registry = new Registry();
  // A registry of their own, so that while out of sync the cluster gauges are left out entirely
  // (a reset gauge without labels would still print 0, which reads as "no masters").
  const clusterRegistry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    for (const name of NON_COUNTER_TOTALS) registry.removeSingleMetric(name);
  }
  const registers = [registry];
  const clusterRegisters = [clusterRegistry];

  const tasks = new Gauge({
    name: 'master_cluster_tasks',
    help: 'Tasks in etcd by kind and state, fleet-wide (finished ones until history pruning removes them).',
    labelNames: ['kind', 'state'],
    registers: clusterRegisters,
  });
  const oldestAge = new Gauge({
    name: 'master_cluster_queue_oldest_age_seconds',
    help: 'Seconds since the oldest queued task of the kind was enqueued; 0 when none is queued.',
    labelNames: ['kind'],
    registers: clusterRegisters,
  });
  const cooling = new Gauge({
    name: 'master_cluster_cooldowns_active',
    help: 'Targets in an open cooldown window (skipped by the sweeps), by kind. A parked target counts here only while its window is open; parks are master_cluster_parked.',
    labelNames: ['kind'],
    registers: clusterRegisters,
  });
  const parked = new Gauge({
    name: 'master_cluster_parked',
    help: 'Targets an operator parked (skipped by the sweeps until released, or until the park ends), by kind; a park past its end is not counted. A decision, not a failure: independent of cooldown windows, and no alert fires on it.',
    labelNames: ['kind'],
    registers: clusterRegisters,
  });
  const failuresMax = new Gauge({
    name: 'master_cluster_cooldown_failures_max',
    help: 'Highest consecutive-failure count of any target, by kind (counters below the threshold included).',
    labelNames: ['kind'],
    registers: clusterRegisters,
  });
  const coolingAge = new Gauge({
    name: 'master_cluster_cooldown_oldest_age_seconds',
    help: 'Seconds since the first consecutive failure of the longest-failing target now in a cooldown window and not parked, by kind; 0 when there is none.',
    labelNames: ['kind'],
    registers: clusterRegisters,
  });
  const perKind = [oldestAge, cooling, parked, failuresMax, coolingAge];
  /** The kinds whose series the registry holds now, and the task states of each. */
  let shown = new Set<string>();
  let shownStates: readonly string[] = [];
  const masters = new Gauge({
    name: 'master_cluster_masters',
    help: 'Live masters (registrations held by their session leases).',
    registers: clusterRegisters,
  });
  const stores = new Gauge({
    name: 'master_cluster_stores',
    help: 'Stores in the stats rows of the last worker scan.',
    registers: clusterRegisters,
  });
  const pending = new Gauge({
    name: 'master_cluster_pending_wal_generations',
    help: 'Pending WAL generations summed over all stores, as last scanned.',
    registers: clusterRegisters,
  });

  const up = new Gauge({
    name: 'maintd_exporter_up',
    help: '1 while the exporter is in sync with etcd; 0 while etcd is unreachable or the first sync is running (master_cluster_* are then absent).',
    registers,
  });
  const lastEvent = new Gauge({
    name: 'maintd_exporter_last_event_timestamp_seconds',
    help: 'Unix time at which the exporter last applied a change from etcd (or completed a full sync).',
    registers,
  });
  const syncs = new Counter({
    name: 'maintd_exporter_syncs_total',
    help: 'Full range reads of the prefix, by reason (start, compacted, watch_error, reconnect).',
    labelNames: ['reason'],
    registers,
  });
  const syncDuration = new Gauge({
    name: 'maintd_exporter_sync_duration_seconds',
    help: 'Duration of the last full sync: the range reads of the prefix and opening the watch.',
    registers,
  });
  if (options.version !== undefined) {
    new Gauge({
      name: 'maintd_exporter_build_info',
      help: 'Always 1: the maintd-exporter version and Node.js version this exporter runs, as labels.',
      labelNames: ['version', 'node'],
      registers,
    }).set({ version: options.version, node: process.versions.node }, 1);
  }
  const invalid = new Gauge({
    name: 'maintd_exporter_invalid_records',
    help: 'Keys under the prefix whose value could not be decoded; they are left out of the cluster metrics.',
    registers,
  });
  for (const reason of SYNC_REASONS) syncs.inc({ reason }, 0);

  /** Sets every gauge from memory; false while out of sync (no cluster numbers to show). */
  const refresh = (): boolean => {
    const status = source.status();
    if (status.lastEventMs !== undefined) lastEvent.set(status.lastEventMs / 1000);
    const s = source.summary();
    up.set(s ? 1 : 0);
    if (!s) return false;
    // A kind can leave the summary (its last record gone, no live master running it), and a
    // later release's state can (a full sync starts a new aggregate, which meets only the states
    // of the records still there): their series go with them rather than keep their last values.
    const now = new Set(s.kinds.map((k) => k.kind));
    const nowStates = new Set(s.states);
    for (const kind of shown) {
      const kindGone = !now.has(kind);
      for (const state of shownStates) if (kindGone || !nowStates.has(state)) tasks.remove({ kind, state });
      if (kindGone) for (const g of perKind) g.remove({ kind });
    }
    shown = now;
    shownStates = s.states;
    for (const k of s.kinds) {
      for (const state of s.states) tasks.set({ kind: k.kind, state }, k.tasks[state] ?? 0);
      oldestAge.set({ kind: k.kind }, k.queueOldestAgeSeconds);
      cooling.set({ kind: k.kind }, k.cooldownsActive);
      failuresMax.set({ kind: k.kind }, k.cooldownFailuresMax);
      coolingAge.set({ kind: k.kind }, k.cooldownOldestAgeSeconds);
      parked.set({ kind: k.kind }, k.parked);
    }
    masters.set(s.masters);
    stores.set(s.stores);
    pending.set(s.pendingWalGenerations);
    invalid.set(s.invalidRecords);
    return true;
  };

  return {
    registry,
    clusterRegistry,
    contentType: registry.contentType,
    render: async () => {
      const inSync = refresh();
      const own = await registry.metrics();
      return inSync ? `${await clusterRegistry.metrics()}\n${own}` : own;
    },
    recordSync: (info) => {
      syncs.inc({ reason: info.reason });
      syncDuration.set(info.durationMs / 1000);
    },
  };
}
