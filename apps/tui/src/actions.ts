import { type CooldownFilter, type DetailAnswer, needsNewerMaster } from './api/client.js';
import type { BulkResult, Task, TaskKind } from './api/types.js';
import type { FleetData } from './state/fleet-data.js';
import { describeAction } from './state/ui.js';
import { scopeText } from './state/bulk.js';
import type { BulkScope, PendingAction } from './state/ui-state.js';
import type { ListSpec } from './views/list-spec.js';
import type { ActionItem, ActionKind } from './common/action-items.js';
import { LIST_SPECS } from './views/specs.js';
import type { ListViewId } from './common/view-ids.js';

/** The operations the dashboard performs on the master (a `MaintdClient` in production). */
export interface ActionApi {
  enqueue(kind: TaskKind, target: string): Promise<{ readonly created: boolean }>;
  resetCooldown(kind: TaskKind, target: string): Promise<boolean>;
  /** Parks one kind on one store with a reason. */
  park(kind: TaskKind, target: string, reason: string): Promise<unknown>;
  /** Releases a park; false when there was none. */
  release(kind: TaskKind, target: string): Promise<boolean>;
  history(target: string): Promise<Task[]>;
  /** One (kind, store) with its timeline, in one request. */
  cooldownDetail(kind: TaskKind, target: string): Promise<DetailAnswer>;
  /** Parks every entry the filter matches (`dryRun`: counts them, changes nothing). */
  bulkPark(filter: CooldownFilter, reason: string, dryRun: boolean): Promise<BulkResult>;
  /** Resets the count of every entry the filter matches, parks aside (`dryRun`: counts them). */
  bulkReset(filter: CooldownFilter, dryRun: boolean): Promise<BulkResult>;
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

/** A notice of the status line. */
type Outcome = { text: string; tone: 'ok' | 'bad' | 'info' };

/**
 * The filter a bulk action sends: the view's search, over every state, as the view shows them;
 * or a cause, alone (the master groups every state under it).
 */
function bulkFilter(scope: BulkScope): CooldownFilter {
  return scope.cause !== undefined ? { cause: scope.cause } : { q: scope.q, state: 'any' };
}

/** Why a bulk request failed, in the status line: a master too old for it says so. */
function bulkError(err: unknown): Outcome {
  const message = (err as Error).message;
  if (needsNewerMaster(err)) {
    return { text: `bulk actions need a newer master (it answered ${message}); nothing changed`, tone: 'bad' };
  }
  return { text: `bulk action failed: ${message}`, tone: 'bad' };
}

/** A bulk action's dry run: how many entries the master matches, and the first of them; or why not. */
export async function preview(
  api: ActionApi,
  pending: PendingAction,
): Promise<{ count: number; entries: BulkResult['entries'] } | Outcome> {
  const { bulk } = pending;
  if (!bulk) return { text: 'not a bulk action', tone: 'bad' };
  try {
    const r =
      pending.action === 'park'
        ? await api.bulkPark(bulkFilter(bulk), pending.reason ?? '', true)
        : await api.bulkReset(bulkFilter(bulk), true);
    return { count: r.count, entries: r.entries };
  } catch (err) {
    return bulkError(err);
  }
}

/** Performs a confirmed bulk action with the filter its dry run counted; the notice gives the count done. */
async function executeBulk(api: ActionApi, pending: PendingAction): Promise<Outcome> {
  const bulk = pending.bulk!;
  try {
    const r =
      pending.action === 'park'
        ? await api.bulkPark(bulkFilter(bulk), pending.reason ?? '', false)
        : await api.bulkReset(bulkFilter(bulk), false);
    const verb = pending.action === 'park' ? 'parked' : 'reset';
    // The master matches again when it acts: what changed since the dry run shows here.
    const of =
      bulk.count !== undefined && r.count !== bulk.count ? ` (${r.count} matched now, ${bulk.count} before)` : '';
    return { text: `${verb} ${r.done} ${scopeText(bulk)}${of}`, tone: 'ok' };
  } catch (err) {
    return bulkError(err);
  }
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
export async function execute(api: ActionApi, pending: PendingAction): Promise<Outcome> {
  if (pending.bulk) return executeBulk(api, pending);
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
