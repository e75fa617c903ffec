import { type TaskRecord, encodeTask } from '../model.js';
import type { StoreContext } from './context.js';
import { readTask } from './history.js';

/** What a dependent task's prerequisites allow: run it, leave it queued, or fail it (naming one). */
export type DependencyVerdict = { state: 'run' } | { state: 'wait' } | { state: 'fail'; id: string };

/** All done → run; any failed or missing → fail; otherwise (some still active) → wait. */
export async function dependencyVerdict(ctx: StoreContext, ids: readonly string[]): Promise<DependencyVerdict> {
  let wait = false;
  for (const id of ids) {
    const dep = await readTask(ctx.kv, ctx.keys, id);
    if (!dep || dep.state === 'failed') return { state: 'fail', id };
    if (dep.state !== 'done') wait = true;
  }
  return wait ? { state: 'wait' } : { state: 'run' };
}

/**
 * Fails a queued task whose prerequisite will never complete. Guarded by the record's revision
 * and its queue key, so a task claimed or changed meanwhile is left to whoever changed it.
 */
export async function failDependent(
  ctx: StoreContext,
  task: TaskRecord,
  modRevision: number,
  depId: string,
): Promise<void> {
  const k = ctx.keys;
  const failed: TaskRecord = {
    ...task,
    state: 'failed',
    finished_at: ctx.clock.now(),
    error: `dependency ${depId} did not complete`,
    error_class: 'infrastructure',
  };
  await ctx.kv.txn(
    [
      { key: k.task(task.id), target: 'modRevision', op: '==', value: modRevision },
      { key: k.queue(task.kind, task.id), target: 'version', op: '>', value: 0 },
    ],
    [
      { type: 'put', key: k.task(task.id), value: encodeTask(failed) },
      { type: 'delete', key: k.queue(task.kind, task.id) },
      ...(task.source === 'manual' ? [{ type: 'delete' as const, key: k.manual(task.kind, task.id) }] : []),
    ],
  );
}
