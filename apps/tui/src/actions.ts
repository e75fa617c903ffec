import type { Task, TaskKind } from './api/types.js';
import type { FleetData } from './state/fleet.js';
import { type PendingAction, describeAction } from './state/ui.js';
import type { ActionItem, ActionKind, ListSpec } from './views/list-spec.js';
import { LIST_SPECS, type ListViewId } from './views/specs.js';

/** The operations the dashboard performs on the master (a `MaintdClient` in production). */
export interface ActionApi {
  enqueue(kind: TaskKind, target: string): Promise<{ readonly created: boolean }>;
  resetCooldown(kind: TaskKind, target: string): Promise<boolean>;
  /** Parks one kind on one store with a reason. */
  park(kind: TaskKind, target: string, reason: string): Promise<unknown>;
  /** Releases a park; false when there was none. */
  release(kind: TaskKind, target: string): Promise<boolean>;
  history(target: string): Promise<Task[]>;
}

/** Parallel requests of one bulk action. */
const ACTION_CONCURRENCY = 4;

function rowByKey(view: ListViewId, key: string, data: FleetData): unknown {
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  return spec.source(data)?.get(key);
}

/** Whether a row of this view still exists (a marked row may have gone since). */
export function rowExists(view: ListViewId, key: string, data: FleetData): boolean {
  return rowByKey(view, key, data) !== undefined;
}

/** The (kind, target) pairs an action on these rows applies to. */
export function resolveAction(
  view: ListViewId,
  keys: readonly string[],
  action: ActionKind,
  data: FleetData,
  now: number,
): ActionItem[] {
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  const make = spec.actions[action];
  if (!make) return [];
  return keys.flatMap((k) => {
    const row = rowByKey(view, k, data);
    return row === undefined ? [] : make(row, data, now);
  });
}

/** The store whose history the detail pane of this row shows; undefined for a worker. */
export function detailTarget(view: ListViewId, key: string, data: FleetData): string | undefined {
  if (view === 'workers') return undefined;
  if (view === 'stores') return key;
  if (view === 'tasks') return data.tasks?.get(key)?.target;
  return data.cooldowns?.get(key)?.target ?? key.slice(key.indexOf('/') + 1);
}

/** How one item of an action went. */
interface ItemResult {
  readonly ok: boolean;
  readonly changed: boolean;
  readonly error?: string;
}

/**
 * Performs a confirmed action, a few requests at a time; the notice says how it went. Errors
 * from the master are reported in the notice, never thrown.
 */
export async function execute(
  api: ActionApi,
  pending: PendingAction,
): Promise<{ text: string; tone: 'ok' | 'bad' | 'info' }> {
  const { items, action } = pending;
  const results: ItemResult[] = [];
  const queue = [...items];
  const one = async (item: ActionItem): Promise<void> => {
    try {
      let changed: boolean;
      if (action === 'reset') changed = await api.resetCooldown(item.kind, item.target);
      else if (action === 'release') changed = await api.release(item.kind, item.target);
      else if (action === 'park') {
        await api.park(item.kind, item.target, pending.reason ?? '');
        changed = true;
      } else changed = (await api.enqueue(item.kind, item.target)).created;
      results.push({ ok: true, changed });
    } catch (err) {
      results.push({ ok: false, changed: false, error: `${item.target}: ${(err as Error).message}` });
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(ACTION_CONCURRENCY, queue.length) }, async () => {
      for (let item = queue.shift(); item; item = queue.shift()) await one(item);
    }),
  );
  const failed = results.filter((r) => !r.ok);
  const unchanged = results.filter((r) => r.ok && !r.changed).length;
  const done = results.length - failed.length;
  const n = items.length;
  const first = items[0]!;
  const single = n === 1 && done === 1;
  let text: string;
  if (action === 'reset') {
    text = single ? `reset the cooldown of ${first.kind} ${first.target}` : `reset ${done} of ${n} cooldowns`;
    if (unchanged > 0) text += ` (${unchanged} already cleared)`;
    if (failed.length > 0) text += `; failed: ${failed[0]!.error}`;
  } else if (action === 'park') {
    text = single ? `parked ${first.kind} ${first.target}: ${pending.reason ?? ''}` : `parked ${done} of ${n}`;
    if (failed.length > 0) text = `${describeAction(pending)} failed for ${failed.length}: ${failed[0]!.error}`;
  } else if (action === 'release') {
    text = single ? `released ${first.kind} ${first.target}` : `released ${done} of ${n}`;
    if (unchanged > 0) text += ` (${unchanged} not parked any more)`;
    if (failed.length > 0) text = `${describeAction(pending)} failed for ${failed.length}: ${failed[0]!.error}`;
  } else {
    text = single ? `enqueued ${first.kind} on ${first.target}` : `enqueued ${done} of ${n}`;
    if (unchanged > 0) text += ` (${unchanged} already queued or running)`;
    if (failed.length > 0) text = `${describeAction(pending)} failed for ${failed.length}: ${failed[0]!.error}`;
  }
  return { text, tone: failed.length > 0 ? 'bad' : 'ok' };
}
