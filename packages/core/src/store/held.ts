import type { Compare, KeyValue, TxnOp } from '../kv/port.js';
import { type PairKey, parsePairKey } from '../keys.js';
import {
  type ParkRecord,
  ParkRecordSchema,
  type TaskKind,
  type TaskRecord,
  TaskRecordSchema,
  encodeTask,
  isParked,
} from '../model.js';
import { decodeOrNone } from './codec.js';
import type { StoreContext } from './context.js';
import { scan } from './scan.js';
import type { TimelineStore } from './timeline-store.js';

/** Held tasks of one pair put back in one transaction (each costs a compare and three ops). */
export const RESUME_BATCH = 32;

/** What a held task's record says of the park that holds it: who parked its pair, and why. */
export function heldReason(park: ParkRecord): string {
  const until = park.until_ms === null ? '' : ` (until ${new Date(park.until_ms).toISOString()})`;
  return `parked by ${park.by}: ${park.reason}${until}`;
}

/** The record of a held task put back in the queue: its hold's fields gone, its FIFO place (id) kept. */
export function resumed(task: TaskRecord): TaskRecord {
  const next: TaskRecord = { ...task, state: 'queued' };
  delete next.held_at;
  delete next.held_reason;
  return next;
}

/** One held task as read: its record and the revision a resume is guarded on. */
interface HeldTask {
  readonly task: TaskRecord;
  readonly modRevision: number;
}

/**
 * The held tasks of (kind, target), with their records: a held key whose record is gone or is no
 * longer held (a crash between two releases cannot cause it, a hand edit can) is returned as
 * `stray`, for the resume to delete.
 */
export async function readHeld(
  ctx: StoreContext,
  kind: TaskKind,
  target: string,
): Promise<{ readonly tasks: HeldTask[]; readonly stray: string[] }> {
  const prefix = ctx.keys.heldPrefix(kind, target);
  const ids: string[] = [];
  for await (const found of scan(ctx.kv, prefix, { keysOnly: true })) ids.push(found.key.slice(prefix.length));
  if (ids.length === 0) return { tasks: [], stray: [] };
  const res = await ctx.kv.txn(
    [],
    ids.map((id) => ({ type: 'get', key: ctx.keys.task(id) })),
  );
  const tasks: HeldTask[] = [];
  const stray: string[] = [];
  ids.forEach((id, i) => {
    const r = res.results[i];
    const found: KeyValue | undefined = r?.type === 'get' ? r.kv : undefined;
    const task = decodeOrNone(TaskRecordSchema, found);
    if (found && task?.state === 'held') tasks.push({ task, modRevision: found.modRevision });
    else stray.push(id);
  });
  return { tasks, stray };
}

/** The compares and ops that put held tasks back in their queue, each guarded on its record as read. */
export function resumeOps(
  ctx: StoreContext,
  kind: TaskKind,
  target: string,
  held: { readonly tasks: readonly HeldTask[]; readonly stray: readonly string[] },
): { readonly compares: Compare[]; readonly ops: TxnOp[] } {
  const k = ctx.keys;
  const compares: Compare[] = [];
  const ops: TxnOp[] = [];
  for (const { task, modRevision } of held.tasks) {
    compares.push({ key: k.task(task.id), target: 'modRevision', op: '==', value: modRevision });
    ops.push(
      { type: 'put', key: k.task(task.id), value: encodeTask(resumed(task)) },
      { type: 'put', key: k.queue(task.kind, task.id), value: '' },
      { type: 'delete', key: k.held(kind, target, task.id) },
    );
  }
  for (const id of held.stray) ops.push({ type: 'delete', key: k.held(kind, target, id) });
  return { compares, ops };
}

/**
 * Puts back every held task of (kind, target) whose park is no longer in force, guarded on the
 * park as read (absent, or lapsed) so that a park written meanwhile keeps them held. Batches of
 * {@link RESUME_BATCH}; returns the ids put back.
 */
export async function resumePair(ctx: StoreContext, kind: TaskKind, target: string): Promise<string[]> {
  const parkKey = ctx.keys.parked(kind, target);
  const found = await ctx.kv.get(parkKey);
  if (found && isParked(decodeOrNone(ParkRecordSchema, found), ctx.clock.now())) return [];
  const held = await readHeld(ctx, kind, target);
  const out: string[] = [];
  if (held.tasks.length === 0 && held.stray.length === 0) return out;
  for (let i = 0; i === 0 || i < held.tasks.length; i += RESUME_BATCH) {
    const batch = { tasks: held.tasks.slice(i, i + RESUME_BATCH), stray: i === 0 ? held.stray : [] };
    const { compares, ops } = resumeOps(ctx, kind, target, batch);
    const res = await ctx.kv.txn(
      [{ key: parkKey, target: 'modRevision', op: '==', value: found?.modRevision ?? 0 }, ...compares],
      ops,
    );
    if (res.succeeded) out.push(...batch.tasks.map((h) => h.task.id));
  }
  return out;
}

/**
 * Resumes the held tasks of every pair whose park lapsed or went away without a release that
 * resumed them (docs/ARCHITECTURE.md §2.7): one keys-only read of `P/held/`, which is empty unless
 * a park holds something, then the pairs found. Returns the ids put back.
 */
export async function resumeLapsed(ctx: StoreContext): Promise<string[]> {
  const prefix = ctx.keys.heldPrefix();
  const pairs = new Map<string, PairKey>();
  for await (const found of scan(ctx.kv, prefix, { keysOnly: true })) {
    // `P/held/<kind>/<hex>/<id>`: the pair's key is all before the id.
    const pairKey = found.key.slice(0, found.key.lastIndexOf('/'));
    const pair = parsePairKey(prefix, pairKey);
    if (pair) pairs.set(pairKey, pair);
  }
  const out: string[] = [];
  for (const { kind, target } of pairs.values()) {
    out.push(...(await resumePair(ctx, kind, target)));
  }
  return out;
}

/**
 * Holds an automatic task of a parked pair (docs/ARCHITECTURE.md §2.7): out of its queue into
 * `P/held/`, its record saying who parked the pair and why, with a `held` event on the pair's
 * timeline — all guarded on the record, its queue key and the park as read, so a park released
 * meanwhile leaves the task queued for the next claim. Returns the revision it committed at, or
 * undefined when it did not.
 */
export async function holdTask(
  ctx: StoreContext,
  timeline: TimelineStore,
  task: TaskRecord,
  modRevision: number,
  parkRevision: number,
  park: ParkRecord,
): Promise<number | undefined> {
  const { kv, keys: k, clock } = ctx;
  const held: TaskRecord = { ...task, state: 'held', held_at: clock.now(), held_reason: heldReason(park) };
  const events = timeline.ops(task.kind, task.target, [
    { type: 'held', task_id: task.id, by: park.by, reason: park.reason },
  ]);
  const res = await kv.txn(
    [
      { key: k.task(task.id), target: 'modRevision', op: '==', value: modRevision },
      { key: k.queue(task.kind, task.id), target: 'version', op: '>', value: 0 },
      { key: k.parked(task.kind, task.target), target: 'modRevision', op: '==', value: parkRevision },
    ],
    [
      { type: 'put', key: k.task(task.id), value: encodeTask(held) },
      { type: 'delete', key: k.queue(task.kind, task.id) },
      { type: 'put', key: k.held(task.kind, task.target, task.id), value: '' },
      ...events.ops,
    ],
  );
  if (!res.succeeded) return undefined;
  void timeline.afterWrite(task.kind, task.target);
  return res.revision;
}
