import { type Kv, type TaskKind, type TaskStore, TaskStateSchema, isCooling, isParked } from '@maintd/core';
import type { ClusterSummary, KindSummary } from '../src/summary.js';

import { eventually } from '@maintd/core/testing';

export { eventually };

/**
 * The cluster numbers computed independently of the exporter, from a fresh read of the store
 * through TaskStore's own API: the oracle the exporter's memory must match.
 */
export async function expectedSummary(store: TaskStore, nowMs: number): Promise<ClusterSummary> {
  const tasks = (await store.listTasks({ limit: 10_000 })).tasks;
  const cooldowns = await store.listCooldowns({ all: true });
  const stats = await store.listStats();
  const masters = await store.listMasters();
  const parks = await store.listParks();
  // The kinds the live masters run and those of the records, by name: as the exporter shows them.
  const named = new Set<TaskKind>(masters.flatMap((m) => m.kinds ?? []));
  for (const r of [...tasks, ...cooldowns, ...parks]) named.add(r.kind);
  const kinds = [...named].sort().map((kind: TaskKind): KindSummary => {
    const mine = tasks.filter((t) => t.kind === kind);
    const count = (state: string): number => mine.filter((t) => t.state === state).length;
    const queuedAt = mine.filter((t) => t.state === 'queued').map((t) => t.enqueued_at);
    const cds = cooldowns.filter((c) => c.kind === kind);
    const cooling = cds.filter((c) => isCooling(c, nowMs));
    const parked = parks.filter((p) => p.kind === kind && isParked(p, nowMs));
    const unparkedCooling = cooling.filter((c) => !parked.some((p) => p.target === c.target));
    return {
      kind,
      // Every state of this release, `held` among them, each counted even when none is in it.
      tasks: Object.fromEntries(TaskStateSchema.options.map((s) => [s, count(s)])) as KindSummary['tasks'],
      queueOldestAgeSeconds: queuedAt.length ? (nowMs - Math.min(...queuedAt)) / 1000 : 0,
      cooldownsActive: cooling.length,
      cooldownFailuresMax: Math.max(0, ...cds.map((c) => c.failures)),
      cooldownOldestAgeSeconds: unparkedCooling.length
        ? (nowMs - Math.min(...unparkedCooling.map((c) => c.first_failure_ms))) / 1000
        : 0,
      parked: parked.length,
    };
  });
  return {
    kinds,
    states: [...TaskStateSchema.options],
    masters: masters.length,
    stores: stats.length,
    pendingWalGenerations: stats.reduce((n, s) => n + s.pending_wal_generations, 0),
    invalidRecords: 0,
  };
}

/**
 * Writes a key under the prefix that the exporter ignores and returns its revision: once the
 * exporter's revision reaches it, every earlier change under the prefix has been applied (watch
 * events arrive in revision order). One watch round trip, no sleeping.
 */
export async function caughtUp(watcher: { readonly revision: number }, kv: Kv, prefix: string): Promise<void> {
  const { revision } = await kv.put(`${prefix}/sweeps/exporter-test-barrier`, String(revision0++));
  await eventually(() => {
    if (watcher.revision < revision)
      throw new Error(`exporter at revision ${watcher.revision}, barrier at ${revision}`);
  });
}
let revision0 = 0;

/**
 * A Kv that holds its first `watch` call until `open()`: lets a test change and compact etcd
 * between the exporter's range read and its watch. Everything else passes straight through.
 */
export function gatedWatchKv(kv: Kv): { kv: Kv; watchRequested: Promise<void>; open(): void } {
  let requested!: () => void;
  const watchRequested = new Promise<void>((r) => (requested = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let first = true;
  return {
    watchRequested,
    open: () => release(),
    kv: {
      get: (key) => kv.get(key),
      range: (prefix, o) => kv.range(prefix, o),
      txn: (c, s, f) => kv.txn(c, s, f),
      put: (key, value, o) => kv.put(key, value, o),
      delete: (key) => kv.delete(key),
      deletePrefix: (prefix) => kv.deletePrefix(prefix),
      grant: (ttl, o) => kv.grant(ttl, o),
      revision: () => kv.revision(),
      close: () => kv.close(),
      watch: async (prefix, listener, o) => {
        if (first) {
          first = false;
          requested();
          await gate;
        }
        return kv.watch(prefix, listener, o);
      },
    },
  };
}
