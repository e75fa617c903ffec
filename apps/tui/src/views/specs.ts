import type { Cooldown, Store, Task, Worker } from '../api/types.js';
import { COOLDOWNS } from './cooldowns.js';
import type { ListSpec } from './list-spec.js';
import { STORES } from './stores.js';
import { TASKS } from './tasks.js';
import { WORKERS } from './workers.js';

/** The five views, in key order (`1`–`5`). */
export const VIEW_IDS = ['overview', 'tasks', 'cooldowns', 'stores', 'workers'] as const;
/** A view. */
export type ViewId = (typeof VIEW_IDS)[number];
/** The views that are lists (all but the Overview). */
export type ListViewId = Exclude<ViewId, 'overview'>;
/** Tab titles. */
export const VIEW_TITLES: Record<ViewId, string> = {
  overview: 'Overview',
  tasks: 'Tasks',
  cooldowns: 'Cooldowns',
  stores: 'Stores',
  workers: 'Workers',
};

/** Every list view's spec, by id. */
export const LIST_SPECS: { readonly [K in ListViewId]: ListSpec<RowOf<K>> } = {
  tasks: TASKS,
  cooldowns: COOLDOWNS,
  stores: STORES,
  workers: WORKERS,
};

/** The row type of a list view. */
export type RowOf<K extends ListViewId> = K extends 'tasks'
  ? Task
  : K extends 'cooldowns'
    ? Cooldown
    : K extends 'stores'
      ? Store
      : Worker;
