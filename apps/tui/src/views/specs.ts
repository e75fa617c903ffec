import type { Cooldown, Store, Task, Worker } from '../api/types.js';
import type { ListViewId } from '../common/view-ids.js';
import { COOLDOWNS } from './cooldowns.js';
import type { ListSpec } from './list-spec.js';
import { STORES } from './stores.js';
import { TASKS } from './tasks.js';
import { WORKERS } from './workers.js';

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
