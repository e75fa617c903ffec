/**
 * A newer release's fields in records an older one rewrites (docs/ARCHITECTURE.md §2.1): the
 * test writes a field N-1 does not know into a record, as N would, lets N-1 rewrite the record,
 * and reads it back.
 */
import type { Keys } from '@maintd/core';
import type { Api } from '@maintd/faults/harness/api';
import { eventually } from '@maintd/faults/harness/processes';
import type { EtcdLog } from './etcd-log.js';

/** The field a newer release would have written. */
export const NEWER_FIELD = { upgrade_test_newer: { written_by: 'N', n: 1 } } as const;

/** One record given the field, as it read after N-1 rewrote it. */
export interface KeptField {
  readonly what: string;
  readonly after: Record<string, unknown>;
  /** What `after` must contain: the field, and the rewrite's own change. */
  readonly expected: Record<string, unknown>;
}

/** Adds {@link NEWER_FIELD} to the record at `key` if `ok(record)`, guarded by its revision. */
async function inject(
  log: EtcdLog,
  key: string,
  ok: (r: Record<string, unknown>) => boolean,
  injected: Set<number>,
): Promise<Record<string, unknown> | undefined> {
  const kv = await log.kv.get(key);
  if (!kv) return undefined;
  const record = JSON.parse(kv.value) as Record<string, unknown>;
  if (!ok(record)) return undefined;
  const res = await log.kv.txn(
    [{ key, target: 'modRevision', op: '==', value: kv.modRevision }],
    // A cooldown record lives under a lease: keep it.
    [
      {
        type: 'put',
        key,
        value: JSON.stringify({ ...record, ...NEWER_FIELD }),
        ...(kv.lease ? { lease: kv.lease } : {}),
      },
    ],
  );
  if (!res.succeeded) return undefined;
  injected.add(res.revision);
  return record;
}

/**
 * While only N-1 masters run: a queued task record (then claimed and finished by N-1) and a
 * broken store's cooldown record (then given its next failure by N-1) carry the newer field.
 */
export async function injectField(
  log: EtcdLog,
  keys: Keys,
  api: Api,
  stores: { readonly healthy: readonly string[]; readonly broken: readonly string[]; readonly injected: Set<number> },
): Promise<KeptField[]> {
  const out: KeptField[] = [];
  const [a, b] = stores.healthy;
  // A task held queued by its dependency (a healthy merge, some 100 ms of worker time) long enough
  // to be given the field; tasks with dependencies are not deduplicated.
  let taskKey: string | undefined;
  for (let i = 0; i < 10 && !taskKey; i++) {
    const dep = await api.enqueue('merge_wal', a!);
    const task = await api.enqueue('merge_wal', b!, [dep.id]);
    const before = await inject(log, keys.task(task.id), (r) => r.state === 'queued', stores.injected);
    if (before) taskKey = keys.task(task.id);
  }
  if (!taskKey) throw new Error('no queued task could be given the newer field in 10 tries');
  const task = await eventually(async () => {
    const r = JSON.parse((await log.kv.get(taskKey))!.value) as Record<string, unknown>;
    if (r.state !== 'done' && r.state !== 'failed') throw new Error(`task still ${String(r.state)}`);
    return r;
  }, 30_000);
  out.push({
    what: 'a queued task record, claimed and finished by N-1',
    after: task,
    expected: { ...NEWER_FIELD, state: 'done' },
  });

  // A broken store's failure count, given the field, then one more failure (a manual task).
  const target = stores.broken[0]!;
  const key = keys.cooldown('merge_wal', target);
  const before = await eventually(async () => {
    const r = await inject(log, key, () => true, stores.injected);
    if (!r) throw new Error(`no cooldown record for merge_wal ${target} yet`);
    return r;
  }, 60_000);
  const failures = before.failures as number;
  await api.enqueue('merge_wal', target);
  const cooldown = await eventually(async () => {
    const kv = await log.kv.get(key);
    const r = kv ? (JSON.parse(kv.value) as Record<string, unknown>) : undefined;
    if (!r || (r.failures as number) <= failures) throw new Error('the next failure is not counted yet');
    return r;
  }, 30_000);
  out.push({
    what: `a cooldown record, its next failure counted by N-1 (${failures} → ${String(cooldown.failures)})`,
    after: cooldown,
    expected: { ...NEWER_FIELD },
  });
  return out;
}
